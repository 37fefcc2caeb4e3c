"""Points the registry does not name, and the sweep that deletes HiQA's own leftovers.

Before any point is written its version key is journaled (``Registry.journal``), so whatever a
crash leaves behind is known to be HiQA's own and is swept by the next ingest.  Points of
documents the registry does not list are never deleted: their documents are registered again
from the points' payloads (title, source, version, keywords).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hiqa.index.parts import Parts
from hiqa.index.payload import KEY_FIELDS, StoredVersions, payload_key


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


ADOPTED = ("registered again from the stored points: the registry did not list it (an older "
           "copy of the registry restored?)")


def adopted_records(parts: Parts, doc_ids: Iterable[str],
                    warning: str = ADOPTED) -> dict[str, dict[str, Any]]:
    """Registry records for documents read back from their points (the version with the most
    points of each), with their Markdown copy when it is still on disk."""
    points = [rec for doc_id in doc_ids for rec in parts.store.scroll(doc_id=doc_id)]
    records = StoredVersions(points).records(warnings=[warning])
    for doc_id, record in records.items():
        if parts.markdown_path(doc_id).is_file():
            record["markdown"] = str(parts.markdown_path(doc_id))
    return records


def sweep_orphans(parts: Parts) -> list[str]:
    """Delete HiQA's own leftovers, and register again the documents whose points the registry
    does not account for; returns those documents' ids.

    Points of a document the registry does not list were never journaled, so they are not a
    crash's leftovers: the registry lost them (an older copy restored, a registry rebuilt from
    another store).  Deleting them would lose indexed documents silently, so they are read back
    into the registry instead.  Skipped (one count instead of a scroll of every point) when
    nothing was journaled and the store holds exactly as many points as the registered versions
    have segments.
    """
    if not parts.registry.journaled() and parts.store.count() == parts.registry.segment_count():
        return []
    found = find_orphans(parts)
    adopted: dict[str, dict[str, Any]] = {}
    if found.unknown_docs:
        adopted = adopted_records(parts, found.unknown_docs)
        parts.registry.update(lambda d: d["documents"].update(adopted))
        found = find_orphans(parts)  # other versions of the adopted documents are leftovers now
    if found.leftovers:
        parts.store.delete(list(found.leftovers))
    parts.registry.clear_journal()
    return sorted(adopted)
