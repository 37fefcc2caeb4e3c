"""``hiqa repair``: make the registry and the store agree again, losing as little as possible."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hiqa.faults import checkpoint
from hiqa.index.derived import derived
from hiqa.index.ingest import Progress, ingest, source_root
from hiqa.index.lock import ingest_lock
from hiqa.index.parts import Parts
from hiqa.index.payload import KEY_FIELDS, StoredVersions, payload_key, version_key

RESTORED = ("registered again by `hiqa repair` from the stored points: the version the "
            "registry named was not stored and its source file is gone")


@dataclass
class RepairPlan:
    """What ``hiqa repair`` does (or, with ``--dry-run``, would do)."""

    create_store: bool = False
    drop_points: int = 0
    adopt: list[str] = field(default_factory=list)
    """documents found only in the store, registered again from their points' payloads"""
    reindex: list[str] = field(default_factory=list)
    """registered documents whose points are missing or incomplete, re-read from their source"""
    restore: list[str] = field(default_factory=list)
    """registered documents whose points are missing and source gone, but another version of
    which is stored: that version is registered again (the store older than the registry)"""
    keep_partial: list[str] = field(default_factory=list)
    """registered documents with some points missing and the source gone: the points left are
    kept, and the registry counts them"""
    forget: list[str] = field(default_factory=list)
    """registered documents with no point stored and no source file left: nothing to keep"""

    def lines(self) -> list[str]:
        out = []
        if self.create_store:
            out.append("create the missing store")
        if self.drop_points:
            out.append(f"delete {self.drop_points:,} points of unregistered versions")
        for label, docs in (("register again from the store", self.adopt),
                            ("re-index from the source file", self.reindex),
                            ("register the stored version again (source file gone)",
                             self.restore),
                            ("keep the segments left (source file gone)", self.keep_partial),
                            ("forget (no point stored, source file gone)", self.forget)):
            out += [f"{label}: {d}" for d in docs]
        return out or ["nothing to repair"]


def repair(parts: Parts, *, dry_run: bool = False,
           progress: Progress | None = None) -> RepairPlan:
    """Make the registry and the store agree again, losing as little as possible.

    Documents found only in the store are registered again from their payloads (the version
    with the most points when several are stored).  Registered documents whose points are
    missing or incomplete are re-indexed from their source file; when it is gone, what the
    store holds is kept: another stored version is registered again, the points left of this
    one are kept, and only a document with no point at all is forgotten.  Points of any other
    version are deleted.
    """
    plan = RepairPlan(create_store=not parts.store.exists())
    if plan.create_store and not dry_run:
        parts.store.create(int(parts.registry.data["dim"]))
    with ingest_lock(parts), parts.store.kept_open():
        docs = parts.registry.documents
        stored = StoredVersions([] if plan.create_store else parts.store.scroll())
        counts = stored.counts
        adopted = stored.records(stored.documents() - set(docs), warnings=(
            "registered again by `hiqa repair` from the stored points",))
        plan.adopt = sorted(adopted)
        restored: dict[str, dict[str, Any]] = {}
        partial: dict[str, int] = {}
        for doc_id, record in sorted(docs.items()):
            found = counts.get(version_key(doc_id, record["hash"]), 0)
            if found == int(record.get("segments", -1)):
                continue
            if Path(record.get("source", "")).is_file():
                plan.reindex.append(doc_id)
            elif found:
                partial[doc_id] = found
            elif doc_id in stored.documents():
                restored.update(stored.records([doc_id], warnings=[RESTORED]))
            else:
                plan.forget.append(doc_id)
        plan.restore, plan.keep_partial = sorted(restored), sorted(partial)
        adopted.update(restored)
        keep = {version_key(d, m["hash"]) for d, m in {**docs, **adopted}.items()}
        plan.drop_points = sum(n for key, n in counts.items() if key not in keep)
        if dry_run:
            return plan
        if adopted or plan.forget or partial:
            def change(d: dict[str, Any]) -> None:
                d["documents"].update(adopted)
                for doc_id in plan.forget:
                    d["documents"].pop(doc_id, None)
                for doc_id, n in partial.items():
                    record = d["documents"][doc_id]
                    record["warnings"] = [*record.get("warnings", []), (
                        f"`hiqa repair` kept the {n} of {record.get('segments')} segments "
                        "still stored; the source file is gone")]
                    record["segments"] = n
            parts.registry.update(change)
        checkpoint("repair:after-registry")
        visible = set(parts.registry.version_keys())
        stale = [r.id for r in ([] if plan.create_store else parts.store.scroll(
            fields=KEY_FIELDS)) if payload_key(r.payload) not in visible]
        parts.store.delete(stale)
        parts.registry.clear_journal()
    for i, doc_id in enumerate(plan.reindex):
        if i:
            checkpoint("repair:mid-reindex")
        source = docs[doc_id]["source"]
        ingest(parts, [source], root=source_root(doc_id, source) or None, progress=progress,
               force=True)
    derived(parts, force=True)
    return plan

