"""Qdrant Edge: Qdrant's own engine in-process, one shard per collection (the default store).

Measured against Qdrant's Python local mode at 20k and 200k segments in ``bench/bench_store.py``
(docs/benchmarks.md, Store): it opens in a fraction of a second, searches in Rust and keeps its vectors in
memory-mapped segments instead of Python lists.  A shard allows one process, as local mode did;
the error for a second one says which process holds it.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from hiqa.errors import CollectionError
from hiqa.files import MB, LockBusy, check_free_space, file_lock

LOG = logging.getLogger("hiqa.store")
OPEN_HEADROOM = 96 * MB
"""Free space a shard needs to open: Qdrant Edge maps its write-ahead log in 32 MB files and
prepares the next one when it opens (a search, too), and its vector and payload files grow in
32 MB chunks as points come; on a full file system a touch of such a page is a SIGBUS.  Three
chunks: the log's next file and one chunk each for the vectors and the payloads an ingest
starts writing."""
from hiqa.index.payload import HEAD_FIELD, INDEXED_FIELDS
from hiqa.index.store.base import (
    BATCH,
    DENSE_OVERSAMPLING,
    QUANTILE,
    QUANTIZED_VECTORS,
    SEARCHED_VECTORS,
    VECTOR_NAMES,
    Record,
    Store,
    hnsw_ef,
    record_of,
    storage_error,
)

_SCROLL = 1024
HNSW_FROM = 50_000
"""Points from which ``optimize`` has the shard build its int8 copy of ``hca``
(``QUANTIZED_VECTORS``) and the HNSW graph on it.  Below it the dense route is an exact scan
of the float vectors, a few milliseconds (1.3 ms at 20k points), and rankings are exactly those
of the maths; a float scan grows to 15-32 ms at 200k, where the graph answers in about a
millisecond at recall@10 0.9995 (docs/benchmarks.md, Store).  A scan of the int8 copy without a graph was
measured too and not kept: at 200k it saved 22 s of the 38-41 s build, but the bench's p50 went
from 7.2 to 13.4 ms and a search filtered on registered versions (a store holding points of an
unfinished ingest) took 47 ms, which a graph answers as fast as an unfiltered one."""
SEGMENT_POINTS = HNSW_FROM
"""Points of one built segment.  Edge builds nothing until ``optimize`` is called, so an
ingest's points all land in one segment; built whole at the end, a 200k-point segment took
longer than four of 50k (Qdrant: "large segments might require disproportionately long
indexation times", hence its ``max_segment_size``).  So an ingest has the shard build each
``SEGMENT_POINTS`` new points once they are written (``build_due``), and the shard's
``max_segment_size`` keeps its optimizer from merging them back into one (docs/benchmarks.md, Store).  A
dense search walks each segment's graph: four at 200k points."""


def _segment_kb(dim: int) -> int:
    """``max_segment_size``: ``SEGMENT_POINTS`` points' worth of one vector (``dim`` floats),
    in kilobytes, Qdrant's unit for it ("1 KB = 1 vector of size 256")."""
    return max(1, SEGMENT_POINTS * int(dim) * 4 // 1024)


def _config(dim: int) -> qe.EdgeConfig:
    # Qdrant's defaults but m=0: no graph (the binding wants all three fields)
    no_graph = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)
    # the int8 copy memory-mapped: held in RAM it is read whole at every open, 0.9 s per
    # 100k points; ``EdgeStore.shard`` reads the mapped files ahead instead (``_read_ahead``)
    int8 = qe.ScalarQuantizationConfig(qe.ScalarType.Int8, quantile=QUANTILE,
                                       memory=qe.Memory.Cold)
    return qe.EdgeConfig(vectors={
        v: qe.EdgeVectorParams(
            size=int(dim), distance=qe.Distance.Cosine,
            hnsw_config=None if v in SEARCHED_VECTORS else no_graph,
            quantization_config=int8 if v in QUANTIZED_VECTORS else None)
        for v in VECTOR_NAMES},
        optimizers=qe.EdgeOptimizersConfig(max_segment_size=_segment_kb(dim)))


def _read_ahead(directory: Path) -> None:
    """Read the shard's int8 vector files once, in large blocks, so that the OS holds them.

    Qdrant maps them for random access, so the first search of a fresh process fetched them a
    page at a time: 0.2 s through the graph of a bare 100k-point shard, 1.3 s when it scanned
    200k points; after this read (0.1 s at 200k) that scan took 11 ms.  The file name is
    Qdrant's; if it changes, only the first search slows down
    (``test_the_int8_copy_is_read_ahead_at_open`` checks that the name still matches)."""
    for path in directory.glob("segments/*/vector_storage-*/quantized.data"):
        try:
            with path.open("rb") as fh:
                while fh.read(1 << 22):
                    pass
        except OSError:
            pass


def _doc_filter(doc_id: str, keep: str | None = None, *, heads: bool = False) -> qe.Filter:
    """A document's points: all, all but those of version key ``keep``, or (``heads``) its
    head points only (``HEAD_FIELD``)."""
    must: list[Any] = [qe.FieldCondition(key="doc_id", match=qe.MatchValue(doc_id))]
    must_not: list[Any] = []
    if keep is not None:
        must_not.append(qe.FieldCondition(key="doc_version", match=qe.MatchValue(keep)))
    if heads:
        must_not.append(qe.IsEmptyCondition(HEAD_FIELD))
    return qe.Filter(must=must, must_not=must_not) if must_not else qe.Filter(must=must)


def _payload_selector(fields: Sequence[str] | bool) -> Any:
    return fields if isinstance(fields, bool) else list(fields)


class _Uses:
    """How many threads are inside a store call now, and since when none has been: what lets a
    long-running process (the app) hand an idle shard to another one (``release_if_idle``)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        """Held to open or close the shard and to count calls in and out."""
        self.active = 0
        self.since = time.monotonic()

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self.lock:
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1
                self.since = time.monotonic()

    def idle(self) -> float:
        """Seconds since the last call ended (while one runs, since the one before)."""
        return time.monotonic() - self.since


def _in_use(method: Callable[..., Any]) -> Callable[..., Any]:
    """A store call: counted, so the shard is never closed under it."""
    @functools.wraps(method)
    def call(self: EdgeStore, *args: Any, **kwargs: Any) -> Any:
        with self._uses():
            return method(self, *args, **kwargs)
    return call


class EdgeStore(Store):
    """A Qdrant Edge shard in ``directory`` (created by ``create``)."""

    def __init__(self, directory: Path, name: str, wait_s: float = 0.0):
        self.directory = directory
        self.name = name
        self.wait_s = wait_s
        """How long opening waits for another process to release the shard (``HIQA_STORE_WAIT``)."""
        self.where = str(directory)
        self.writes: int = 0
        self.unbuilt = 0
        """searchable points this handle wrote since the shard last built (``upsert``)"""
        self._segmented: bool | None = None
        self._shard: qe.EdgeShard | None = None
        self._held: contextlib.ExitStack | None = None
        """the ``OWNER`` lock while the shard is open (``_open_shard``)"""
        self._uses = _Uses()

    # ------------------------------------------------------------------ life cycle
    def exists(self) -> bool:
        return (self.directory / "edge_config.json").is_file()

    @property
    def shard(self) -> qe.EdgeShard:
        with self._uses.lock:
            if self._shard is None:
                if not self.exists():
                    raise CollectionError(f"the store of collection {self.name!r} is missing "
                                          f"({self.directory})")
                check_free_space(self.directory, OPEN_HEADROOM, "opening the store")
                self._shard = _open_shard(self, lambda: qe.EdgeShard.load(str(self.directory)))
                _read_ahead(self.directory)
            return self._shard

    def kept_open(self) -> contextlib.AbstractContextManager[None]:
        return self._uses()

    def release_if_idle(self, idle_s: float) -> bool:
        """Close the shard if no call used it for ``idle_s`` seconds, so that another process
        (a CLI command beside the app) can open it; the next call here opens it again."""
        with self._uses.lock:
            if self._shard is None or self._uses.active or self._uses.idle() < idle_s:
                return False
            self.close()
            return True

    @_in_use
    def create(self, dim: int) -> None:
        config = _config(dim)
        self._segmented = None
        check_free_space(self.directory, OPEN_HEADROOM, "creating the store")
        self._shard = _open_shard(self, lambda: qe.EdgeShard.create(str(self.directory), config))
        for field_name in INDEXED_FIELDS:
            self._shard.update(qe.UpdateOperation.create_field_index(
                field_name, qe.PayloadSchemaType.Keyword))

    def _saved_config(self) -> dict[str, Any]:
        import json

        try:
            cfg = json.loads((self.directory / "edge_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return cfg if isinstance(cfg, dict) else {}

    def dimension(self) -> int | None:
        try:
            return int(self._saved_config()["vectors"]["hca"]["size"])
        except (KeyError, TypeError, ValueError):
            return None

    @_in_use
    def optimize(self) -> bool:
        """Have the shard build its int8 copy and HNSW graph once it holds ``HNSW_FROM``
        points."""
        if not self.exists():
            return False
        self.unbuilt = 0
        if self.count() < HNSW_FROM:
            return False
        built = bool(self.shard.optimize())
        if built:  # the searches this process makes next read the new copy
            _read_ahead(self.directory)
        return built

    def build_due(self) -> bool:
        """Whether this handle wrote ``SEGMENT_POINTS`` searchable points since the last
        build, in a shard whose optimizer keeps built segments apart (``max_segment_size``; a
        shard created before it would merge them, rewriting each again, so it is built once,
        at the end, as before)."""
        if self.unbuilt < SEGMENT_POINTS:
            return False
        if self._segmented is None:
            optimizers = self._saved_config().get("optimizers") or {}
            self._segmented = bool(isinstance(optimizers, dict)
                                   and optimizers.get("max_segment_size"))
        return self._segmented

    def close(self) -> None:
        """Flush and close the shard, drop it, and only then let another process have it
        (``_open_shard`` says why the order matters)."""
        with self._uses.lock:
            if self._shard is not None:
                try:
                    self._shard.flush()
                finally:
                    try:
                        self._shard.close()
                    finally:
                        self._shard = None  # the last reference: Edge's files are closed
                        held, self._held = self._held, None
                        if held is not None:
                            held.close()

    def drop(self) -> None:
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        self.unbuilt, self._segmented = 0, None

    # ------------------------------------------------------------------ writes
    @_in_use
    def upsert(self, ids: Sequence[str], payloads: Sequence[dict[str, Any]],
               vectors: dict[str, np.ndarray]) -> None:
        for i in range(0, len(ids), BATCH):
            points = [
                qe.Point(id=ids[j], payload=payloads[j],
                         vector={n: m[j].tolist() for n, m in vectors.items()})
                for j in range(i, min(i + BATCH, len(ids)))
            ]
            self.writes += 1
            self.shard.update(qe.UpdateOperation.upsert_points(points))
        if SEARCHED_VECTORS[0] in vectors:
            self.unbuilt += len(ids)

    @_in_use
    def set_vectors(self, name: str, ids: Sequence[str], matrix: np.ndarray) -> None:
        self.shard.update(qe.UpdateOperation.update_vectors([
            qe.PointVectors(id=i, vector={name: row.tolist()}) for i, row in zip(ids, matrix)]))

    @_in_use
    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.writes += 1
            self.shard.update(qe.UpdateOperation.delete_points(list(ids)))

    @_in_use
    def delete_document(self, doc_id: str, *, keep: str | None = None) -> None:
        self.writes += 1
        self.shard.update(qe.UpdateOperation.delete_points_by_filter(_doc_filter(doc_id, keep)))

    @_in_use
    def set_document_payload(self, doc_id: str, payload: dict[str, Any]) -> None:
        self.shard.update(qe.UpdateOperation.set_payload_by_filter(
            _doc_filter(doc_id, heads=True), payload))

    # ------------------------------------------------------------------ reads
    def scroll(self, *, fields: Sequence[str] | bool = True, vectors: Sequence[str] = (),
               doc_id: str | None = None) -> Iterator[Record]:
        offset = None
        flt = None if doc_id is None else _doc_filter(doc_id)
        with self._uses():  # across its pages: a reader part-way through keeps the shard
            while True:
                points, offset = self.shard.scroll(qe.ScrollRequest(
                    offset=offset, limit=_SCROLL, filter=flt,
                    with_payload=_payload_selector(fields),
                    with_vector=list(vectors) if vectors else False))
                for p in points:
                    yield record_of(p)
                if offset is None:
                    return

    @_in_use
    def retrieve(self, ids: Sequence[str], *, fields: Sequence[str] | bool = True,
                 vectors: Sequence[str] = ()) -> list[Record]:
        if not ids:
            return []
        got = self.shard.retrieve(list(ids), with_payload=_payload_selector(fields),
                                  with_vector=list(vectors) if vectors else False)
        return [record_of(p) for p in got]

    @_in_use
    def nearest(self, qvec: np.ndarray, *, using: str, k: int, versions: Sequence[str] | None,
                doc_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        must: list[Any] = []
        if versions is not None:
            if not versions:
                return []
            must.append(qe.FieldCondition(key="doc_version", match=qe.MatchAny(list(versions))))
        if doc_ids is not None:
            must.append(qe.FieldCondition(key="doc_id", match=qe.MatchAny(list(doc_ids))))
        found = self.shard.query(qe.QueryRequest(
            limit=k, query=qe.Query.Nearest(np.asarray(qvec, dtype=np.float32).tolist(),
                                            using=using),
            filter=qe.Filter(must=must) if must else None, with_payload=False,
            with_vector=False, params=qe.SearchParams(
                hnsw_ef=hnsw_ef(k), quantization=qe.QuantizationSearchParams(
                    rescore=True, oversampling=DENSE_OVERSAMPLING))))
        return [(str(p.id), float(p.score)) for p in found]

    @_in_use
    def scores(self, ids: Sequence[str], qvec: np.ndarray, using: str) -> dict[str, float]:
        """Cosine of each of ``ids`` with ``qvec``, computed in the shard (no vectors copied)."""
        if not ids:
            return {}
        found = self.shard.query(qe.QueryRequest(
            limit=len(ids), query=qe.Query.Nearest(np.asarray(qvec, dtype=np.float32).tolist(),
                                                   using=using),
            filter=qe.Filter(must=[qe.HasIdCondition(set(ids))]), with_payload=False,
            with_vector=False, params=qe.SearchParams(
                quantization=qe.QuantizationSearchParams(ignore=True))))
        return {str(p.id): float(p.score) for p in found}

    @_in_use
    def missing(self, name: str, *, limit: int, fields: Sequence[str] | bool = True,
                after: str | None = None) -> tuple[list[Record], str | None]:
        points, offset = self.shard.scroll(qe.ScrollRequest(
            offset=after, limit=limit, with_payload=_payload_selector(fields), with_vector=False,
            filter=qe.Filter(must_not=[qe.HasVectorCondition(name)])))
        return [record_of(p) for p in points], None if offset is None else str(offset)

    @_in_use
    def count_missing(self, name: str) -> int:
        if not self.exists():
            return 0
        return int(self.shard.count(qe.CountRequest(
            exact=True, filter=qe.Filter(must_not=[qe.HasVectorCondition(name)]))))

    @_in_use
    def count(self) -> int:
        return int(self.shard.count(qe.CountRequest(exact=True))) if self.exists() else 0



OWNER = "hiqa.owner"
"""The store's own lock file, held by the process that has the shard open, from before it is
opened until after it is closed; it names that process."""


def _open_shard(store: EdgeStore, opener: Any) -> qe.EdgeShard:
    """Open ``store``'s shard holding its ``OWNER`` lock, waiting up to ``wait_s`` (one notice,
    then a poll) while another process holds it: four CLI commands on one data dir take turns
    instead of three of them failing "in use".

    Qdrant Edge's own lock is not enough to take turns: its ``load`` reads and repairs the
    segments (and writes the repairs) before it takes that lock, so a ``load`` refused for
    the lock has already written into the shard another process has open, and landing in
    that process's flush it deleted its newest points (issue #33: a document's points lost
    when the app handed its store to a CLI command; ``bench/bench_store_turns.py``: two
    processes retrying Edge's lock lost points in every round, within five turns).  So
    ``load`` is called only by the holder of ``OWNER``, which is released only
    once ``close`` has returned and the shard is dropped (``EdgeStore.close``)."""
    told = False

    def wait(who: str, waited: float) -> bool:
        nonlocal told
        if waited >= store.wait_s:
            return False
        if not told:
            LOG.warning("waiting up to %g s for the store of collection %r, in use by %s",
                        store.wait_s, store.name, who or "another process")
            told = True
        return True

    held = contextlib.ExitStack()
    try:
        held.enter_context(file_lock(store.directory / OWNER, wait=wait, poll_s=0.02,
                                     holder=f"pid {os.getpid()} ({_describe_process()})"))
    except LockBusy as busy:
        raise _in_use_error(store, busy.holder) from None
    except OSError as exc:
        raise storage_error(exc, store.directory.parent.parent) from exc
    try:
        shard = _load(store, opener, wait)
    except BaseException:
        held.close()
        raise
    store._held = held
    return shard


def _load(store: EdgeStore, opener: Any, wait: Callable[[str, float], bool]) -> qe.EdgeShard:
    """``opener()`` once Edge's own lock is free, waiting while ``wait`` says so if a process
    that does not take ``OWNER`` (an older HiQA, a script) has the shard.

    Edge's lock is probed, never tried by loading: a ``load`` refused for the lock has already
    repaired the segments it read and written that to disk, under the process that has them
    open; landing inside that process's flush, it deleted its newest points (issue #33)."""
    start = time.monotonic()
    while _edge_lock_taken(store.directory):
        if not wait("another process", time.monotonic() - start):
            raise _in_use_error(store, "another process (not HiQA, or an older HiQA)")
        time.sleep(0.1)
    try:
        return opener()
    except OSError as exc:
        raise storage_error(exc, store.directory.parent.parent) from exc
    except Exception as exc:
        if "WouldBlock" in str(exc) or "lock" in str(exc).lower():  # taken since the probe
            raise _in_use_error(store, "another process (not HiQA, or an older HiQA)") from exc
        code = re.search(r"\(os error (\d+)\)", str(exc))
        if code is None:
            raise
        os_error = OSError(int(code.group(1)), os.strerror(int(code.group(1))),
                           str(store.directory))
        raise storage_error(os_error, store.directory.parent.parent) from exc


def _edge_lock_taken(directory: Path) -> bool:
    """Whether a process holds Qdrant Edge's own lock, an ``flock`` on the shard's ``wal``
    folder (Qdrant's ``wal`` crate), tested and let go at once."""
    try:
        fd = os.open(directory / "wal", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False  # no log yet (a shard being created): nothing to wait for
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False  # no flock here: let Edge decide
    finally:
        os.close(fd)  # closing drops the lock if it was taken
    return False


def _in_use_error(store: EdgeStore, who: str) -> CollectionError:
    waited = f" (waited {store.wait_s:g} s, HIQA_STORE_WAIT)" if store.wait_s else ""
    return CollectionError(
        f"the store of collection {store.name!r} ({store.directory}) is in use by "
        f"{who or 'another process'}{waited}. The embedded store allows one process at a time: "
        "stop that process (e.g. the Streamlit app) and retry, or run a Qdrant server and set "
        "HIQA_QDRANT_URL. `hiqa collections` and `hiqa docs` work meanwhile.")


def _describe_process() -> str:
    try:
        cmd = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().replace(b"\0", b" ")
        return " ".join(cmd.decode(errors="replace").split())[:120]  # one line
    except OSError:
        return "hiqa"
