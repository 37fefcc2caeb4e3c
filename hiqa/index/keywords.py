"""A collection's document keywords: set per source, kept relative to the collection.

The registry keeps each document's keywords per source (``keywords.records``); the points keep
the merged list in their ``keywords`` payload, which the keyword route reads.  Changing a
source rewrites both and re-embeds nothing.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from hiqa.handles import HANDLES
from hiqa.index.lock import ingest_lock
from hiqa.index.parts import Parts
from hiqa.index.registry import Registry
from hiqa.keywords.records import merged
from hiqa.keywords.rules import distinctive_keywords, load_lexicon


def identity_candidates(registry: Registry) -> dict[str, list[str]]:
    """Each registered document's keyword candidates (``keywords.rules.document_candidates``);
    a document registered before them offers its rule keywords."""
    return {doc: list(r.get("identity", r.get("keywords", {}).get("rule", ())))
            for doc, r in registry.documents.items()}


def lexicon(parts: Parts) -> dict[str, tuple[str, ...]]:
    """The collection's expert lexicon (``set_lexicon``), by document."""
    if not parts.lexicon_path.exists():
        return {}
    mapping, _ = load_lexicon(parts.lexicon_path)
    return mapping


def sources_for(parts: Parts, doc_id: str, rule: list[str]) -> dict[str, list[str]]:
    """A document's keyword sources for a new version: the rule's, the lexicon's, and the
    LLM's kept from the previous version."""
    old = parts.registry.data["documents"].get(doc_id, {}).get("keywords", {})
    out = {"rule": rule, "lexicon": list(lexicon(parts).get(doc_id, ()))}
    if old.get("llm"):
        out["llm"] = list(old["llm"])
    return out


def set_keywords(parts: Parts, source: str, by_doc: dict[str, list[str]],
                 extra: dict[str, dict[str, Any]] | None = None) -> None:
    """Replace one keyword source (rule | lexicon | llm) for the given documents (and set
    ``extra`` fields of their records)."""
    merged_by_doc: dict[str, list[str]] = {}

    def change(d: dict[str, Any]) -> None:
        for doc_id, kws in by_doc.items():
            record = d["documents"].get(doc_id)
            if record is not None:
                record.setdefault("keywords", {})[source] = list(kws)
                record.update((extra or {}).get(doc_id, {}))
                merged_by_doc[doc_id] = list(merged(record["keywords"]))

    parts.registry.update(change)
    for doc_id, kws in merged_by_doc.items():
        parts.store.set_document_payload(doc_id, {"keywords": kws})
    HANDLES.derived.pop(parts.handle_key, None)


def refresh_identity(parts: Parts) -> None:
    """Every document's rule keywords made relative to the collection as it stands
    (``keywords.rules.distinctive_keywords``): run when documents are added or removed.  Only
    the registry and the changed documents' payloads are written; nothing is re-embedded."""
    pool = identity_candidates(parts.registry)
    counts = {doc: {k.text: k.documents for k in ks}
              for doc, ks in distinctive_keywords(pool).items()}
    documents = parts.registry.documents
    changed = {doc: list(found) for doc, found in counts.items()
               if documents[doc].get("keywords", {}).get("rule") != list(found)
               or documents[doc].get("identity_counts") != found
               or "identity" not in documents[doc]}
    if changed:
        set_keywords(parts, "rule", changed, extra={
            doc: {"identity": pool[doc], "identity_counts": counts[doc]} for doc in changed})


def set_lexicon(parts: Parts, csv_path: str | os.PathLike[str]) -> list[str]:
    """Install an expert lexicon (CSV ``doc,keyword``); returns warnings for bad rows.

    Keywords take effect at once: the registry and the points' ``keywords`` payload are
    updated without re-embedding anything.
    """
    mapping, problems = load_lexicon(Path(csv_path))
    with ingest_lock(parts):
        docs = parts.registry.documents
        unknown = sorted(set(mapping) - set(docs))
        problems += [f"lexicon names unknown document {d!r}" for d in unknown]
        shutil.copyfile(csv_path, parts.lexicon_path)
        set_keywords(parts, "lexicon", {d: list(mapping.get(d, ())) for d in docs})
    return problems
