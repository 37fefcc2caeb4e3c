"""Lexical route: BM25 (bm25s) over the augmented text, with HiQA's tokeniser.

Two fields, in the spirit of BM25F (Robertson, Zaragoza & Taylor 2004): the segment's *head*
(the cascaded path that HCA puts on the first line: ``doc > section > term``) and its *body*.
One field would let a question that names the document favour the document's shortest segments
(its one-line summary, its synopsis): the name matches every segment of the document, and
BM25's length normalisation rewards the short ones.  So the head is scored with ``b = 0`` (no
length normalisation: every segment of a document gets the same credit for the document's
name, and a segment whose own heading or term matches gets more), the body with Okapi's
``b = 0.75``, and the two scores add up.

Word terms (letters only) are stemmed with Snowball's English stemmer, so "counts" meets
"count"; identifiers, options and CJK bigrams are left as the tokeniser wrote them.

bm25s rather than rank-bm25: both compute the same Okapi scores, but bm25s precomputes a sparse
term-document matrix so a query costs a few sparse row sums instead of a Python loop over every
document (see ``bench/bench_retrieval.py`` and the README for the measured ratio).  The index is
derived data: it is saved beside the collection and rebuilt from the Qdrant payloads when
missing or stale.
"""
from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from .tokenize import tokenize

logging.getLogger("bm25s").setLevel(logging.ERROR)

K1 = 1.5
B = 0.75
HEAD_B = 0.0
FORMAT = 2
"""Version of the saved index layout and term rules: an index saved by another is rebuilt."""

_STEMMER = Stemmer.Stemmer("english")


def terms(text: str) -> list[str]:
    """BM25 terms: HiQA's tokens with plain (ASCII-letter) words stemmed."""
    tokens = tokenize(text)
    words = [i for i, t in enumerate(tokens) if t.isascii() and t.isalpha()]
    if words:
        stems = _STEMMER.stemWords([tokens[i] for i in words])
        for i, stem in zip(words, stems):
            tokens[i] = stem
    return tokens


def _index(texts: Sequence[str], b: float) -> bm25s.BM25:
    retriever = bm25s.BM25(k1=K1, b=b, method="lucene")
    retriever.index([terms(t) or [""] for t in texts], show_progress=False)
    return retriever


def _scores(retriever: bm25s.BM25 | None, tokens: list[str], n: int) -> np.ndarray:
    if retriever is None:
        return np.zeros(n, dtype=np.float64)
    known = [t for t in tokens if t in retriever.vocab_dict]
    if not known:
        return np.zeros(n, dtype=np.float64)
    return np.asarray(retriever.get_scores(known), dtype=np.float64)


class LexicalIndex:
    """BM25 scores for every indexed segment, aligned with ``ids``."""

    def __init__(self, ids: Sequence[str], retriever: bm25s.BM25 | None,
                 doc_ids: Sequence[str] | None = None, head: bm25s.BM25 | None = None):
        self.ids = list(ids)
        self.doc_ids = np.asarray(list(doc_ids) if doc_ids is not None else [""] * len(self.ids),
                                  dtype=object)
        self._retriever = retriever
        self._head = head
        self._pos = {sid: i for i, sid in enumerate(self.ids)}

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str],
              doc_ids: Sequence[str] | None = None,
              heads: Sequence[str] | None = None) -> LexicalIndex:
        """Index ``texts`` (bodies) and ``heads`` (their cascaded paths, when the strategy has
        them); ``doc_ids`` (aligned) lets queries be scoped to documents."""
        if not ids:
            return cls([], None, [])
        head = _index(heads, HEAD_B) if heads is not None and any(heads) else None
        return cls(ids, _index(texts, B), doc_ids, head)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every segment, head + body (0 where no query term occurs)."""
        if self._retriever is None:
            return np.zeros(0, dtype=np.float64)
        tokens = terms(query)
        n = len(self.ids)
        return _scores(self._retriever, tokens, n) + _scores(self._head, tokens, n)

    def position(self, segment_id: str) -> int | None:
        return self._pos.get(segment_id)

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, directory: Path, generation: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory.with_name(directory.name + ".tmp")
        tmp.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(tmp / "body"), show_progress=False)
        if self._head is not None:
            self._head.save(str(tmp / "head"), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps({
            "format": FORMAT, "generation": generation, "ids": self.ids,
            "doc_ids": [str(d) for d in self.doc_ids], "head": self._head is not None}))
        # ids.json goes last: it names the generation, so a crash mid-save reads as stale.
        (directory / "ids.json").unlink(missing_ok=True)
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "ids.json"):
            target = directory / f.name
            if target.is_dir():
                shutil.rmtree(target)
            f.replace(target)
        tmp.rmdir()

    @classmethod
    def load(cls, directory: Path, generation: str) -> LexicalIndex | None:
        """The saved index if it was built for ``generation``; ``None`` if missing or stale."""
        meta = directory / "ids.json"
        try:
            saved = json.loads(meta.read_text())
        except (OSError, ValueError):
            return None
        if saved.get("generation") != generation or saved.get("format") != FORMAT:
            return None
        if not saved["ids"]:
            return cls([], None, [])
        if len(saved.get("doc_ids", ())) != len(saved["ids"]):
            return None  # written by an older version: rebuild
        try:
            retriever = bm25s.BM25.load(str(directory / "body"), show_progress=False)
            head = (bm25s.BM25.load(str(directory / "head"), show_progress=False)
                    if saved.get("head") else None)
        except Exception:
            return None
        return cls(saved["ids"], retriever, saved["doc_ids"], head)
