"""The demo collection: 40 PostgreSQL SQL-command reference pages, searchable on first start.

The pages (``data/demo/docs``, PostgreSQL licence) share one outline (Synopsis, Description,
Parameters, Notes, Examples, Compatibility), so "what does CONCURRENTLY do?" has a right answer
in CREATE INDEX, REINDEX, DROP INDEX and REFRESH MATERIALIZED VIEW alike: the ambiguity HiQA's
cascaded paths and keyword route are for.  ``data/demo/questions.jsonl`` holds labelled
questions for ``hiqa eval``.

Embedding the ~560 segments takes minutes on two cores, so the repo ships their vectors
(``data/demo/embeddings.sqlite3``, built by ``scripts/build_demo_vectors.py``).  The first
``ensure_demo`` copies them into the user's embedding cache and then ingests the pages the
ordinary way: ingest finds every vector in the cache and the model is never run.  With another
embedder or model version the shipped rows simply go unused and the demo is embedded as usual.
"""
from __future__ import annotations

import contextlib
import sqlite3
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from hiqa.collection import Collection, list_collections
from hiqa.embed.factory import EmbeddingCache
from hiqa.errors import CollectionError, IngestBusyError
from hiqa.files import LockBusy, file_lock
from hiqa.formats import SUPPORTED_EXTENSIONS
from hiqa.index.ingest import IngestResult, Progress
from hiqa.settings import Settings

DEMO_COLLECTION = "demo"
DEMO_DIR_ENV = "HIQA_DEMO_DIR"
BUILD_TIMEOUT_S = 900.0
"""How long a caller waits for another session's or process's build of the demo."""


def demo_dir(settings: Settings | None = None) -> Path:
    """``$HIQA_DEMO_DIR``, or ``data/demo`` in the repository that holds this package."""
    override = (settings or Settings()).demo_override
    root = override or Path(__file__).resolve().parent.parent / "data" / "demo"
    if not (root / "docs").is_dir():
        raise CollectionError(
            f"the demo corpus is not at {root} (no docs/ folder there); run HiQA from a checkout "
            f"of the repository, or set {DEMO_DIR_ENV} to a copy of its data/demo folder"
        )
    return root


def demo_documents(root: Path) -> list[str]:
    """The document ids ingest gives the demo pages (paths relative to ``docs/``)."""
    docs = root / "docs"
    return sorted(f.relative_to(docs).as_posix() for f in docs.rglob("*")
                  if f.is_file() and f.suffix.lower() in SUPPORTED_EXTENSIONS)


def merge_shipped_vectors(settings: Settings, shipped: Path) -> tuple[int, set[str]]:
    """Copy the rows of ``shipped`` (an ``EmbeddingCache`` file) into the user's cache.

    Existing rows win (``INSERT OR IGNORE``), so a user's own vectors are never replaced.
    Returns the number of rows added and the model ids the shipped file holds.  A missing or
    unreadable file adds nothing: the demo is then embedded by the model, only slower.
    """
    if not shipped.is_file():
        return 0, set()
    EmbeddingCache(settings.cache_dir).close()  # creates the file and its schema
    target = settings.cache_dir / EmbeddingCache.FILENAME
    conn = sqlite3.connect(target, timeout=30, uri=True)
    try:
        conn.execute("ATTACH DATABASE ? AS shipped",
                     (f"file:{quote(str(shipped.resolve()))}?mode=ro&immutable=1",))
        models = {row[0] for row in conn.execute("SELECT DISTINCT model_id FROM shipped.embeddings")}
        with conn:
            before = conn.total_changes
            conn.execute("INSERT OR IGNORE INTO main.embeddings (model_id, kind, text_sha256, vector) "
                         "SELECT model_id, kind, text_sha256, vector FROM shipped.embeddings")
            added = conn.total_changes - before
        conn.execute("DETACH DATABASE shipped")
        return added, models
    except sqlite3.DatabaseError as exc:
        warnings.warn(f"shipped demo vectors {shipped} could not be read ({exc}); the demo "
                      "will be embedded from scratch", stacklevel=2)
        return 0, set()
    finally:
        conn.close()


def ensure_demo(settings: Settings | None = None, progress: Progress | None = None, *,
                timeout: float = BUILD_TIMEOUT_S) -> Collection:
    """The demo collection, built on the first call (see the module docstring).

    Later calls only open it.  Several Streamlit sessions (threads) or processes may call this
    at once: one builds while the others wait, up to ``timeout`` seconds, then open the result.
    ``progress`` is ``Collection.ingest``'s callback and is only called by the builder.
    """
    settings = settings or Settings()
    root = demo_dir(settings)
    expected = demo_documents(root)
    col = _open_if_ready(settings, expected)
    if col is not None:
        return col
    deadline = time.monotonic() + timeout
    lock = settings.data_dir / "collections" / DEMO_COLLECTION / "demo-build.lock"
    with _exclusive(lock, deadline):
        col = _open_if_ready(settings, expected)
        if col is not None:
            return col
        col = Collection(DEMO_COLLECTION, settings, create=True)
        _, models = merge_shipped_vectors(settings, root / EmbeddingCache.FILENAME)
        if models and col.meta["model_id"] not in models:
            warnings.warn(
                f"the shipped demo vectors are for {', '.join(sorted(models))}, not "
                f"{col.meta['model_id']}; embedding the demo takes a few minutes", stacklevel=2)
        results = _ingest_waiting(col, root / "docs", progress, deadline)
        if (root / "lexicon.csv").exists() and col.documents:
            # The expert lexicon names each page's command, so "In CREATE INDEX, ..." earns the
            # keyword bonus (Eq. 2) for that page; file stems alone say nothing useful here.
            col.set_lexicon(root / "lexicon.csv")
    if not col.documents:
        errors = "; ".join(f"{r.doc_id}: {r.error}" for r in results if r.error)[:500]
        raise CollectionError(f"the demo collection could not be built: {errors}")
    return col


def _open_if_ready(settings: Settings, expected: list[str]) -> Collection | None:
    if DEMO_COLLECTION not in list_collections(settings):
        return None
    col = Collection(DEMO_COLLECTION, settings)
    return col if set(expected) <= set(col.documents) else None


def _ingest_waiting(col: Collection, docs: Path, progress: Progress | None,
                    deadline: float) -> list[IngestResult]:
    """``col.ingest``, retried while another process (``hiqa ingest -c demo``) holds its lock."""
    while True:
        try:
            return col.ingest([docs], progress=progress)
        except CollectionError as exc:
            if not isinstance(exc, IngestBusyError) or time.monotonic() > deadline:
                raise
            time.sleep(1.0)


@contextlib.contextmanager
def _exclusive(path: Path, deadline: float) -> Iterator[None]:
    """The demo build's lock, waited for until ``deadline`` (another session may be building)."""
    try:
        with file_lock(path, wait=lambda _who, _s: time.monotonic() < deadline, poll_s=0.2):
            yield
    except LockBusy:
        raise CollectionError(
            "the demo collection is still being built by another session or "
            f"process (lock {path}); try again when it has finished") from None
