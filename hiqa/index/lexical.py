"""Lexical route: BM25 (bm25s's Lucene weights) over the augmented text, with HiQA's tokeniser.

Three fields, in the spirit of BM25F (Robertson, Zaragoza & Taylor 2004), whose scores add up:

* the segment's *head*: the cascaded path HCA puts on its first line (``doc > section > term``)
  and the document's lead on its second (``hiqa.augment.document_lead``), scored with
  ``b = 0``.  With one field, a question that names the document would favour the
  document's shortest segments (its one-line summary, its synopsis): the name matches every
  segment, and BM25's length normalisation rewards the short ones.  Without length
  normalisation every segment of a document gets the same credit for the document's name, and
  one whose own heading or term matches gets more;
* its *body*, Okapi ``b = 0.75``;
* its *context*: the whole heading section it belongs to (for a term, its parent section with
  every sibling term), one BM25 document per section.  Finer segments (terms, pieces of a long
  section) carry few words, so on their own they match a question's wording by chance; the
  section says which part of which document the question is about, the segment's own fields
  say which piece of it.  This is HCA's hierarchy applied to the lexical route.

Terms of the document's title select the document, not the section: they are scored in the head
only, never in the body of that document's segments (a datasheet's part number or a man page's
name is written all over the document, and in a short section it would otherwise outweigh the
words that say what the question is about).

Word terms (letters only) are stemmed with Snowball's English stemmer, so "counts" meets
"count"; identifiers, options and CJK bigrams are left as the tokeniser wrote them.

Scores are bm25s's (method ``lucene``): a precomputed sparse term-document matrix of BM25
weights, so a query costs a few row sums instead of a Python loop over every document (see
``bench/bench_retrieval.py`` and docs/benchmarks.md for the measured ratio against rank-bm25).  The
matrix is built here, from term counts, with the same float operations as bm25s's ``index()``
(``_bm25``; ``tests/test_lexical.py`` checks the weights bit for bit against bm25s): at 200,000
segments bm25s's ``index()`` took 36 s of a 77 s rebuild (load 4.6), per-document Python loops
and Counters, where ``_bm25`` weighs the three fields in about 4 s (load 4; docs/benchmarks.md, Store).
Owning the counts is also what makes the index incremental: each document version's term
counts are kept (``Terms``, saved with the index), so an ingest tokenises only the documents it
writes and recomputes the weights, whose N, average length and idf are collection-wide, from the
counts.  bm25s is no longer imported here: it stays a dependency as the reference the tests and
``bench/bench_retrieval.py`` compare with.

The index is derived data: it is saved beside the collection as plain ``.npy`` arrays (memory-
mapped when opened) and rebuilt from the store's payloads when missing or stale.
"""
from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np
import Stemmer

from hiqa.tokenize import normalise, normalised_tokens, tokenize

K1 = 1.5
B = 0.75
HEAD_B = 0.0
FORMAT = 5
"""Version of the saved index layout and term rules: an index saved by another is rebuilt."""

_STEMMER = Stemmer.Stemmer("english")


def terms(text: str) -> list[str]:
    """BM25 terms: HiQA's tokens with plain (ASCII-letter) words stemmed."""
    return _stemmed(tokenize(text))


def _stemmed(tokens: list[str]) -> list[str]:
    words = [i for i, t in enumerate(tokens) if t.isascii() and t.isalpha()]
    if words:
        stems = _STEMMER.stemWords([tokens[i] for i in words])
        for i, stem in zip(words, stems):
            tokens[i] = stem
    return tokens


@dataclass(frozen=True)
class LexicalText:
    """What the lexical route reads of one segment: its head (cascaded path) and body, the key
    of its section (the context field), its document, title and registered version."""

    id: str
    doc_id: str
    version: str
    head: str
    body: str
    context: str | None = None
    title: str = ""


