"""The optional LLM steps of ingest: formatter repair (``--llm-format``) and LLM keywords.

Both are off the critical path: with no endpoint configured, ``auto`` only adds a warning to
documents whose structure looks wrong, and ``--llm-keywords`` is refused with a clear message.
Replies are cached (``CachedLLM``), so re-ingesting costs no further calls.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from hiqa.errors import HiqaError
from hiqa.formats.llm_format import FORMAT_MODES, maybe_reformat
from hiqa.llm import CachedLLM, LLMClient, LLMConfig
from hiqa.model import Document
from hiqa.settings import Settings


def cached_llm(settings: Settings) -> CachedLLM | None:
    """The configured endpoint wrapped in the reply cache, or ``None`` when none is set."""
    config = LLMConfig.from_settings(settings)
    if config is None:
        return None
    return CachedLLM(LLMClient(config), settings.cache_dir)


def raw_pages(doc: Document) -> list[str]:
    """The source text page by page, as the sliding-window formatter reads it."""
    if doc.format == "pdf":
        import pymupdf

        with pymupdf.open(doc.source) as pdf:
            return [page.get_text() for page in pdf]
    return [Path(doc.source).read_text(encoding="utf-8", errors="replace")]


def format_step(mode: str, llm: CachedLLM | None,
                report: Callable[[str], None] | None = None) -> Callable[[Document], Document]:
    """A ``Collection.ingest(prepare=...)`` hook applying ``--llm-format``.

    Without an endpoint (or with ``never``) the hook is a plain function of the document
    (``auto`` adds its low-confidence warning), picklable, so an ingest's helper process
    (``hiqa.index.prepare``) runs it; with one it calls the endpoint from the ingest's process."""
    if mode not in FORMAT_MODES:
        raise HiqaError(f"unknown --llm-format {mode!r}; valid: {', '.join(FORMAT_MODES)}")
    if llm is None or mode == "never":
        return functools.partial(_without_endpoint, mode=mode)

    def prepare(doc: Document) -> Document:
        new, rep = maybe_reformat(doc, raw_pages(doc), llm, mode=mode)
        if rep is not None and report is not None:
            report(f"{doc.doc_id}: {rep.summary()}")
        return new

    return prepare


def _without_endpoint(doc: Document, mode: str) -> Document:
    return maybe_reformat(doc, [], None, mode=mode)[0]


def add_llm_keywords(collection, doc_ids: Sequence[str], llm: CachedLLM) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Ask the model for each document's identifiers and aliases; store them as source 'llm'."""
    from hiqa.keywords.llm import llm_keywords

    found: dict[str, list[str]] = {}
    for doc_id in doc_ids:
        record = collection.documents.get(doc_id)
        if record is None:
            continue
        segs = collection.segments(doc_id)
        first_page = "\n".join(s.text for s in segs if s.pages and s.pages[0] <= 1)[:3000]
        found[doc_id] = list(llm_keywords(record.get("title", doc_id), first_page, llm))
    if found:
        collection.set_keywords("llm", found)
    return found
