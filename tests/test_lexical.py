"""The lexical route: head and body as two BM25 fields, stemming, save/load (hiqa/index/lexical.py)."""
import math
from collections import Counter

import bm25s
import numpy as np
import pytest

from hiqa.augment import head_and_body
from hiqa.index.lexical import LexicalIndex
from hiqa.index.terms import K1, terms

IDS = ["name", "opts", "other"]
HEADS = ["wc(1) > NAME", "wc(1) > OPTIONS > -L, --max-line-length", "ls(1) > OPTIONS > -l"]
BODIES = [
    "print newline, word, and byte counts",
    ("print the maximum display width of the longest line of each file, measured in "
     "characters as they are displayed on a terminal with tab stops every eight columns"),
    "use a long listing format showing permissions owners sizes and times of files",
]


def test_words_are_stemmed_identifiers_are_not() -> None:
    assert terms("Counts the displayed lines") == ["count", "display", "line"]
    assert terms("--max-line-length wc(1)")[:2] == ["--max-line-length", "max-line-length"]
    assert "wc(1)" in terms("wc(1)")


def test_document_name_in_the_head_does_not_favour_short_segments() -> None:
    """A question naming the document: with one field, the short NAME segment would win on
    length; with the head scored without length normalisation, the body decides."""
    two_fields = LexicalIndex.build(IDS, BODIES, heads=HEADS)
    one_field = LexicalIndex.build(IDS, [h + "\n\n" + b for h, b in zip(HEADS, BODIES)])
    q = "wc: width of the longest line"
    assert IDS[int(np.argmax(two_fields.scores(q)))] == "opts"
    # the document's name alone gives both wc segments the same head score
    name_only = two_fields.scores("wc")
    assert math.isclose(name_only[0], name_only[1]) and name_only[2] == 0
    assert one_field.scores("wc")[0] > one_field.scores("wc")[1]  # what the head field fixes


def test_head_score_has_no_length_normalisation() -> None:
    idx = LexicalIndex.build(["a", "b"], ["x", "y"], heads=["doc > short",
                                                      "doc > a much longer heading path > with a term"])
    s = idx.scores("doc")
    assert math.isclose(s[0], s[1])
    # lucene BM25 with b = 0 and tf = 1: idf · tf / (tf + k1)
    idf = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))
    assert math.isclose(s[0], idf / (1 + K1), rel_tol=1e-5)
    # the term twice in one head: tf / (tf + k1) saturates, it does not double
    twice = LexicalIndex.build(["a", "b"], ["x", "y"], heads=["doc doc > h", "other > h"])
    assert math.isclose(twice.scores("doc")[0],
                        math.log(1 + (2 - 1 + 0.5) / (1 + 0.5)) * 2 / (2 + K1), rel_tol=1e-5)


def test_save_and_load_round_trip(tmp_path) -> None:
    idx = LexicalIndex.build(IDS, BODIES, ["w", "w", "l"], HEADS)
    idx.save(tmp_path / "bm25", "gen1")
    again = LexicalIndex.load(tmp_path / "bm25", "gen1")
    assert again is not None
    q = "long listing format"
    assert np.allclose(again.scores(q), idx.scores(q))
    assert LexicalIndex.load(tmp_path / "bm25", "gen2") is None  # stale generation: rebuild
    idx.save(tmp_path / "bm25", "gen3")  # saving over an existing index replaces it
    assert LexicalIndex.load(tmp_path / "bm25", "gen3") is not None


def test_positions_align_candidates_with_the_score_array() -> None:
    idx = LexicalIndex.build(IDS, BODIES, ["w", "w", "l"], HEADS)
    pos = idx.positions(["other", "gone", "name"])
    assert pos.tolist() == [2, -1, 0] == [idx.position("other"), -1, idx.position("name")]
    assert pos.dtype == np.intp and idx.positions([]).shape == (0,)