class _Vocabulary:
    """Term ids of texts (their ``terms``), numbered in order of first appearance.

    Texts are tokenised one whitespace-separated chunk at a time, each distinct chunk once: the
    same terms (no token spans whitespace, ``tokenize.normalised_tokens``), measured 4-5x faster
    than tokenising every occurrence on the dev corpus.
    """

    def __init__(self, known: Sequence[str] = ()):
        self.terms = list(known)
        self._ids = {t: i for i, t in enumerate(self.terms)}
        self._memo: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        out: list[int] = []
        memo = self._memo
        for chunk in normalise(text).split():
            found = memo.get(chunk)
            if found is None:
                found = memo[chunk] = [self.id(t) for t in _stemmed(normalised_tokens(chunk))]
            out.extend(found)
        return out

    def id(self, term: str) -> int:
        i = self._ids.get(term)
        if i is None:
            i = self._ids[term] = len(self.terms)
            self.terms.append(term)
        return i


@dataclass(frozen=True)
class _Rows:
    """Term counts of a field's documents, row ``r`` holding ``terms[indptr[r]:indptr[r + 1]]``
    with their ``counts``, and each document's BM25 length.  A document without terms has
    length 1: bm25s indexes it as the empty token, and the weights must stay its."""

    indptr: np.ndarray
    terms: np.ndarray
    counts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, docs: Sequence[list[int]]) -> _Rows:
        sizes = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        flat = np.fromiter(chain.from_iterable(docs), dtype=np.int64, count=int(sizes.sum()))
        span = int(flat.max()) + 1 if len(flat) else 1
        key, counts = _counted(np.repeat(np.arange(len(docs), dtype=np.int64), sizes) * span
                               + flat)
        return cls(_indptr(np.bincount(key // span, minlength=len(docs))),
                   (key % span).astype(np.int32), counts.astype(np.int32), np.maximum(sizes, 1))

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, rows: np.ndarray) -> _Rows:
        sizes = np.diff(self.indptr)[rows]
        indptr = _indptr(sizes)
        at = np.repeat(self.indptr[rows] - indptr[:-1], sizes) + np.arange(indptr[-1])
        return _Rows(indptr, self.terms[at], self.counts[at], self.lengths[rows])

    @staticmethod
    def join(parts: Sequence[_Rows], remaps: Sequence[np.ndarray]) -> _Rows:
        """The rows of ``parts`` in turn, each part's term ids mapped through its ``remaps``
        (a row's terms may then be in any order: nothing reads them in order)."""
        return _Rows(_indptr(np.concatenate([np.diff(p.indptr) for p in parts])),
                     np.concatenate([m[p.terms] for p, m in zip(parts, remaps)]),
                     np.concatenate([p.counts for p in parts]),
                     np.concatenate([p.lengths for p in parts]))


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_counts=True)`` for keys that come in runs of ascending rows
    (row × span + term): a stable sort uses the runs, ``np.unique``'s quicksort does not.  At
    200k segments (13.7M body terms) 0.5 s against 2.2 s, the same arrays."""
    keys = np.sort(keys, kind="stable")
    first = np.empty(len(keys), dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return keys[starts], np.diff(np.append(starts, len(keys)))


def _indptr(sizes: np.ndarray) -> np.ndarray:
    indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return indptr


def _bm25(rows: _Rows, n_terms: int, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lucene BM25 (Kamphuis et al., ECIR 2020) weight of every (term, document) pair:
    ``idf · tf / (tf + k1 (1 - b + b L / avgL))`` with ``idf = ln(1 + (N - df + 0.5) /
    (df + 0.5))``, as bm25s's ``index()`` computes it (idf rounded to float32, the rest in
    float64, the product rounded to float32), so each weight is bit for bit bm25s's.  Returned
    term-major (CSC: ``indptr`` over terms, document ``indices``, float32 ``data``), each term's
    documents ascending."""
    n = len(rows)
    doc = np.repeat(np.arange(n, dtype=np.int32), np.diff(rows.indptr))
    df = np.bincount(rows.terms, minlength=n_terms)
    values, which = np.unique(df, return_inverse=True)
    idf = np.array([math.log(1 + (n - d + 0.5) / (d + 0.5)) if d else 0.0
                    for d in values.tolist()]).astype(np.float32)[which]
    norm = K1 * ((1 - b) + b * rows.lengths.astype(np.float64) / rows.lengths.mean())
    tf = rows.counts.astype(np.float64)
    weights = (idf[rows.terms].astype(np.float64) * (tf / (norm[doc] + tf))).astype(np.float32)
    from scipy import sparse  # only an index build needs it

    # to term-major: SciPy's CSR -> CSC walks the rows in order, so each term's documents come
    # ascending, as a stable argsort by term put them (0.08 s against 0.9-1.9 s at 200k)
    by_term = sparse.csr_matrix((weights, rows.terms, rows.indptr), shape=(n, n_terms)).tocsc()
    return _indptr(df), by_term.indices.astype(np.int32, copy=False), by_term.data


