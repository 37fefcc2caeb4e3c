"""The process's one cache of open handles: stores, Qdrant clients, embedders, derived indexes.

Opening is the slow part of a query (a shard's files, a model's weights, a lexical index), and
the embedded store allows one opener per folder, so each is opened once per process and shared
by every ``Collection`` object that names it: the CLI opens one, the Streamlit app keeps them
across reruns.  Entries are keyed by where the data lives (data dir or server URL) and by name;
``close_all`` releases them (tests, CLI exit) and ``forget`` drops one collection's entries when
it is deleted.  Nothing else in HiQA keeps mutable state at module level.
"""
from __future__ import annotations

import atexit
import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Handles:
    stores: dict[str, Any] = field(default_factory=dict)
    """store key -> ``hiqa.index.store.Store``"""
    clients: dict[str, Any] = field(default_factory=dict)
    """server URL or folder -> ``QdrantClient``"""
    embedders: dict[str, Any] = field(default_factory=dict)
    """embedder name, cache dir and endpoint -> ``CachedEmbedder``"""
    derived: dict[str, Any] = field(default_factory=dict)
    """collection key -> ``hiqa.retrieve.routes.Derived`` (lexical index + segments of one generation)"""
    workers: dict[str, Any] = field(default_factory=dict)
    """collection key -> ``hiqa.index.background.DenseWorker`` (dense vectors filled in the app)"""
    building: dict[str, threading.RLock] = field(default_factory=dict)
    """collection key -> the lock its derived data is built under (one build at a time)"""
    releaser: threading.Thread | None = None
    """the thread that hands idle embedded stores back (``hiqa.index.store.start_idle_release``)"""
    lock: threading.RLock = field(default_factory=threading.RLock)

    def build_lock(self, key: str) -> threading.RLock:
        """The lock one collection's derived data is built under: a page's question and an
        ingest finishing in another session build it once, not both into one folder."""
        with self.lock:
            return self.building.setdefault(key, threading.RLock())

    def forget(self, key: str) -> None:
        """Stop the worker, close and drop the store and derived entries of one collection."""
        with self.lock:
            worker = self.workers.pop(key, None)
        if worker is not None:
            worker.stop(timeout=60)
        with self.lock:
            store = self.stores.pop(key, None)
            self.derived.pop(key, None)
        if store is not None:
            store.close()

    def close_all(self) -> None:
        with self.lock:
            workers = list(self.workers.values())
            self.workers.clear()
        for worker in workers:
            worker.stop(timeout=60)
        with self.lock:
            stores, clients = list(self.stores.values()), list(self.clients.values())
            self.stores.clear()
            self.clients.clear()
            self.derived.clear()
        for handle in [*stores, *clients]:
            with contextlib.suppress(Exception):  # closing twice or a dead server is no error
                handle.close()


HANDLES = Handles()
atexit.register(HANDLES.close_all)