def test_head_and_body_split_follows_the_strategy() -> None:
    path = ("wc(1)", "OPTIONS", "-L")
    assert head_and_body("hca", path, "wc(1) > OPTIONS > -L\n\nbody") == (
        "wc(1) > OPTIONS > -L", "body")
    assert head_and_body("title", path, "-L\n\nbody") == ("-L", "body")
    assert head_and_body("section", path, "body") == ("", "body")
    assert head_and_body("fixed", (), "any text") == ("", "any text")


def test_title_terms_select_the_document_not_the_section() -> None:
    """The page's name written in a short body must not lift that segment over its siblings."""
    ids = ["name", "opt"]
    heads = ["znew(1) > NAME", "znew(1) > OPTIONS > -v"]
    bodies = ["znew - recompress files", "verbose: display the name and percentage reduction"]
    idx = LexicalIndex.build(ids, bodies, ["z", "z"], heads, titles={"z": "znew(1)"})
    s = idx.scores("znew: display the size reduction")
    assert s[1] > s[0]
    # without the title rule the name's body match is what wins
    plain = LexicalIndex.build(ids, bodies, ["z", "z"], heads)
    assert plain.scores("znew recompress")[0] > idx.scores("znew recompress")[0]


def test_context_field_scores_a_term_with_its_section() -> None:
    """Two identical one-line terms; the sibling of one speaks of the question's subject."""
    ids = ["out-a", "out-b", "net-a"]
    heads = ["t(1) > OUTPUT > -a", "t(1) > OUTPUT > -b", "t(1) > NETWORK > -a"]
    bodies = ["all of them", "brief listing in columns", "all of them"]
    contexts = ["OUTPUT", "OUTPUT", "NETWORK"]
    flat = LexicalIndex.build(ids, bodies, ["t"] * 3, heads)
    ctx = LexicalIndex.build(ids, bodies, ["t"] * 3, heads, contexts=contexts)
    q = "show all of them in columns"
    assert flat.scores(q)[0] == flat.scores(q)[2]  # on their own fields the two "-a" tie
    assert ctx.scores(q)[0] > ctx.scores(q)[2]  # the section breaks the tie
    # the context adds the same section score to both siblings
    assert ctx.scores("columns")[0] == ctx.scores("columns")[1] - flat.scores("columns")[1] > 0
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        ctx.save(Path(d) / "bm25", "g")
        again = LexicalIndex.load(Path(d) / "bm25", "g")
        assert again is not None and np.allclose(again.scores(q), ctx.scores(q))


