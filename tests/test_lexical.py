"""The lexical route: head and body as two BM25 fields, stemming, save/load (hiqa/lexical.py)."""
import math

import numpy as np

from hiqa.lexical import K1, LexicalIndex, terms
from hiqa.segment import head_and_body

IDS = ["name", "opts", "other"]
HEADS = ["wc(1) > NAME", "wc(1) > OPTIONS > -L, --max-line-length", "ls(1) > OPTIONS > -l"]
BODIES = [
    "print newline, word, and byte counts",
    "print the maximum display width of the longest line of each file, measured in "
    "characters as they are displayed on a terminal with tab stops every eight columns",
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
    idx = LexicalIndex.build(["a", "b"], ["x", "y"], heads=["doc > short", "doc > a much longer "
                                                             "heading path > with a term"])
    s = idx.scores("doc")
    assert math.isclose(s[0], s[1])
    # lucene BM25 with b = 0 and tf = 1: idf · tf / (tf + k1)
    idf = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))
    assert math.isclose(s[0], idf / (1 + K1), rel_tol=1e-5)
    assert K1 > 0


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


def test_memoised_terms_equal_plain_terms():
    """Indexing tokenises whitespace chunks once (a memo); the terms must be the same."""
    import random

    from hiqa.lexical import terms

    rng = random.Random(7)
    pieces = ["ADC12QJ1600-SP", "open(2)", "--max-line-length", "-n", "检索增强生成", "Ｆｕｌｌ",
              "running", "files,", "(see", "v2.3.1", "e.g.", "the", "x_y", "a/b:c", "«quoted»",
              "tab\tsep", "naïve", "İstanbul", "ß", "ﬁle", "２０２４年", "--", "-", "…"]
    memo: dict[str, list[str]] = {}
    for _ in range(300):
        text = rng.choice([" ", "\n", "  ", "\u3000"]).join(
            rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert terms(text, memo) == terms(text), text
    assert memo  # the memo was used
