"""An on-disk embedding cache, so no text is embedded twice by the same model.

Re-ingesting a collection, indexing it with another segmentation strategy or running an
evaluation again embeds mostly texts that were embedded before; on a 2-core machine e5 manages
about 10 segments of ~530 characters a second (``bench/bench_embed.py --bound``), so this is
where most ingestion time goes.  Vectors are keyed by
``(model_id, kind, sha256(text))``: a different model, or the query side of the same model,
never answers for another.  One SQLite file in WAL mode holds them; SQLite's locking makes it
safe for two processes (say the CLI and the app) to read and write it at once.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal, Self

import numpy as np

from hiqa.embed.base import Batch, Embedder, Progress, collect
from hiqa.errors import StorageError

Kind = Literal["passage", "query"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, kind, text_sha256)
) WITHOUT ROWID
"""
_SQL_VARIABLES = 500
"""Hashes per ``IN (...)`` lookup, well under SQLite's limit on bound parameters."""


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Vectors on disk in ``directory/embeddings.sqlite3``, float32 little-endian blobs.

    ``timeout`` is how long a writer waits for another process's write lock before failing.
    One instance may be shared between threads.
    """

    FILENAME = "embeddings.sqlite3"

    def __init__(self, directory: str | os.PathLike[str], timeout: float = 30.0):
        self.path = Path(directory) / self.FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False)
        try:
            self._set_up(timeout)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StorageError(
                f"the embedding cache {self.path} cannot be used ({exc}). It only saves time: "
                "delete it (it is rebuilt), or set HIQA_CACHE_DIR to a writable folder"
            ) from exc

    def _set_up(self, timeout: float) -> None:
        """WAL mode and the table, retried while another process is setting up the same file.

        Switching a new file to WAL takes an exclusive lock, and SQLite answers "database is
        locked" at once, without its busy handler, when two connections race for it (CI saw two
        processes open a fresh cache together); so wait and retry, up to ``timeout``.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self._lock, self._conn:
                    mode = self._conn.execute("PRAGMA journal_mode").fetchone()[0]
                    if str(mode).lower() != "wal":
                        self._conn.execute("PRAGMA journal_mode=WAL")
                    self._conn.execute("PRAGMA synchronous=NORMAL")
                    self._conn.execute(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def get(
        self, model_id: str, kind: Kind, texts: Sequence[str], dim: int
    ) -> list[np.ndarray | None]:
        """The cached vector of each text, or ``None`` where there is none of length ``dim``."""
        keys = [text_key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), _SQL_VARIABLES):
                chunk = keys[start : start + _SQL_VARIABLES]
                rows = self._conn.execute(
                    "SELECT text_sha256, vector FROM embeddings WHERE model_id = ? AND kind = ? "
                    f"AND text_sha256 IN ({','.join('?' * len(chunk))})",
                    (model_id, kind, *chunk),
                )
                for key, blob in rows:
                    if len(blob) == 4 * dim:
                        found[key] = np.frombuffer(blob, dtype="<f4")
        return [found.get(key) for key in keys]

    def put(self, model_id: str, kind: Kind, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, replacing what was there (one transaction)."""
        rows = [
            (model_id, kind, text_key(t), np.asarray(v, dtype="<f4").tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        with self._lock, self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def count(self, model_id: str | None = None) -> int:
        """Cached vectors, of one model or of all."""
        sql, args = "SELECT COUNT(*) FROM embeddings", []
        if model_id is not None:
            sql, args = sql + " WHERE model_id = ?", [model_id]
        with self._lock:
            return int(self._conn.execute(sql, args).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CachedEmbedder:
    """``embedder`` behind an ``EmbeddingCache``: only texts the cache lacks reach the model.

    Order is preserved and a text repeated within one call is embedded once.  Each batch the
    model finishes is stored at once, so an interrupted ingestion keeps all but the batches in
    flight.  ``progress(done, total)`` counts *all* texts: the cached ones are reported at once,
    then the misses after every batch, so a progress bar starts where the cache left off and
    keeps moving.  ``hits`` counts texts answered by the cache and ``misses`` texts sent to the
    model, since construction.  It is itself an ``Embedder``, with the wrapped model's id.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache):
        self.embedder = embedder
        self.cache = cache
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def dim(self) -> int:
        return self.embedder.dim

    @property
    def max_tokens(self) -> int:
        return self.embedder.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.embedder.count_tokens(text)

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return collect(self.embed_batches(texts), len(texts), self.dim, progress)

    def embed_batches(self, texts: Sequence[str]) -> Iterator[Batch]:
        """The cached vectors first (one batch), then the model's batches as they finish,
        each stored before it is yielded; a batch's ``rows`` include every repeat of its texts.
        """
        texts = list(texts)
        cached = self.cache.get(self.model_id, "passage", texts, self.dim)
        missing: dict[str, list[int]] = {}
        hit_rows: list[int] = []
        for i, (text, vector) in enumerate(zip(texts, cached)):
            if vector is None:
                missing.setdefault(text, []).append(i)
            else:
                hit_rows.append(i)
        self.hits += len(hit_rows)
        if hit_rows:
            yield hit_rows, np.stack([cached[i] for i in hit_rows])  # type: ignore[misc]
        todo = list(missing)
        for rows, vectors in self.embedder.embed_batches(todo):
            batch = [todo[r] for r in rows]
            self.cache.put(self.model_id, "passage", batch, vectors)
            self.misses += len(batch)
            repeats = [len(missing[text]) for text in batch]
            yield [i for text in batch for i in missing[text]], np.repeat(vectors, repeats, axis=0)

    def embed_query(self, text: str) -> np.ndarray:
        cached = self.cache.get(self.model_id, "query", [text], self.dim)[0]
        if cached is not None:
            self.hits += 1
            return cached.copy()
        self.misses += 1
        vector = self.embedder.embed_query(text)
        self.cache.put(self.model_id, "query", [text], vector[None, :])
        return vector