def test_chunk_by_chunk_terms_equal_plain_terms():
    """Indexing tokenises whitespace chunks once each (``_Vocabulary``); the terms must be the
    ones ``terms`` gives the whole text."""
    import random

    from hiqa.index.terms import _Vocabulary

    rng = random.Random(7)
    pieces = ["ADC12QJ1600-SP", "open(2)", "--max-line-length", "-n", "检索增强生成", "Ｆｕｌｌ",
              "running", "files,", "(see", "v2.3.1", "e.g.", "the", "x_y", "a/b:c", "«quoted»",
              "tab\tsep", "naïve", "İstanbul", "ß", "ﬁle", "２０２４年", "--", "-", "…"]
    words = _Vocabulary()
    for _ in range(300):
        text = rng.choice([" ", "\n", "  ", "\u3000"]).join(
            rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert [words.terms[i] for i in words.ids(text)] == terms(text), text
    assert len(words.terms) > 20


# ------------------------------------------------------------ optimised scoring vs references
def _generated_corpus(seed: int = 7) -> dict:
    """Man-page-like segments: documents titled ``name(1)`` whose heads are cascaded paths,
    bodies drawn from a Zipf-like vocabulary (so some words are common, some rare), each
    document's name written in some of its own bodies and in other documents' bodies, and one
    section key per (document, section), so head, body, context and the title rule all count."""
    rng = np.random.default_rng(seed)
    names = ["grep", "list", "tar", "gzip", "find", "sort", "copy", "move", "remove", "show"]
    words = """file files line lines pattern match archive compress output input directory print
        count recursive verbose quiet sort order reverse number size name time list show copy
        remove link follow symbolic exclude include format""".split()  # noqa: SIM905
    weights = 1 / np.arange(1, len(words) + 1)
    weights /= weights.sum()
    ids, heads, bodies, docs, contexts = [], [], [], [], []
    titles = {f"{n}.1.md": f"{n}(1)" for n in names}
    for doc, title in titles.items():
        for section in ("NAME", "DESCRIPTION", "OPTIONS"):
            for k in range(int(rng.integers(1, 6))):
                body = list(rng.choice(words, size=int(rng.integers(0, 25)), p=weights))
                if rng.random() < 0.4:
                    body.insert(int(rng.integers(0, len(body) + 1)), title.split("(")[0])
                if rng.random() < 0.2:
                    body.append(str(rng.choice(names)))
                ids.append(f"{doc}#{section}#{k}")
                heads.append(f"{title} > {section} > -{chr(97 + k)}" if k else
                             f"{title} > {section}")
                bodies.append(" ".join(body))
                docs.append(doc)
                contexts.append(f"{doc} > {section}")
    queries = [" ".join(rng.choice(words + names, size=int(rng.integers(1, 7))))
               for _ in range(60)]
    queries += ["grep grep pattern", "list files list", "tar tar tar archive", "no such words", "",
                "grep", "sort sort", "list show"]  # the last three: only title terms
    return {"ids": ids, "heads": heads, "bodies": bodies, "docs": docs, "contexts": contexts,
            "titles": titles, "queries": queries}


def _okapi_lucene(field_docs: list[list[str]], query: list[str], b: float) -> np.ndarray:
    """Lucene's BM25 (Kamphuis et al., ECIR 2020) from raw counts, float64:
    idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf part = tf / (tf + k1 (1 - b + b L / avgL))
    (Lucene drops the constant k1 + 1), summed over the query's tokens with their repeats."""
    n = len(field_docs)
    avg = sum(len(d) for d in field_docs) / n
    counts = [Counter(d) for d in field_docs]
    out = np.zeros(n)
    for t in query:
        df = sum(t in c for c in counts)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, c in enumerate(counts):
            tf = c[t]
            if tf:
                out[i] += idf * tf / (tf + K1 * (1 - b + b * len(field_docs[i]) / avg))
    return out


def _sections(c: dict) -> tuple[list[str], list[str], list[str]]:
    """The context field's documents: one per section key, its segments' own heading line and
    body joined; returns the keys, their texts and their documents."""
    keys = list(dict.fromkeys(c["contexts"]))
    parts: dict[str, list[str]] = {k: [] for k in keys}
    for key, head, body in zip(c["contexts"], c["heads"], c["bodies"]):
        parts[key].append(f"{head.rsplit(' > ', 1)[-1]}\n{body}")
    owner = dict(zip(c["contexts"], c["docs"]))
    return keys, ["\n\n".join(parts[k]) for k in keys], [owner[k] for k in keys]


def _titles_taken_back(c: dict, q: list[str]) -> dict[str, set[str]]:
    """Each document's title terms whose share the question's body scores give back: none for
    a document whose title holds every term of the question that some body has."""
    title_of = {doc: set(terms(title)) for doc, title in c["titles"].items()}
    known = {t for t in q if any(t in terms(body) for body in c["bodies"])}
    return {doc: set() if known and known <= title else title for doc, title in title_of.items()}


def _reference_scores(c: dict, query: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The lexical route's definition (module docstring), computed the plain way: every field
    scored in full, the title terms' share recomputed term by term (except in a document whose
    title holds every term of the question some body has), the section score copied to each of
    its segments.  Also returns each part, so the test can check that each one counts."""
    q = terms(query)
    title_of = _titles_taken_back(c, q)
    keys, sections, section_docs = _sections(c)
    fields = {"head": ([terms(h) or [""] for h in c["heads"]], c["docs"], 0.0),
              "body": ([terms(t) or [""] for t in c["bodies"]], c["docs"], 0.75),
              "context": ([terms(t) or [""] for t in sections], section_docs, 0.75)}
    parts = {}
    for name, (field_docs, owners, b) in fields.items():
        full = _okapi_lucene(field_docs, q, b)
        if name == "head":
            parts[name] = full
            continue
        taken = np.zeros(len(full))
        for t in set(q):
            named = np.array([t in title_of[d] for d in owners])
            if named.any():
                taken += q.count(t) * _okapi_lucene(field_docs, [t], b) * named
        parts[name] = np.maximum(full - taken, 0.0)
        parts[name + " title share"] = np.minimum(taken, full)
    position = {k: i for i, k in enumerate(keys)}
    parts["context"] = parts["context"][[position[k] for k in c["contexts"]]]
    return parts["body"] + parts["head"] + parts["context"], parts


def _bm25s_scores(c: dict, query: str) -> np.ndarray:
    """The same route summed the way bm25s scores a query (``BM25.get_scores``: float32 sums per
    field, a full score array per title term): what the optimised code must equal bit for bit."""
    def field(texts: list[str], b: float) -> bm25s.BM25:
        f = bm25s.BM25(k1=K1, b=b, method="lucene")
        f.index([terms(t) or [""] for t in texts], show_progress=False)
        return f

    def scores(f: bm25s.BM25, tokens: list[str]) -> np.ndarray:
        known = [t for t in tokens if t in f.vocab_dict]
        n = f.scores["num_docs"]
        return np.asarray(f.get_scores(known), np.float64) if known else np.zeros(n)

    q = terms(query)
    keys, sections, section_docs = _sections(c)
    title_of = _titles_taken_back(c, q)
    title_terms = Counter(t for t in q if any(t in s for s in title_of.values()))

    def without_title_terms(f: bm25s.BM25, owners: list[str]) -> np.ndarray:
        s = scores(f, q)
        for t, count in title_terms.items():
            s -= count * scores(f, [t]) * np.array([t in title_of[d] for d in owners])
        return np.maximum(s, 0.0)

    body = without_title_terms(field(c["bodies"], 0.75), c["docs"])
    total = body + scores(field(c["heads"], 0.0), q)
    context = without_title_terms(field(sections, 0.75), section_docs)
    return total + context[[keys.index(k) for k in c["contexts"]]]


def test_scores_equal_the_plain_computation_of_every_field() -> None:
    """The optimised sums (one pass per field, title shares precomputed, sections mapped by
    index) against two references on a generated corpus: BM25 from its formula, to within
    float32 rounding, and bm25s's own per-field scores, bit for bit (so every ranking, ties
    included, is the one the plain computation gives)."""
    c = _generated_corpus()
    idx = LexicalIndex.build(c["ids"], c["bodies"], c["docs"], c["heads"], c["titles"],
                             c["contexts"])
    shares: Counter[str] = Counter()
    for query in c["queries"]:
        got = idx.scores(query)
        want, parts = _reference_scores(c, query)
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6), query
        exact = _bm25s_scores(c, query)
        assert got.dtype == exact.dtype and np.array_equal(got, exact), query  # so same order
        shares.update({name: float(part.sum() > 0) for name, part in parts.items()})
    # the corpus exercises every part, so dropping any of them would fail the comparison
    assert all(shares[p] >= 10 for p in ("head", "body", "context", "body title share",
                                         "context title share")), shares


# ------------------------------------------------------------ the BM25 build and its term cache
def _fixture_paragraphs() -> list[str]:
    """The paragraphs of the collection tests' real documents (man pages, a Chinese datasheet)."""
    from index_fixtures import DOCS

    return [p for doc in DOCS.values() for p in doc.split("\n\n")]


