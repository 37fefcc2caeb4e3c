"""Term counts for the lexical route: tokenising, stemming, and the BM25 weights built from counts.

Each document version's term counts are kept (``Terms``, saved with the index), so an ingest
tokenises only the documents it writes and recomputes the weights, whose N, average length and
idf are collection-wide, from the counts (``hiqa.index.lexical`` explains the fields and the
measurements).  The helper process of an ingest (``hiqa.index.prepare``) counts here too.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np
import Stemmer

from hiqa.augment import head_and_body
from hiqa.model import Segment
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


def bm25_weights(rows: _Rows, n_terms: int, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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



def lexical_text(seg: Segment, version: str) -> LexicalText:
    """What the lexical route indexes of ``seg``, of registered version ``version``."""
    head, body = head_and_body(seg.strategy, seg.path, seg.augmented_text)
    return LexicalText(seg.segment_id, seg.doc_id, version, head, body, context_key(seg),
                       seg.doc_title)


def context_key(seg: Segment) -> str:
    """The lexical context of a segment: its document and ``Segment.context_path`` (a term's
    parent section).  ``fixed`` windows have no section: each is its own context."""
    if not seg.context_path:
        return "\x1f".join((seg.doc_id, str(seg.order), str(seg.piece)))
    return "\x1f".join((seg.doc_id, *seg.context_path))

