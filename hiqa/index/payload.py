"""The point payload: the one place that says which keys a point carries and what they mean.

Every point holds its segment's own fields (``SEGMENT_FIELDS``; pages, table flag and image
only when set).  A document's first segment, its *head point*, also holds the document's
fields (``DOCUMENT_FIELDS``): the other points leave them out, and readers take them from the
registry (``segment_reader``).  Each payload value costs an ingest about 3 µs in Edge's binding
and again in the segment rewrite of ``optimize`` (docs/benchmarks.md, Store); the head point
keeps a document rebuildable from the store alone (``hiqa repair``, ``StoredVersions``).

The registry decides what is visible: a point belongs to the version ``doc_version`` names
(``version_key``), and only registered versions are read.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hiqa.keywords.records import merged
from hiqa.model import Segment

SEGMENT_FIELDS = ("doc_id", "path", "level", "order", "piece", "text", "augmented_text", "span",
                  "content_hash", "version", "doc_version", "kind", "pages", "is_table", "image")
DOCUMENT_FIELDS = ("doc_title", "source", "keywords", "strategy", "embedder", "model_id",
                   "segment_format")
INDEXED_FIELDS = ("doc_id", "doc_version", "keywords")
"""Keyword payload indexes: documents, registered versions, keywords."""
HEAD_FIELD = "model_id"
"""A field only a document's head point has: the point that holds the document's fields."""
KEY_FIELDS = ["doc_id", "version"]
"""What ``payload_key`` reads: enough to tell a point's version without its text."""
LEXICAL_FIELDS = ["augmented_text", "doc_id", "doc_title", "path", "strategy", "kind", "order",
                  "piece", "version"]
"""What the lexical index reads of a point (``index.derived.lexical_terms``)."""


def version_key(doc_id: str, version: str) -> str:
    """The ``doc_version`` payload value: which registered version a point belongs to."""
    return f"{doc_id}@{version[:16]}"


def payload_key(payload: Mapping[str, Any]) -> str:
    """The version key of a point, from its ``doc_id`` and ``version`` payload fields (points
    written before ``doc_version`` existed have only those)."""
    return version_key(str(payload.get("doc_id", "")), str(payload.get("version", "")))


def to_payload(s: Segment, version: str, head: Mapping[str, Any] | None = None
               ) -> dict[str, Any]:
    """A point's payload: the segment's own fields, and with ``head`` given (the document's
    first segment: ``{"keywords", "embedder", "model_id", "segment_format"}``) the document's
    fields too."""
    p: dict[str, Any] = {
        "doc_id": s.doc_id, "path": list(s.path), "level": s.level, "order": s.order,
        "piece": s.piece, "text": s.text, "augmented_text": s.augmented_text,
        "span": list(s.span), "content_hash": s.content_hash, "version": version[:16],
        "doc_version": version_key(s.doc_id, version), "kind": s.kind,
    }
    if s.pages:
        p["pages"] = list(s.pages)
    if s.is_table:
        p["is_table"] = True
    if s.image:
        p["image"] = s.image
    if head is not None:
        p.update(doc_title=s.doc_title, source=s.source, keywords=list(head["keywords"]),
                 strategy=s.strategy, embedder=head["embedder"], model_id=head["model_id"],
                 segment_format=head["segment_format"])
    return p


def segment_from_payload(point_id: str, p: Mapping[str, Any],
                         document: Mapping[str, Any] | None = None) -> Segment:
    """The segment a point stores; ``document`` gives the document's fields where the point
    leaves them out (all but the head)."""
    if document:
        p = {**document, **p}
    return Segment(
        segment_id=point_id, doc_id=p.get("doc_id", ""), doc_title=p.get("doc_title", ""),
        source=p.get("source", ""), path=tuple(p.get("path", ())), level=int(p.get("level", 0)),
        order=int(p.get("order", 0)), piece=int(p.get("piece", 0)),
        pages=tuple(p.get("pages", ())), text=p.get("text", ""),
        augmented_text=p.get("augmented_text", ""), is_table=bool(p.get("is_table", False)),
        strategy=p.get("strategy", ""), span=tuple(p.get("span", (0, 0))),  # type: ignore[arg-type]
        keywords=tuple(p.get("keywords", ())), kind=p.get("kind", "heading"),
        image=p.get("image", ""), page_labels=tuple(p.get("page_labels", ())),
    )


def segment_reader(registry: Mapping[str, Any]) -> Callable[[str, Mapping[str, Any]], Segment]:
    """Reads registered versions' points into segments, each filling in its document's fields
    (title, source, merged keywords, strategy, printed page labels) from ``registry`` (a registry's data, as the
    caller last refreshed it: the snapshot it took the visible versions from)."""
    shared: dict[str, dict[str, Any]] = {}

    def read(point_id: str, payload: Mapping[str, Any]) -> Segment:
        doc_id = str(payload.get("doc_id", ""))
        fields = shared.get(doc_id)
        if fields is None:
            record = registry["documents"].get(doc_id, {})
            fields = shared[doc_id] = {
                "doc_title": record.get("title", ""), "source": record.get("source", ""),
                "keywords": merged(record.get("keywords", {})),
                "strategy": registry.get("strategy", ""),
                "page_labels": tuple(record.get("page_labels", ()))}
        return segment_from_payload(point_id, payload, fields)

    return read


class StoredVersions:
    """What the points in a store say about documents: each version's point count, pages and
    head payload, read back into registry records (``hiqa repair``, a server collection opened
    on a new machine)."""

    def __init__(self, points: Iterable[Any]):
        self.counts: dict[str, int] = {}
        self._pages: dict[str, int] = {}
        self._versions: dict[str, dict[str, dict[str, Any]]] = {}
        for rec in points:
            p = rec.payload
            key = payload_key(p)
            self.counts[key] = self.counts.get(key, 0) + 1
            self._pages[key] = max([self._pages.get(key, 0), *p.get("pages", [])])
            versions = self._versions.setdefault(str(p.get("doc_id", "")), {})
            version = str(p.get("version", ""))
            if version not in versions or HEAD_FIELD in p:  # the head point's, with its
                versions[version] = p                      # document's fields

    def records(self, docs: Iterable[str] | None = None,
                warnings: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
        """Registry records for ``docs`` (default: every document in the store), each with the
        version that has the most points (a crash mid-replace leaves two; the next ingest sweeps
        the other)."""
        out = {}
        for doc_id in sorted(self._versions if docs is None else docs):
            versions = self._versions[doc_id]
            version = max(versions, key=lambda v: self.counts[version_key(doc_id, v)])
            p, key = versions[version], version_key(doc_id, version)
            out[doc_id] = {
                "title": p.get("doc_title", ""), "source": p.get("source", ""),
                "hash": version, "pages": self._pages[key], "sections": 0,
                "segments": self.counts[key], "keywords": {"rule": list(p.get("keywords", []))},
                "warnings": list(warnings), "format": "", "ingested_at": 0.0,
                # points written before the head carried it: unknown, so re-read when asked
                "segment_format": int(p.get("segment_format", 1)),
            }
        return out

    def documents(self) -> set[str]:
        return set(self._versions)

    def sample(self) -> dict[str, Any] | None:
        """One head point's payload (collection-wide fields: strategy, embedder, model id)."""
        payloads = [p for versions in self._versions.values() for p in versions.values()]
        return next((p for p in payloads if HEAD_FIELD in p), payloads[0] if payloads else None)