@pytest.mark.parametrize("corpus_name", ["generated", "fixture documents"])
def test_weights_are_bm25s_index_bit_for_bit(corpus_name: str) -> None:
    """The weight matrix built from term counts (``_bm25``) against bm25s's own ``index()``,
    every (term, document) weight bit for bit, for both ``b`` values used, on the generated
    man-page corpus and on the paragraphs of the real test documents, with documents that have
    no terms (bm25s indexes those as the empty token, which gives them length 1)."""
    from hiqa.index.terms import HEAD_B, B, LexicalText, Terms
    from hiqa.index.terms import bm25_weights as _bm25

    found = _generated_corpus(3)["bodies"] if corpus_name == "generated" else _fixture_paragraphs()
    bodies = found + ["", "-- ..."]  # no terms at all
    texts = [LexicalText(str(i), "d", "d", "", t) for i, t in enumerate(bodies)]
    corpus = Terms.of(texts)
    for b in (B, HEAD_B):
        indptr, docs, weights = _bm25(corpus.body, len(corpus.vocab), b)
        ref = bm25s.BM25(k1=K1, b=b, method="lucene")
        ref.index([terms(t) or [""] for t in bodies], show_progress=False)
        m = ref.scores
        assert m["num_docs"] == len(bodies)
        assert set(corpus.vocab) == set(ref.vocab_dict) - {""}
        for term, row in ref.vocab_dict.items():
            lo, hi = m["indptr"][row], m["indptr"][row + 1]
            if term == "":
                assert term not in corpus.vocab  # never queried: no postings kept
                continue
            mine = corpus.vocab.index(term)
            assert np.array_equal(docs[indptr[mine]:indptr[mine + 1]], m["indices"][lo:hi])
            got = weights[indptr[mine]:indptr[mine + 1]]
            assert got.dtype == m["data"].dtype and np.array_equal(got, m["data"][lo:hi]), term


