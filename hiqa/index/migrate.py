"""``hiqa migrate``: a data dir from Qdrant local mode (HiQA before Qdrant Edge) to Edge.

Every collection's points are copied with their vectors and payload into an Edge shard, plus the
``doc_version`` key the routes filter on; nothing is re-embedded and the registry is kept as it
is.  A shard is written under a temporary name and renamed when complete, so an interrupted
migration is simply run again.  The old ``qdrant/`` folder is left in place for the user to
delete once satisfied.  On a server (``HIQA_QDRANT_URL``) the same command adds the
``doc_version`` key to collections written before it existed.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from qdrant_client import models

from hiqa.index.payload import payload_key, version_key
from hiqa.index.store import EdgeStore, get_client
from hiqa.index.store.client import ClientStore
from hiqa.settings import Settings

_BATCH = 512


def migrate(settings: Settings, *, dry_run: bool = False) -> list[str]:
    names = sorted(p.parent.name for p in (settings.data_dir / "collections").glob("*/meta.json"))
    if settings.qdrant_url:
        return [_add_version_keys(settings, name, dry_run) for name in names] or [
            "no collections to migrate"]
    legacy = settings.data_dir / "qdrant"
    if not legacy.is_dir():
        return [f"nothing to migrate: {legacy} (Qdrant local mode) does not exist"]
    client = get_client(settings, legacy_dir=legacy)
    lines = []
    for name in names:
        source = ClientStore(client, name, str(legacy))
        target = settings.data_dir / "store" / name
        if not source.exists():
            continue
        if EdgeStore(target, name).exists():
            lines.append(f"{name}: already in the Edge store ({target}); left as it is")
            continue
        n = source.count()
        if dry_run:
            lines.append(f"{name}: would copy {n:,} points to {target}")
            continue
        lines.append(f"{name}: copied {_copy(source, target, name):,} points to {target}")
    if not lines:
        lines.append(f"nothing to migrate: no HiQA collections in {legacy}")
    elif not dry_run:
        lines.append(f"the old store {legacy} was left in place; delete it once the collections "
                     "answer as before")
    return lines


def _copy(source: ClientStore, target: Path, name: str) -> int:
    partial = target.with_name(f".{name}.migrating")
    shutil.rmtree(partial, ignore_errors=True)
    dim = source.dimension()
    dest = EdgeStore(partial, name)
    dest.create(int(dim or 0))
    copied = 0
    batch: list = []

    def flush() -> None:
        if not batch:
            return
        payloads = []
        for rec in batch:
            payload = dict(rec.payload)
            payload["doc_version"] = payload_key(payload)
            payloads.append(payload)
        dest.upsert([r.id for r in batch], payloads, {"hca": _stack([r.vectors["hca"] for r in batch])})
        with_content = [r for r in batch if "content" in r.vectors]
        if with_content:
            dest.set_vectors("content", [r.id for r in with_content],
                             _stack([r.vectors["content"] for r in with_content]))
        batch.clear()

    for rec in source.scroll(vectors=["hca", "content"]):
        batch.append(rec)
        copied += 1
        if len(batch) >= _BATCH:
            flush()
    flush()
    dest.close()
    partial.rename(target)
    return copied


def _stack(rows: list) -> np.ndarray:
    return np.asarray(rows, dtype=np.float32)


def _add_version_keys(settings: Settings, name: str, dry_run: bool) -> str:
    client = get_client(settings)
    store = ClientStore(client, name, settings.qdrant_url or "")
    if not store.exists():
        return f"{name}: not on the server"
    pairs = {(str(r.payload.get("doc_id", "")), str(r.payload.get("version", "")))
             for r in store.scroll(fields=["doc_id", "version", "doc_version"])
             if "doc_version" not in r.payload}
    if dry_run or not pairs:
        return f"{name}: {len(pairs):,} document versions {'would get' if dry_run else 'need'} " \
               "their doc_version key"
    for doc_id, version in sorted(pairs):
        client.set_payload(store.qdrant_name, {"doc_version": version_key(doc_id, version)},
                           points=models.Filter(must=[
                               models.FieldCondition(key="doc_id",
                                                     match=models.MatchValue(value=doc_id)),
                               models.FieldCondition(key="version",
                                                     match=models.MatchValue(value=version))]),
                           wait=True)
    return f"{name}: added the doc_version key to {len(pairs):,} document versions"
