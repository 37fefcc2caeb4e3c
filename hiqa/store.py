"""The one place that opens Qdrant.

Default: Qdrant local mode under ``<data dir>/qdrant`` (embedded, no server).  With
``HIQA_QDRANT_URL`` (+ ``HIQA_QDRANT_API_KEY``) the same code talks to a Qdrant server or
cluster.  Local mode allows one client per folder, so the client is opened once per process and
shared; when another process holds the folder the error says which and what to do.
"""
from __future__ import annotations

import atexit
import errno
import os
import sqlite3
import threading
import warnings
from pathlib import Path

from qdrant_client import QdrantClient, models

from .errors import CollectionError, StorageError
from .settings import Settings

VECTOR_NAMES = ("hca", "content")
_clients: dict[str, QdrantClient] = {}
_lock = threading.Lock()


def _owner_file(path: Path) -> Path:
    return path / "hiqa.owner"


def get_client(settings: Settings) -> QdrantClient:
    """The process-wide client for ``settings`` (local folder or server URL)."""
    key = settings.qdrant_url or str(Path(settings.data_dir, "qdrant").resolve())
    with _lock:
        client = _clients.get(key)
        if client is not None:
            return client
        if settings.qdrant_url:
            client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key,
                                  timeout=30)
        else:
            path = Path(key)
            try:
                path.mkdir(parents=True, exist_ok=True)
                if not os.access(path, os.W_OK):
                    raise PermissionError(errno.EACCES, "not writable", str(path))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    client = QdrantClient(path=str(path))
                _owner_file(path).write_text(f"pid {os.getpid()} ({_describe_process()})\n")
            except (RuntimeError, BlockingIOError) as exc:
                owner = _owner_file(path)
                who = owner.read_text().strip() if owner.exists() else "another process"
                raise CollectionError(
                    f"the Qdrant folder {path} is in use by {who}. Local mode allows one process "
                    "per data directory: stop that process (e.g. the Streamlit app) and retry, use "
                    "another --data-dir, or run a Qdrant server and set HIQA_QDRANT_URL."
                ) from exc
            except (OSError, sqlite3.Error) as exc:
                raise storage_error(exc, settings.data_dir) from exc
        _clients[key] = client
        return client


def storage_error(exc: BaseException, data_dir: Path) -> StorageError:
    """A message for an index or cache that cannot be used: which folder, why, what to do.

    Qdrant local mode opens its SQLite files for writing even to search, so a read-only data
    directory fails on every command, not only on ingest.
    """
    where = getattr(exc, "filename", None) or data_dir
    server = "or run a Qdrant server and set HIQA_QDRANT_URL"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        problem = f"{where}: the disk is full"
        fix = "free some space or choose a data directory on another disk with --data-dir"
    elif isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        problem = f"{where}: a damaged SQLite file ({exc})"
        fix = ("move the damaged file away, or start a new data directory and ingest again "
               "(`hiqa --data-dir NEW ingest ...`)")
    elif isinstance(exc, OSError) and exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
        problem = f"{where}: {exc.strerror or exc}"
        fix = "pass --data-dir (or set HIQA_DATA_DIR) to a folder you can write"
    else:
        ro = (getattr(exc, "errno", None) == errno.EROFS or _read_only(data_dir)
              or "readonly" in str(exc))
        problem = (f"{where}: {'it is read-only' if ro else 'permission denied'}; HiQA writes its "
                   "index there even to search")
        fix = (f"make it writable, or copy it somewhere writable and pass --data-dir (or set "
               f"HIQA_DATA_DIR), {server}")
    return StorageError(f"cannot use the data directory {data_dir} ({problem}). Fix: {fix}.")


def _read_only(path: Path) -> bool:
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def close_all() -> None:
    """Close every client (tests and CLI exit); releases local-mode folder locks."""
    with _lock:
        for client in _clients.values():
            try:
                client.close()
            except Exception:  # closing twice or a dead server is not worth an error
                pass
        _clients.clear()


atexit.register(close_all)


def is_local(settings: Settings) -> bool:
    return not settings.qdrant_url


def tune_local_storage(client: QdrantClient, name: str) -> None:
    """Let Qdrant local mode's SQLite file commit in WAL mode instead of fsyncing every point.

    Local mode persists each point in its own transaction; with the default rollback journal
    every one is an fsync (measured: 40 points/s; 512 points 12 s vs 0.33 s in WAL mode).  WAL
    with ``synchronous=NORMAL`` stays consistent after a crash; a power cut can lose only the
    last commits, which the registry rules (``hiqa.collection``) already tolerate.  This reaches
    into qdrant-client internals, so any surprise leaves the defaults in place.
    """
    try:
        conn = client._client.collections[name].storage.storage  # type: ignore[attr-defined]
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    except Exception:
        pass


def create_collection(client: QdrantClient, name: str, dim: int) -> None:
    """Named dense vectors ``content`` (segment text) and ``hca`` (augmented text), cosine."""
    client.create_collection(
        name,
        vectors_config={
            v: models.VectorParams(size=dim, distance=models.Distance.COSINE) for v in VECTOR_NAMES
        },
    )
    for field_name in ("doc_id", "keywords", "version"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode: payload indexes are a no-op
                client.create_payload_index(name, field_name, models.PayloadSchemaType.KEYWORD)
        except Exception:  # pragma: no cover - servers that refuse indexes still work
            pass


def _describe_process() -> str:
    try:
        return Path(f"/proc/{os.getpid()}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120].strip()
    except OSError:
        return "hiqa"