@dataclass(frozen=True)
class Terms:
    """A tokenised corpus: each segment's head and body term counts, each section's (the context
    field), and what they belong to.  Kept per document version, so a new ingest tokenises only
    the documents it writes (``select`` keeps the versions still registered, ``join`` adds)."""

    vocab: list[str]
    ids: list[str]
    doc_ids: list[str]
    versions: dict[str, str]
    """document -> its version key"""
    titles: dict[str, str]
    has_head: np.ndarray
    head: _Rows
    body: _Rows
    context: _Rows | None
    context_of: np.ndarray
    context_docs: list[str]

    @classmethod
    def of(cls, texts: Sequence[LexicalText]) -> Terms:
        """Tokenise ``texts``; sections (``LexicalText.context``) are each a document of the
        context field: its segments' own heading lines and bodies (no context field when the
        texts have no section keys)."""
        counter = TermCounter()
        counter.add(texts)
        return counter.terms()

    def select(self, wanted: Mapping[str, int]) -> Terms:
        """The segments of the versions in ``wanted`` (version key -> its segment count) that
        hold exactly that many segments here; anything else is dropped."""
        count = Counter(self.doc_ids)
        docs = {d for d, v in self.versions.items() if wanted.get(v) == count[d]}
        rows = np.flatnonzero(np.fromiter((d in docs for d in self.doc_ids), dtype=bool,
                                          count=len(self.doc_ids)))
        context, context_of, context_docs = None, self.context_of[:0], []
        if self.context is not None:
            used, context_of = np.unique(self.context_of[rows], return_inverse=True)
            context = self.context.take(used)
            context_docs = [self.context_docs[i] for i in used.tolist()]
        return Terms(self.vocab, [self.ids[i] for i in rows.tolist()],
                     [self.doc_ids[i] for i in rows.tolist()],
                     {d: v for d, v in self.versions.items() if d in docs},
                     {d: t for d, t in self.titles.items() if d in docs},
                     self.has_head[rows], self.head.take(rows), self.body.take(rows), context,
                     context_of.astype(np.intp).reshape(-1), context_docs)

    @classmethod
    def join(cls, parts: Iterable[Terms]) -> Terms:
        """One corpus of ``parts`` (of distinct documents), rows in segment-id order: the order
        the store's scroll gives, which breaks ties between equal scores, so the same corpus
        ranks the same however its parts were tokenised."""
        parts = [p for p in parts if p.ids]
        if not parts:
            return cls.of([])
        words = _Vocabulary(parts[0].vocab)
        remaps = [np.array([words.id(t) for t in p.vocab], dtype=np.int32) for p in parts]
        ids = [i for p in parts for i in p.ids]
        order = np.argsort(np.array(ids), kind="stable")
        docs = [d for p in parts for d in p.doc_ids]
        if len(set(docs)) != sum(len(set(p.doc_ids)) for p in parts):
            raise ValueError("joined term tables share a document")
        with_context = all(p.context is not None for p in parts)
        offsets = np.cumsum([0] + [len(p.context_docs) for p in parts])
        context_of = np.concatenate([p.context_of + o for p, o in zip(parts, offsets)])
        return cls(words.terms, [ids[i] for i in order.tolist()],
                   [docs[i] for i in order.tolist()],
                   {d: v for p in parts for d, v in p.versions.items()},
                   {d: t for p in parts for d, t in p.titles.items()},
                   np.concatenate([p.has_head for p in parts])[order],
                   _Rows.join([p.head for p in parts], remaps).take(order),
                   _Rows.join([p.body for p in parts], remaps).take(order),
                   _Rows.join([p.context for p in parts], remaps)  # type: ignore[misc]
                   if with_context else None,
                   context_of[order] if with_context else context_of[:0],
                   [d for p in parts for d in p.context_docs] if with_context else [])

    def save(self, directory: Path) -> dict[str, object]:
        """The counts as ``.npy`` files in ``directory``; returns what ``LexicalIndex.save``
        writes into its ``index.json`` for ``load`` (ids, vocabulary, documents are shared)."""
        np.save(directory / "has_head.npy", self.has_head)
        fields = {"head": self.head, "body": self.body, "context": self.context}
        for name, rows in fields.items():
            for part in ("indptr", "terms", "counts", "lengths") if rows is not None else ():
                np.save(directory / f"{name}.counts.{part}.npy", getattr(rows, part))
        return {"versions": self.versions, "term_titles": self.titles,
                "counts": [name for name, rows in fields.items() if rows is not None]}

    @classmethod
    def load(cls, directory: Path) -> Terms | None:
        """The saved counts, whatever registry generation they were saved for; ``None`` if
        missing, half written or of another ``FORMAT``."""
        try:
            saved = json.loads((directory / "index.json").read_text())
            if saved.get("format") != FORMAT or "counts" not in saved:
                return None
            rows = {name: _Rows(*(np.load(directory / f"{name}.counts.{part}.npy")
                                  for part in ("indptr", "terms", "counts", "lengths")))
                    for name in saved["counts"]}
            return cls(saved["vocab"], saved["ids"], saved["doc_ids"], saved["versions"],
                       saved["term_titles"], np.load(directory / "has_head.npy"), rows["head"],
                       rows["body"], rows.get("context"),
                       np.load(directory / "context_of.npy").astype(np.intp),
                       saved["context_docs"])
        except (OSError, ValueError, KeyError, TypeError):
            return None


