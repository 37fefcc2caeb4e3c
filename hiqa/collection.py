"""A corpus behind one object: opens a collection's parts and composes the pipeline's steps.

The work is done in the modules this façade calls, each taking the parts it needs::

    index/catalog.py    names, registries, opening a collection's parts (index/parts.py)
    index/ingest.py     files -> Markdown -> segments -> vectors -> points, commits
    index/dense.py      dense vectors filled later, content vectors on demand
    index/documents.py  segments, Markdown, title corrections, removal
    index/keywords.py   keyword sources, the expert lexicon, collection-relative identity
    retrieve/routes.py  a question -> every route's candidates with all raw scores
    retrieve/fusion.py  candidates -> one ranking (Eq. 2), re-run live by the app's sliders
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hiqa.index import dense as _dense
from hiqa.index import documents as _documents
from hiqa.index import keywords as _keywords
from hiqa.index.catalog import (
    check_name,
    list_collections,
    open_parts,
    read_registry,
)
from hiqa.index.ingest import IngestResult, Progress, ingest
from hiqa.index.parts import Parts
from hiqa.keywords.records import KeywordSources
from hiqa.model import Document, Segment
from hiqa.retrieve import preset as _preset
from hiqa.retrieve import routes as _routes
from hiqa.retrieve.params import Preset, check_k
from hiqa.retrieve.routes import ROUTE_K, Hit, SearchResult
from hiqa.settings import Settings

__all__ = ["Collection", "check_name", "list_collections", "read_registry"]


class Collection:
    """One corpus: a registry of document versions over a store of points (``index.parts``)."""

    def __init__(self, name: str, settings: Settings | None = None, *, create: bool = False,
                 strategy: str = "hca", embedder: str | None = None,
                 repairing: bool = False):
        self.parts: Parts = open_parts(
            name, settings or Settings(), create=create, strategy=strategy, embedder=embedder,
            repairing=repairing, preset=_preset.as_dict(_preset.DEFAULT_PRESET))
        self.name, self.settings = self.parts.name, self.parts.settings
        self.store, self.registry = self.parts.store, self.parts.registry
        self.dir, self.handle_key = self.parts.dir, self.parts.handle_key

    # ----------------------------------------------------------------- what it holds
    @property
    def meta(self) -> dict[str, Any]:
        """The registry's content (read-only by convention: change it through ``registry``)."""
        self.registry.refresh()
        return self.registry.data

    @property
    def strategy(self) -> str:
        return str(self.meta["strategy"])

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        return dict(self.meta["documents"])

    def keywords(self, doc_id: str) -> KeywordSources:
        """A document's keywords by source (empty for an unknown document)."""
        return KeywordSources.of(self.meta["documents"].get(doc_id, {}))

    def __len__(self) -> int:
        self.registry.refresh()
        return self.registry.segment_count()

    def segments(self, doc_id: str | None = None) -> list[Segment]:
        return _documents.segments(self.parts, doc_id)

    def markdown(self, doc_id: str) -> str:
        return _documents.markdown(self.parts, doc_id)

    def image_path(self, segment: Segment) -> Path | None:
        return _documents.image_path(self.parts, segment)

    def older_format(self) -> list[str]:
        return _documents.older_format(self.parts)

    @property
    def embedder(self) -> Any:
        """The collection's embedder; refused when it is not the model the vectors came from."""
        return self.parts.embedder

    # ----------------------------------------------------------------- fusion preset
    @property
    def preset(self) -> dict[str, Any]:
        """The saved fusion weights (the defaults when they are out of range)."""
        return _preset.as_dict(_preset.stored_preset(self.meta)[0])

    @property
    def preset_problem(self) -> str | None:
        """Why the stored preset is ignored, with the command that fixes it; None when valid."""
        return _preset.stored_preset(self.meta)[1]

    def save_preset(self, method: str, alpha: float, beta: float) -> None:
        _preset.save_preset(self.registry, method, alpha, beta)

    def weights(self, method: str | None = None, alpha: float | None = None,
                beta: float | None = None) -> Preset:
        return _preset.weights(self.meta, method, alpha, beta)

    # ----------------------------------------------------------------- changes
    def ingest(self, paths: Iterable[str | os.PathLike[str]], *, progress: Progress | None = None,
               root: str | os.PathLike[str] | None = None, force: bool = False,
               prepare: Callable[[Document], Document] | None = None,
               dense: str = "now", replace_others: bool = False) -> list[IngestResult]:
        """Add or update documents; unchanged ones (same file hash) are skipped; one whose id
        belongs to another file's document fails unless ``replace_others``
        (``hiqa.index.ingest.ingest``)."""
        return ingest(self.parts, paths, progress=progress, root=root, force=force,
                      prepare=prepare, dense=dense, replace_others=replace_others)

    def reread_older(self, *, progress: Progress | None = None,
                     dense: str = "now") -> list[IngestResult]:
        return _documents.reread_older(self.parts, progress=progress, dense=dense)

    def fill_dense(self, progress: Callable[[int, int], None] | None = None, *,
                   batch: int = 64, embedder: Any = None,
                   stop: Callable[[], bool] | None = None) -> int:
        return _dense.fill_dense(self.parts, progress=progress, batch=batch,
                                 embedder=embedder, stop=stop)

    def dense_status(self) -> tuple[int, int]:
        return _dense.dense_status(self.parts)

    def ensure_content_vectors(self, progress: Callable[[int, int], None] | None = None,
                               ids: Iterable[str] | None = None) -> int:
        return _dense.ensure_content_vectors(self.parts, progress, ids)

    def set_title(self, doc_id: str, title: str | None,
                  progress: Progress | None = None) -> IngestResult:
        return _documents.set_title(self.parts, doc_id, title, progress)

    def remove_document(self, doc_id: str) -> None:
        _documents.remove_document(self.parts, doc_id)

    def delete(self) -> None:
        _documents.delete_collection(self.parts)

    def set_lexicon(self, csv_path: str | os.PathLike[str]) -> list[str]:
        return _keywords.set_lexicon(self.parts, csv_path)

    def set_keywords(self, source: str, by_doc: dict[str, list[str]]) -> None:
        _keywords.set_keywords(self.parts, source, by_doc)

    # ----------------------------------------------------------------- query side
    def retrieve(self, query: str, *, k: int = ROUTE_K,
                 doc_ids: Sequence[str] | None = None) -> SearchResult:
        """Run every route and return all candidates with all raw scores (no fusion yet)."""
        return _routes.retrieve(self.parts, query, k=k, doc_ids=doc_ids)

    def retrieve_vector(self, query: str, qvec: np.ndarray, *, k: int = ROUTE_K,
                        doc_ids: Sequence[str] | None = None,
                        timings: dict[str, float] | None = None) -> SearchResult:
        return _routes.retrieve_vector(self.parts, query, qvec, k=k, doc_ids=doc_ids,
                                       timings=timings)

    def search(self, query: str, *, method: str | None = None, alpha: float | None = None,
               beta: float | None = None, k: int = 10,
               doc_ids: Sequence[str] | None = None) -> list[Hit]:
        """Retrieve then fuse with the collection's preset (or the given) weights."""
        return self.search_result(query, method=method, alpha=alpha, beta=beta, k=k,
                                  doc_ids=doc_ids)[1]

    def search_result(self, query: str, *, method: str | None = None,
                      alpha: float | None = None, beta: float | None = None, k: int = 10,
                      doc_ids: Sequence[str] | None = None) -> tuple[SearchResult, list[Hit]]:
        """``search``, with the retrieval behind the hits (for ``SearchResult.scope_hint``)."""
        w = self.weights(method, alpha, beta)
        k = check_k(k)  # before retrieval: a bad value costs no embedding
        result = self.retrieve(query, doc_ids=doc_ids)
        return result, result.rank(w.method, w.alpha, w.beta, k)

    def answer_context(self, segments: Sequence[Segment], question: str = "") -> list[Segment]:
        """The context blocks an answer to ``question`` is written from (``calc.answer_context``)."""
        from hiqa.answer.calc import answer_context

        return answer_context(self.parts, segments, question)

    def content_scores(self, ids: Sequence[str], qvec: np.ndarray) -> dict[str, float]:
        return _dense.content_scores(self.parts, ids, qvec)

    def vectors(self, name: str = "hca") -> tuple[list[Segment], np.ndarray]:
        """All visible segments with one named vector (rows aligned), for the embedding page."""
        return _dense.vectors(self.parts, name)