def _texts(c: dict) -> list:
    from hiqa.index.terms import LexicalText

    return [LexicalText(i, d, f"{d}@v1", h, t, k, c["titles"][d]) for i, d, h, t, k in
            zip(c["ids"], c["docs"], c["heads"], c["bodies"], c["contexts"])]


def test_corpus_joined_from_parts_scores_as_one_tokenised_whole() -> None:
    """Tokenised in pieces (one vocabulary each), some documents dropped, joined: the index is
    the one built from the surviving segments at once, ids, documents and every score."""
    from hiqa.index.terms import Terms

    c = _generated_corpus(5)
    texts = _texts(c)
    docs = sorted(set(c["docs"]))
    gone, later = docs[0], docs[-3:]
    first = [x for x in texts if x.doc_id not in later]
    second = [x for x in texts if x.doc_id in later]
    wanted = Counter(x.version for x in texts if x.doc_id != gone)
    pieces = Terms.join([Terms.of(second), Terms.of(first).select(wanted)])
    whole = Terms.join([Terms.of([x for x in texts if x.doc_id != gone])])
    a, b = LexicalIndex.from_terms(pieces), LexicalIndex.from_terms(whole)
    assert a.ids == b.ids == sorted(x.id for x in texts if x.doc_id != gone)
    assert list(a.doc_ids) == list(b.doc_ids) and gone not in set(a.doc_ids)
    for q in c["queries"]:
        assert np.array_equal(a.scores(q), b.scores(q)), q
    # a version whose segment count is not the registry's is dropped, not trusted
    short = dict(wanted, **{f"{later[0]}@v1": wanted[f"{later[0]}@v1"] + 1})
    assert later[0] not in set(Terms.of(second).select(short).doc_ids)


