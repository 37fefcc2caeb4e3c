"""Reading and changing a collection's documents: segments, Markdown, titles, removal."""
from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hiqa.augment import SEGMENT_FORMAT
from hiqa.errors import CollectionError, DocumentError
from hiqa.faults import checkpoint
from hiqa.handles import HANDLES
from hiqa.index.derived import derived
from hiqa.index.ingest import IngestResult, Progress, ingest, source_root
from hiqa.index.keywords import refresh_identity
from hiqa.index.lock import ingest_lock
from hiqa.index.parts import Parts
from hiqa.index.payload import payload_key, segment_reader, version_key
from hiqa.model import Segment


def segments(parts: Parts, doc_id: str | None = None) -> list[Segment]:
    """Every segment of registered versions (or one document's), in document order."""
    parts.registry.refresh()
    visible = set(parts.registry.version_keys())
    read = segment_reader(parts.registry.data)
    segs = [read(r.id, r.payload) for r in parts.store.scroll(doc_id=doc_id)
            if payload_key(r.payload) in visible]
    return sorted(segs, key=lambda s: (s.doc_id, s.order, s.piece))


def record(parts: Parts, doc_id: str) -> dict[str, Any]:
    """A document's registry record; ``CollectionError`` naming some documents when unknown."""
    parts.registry.refresh()
    docs = parts.registry.documents
    if doc_id not in docs:
        known = ", ".join(sorted(docs)[:10])
        raise CollectionError(f"document {doc_id!r} is not in collection {parts.name!r} "
                              f"(documents: {known}{' ...' if len(docs) > 10 else ''})")
    return docs[doc_id]


def markdown(parts: Parts, doc_id: str) -> str:
    """The document's canonical Markdown (its segments joined when the copy is gone)."""
    try:
        return Path(record(parts, doc_id)["markdown"]).read_text(encoding="utf-8")
    except (OSError, KeyError):
        return "\n\n".join(s.text for s in segments(parts, doc_id))


def image_path(parts: Parts, segment: Segment) -> Path | None:
    """The picture of a figure segment, stored at ingest; None for other segments and for a
    figure whose picture could not be rendered."""
    if not segment.image:
        return None
    path = parts.figure_dir(segment.doc_id) / Path(segment.image).name
    return path if path.is_file() else None


def older_format(parts: Parts) -> list[str]:
    """Documents segmented before this HiQA's ``hca`` format (``SEGMENT_FORMAT``): they are
    searched as they are, without the document's lead, until re-read (``reread_older``)."""
    parts.registry.refresh()
    if parts.strategy != "hca":
        return []
    return sorted(d for d, m in parts.registry.documents.items()
                  if int(m.get("segment_format", 1)) < SEGMENT_FORMAT)


def reread_older(parts: Parts, *, progress: Progress | None = None,
                 dense: str = "now") -> list[IngestResult]:
    """Re-read the documents ``older_format`` names from their source files, as a forced
    ingest of each file under the folder it was first ingested from (so each keeps its id).  A
    source that is gone is reported as failed, and its document is kept as it is."""
    results: list[IngestResult] = []
    roots: dict[str, list[Path]] = {}
    for doc_id in older_format(parts):
        source = str(parts.registry.documents[doc_id].get("source", ""))
        root = source_root(doc_id, source)
        if root is None or not Path(source).is_file():
            results.append(IngestResult(doc_id, "failed", error=(
                f"its source file {source or '(unknown)'} is gone; ingest the file again "
                "to re-read it")))
            continue
        roots.setdefault(root or ".", []).append(Path(source))
    for root, files in roots.items():
        results += ingest(parts, files, root=root, force=True, progress=progress, dense=dense)
    return results


def set_title(parts: Parts, doc_id: str, title: str | None,
              progress: Progress | None = None) -> IngestResult:
    """Correct a document's title (``None`` or blank: back to the title rule's choice).

    Only that document is re-augmented and re-embedded: the title is part of every cascaded
    path, so its segments get new text and new points (a new version), which replace the old
    ones as any update does.  The correction survives later ingests of the same file.
    """
    parts.registry.refresh()
    rec = parts.registry.documents.get(doc_id)
    if rec is None:
        raise CollectionError(f"no document {doc_id!r} in collection {parts.name!r}")
    source = Path(rec.get("source", ""))
    if not source.is_file():
        raise DocumentError(str(source), "the source file is gone, so the document cannot "
                            "be segmented again; ingest it again from where it is now")
    posix = source.as_posix()
    if posix != doc_id and not posix.endswith("/" + doc_id):
        raise CollectionError(f"cannot tell the ingest root of {doc_id!r} from {source}")
    clean = " ".join((title or "").split())
    previous = rec.get("title_override")

    def set_override(value: str | None) -> Callable[[dict[str, Any]], None]:
        def change(d: dict[str, Any]) -> None:
            r = d["documents"].get(doc_id)
            if r is None:
                return
            if value:
                r["title_override"] = value
            else:
                r.pop("title_override", None)
        return change

    parts.registry.update(set_override(clean), new_generation=False)
    try:
        results = ingest(parts, [source], root=posix[: len(posix) - len(doc_id)] or ".",
                         progress=progress)
        if results[0].status == "failed":
            raise DocumentError(str(source), results[0].error)
    except BaseException:
        parts.registry.update(set_override(previous), new_generation=False)
        raise
    return results[0]


def remove_document(parts: Parts, doc_id: str) -> None:
    record(parts, doc_id)  # unknown: a clear error before taking the lock
    with ingest_lock(parts):
        rec = parts.registry.documents.get(doc_id)
        if rec is None:
            return
        parts.registry.journal("remove", version_key(doc_id, rec["hash"]))
        parts.registry.update(lambda d: d["documents"].pop(doc_id, None))
        checkpoint("remove:after-registry")
        parts.store.delete_document(doc_id)
        parts.registry.clear_journal()
        refresh_identity(parts)
        with contextlib.suppress(OSError):
            Path(rec.get("markdown", "")).unlink()
        shutil.rmtree(parts.figure_dir(doc_id), ignore_errors=True)
        derived(parts, force=True)


def delete_collection(parts: Parts) -> None:
    """Drop the whole collection: points, registry, derived indexes, Markdown."""
    worker = HANDLES.workers.pop(parts.handle_key, None)
    if worker is not None:
        worker.stop(timeout=60)  # before the lock: its writes take the lock
    with ingest_lock(parts):
        parts.store.drop()
    HANDLES.forget(parts.handle_key)
    shutil.rmtree(parts.dir, ignore_errors=True)
    shutil.rmtree(parts.settings.markdown_dir / parts.name, ignore_errors=True)
