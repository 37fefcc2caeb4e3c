"""Files shared between processes: the one atomic write and the one file lock.

Readers see the old content or the new, never a part; the content is fsynced before the
rename and the folder after it, so a power cut cannot leave an empty file behind the rename.
``registry.StagedFiles`` uses the same fsyncs for many files put in place together.

``file_lock`` is every lock HiQA takes (the registry's, the ingest's, the demo build's): an
``flock`` on a lock file.  ``flock`` locks belong to the open file, so two threads of one
process (two Streamlit sessions) exclude each other as two processes do, and the kernel drops
the lock of a process that dies, so a ``kill -9`` never leaves a collection locked.
"""
from __future__ import annotations

import contextlib
import fcntl
import math
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from hiqa.errors import StorageError

MB = 1024 * 1024


def check_free_space(directory: Path, need: int, what: str) -> None:
    """Refuse, with what to do, work that needs ``need`` bytes more than ``directory``'s file
    system has free: a store that grows a memory-mapped file on a full disk is killed by SIGBUS
    mid-write, where this says so before anything is written."""
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return  # cannot tell: let the write itself report
    if free < need:
        raise StorageError(
            f"no space left on device: {what} needs ~{math.ceil(need / MB)} MB in {directory} "
            f"and {free // MB} MB are free. Nothing was changed; free some space or move the "
            "data directory (HIQA_DATA_DIR)")


class LockBusy(Exception):
    """``file_lock`` gave up: ``holder`` is what the holder wrote into the lock file."""

    def __init__(self, path: Path, holder: str):
        super().__init__(f"{path} is held by {holder or 'another process'}")
        self.holder = holder


@contextlib.contextmanager
def file_lock(path: Path, *, wait: Callable[[str, float], bool] | None = None,
              holder: str = "", poll_s: float = 0.05) -> Iterator[int]:
    """Hold an exclusive lock on ``path`` (created with its folder); yields its descriptor.

    ``wait=None`` blocks until the lock is free.  Otherwise, each time the lock is found taken,
    ``wait(holder text, seconds waited)`` says whether to keep waiting (polled every
    ``poll_s``); when it says no, ``LockBusy`` is raised.  ``holder`` is written into the file
    while the lock is held, so whoever finds it taken can say who has it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        if wait is None:
            fcntl.flock(fh, fcntl.LOCK_EX)
        else:
            start = time.monotonic()
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    fh.seek(0)
                    who = fh.read().strip()
                    if not wait(who, time.monotonic() - start):
                        raise LockBusy(path, who) from None
                    time.sleep(poll_s)
        try:
            if holder:
                fh.seek(0)
                fh.truncate()
                fh.write(holder)
                fh.flush()
            yield fh.fileno()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a file so that readers see the old or the new content, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        fh.flush()
        os.fsync(fh.fileno())  # a power cut must not leave an empty file behind the rename
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs a folder
        _fsync(directory)
