"""Lexical route: Okapi BM25 (bm25s) over the augmented text, with HiQA's tokeniser.

bm25s rather than rank-bm25: both compute the same Okapi scores, but bm25s precomputes a sparse
term-document matrix so a query costs a few sparse row sums instead of a Python loop over every
document (see ``bench/bench_retrieval.py`` and the README for the measured ratio).  The index is
derived data: it is saved beside the collection and rebuilt from the Qdrant payloads when
missing or stale.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from .tokenize import tokenize

logging.getLogger("bm25s").setLevel(logging.ERROR)

K1 = 1.5
B = 0.75


class LexicalIndex:
    """BM25 scores for every indexed segment, aligned with ``ids``."""

    def __init__(self, ids: Sequence[str], retriever: bm25s.BM25 | None,
                 doc_ids: Sequence[str] | None = None):
        self.ids = list(ids)
        self.doc_ids = np.asarray(list(doc_ids) if doc_ids is not None else [""] * len(self.ids),
                                  dtype=object)
        self._retriever = retriever
        self._pos = {sid: i for i, sid in enumerate(self.ids)}

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str],
              doc_ids: Sequence[str] | None = None) -> LexicalIndex:
        """Index ``texts``; ``doc_ids`` (aligned) lets queries be scoped to documents."""
        if not ids:
            return cls([], None, [])
        retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        retriever.index([tokenize(t) or [""] for t in texts], show_progress=False)
        return cls(ids, retriever, doc_ids)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every segment (0 where no query term occurs)."""
        if self._retriever is None:
            return np.zeros(0, dtype=np.float64)
        tokens = tokenize(query)
        vocab = self._retriever.vocab_dict
        known = [t for t in tokens if t in vocab]
        if not known:
            return np.zeros(len(self.ids), dtype=np.float64)
        return np.asarray(self._retriever.get_scores(known), dtype=np.float64)

    def position(self, segment_id: str) -> int | None:
        return self._pos.get(segment_id)

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, directory: Path, generation: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory.with_name(directory.name + ".tmp")
        tmp.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(tmp), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps({"generation": generation, "ids": self.ids,
                                                  "doc_ids": [str(d) for d in self.doc_ids]}))
        # ids.json goes last: it names the generation, so a crash mid-save reads as stale.
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "ids.json"):
            f.replace(directory / f.name)
        tmp.rmdir()

    @classmethod
    def load(cls, directory: Path, generation: str) -> LexicalIndex | None:
        """The saved index if it was built for ``generation``; ``None`` if missing or stale."""
        meta = directory / "ids.json"
        try:
            saved = json.loads(meta.read_text())
        except (OSError, ValueError):
            return None
        if saved.get("generation") != generation:
            return None
        if not saved["ids"]:
            return cls([], None, [])
        if len(saved.get("doc_ids", ())) != len(saved["ids"]):
            return None  # written by an older version: rebuild
        try:
            retriever = bm25s.BM25.load(str(directory), show_progress=False)
        except Exception:
            return None
        return cls(saved["ids"], retriever, saved["doc_ids"])
