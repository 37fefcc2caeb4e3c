"""Dense vectors: filled after an ingest that wrote documents without them, and the plain
``content`` vectors the Embedding page and ablations compute on first use."""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from hiqa.checks import check_number
from hiqa.faults import checkpoint
from hiqa.index.ingest import COMMIT_EVERY_S
from hiqa.index.lock import ingest_lock
from hiqa.index.parts import Parts
from hiqa.index.payload import KEY_FIELDS, payload_key, segment_reader
from hiqa.model import Segment

DenseProgress = Callable[[int, int], None]
"""progress(done, total): dense vectors written of those pending when filling started."""


def dense_status(parts: Parts) -> tuple[int, int]:
    """(segments with a dense vector, segments) of the registered documents.

    The pending count is the store's (points without the vector), not the registry's running
    tally, which a killed ``hiqa embed`` leaves behind stale; reading writes nothing.
    """
    parts.registry.refresh()
    total = parts.registry.segment_count()
    pending = min(total, parts.store.count_missing("hca")) if total else 0
    return total - pending, total


def fill_dense(parts: Parts, *, progress: DenseProgress | None = None, batch: int = 64,
               embedder: Any = None, stop: Callable[[], bool] | None = None) -> int:
    """Embed and write every pending ``hca`` vector of registered documents; returns how many.

    Resumable by construction: what is pending is read from the store (points without the
    vector), vectors are written batch by batch, so a crash, Ctrl-C or ``kill -9`` loses at most
    the batch being embedded.  Writes take the ingest lock for milliseconds, and only points that
    still exist are written (an ingest may have replaced a version meanwhile).  ``stop`` is
    polled between batches (the app's worker); ``embedder`` lets a background thread use its own
    model instance.
    """
    batch = int(check_number("batch", batch, low=1, high=4096, integer=True,
                             meaning="texts per embedding batch"))
    embedder = embedder or parts.embedder
    parts.registry.refresh()
    visible = set(parts.registry.version_keys())
    total = parts.store.count_missing("hca")
    done, offset = 0, None
    pending_by_doc: dict[str, int] = {}
    last_save = time.monotonic()
    if progress:
        progress(0, total)
    while True:
        if stop is not None and stop():
            break
        recs, offset = parts.store.missing("hca", limit=batch, after=offset,
                                         fields=["augmented_text", *KEY_FIELDS])
        recs = [r for r in recs if payload_key(r.payload) in visible]
        if recs:
            base = done
            vectors = np.asarray(embedder.embed_passages(
                [str(r.payload.get("augmented_text", "")) for r in recs],
                progress=(lambda d, _t, base=base: progress(base + d, total))
                if progress else None),
                dtype=np.float32)
            checkpoint("embed:before-write")
            with ingest_lock(parts, wait_s=600, holder="embed", reread=False):
                alive = {r.id for r in parts.store.retrieve([r.id for r in recs], fields=False)}
                rows = [i for i, r in enumerate(recs) if r.id in alive]
                if rows:
                    parts.store.set_vectors("hca", [recs[i].id for i in rows], vectors[rows])
            for i in rows:
                doc_id = str(recs[i].payload.get("doc_id", ""))
                pending_by_doc[doc_id] = pending_by_doc.get(doc_id, 0) + 1
            done += len(rows)
            if progress:
                progress(done, total)
            checkpoint("embed:mid-write")
        if offset is None or time.monotonic() - last_save > COMMIT_EVERY_S:
            _save_pending(parts, pending_by_doc)
            last_save = time.monotonic()
        if offset is None:
            break
    _recount_pending(parts)
    if done:
        parts.store.optimize()
    return done


def _recount_pending(parts: Parts) -> None:
    """Each document's ``dense_pending`` as the store has it: the running tally of a run that
    was killed is set right by the next one."""
    visible = set(parts.registry.version_keys())
    counts: Counter[str] = Counter()
    offset = None
    while True:
        recs, offset = parts.store.missing("hca", limit=1024, after=offset, fields=KEY_FIELDS)
        counts.update(str(r.payload.get("doc_id", "")) for r in recs
                      if payload_key(r.payload) in visible)
        if offset is None:
            break

    def change(d: dict[str, Any]) -> None:
        for doc_id, record in d["documents"].items():
            record["dense_pending"] = counts.get(doc_id, 0)

    if any(int(m.get("dense_pending", 0)) != counts.get(d, 0)
           for d, m in parts.registry.documents.items()):
        parts.registry.update(change, new_generation=False)


def _save_pending(parts: Parts, written: dict[str, int]) -> None:
    """Lower each document's ``dense_pending`` in the registry by the vectors just written."""
    if not written:
        return

    def change(d: dict[str, Any]) -> None:
        for doc_id, n in written.items():
            record = d["documents"].get(doc_id)
            if record is not None:
                record["dense_pending"] = max(0, int(record.get("dense_pending", 0)) - n)

    parts.registry.update(change, new_generation=False)
    written.clear()



def content_scores(parts: Parts, ids: Sequence[str], qvec: np.ndarray) -> dict[str, float]:
    """Cosine of the plain ``content`` vectors (computed on demand, ``ensure_content_vectors``)."""
    return parts.store.scores(list(ids), qvec, "content")


def ensure_content_vectors(parts: Parts,
                           progress: Callable[[int, int], None] | None = None,
                           ids: Iterable[str] | None = None) -> int:
    """Embed the segment text alone (the 'before HCA' vector) where it is missing; with
    ``ids``, for those segments only (the embedding page's sample).

    Ingest computes only the ``hca`` vector, halving the slow stage; the ``content`` vector is
    needed by the embedding-space page and ablations, so it is filled in on first use.
    Returns how many were computed.
    """
    visible = set(parts.registry.version_keys())
    wanted = None if ids is None else set(ids)
    todo = [r for r in parts.store.scroll(fields=["text", *KEY_FIELDS], vectors=["content"])
            if "content" not in r.vectors and payload_key(r.payload) in visible
            and (wanted is None or r.id in wanted)]
    if not todo:
        return 0
    vecs = np.asarray(parts.embedder.embed_passages(
        [r.payload.get("text", "") for r in todo], progress=progress), dtype=np.float32)
    checkpoint("embed:before-write")
    for i in range(0, len(todo), 256):
        if i:
            checkpoint("embed:mid-write")
        parts.store.set_vectors("content", [r.id for r in todo[i:i + 256]], vecs[i:i + 256])
    return len(todo)


def vectors(parts: Parts, name: str = "hca") -> tuple[list[Segment], np.ndarray]:
    """All visible segments with one named vector (rows aligned), for the embedding page."""
    visible, read = set(parts.registry.version_keys()), segment_reader(parts.registry.data)
    segs, rows = [], []
    for r in parts.store.scroll(vectors=[name]):
        if name not in r.vectors or payload_key(r.payload) not in visible:
            continue
        segs.append(read(r.id, r.payload))
        rows.append(r.vectors[name])
    order = sorted(range(len(segs)), key=lambda i: (segs[i].doc_id, segs[i].order, segs[i].piece))
    return ([segs[i] for i in order],
            np.asarray([rows[i] for i in order], dtype=np.float32).reshape(
                len(order), int(parts.registry.data["dim"])))
