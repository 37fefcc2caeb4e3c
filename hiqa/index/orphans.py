"""Points the registry does not name, and the sweep that deletes HiQA's own leftovers.

Before any point is written its version key is journaled (``Registry.journal``), so whatever a
crash leaves behind is known to be HiQA's own and is swept by the next ingest.  Points nobody
accounts for (another registry copy, a folder swapped under us) are not deleted on HiQA's own
authority when they are most of the store or the registry is empty: the sweep stops and points
to ``hiqa repair``.
"""
from __future__ import annotations

from dataclasses import dataclass

from hiqa.errors import StorageError
from hiqa.index.parts import Parts
from hiqa.index.payload import KEY_FIELDS, payload_key


@dataclass(frozen=True)
class Orphans:
    """Points the registry does not name: HiQA's leftovers and points nobody accounts for."""

    leftovers: tuple[str, ...]
    unknown: tuple[str, ...]
    total: int
    unknown_docs: tuple[str, ...] = ()


def find_orphans(parts: Parts) -> Orphans:
    registered = set(parts.registry.version_keys())
    docs = set(parts.registry.documents)
    journaled = parts.registry.journaled()
    leftovers, unknown, unknown_docs, total = [], [], set(), 0
    for rec in parts.store.scroll(fields=KEY_FIELDS):
        total += 1
        doc_id = str(rec.payload.get("doc_id", ""))
        key = payload_key(rec.payload)
        if key in registered:
            continue
        if key in journaled or doc_id in docs:
            leftovers.append(rec.id)
        else:
            unknown.append(rec.id)
            unknown_docs.add(doc_id)
    return Orphans(tuple(leftovers), tuple(unknown), total, tuple(sorted(unknown_docs)))


def sweep_orphans(parts: Parts) -> int:
    """Delete HiQA's own leftovers; refuse a sweep that looks like a lost registry.

    Skipped (one count instead of a scroll of every point) when nothing was journaled and the
    store holds exactly as many points as the registered versions have segments.
    """
    if not parts.registry.journaled() and parts.store.count() == parts.registry.segment_count():
        return 0
    found = find_orphans(parts)
    if found.unknown and (not parts.registry.documents or 2 * len(found.unknown) > found.total):
        raise StorageError(
            f"collection {parts.name!r}: {len(found.unknown):,} of {found.total:,} stored points "
            f"belong to {len(found.unknown_docs):,} documents its registry does not list "
            f"(e.g. {', '.join(found.unknown_docs[:3])}). Nothing was deleted: the registry may "
            f"be an old copy. See `hiqa repair -c {parts.name} --dry-run`, then run "
            f"`hiqa repair -c {parts.name}` to re-register or drop them."
        )
    stale = [*found.leftovers, *found.unknown]
    if stale:
        parts.store.delete(stale)
    parts.registry.clear_journal()
    return len(stale)