class TermCounter:
    """``Terms.of`` a few texts at a time: each ``add`` tokenises its texts at once, ``terms``
    assembles what was added.  An ingest's preparation (``hiqa.index.prepare``) adds every document
    it segments, so the tokenising is done by the time the lexical index is built (in the
    helper process, while the main one writes)."""

    def __init__(self) -> None:
        self._words = _Vocabulary()
        self._texts: list[LexicalText] = []
        self._head: list[list[int]] = []
        self._body: list[list[int]] = []
        self._sections: dict[str, int] = {}
        self._parts: list[list[int]] = []
        self._context_of: list[int] = []
        self._context_docs: list[str] = []

    def add(self, texts: Iterable[LexicalText]) -> None:
        words = self._words
        for x in texts:
            body = words.ids(x.body)
            self._texts.append(x)
            self._body.append(body)
            self._head.append(words.ids(x.head))
            if x.context is None:
                continue
            at = self._sections.get(x.context)
            if at is None:
                at = self._sections[x.context] = len(self._parts)
                self._parts.append([])
                self._context_docs.append(x.doc_id)
            self._context_of.append(at)
            own = x.head.rsplit(" > ", 1)[-1] if x.head else ""
            self._parts[at] += words.ids(own) + body if own else body

    def terms(self) -> Terms:
        texts = self._texts
        with_context = bool(texts) and len(self._context_of) == len(texts)
        return Terms(self._words.terms, [x.id for x in texts], [x.doc_id for x in texts],
                     {x.doc_id: x.version for x in texts}, {x.doc_id: x.title for x in texts},
                     np.array([bool(x.head) for x in texts], dtype=bool),
                     _Rows.of(self._head), _Rows.of(self._body),
                     _Rows.of(self._parts) if with_context else None,
                     np.asarray(self._context_of if with_context else [], dtype=np.intp),
                     self._context_docs if with_context else [])


