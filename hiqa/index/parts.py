"""A collection's opened parts, and where each lives under the data dir.

The index and query functions take a ``Parts`` (or one of its fields), never the
``Collection`` façade that composes them, so imports flow one way: ``index`` and ``retrieve``
below ``collection``.  ``index.catalog.open_parts`` opens them.

Storage layout under the data dir::

    store/<name>/                Qdrant Edge shard (or a server collection ``hiqa__<name>``)
    collections/<name>/meta.json registry: documents, embedder, strategy, preset
    collections/<name>/derived/  the lexical index of the current registry generation and
                                 the term counts it was built from (for the next ingest)
    collections/<name>/lexicon.csv   expert keywords (doc,keyword)
    markdown/<name>/<doc>.md     canonical Markdown of every document (shown by the app)
    markdown/<name>/<doc>/       pictures of its figures (PNG; named by ``Segment.image``)
    cache/embeddings.sqlite3     embedding cache keyed by (model id, text hash)
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hiqa.index.registry import Registry
from hiqa.index.store import Store, store_key
from hiqa.settings import Settings


def safe_doc_name(doc_id: str) -> str:
    """A file name for ``doc_id`` that cannot escape its folder."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id).strip("._") or "document"
    return cleaned[:120] + "-" + hashlib.sha1(doc_id.encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Parts:
    """One collection's name, settings, store and registry, and its embedder (loaded on
    first use: listing documents never loads a model)."""

    name: str
    settings: Settings
    store: Store
    registry: Registry
    embedder_of: Callable[[], Any]

    @property
    def embedder(self) -> Any:
        return self.embedder_of()

    @property
    def dir(self) -> Path:
        return self.settings.data_dir / "collections" / self.name

    @property
    def handle_key(self) -> str:
        """This collection's key in the process's handle cache (``hiqa.handles``)."""
        return store_key(self.settings, self.name)

    @property
    def strategy(self) -> str:
        return str(self.registry.data["strategy"])

    @property
    def lexicon_path(self) -> Path:
        return self.dir / "lexicon.csv"

    @property
    def lexical_dir(self) -> Path:
        return self.dir / "derived" / "bm25"

    def markdown_path(self, doc_id: str) -> Path:
        return self.settings.markdown_dir / self.name / (safe_doc_name(doc_id) + ".md")

    def figure_dir(self, doc_id: str) -> Path:
        return self.settings.markdown_dir / self.name / safe_doc_name(doc_id)
