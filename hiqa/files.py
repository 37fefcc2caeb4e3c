"""Writing files so that a crash never leaves half of one: the one atomic write.

Readers see the old content or the new, never a part; the content is fsynced before the
rename and the folder after it, so a power cut cannot leave an empty file behind the rename.
``registry.StagedFiles`` uses the same fsyncs for many files put in place together.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path


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