def gather_terms(wanted: Mapping[str, int], directory: Path,
                 fresh: Sequence[Terms] = ()) -> tuple[list[Terms], dict[str, int]]:
    """The term tables of the versions in ``wanted`` (version key -> segment count) that
    ``fresh`` or the counts saved in ``directory`` hold, ``fresh`` first; and the versions
    neither holds."""
    left = dict(wanted)
    parts = []
    for part in (*fresh, Terms.load(directory)):
        if part is not None:
            part = part.select(left)
            for v in part.versions.values():
                left.pop(v, None)
            parts.append(part)
    return parts, left


class _Field:
    """One BM25 field: its term-document weight matrix (CSC, ``_bm25``) and the vocabulary.

    ``bm25s.BM25.get_scores`` sums a query's rows with one ``np.add.at`` per term, in query
    order, in float32; ``sums`` does the same sums with one ``np.add.at`` over the query's rows
    concatenated, which ``ufunc.at`` also applies element by element in order, so every score
    is bit for bit what bm25s returns, without its per-call overhead.
    """

    def __init__(self, vocab: dict[str, int], indptr: np.ndarray, indices: np.ndarray,
                 data: np.ndarray, n: int):
        self.vocab = vocab
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.n = n

    def named_postings(self, title_docs: dict[str, np.ndarray], codes: np.ndarray
                       ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """For each title term, the documents of this field it occurs in *and* whose document
        it names (``codes``: each field document's document as an integer), with its weight
        there as float64: exactly what a query holding the term takes back.  One pass over the
        title terms' rows, done once per term and index instead of once per query."""
        names = [t for t in title_docs if t in self.vocab]
        if not names or not len(codes):
            return {}
        rows = [np.arange(self.indptr[r], self.indptr[r + 1]) for r in
                (self.vocab[t] for t in names)]
        entry = np.concatenate(rows)  # positions in the matrix of every title term's postings
        owner = np.repeat(np.arange(len(names)), [len(r) for r in rows])  # and whose they are
        span = int(codes.max()) + 1
        wanted = np.concatenate([i * span + title_docs[t] for i, t in enumerate(names)])
        hit = np.isin(owner * span + codes[self.indices[entry]], wanted)
        entry, bounds = entry[hit], np.searchsorted(owner[hit], np.arange(len(names) + 1))
        return {t: (self.indices[entry[lo:hi]], self.data[entry[lo:hi]].astype(np.float64))
                for t, lo, hi in zip(names, bounds[:-1], bounds[1:]) if hi > lo}

    def sums(self, tokens: Sequence[str]) -> np.ndarray:
        """float32 BM25 score of every document for ``tokens`` (a repeated token counts again)."""
        scores = np.zeros(self.n, dtype=self.data.dtype)
        rows = [r for r in map(self.vocab.get, tokens) if r is not None]
        if not rows:
            return scores
        spans = self.indptr[np.array(rows)[:, None] + (0, 1)].tolist()
        if len(spans) == 1:  # one row: no repeats to accumulate
            start, end = spans[0]
            scores[self.indices[start:end]] = self.data[start:end]
        else:
            np.add.at(scores, np.concatenate([self.indices[a:b] for a, b in spans]),
                      np.concatenate([self.data[a:b] for a, b in spans]))
        return scores


def _without_title_terms(sums: np.ndarray, title_terms: Counter[str],
                         named: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """A field's scores (float64) with each title term's share taken back in the documents
    it names, floored at 0 (a float32 sum can round below the share it holds).  Only those
    documents change; every other score is a sum of positive weights."""
    scores = sums.astype(np.float64)
    changed = []
    for t, count in title_terms.items():
        if t in named:
            docs, weights = named[t]
            scores[docs] -= count * weights
            changed.append(docs)
    if changed:
        docs = np.concatenate(changed) if len(changed) > 1 else changed[0]
        scores[docs] = np.maximum(scores[docs], 0.0)
    return scores


class LexicalIndex:
    """BM25 scores for every indexed segment, aligned with ``ids``.

    ``context_of[i]`` is the position of segment ``i``'s section in the context field.
    """

    def __init__(self, ids: Sequence[str], doc_ids: Sequence[str] | None = None, *,
                 vocab: Sequence[str] = (), fields: Mapping[str, _Field] | None = None,
                 context_of: Sequence[int] | np.ndarray = (), context_docs: Sequence[str] = (),
                 titles: dict[str, str] | None = None):
        self.ids = list(ids)
        self.doc_ids = np.asarray(list(doc_ids) if doc_ids is not None else [""] * len(self.ids),
                                  dtype=object)
        self.vocab = list(vocab)
        self._fields = dict(fields or {})
        self._body = self._fields.get("body")
        self._head = self._fields.get("head")
        self._context = self._fields.get("context")
        self._context_of = np.asarray(context_of, dtype=np.intp)
        self._context_docs = np.asarray(list(context_docs), dtype=object)
        self._pos = {sid: i for i, sid in enumerate(self.ids)}
        self.titles = dict(titles or {})
        # documents as small integers, so (title term, document) pairs match as integers
        code = {d: i for i, d in enumerate(dict.fromkeys([*self.doc_ids, *self._context_docs]))}
        by_term: dict[str, list[int]] = {}
        for doc, title in self.titles.items():
            for t in set(terms(title)):
                if doc in code:
                    by_term.setdefault(t, []).append(code[doc])
        self._title_docs = {t: np.array(c, dtype=np.int64) for t, c in by_term.items()}
        self._title_terms = frozenset(self._title_docs)
        self._codes = {"body": np.array([code[d] for d in self.doc_ids], dtype=np.int64),
                       "context": np.array([code[d] for d in self._context_docs], dtype=np.int64)}
        self._named: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {
            "body": {}, "context": {}}

    def _named_postings(self, field: str, title_terms: Iterable[str]
                        ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Title term -> (documents of ``field`` it names, its weight there), each term's
        computed the first time a question holds it: at 200,000 segments computing every title
        term's when the index opened cost 0.3 s of opening (docs/benchmarks.md, Store)."""
        named = self._named[field]
        new = {t: self._title_docs[t] for t in title_terms if t not in named}
        if new:
            found = self._fields[field].named_postings(new, self._codes[field])
            none = (np.zeros(0, dtype=np.intp), np.zeros(0))
            named.update({t: found.get(t, none) for t in new})
        return named

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str],
              doc_ids: Sequence[str] | None = None,
              heads: Sequence[str] | None = None,
              titles: dict[str, str] | None = None,
              contexts: Sequence[str] | None = None) -> LexicalIndex:
        """Index the segments' bodies (``texts``), ``heads`` (cascaded paths, when the strategy
        has them) and ``contexts`` (a key naming each segment's section: segments with one key
        form one context document).  ``doc_ids`` (aligned) lets queries be scoped to documents;
        ``titles`` (document id -> title) keeps title terms out of that document's body and
        context scores."""
        n = len(ids)
        docs = list(doc_ids) if doc_ids is not None else [""] * n
        keys: Sequence[str | None] = contexts if contexts is not None else [None] * n
        titles = titles or {}
        return cls.from_terms(Terms.of([
            LexicalText(i, d, d, h or "", t, c, titles.get(d, "")) for i, t, d, h, c in
            zip(ids, texts, docs, heads or [""] * n, keys)]))

    @classmethod
    def from_terms(cls, t: Terms) -> LexicalIndex:
        """The index of a tokenised corpus, its rows in the corpus's order."""
        if not t.ids:
            return cls([])
        vocab = {w: i for i, w in enumerate(t.vocab)}
        fields = {"body": _Field(vocab, *_bm25(t.body, len(vocab), B), len(t.ids))}
        if t.has_head.any():
            fields["head"] = _Field(vocab, *_bm25(t.head, len(vocab), HEAD_B), len(t.ids))
        if t.context is not None:
            fields["context"] = _Field(vocab, *_bm25(t.context, len(vocab), B),
                                       len(t.context_docs))
        return cls(t.ids, t.doc_ids, vocab=t.vocab, fields=fields, context_of=t.context_of,
                   context_docs=t.context_docs, titles=t.titles if "head" in fields else None)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every segment, head + body + context (0 where no query term occurs)."""
        if self._body is None:
            return np.zeros(len(self.ids), dtype=np.float64)
        tokens = terms(query)
        title_terms = Counter(t for t in tokens if t in self._title_terms)
        total = _without_title_terms(self._body.sums(tokens), title_terms,
                                     self._named_postings("body", title_terms))
        if self._head is not None:
            total += self._head.sums(tokens)
        if self._context is not None:
            context = _without_title_terms(self._context.sums(tokens), title_terms,
                                           self._named_postings("context", title_terms))
            total += context.take(self._context_of)
        return total

    def position(self, segment_id: str) -> int | None:
        return self._pos.get(segment_id)

    def positions(self, segment_ids: Sequence[str]) -> np.ndarray:
        """Each id's position in the arrays ``scores`` returns, -1 where the index lacks it:
        a candidate list's scores are then one fancy index, not a loop over the candidates."""
        get = self._pos.get
        return np.fromiter((get(sid, -1) for sid in segment_ids), dtype=np.intp,
                           count=len(segment_ids))

    def sections(self, positions: np.ndarray) -> np.ndarray:
        """The heading section of the segments at ``positions`` (as ``positions()`` gives
        them): its row in the context field, or, where the index has no context field (``fixed``
        windows have no section), a number of the segment's own."""
        if len(self._context_of) == len(self.ids):
            return self._context_of[positions]
        return -1 - positions  # negative: never a context row

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, directory: Path, generation: str, terms: Terms | None = None) -> None:
        """The weight matrices as ``.npy`` files (memory-mapped by ``load``) and, with
        ``terms`` (the corpus this index was built from), its term counts for the next
        incremental build."""
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory.with_name(directory.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for name, field in self._fields.items():
            for part in ("indptr", "indices", "data"):
                np.save(tmp / f"{name}.{part}.npy", getattr(field, part))
        np.save(tmp / "context_of.npy", self._context_of)
        saved = terms.save(tmp) if terms is not None else {}
        (tmp / "index.json").write_text(json.dumps({
            "format": FORMAT, "generation": generation, "ids": self.ids,
            "doc_ids": [str(d) for d in self.doc_ids], "titles": self.titles,
            "fields": list(self._fields), "vocab": self.vocab,
            "context_docs": [str(d) for d in self._context_docs], **saved}))
        # index.json goes last: it names the generation, so a crash mid-save reads as stale.
        (directory / "index.json").unlink(missing_ok=True)
        for f in directory.iterdir():
            if f.is_dir():
                shutil.rmtree(f)
            else:
                f.unlink()
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "index.json"):
            f.replace(directory / f.name)
        tmp.rmdir()

    @classmethod
    def load(cls, directory: Path, generation: str) -> LexicalIndex | None:
        """The saved index if it was built for ``generation``; ``None`` if missing or stale."""
        try:
            saved = json.loads((directory / "index.json").read_text())
        except (OSError, ValueError):
            return None
        if saved.get("generation") != generation or saved.get("format") != FORMAT:
            return None
        if not saved["ids"]:
            return cls([])
        vocab = {w: i for i, w in enumerate(saved["vocab"])}
        sizes = {"context": len(saved["context_docs"])}
        try:
            fields = {name: _Field(vocab, *_mapped(directory, name),
                                   sizes.get(name, len(saved["ids"])))
                      for name in saved["fields"]}
            context_of = np.load(directory / "context_of.npy")
        except (OSError, ValueError):
            return None  # a half-written or foreign index: rebuild from the store
        return cls(saved["ids"], saved["doc_ids"], vocab=saved["vocab"], fields=fields,
                   context_of=context_of, context_docs=saved["context_docs"],
                   titles=saved["titles"])


def _mapped(directory: Path, field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A saved field's matrix, memory-mapped, as plain arrays (slicing an ``np.memmap`` costs a
    Python call, and a query slices every query term's row)."""
    indptr, indices, data = (np.asarray(np.load(directory / f"{field}.{part}.npy", mmap_mode="r"))
                             for part in ("indptr", "indices", "data"))
    return indptr, indices, data