def test_saved_terms_round_trip(tmp_path) -> None:
    from hiqa.index.terms import Terms

    c = _generated_corpus(9)
    corpus = Terms.join([Terms.of(_texts(c))])
    idx = LexicalIndex.from_terms(corpus)
    idx.save(tmp_path / "bm25", "g1", corpus)
    again = Terms.load(tmp_path / "bm25")
    assert again is not None and again.ids == corpus.ids and again.versions == corpus.versions
    rebuilt = LexicalIndex.from_terms(again)
    loaded = LexicalIndex.load(tmp_path / "bm25", "g1")
    assert loaded is not None
    for q in c["queries"]:
        assert np.array_equal(rebuilt.scores(q), idx.scores(q))
        assert np.array_equal(loaded.scores(q), idx.scores(q))
    idx.save(tmp_path / "bm25", "g2")  # an index saved without its counts
    assert Terms.load(tmp_path / "bm25") is None


QUERIES = ["print the newline counts", "wc maximum display width", "head output first part",
           "follow appended data tail", "TMP117 的工作电压范围是多少", "lines bytes files"]


def test_incremental_index_equals_a_full_rebuild(settings, corpus, monkeypatch) -> None:
    """On a real Edge collection through ingest, update, removal and re-ingest: the index each
    step builds from the saved counts and the ingest's own texts is the one rebuilt from the
    stored payloads alone, and it is built without reading the store."""
    import shutil

    from hiqa.collection import Collection
    from hiqa.handles import HANDLES
    from hiqa.index.derived import derived

    col = Collection("man", settings, create=True)
    col.ingest([corpus])

    def full_rebuild() -> LexicalIndex:
        shutil.rmtree(col.dir / "derived")
        HANDLES.derived.clear()
        return derived(col.parts).lexical

    def same(a: LexicalIndex, b: LexicalIndex) -> None:
        assert a.ids == b.ids and list(a.doc_ids) == list(b.doc_ids)
        for q in QUERIES:
            assert np.array_equal(a.scores(q), b.scores(q)), q

    def update() -> None:
        (corpus / "head.1.md").write_text(
            (corpus / "head.1.md").read_text() + "\n## BUGS\n\nNone known to the printer.\n")
        col.ingest([corpus])

    def add() -> None:
        (corpus / "extra.md").write_text("# extra(1)\n\n## NAME\n\nextra - count bytes\n")
        col.ingest([corpus])

    steps = [update, lambda: col.remove_document("tail.1.md"), lambda: col.ingest([corpus]), add]
    for step in steps:
        with monkeypatch.context() as m:
            m.setattr(type(col.store), "scroll", lambda *a, **k: iter(()))  # no payload reads
            step()
            incremental = derived(col.parts).lexical
        assert len(incremental) == col.store.count() == col.registry.segment_count()
        same(incremental, full_rebuild())
    assert {"extra.md", "tail.1.md"} <= set(incremental.doc_ids)


def test_threads_building_the_index_at_once_build_it_once(settings, corpus) -> None:
    """Two app sessions, one asking while the other's ingest finishes, built the lexical index
    into one temporary folder at once: one failed ``FileExistsError`` (seen while replaying
    the app for issue #33).  Builds now take turns; every thread gets a whole, searchable index,
    and a half-written copy a killed process left beside it is swept."""
    from index_fixtures import at_once

    from hiqa.collection import Collection
    from hiqa.index.derived import derived

    col = Collection("man", settings, create=True)
    col.ingest([corpus])
    stale = col.dir / "derived" / "bm25.tmp-999999999"  # a process no longer running
    stale.mkdir(parents=True)
    built = [index for run in at_once(
        lambda: [derived(col.parts, force=True).lexical for _ in range(5)], 4) for index in run]
    assert len(built) == 20 and not stale.exists()
    saved = LexicalIndex.load(col.dir / "derived" / "bm25", col.registry.generation)
    assert saved is not None and saved.ids == built[-1].ids
    assert np.array_equal(saved.scores(QUERIES[0]), built[0].scores(QUERIES[0]))
