"""The one place that opens a vector store (``hiqa.index.store.base`` says what one must do).

* default: Qdrant Edge in-process, one shard per collection under ``<data dir>/store/<name>``;
* ``HIQA_QDRANT_URL`` (+ ``HIQA_QDRANT_API_KEY``): a Qdrant server or cluster, same schema;
* ``HIQA_STORE=qdrant-local``: qdrant-client's Python local mode under ``<data dir>/qdrant``,
  the embedded store before Edge; kept to read old data dirs (``hiqa migrate``) and to run the
  server code path in tests without a server.

Stores and clients are opened once per process (``hiqa.handles``): the embedded engines allow one
process per folder, and the error for a second one says which process holds it.  A process that
stays up (the app) can hand an idle embedded store back (``start_idle_release``, when
``HIQA_STORE_IDLE`` is set): a CLI command beside it waits until then (``HIQA_STORE_WAIT``),
and the app's next call reopens it.
"""
from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from hiqa.errors import CollectionError
from hiqa.handles import HANDLES
from hiqa.index.store.base import (
    BATCH,
    VECTOR_NAMES,
    Record,
    Store,
    storage_error,
)
from hiqa.index.store.edge import LOG, EdgeStore, _describe_process
from hiqa.settings import Settings

__all__ = ["BATCH", "VECTOR_NAMES", "ClientStore", "EdgeStore", "Record", "Store",
           "close_all", "get_client", "is_embedded", "open_store", "release_idle",
           "start_idle_release", "storage_error"]
STORES = ("edge", "qdrant-local")


def is_embedded(settings: Settings) -> bool:
    """True for the in-process stores (one process per data dir), False for a server."""
    return not settings.qdrant_url


def store_key(settings: Settings, name: str) -> str:
    where = settings.qdrant_url or f"{settings.store}:{Path(settings.data_dir).resolve()}"
    return f"{where}::{name}"


def __getattr__(name: str) -> object:
    if name == "ClientStore":  # imports qdrant-client (seconds), needed only for a server
        from hiqa.index.store.client import ClientStore

        return ClientStore
    raise AttributeError(name)


def open_store(settings: Settings, name: str) -> Store:
    """The process-wide store of collection ``name`` (not created: see ``Store.create``)."""
    data = Path(settings.data_dir)
    if data.exists() and not data.is_dir():
        raise storage_error(NotADirectoryError(errno.ENOTDIR, "not a directory", str(data)), data)
    key = store_key(settings, name)
    with HANDLES.lock:
        store = HANDLES.stores.get(key)
        if store is None:
            if settings.qdrant_url:
                from hiqa.index.store.client import ClientStore

                store = ClientStore(get_client(settings), name, settings.qdrant_url)
            elif settings.store == "qdrant-local":
                from hiqa.index.store.client import ClientStore

                store = ClientStore(get_client(settings), name,
                                    str(Path(settings.data_dir) / "qdrant"))
            elif settings.store == "edge":
                store = EdgeStore(Path(settings.data_dir) / "store" / name, name,
                                  wait_s=settings.store_wait)
            else:
                raise CollectionError(f"unknown store {settings.store!r} (HIQA_STORE): choose "
                                      f"one of {', '.join(STORES)}")
            HANDLES.stores[key] = store
        return store


def get_client(settings: Settings, *, legacy_dir: Path | None = None) -> Any:
    """The process-wide qdrant-client for the server URL, or for local mode under
    ``legacy_dir`` (default ``<data dir>/qdrant``)."""
    if settings.qdrant_url and legacy_dir is None:
        key = settings.qdrant_url
    else:
        key = str((legacy_dir or Path(settings.data_dir) / "qdrant").resolve())
    with HANDLES.lock:
        client = HANDLES.clients.get(key)
        if client is not None:
            return client
        if key == settings.qdrant_url:
            from qdrant_client import QdrantClient

            client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key,
                                  timeout=30)
        else:
            client = _local_client(Path(key), settings.data_dir)
        HANDLES.clients[key] = client
        return client


def _local_client(path: Path, data_dir: Path) -> Any:
    from qdrant_client import QdrantClient

    owner = path / "hiqa.owner"
    try:
        path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, "not writable", str(path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = QdrantClient(path=str(path))
        owner.write_text(f"pid {os.getpid()} ({_describe_process()})\n")
    except (RuntimeError, BlockingIOError) as exc:
        who = owner.read_text().strip() if owner.exists() else "another process"
        raise CollectionError(
            f"the Qdrant folder {path} is in use by {who}. Local mode allows one process "
            "per data directory: stop that process (e.g. the Streamlit app) and retry, use "
            "another --data-dir, or run a Qdrant server and set HIQA_QDRANT_URL."
        ) from exc
    except (OSError, sqlite3.Error) as exc:
        raise storage_error(exc, data_dir) from exc
    return client


def release_idle(idle_s: float) -> list[str]:
    """Close the embedded stores of this process that no call used for ``idle_s`` seconds and
    no background worker fills (``hiqa.index.background``); returns their collections."""
    with HANDLES.lock:
        stores = [(key, s) for key, s in HANDLES.stores.items() if isinstance(s, EdgeStore)]
        busy = {key for key, worker in HANDLES.workers.items() if worker.running}
    return [s.name for key, s in stores if key not in busy and s.release_if_idle(idle_s)]


def start_idle_release(idle_s: float) -> threading.Thread:
    """Run ``release_idle`` about every second in a daemon thread (once per process; a second
    call returns the running thread).  The app calls this (``HIQA_STORE_IDLE``): the embedded
    store admits one process, and without it the app would hold it for its life."""
    with HANDLES.lock:
        if HANDLES.releaser is not None and HANDLES.releaser.is_alive():
            return HANDLES.releaser

        def run() -> None:
            while True:
                time.sleep(min(1.0, max(0.1, idle_s / 2)))
                try:
                    release_idle(idle_s)
                except Exception:  # noqa: BLE001 - a failed flush is reported by the next call
                    LOG.exception("releasing an idle store failed")

        HANDLES.releaser = threading.Thread(target=run, name="hiqa-store-release", daemon=True)
        HANDLES.releaser.start()
        return HANDLES.releaser


def close_all() -> None:
    """Close every store and client (tests and CLI exit); releases the folder locks."""
    HANDLES.close_all()


