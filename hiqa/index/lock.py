"""One writer per collection: the ingest lock (``collections/<name>/ingest.lock``)."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from hiqa.errors import IngestBusyError
from hiqa.files import LockBusy, file_lock
from hiqa.index.parts import Parts


@contextlib.contextmanager
def ingest_lock(parts: Parts, *, wait_s: float = 0.0, holder: str = "ingest",
                reread: bool = True) -> Iterator[int]:
    """One writer per collection; the registry is re-read once the lock is held.

    A dense-vector writer (``holder="embed"``, ``fill_dense``) holds it for milliseconds per
    batch, so anyone finding it there waits; an ingest held by another ingest fails at once
    unless ``wait_s`` says to wait.  Yields the lock's descriptor: a helper process given it
    holds the lock while it lives.
    """
    def wait(who: str, waited: float) -> bool:
        # a vector writer holds it for milliseconds; a holder that has not written its name
        # yet may be one
        return waited < wait_s or (who.startswith("embed") and waited < wait_s + 30) or (
            not who and waited < wait_s + 1)

    held = False
    try:
        with file_lock(parts.dir / "ingest.lock", wait=wait,
                       holder=f"{holder}, pid {os.getpid()}") as fd:
            held = True
            if reread:
                parts.registry.reload()  # never work from a stale copy
            yield fd
    except LockBusy as busy:
        if held:  # another lock, taken inside this one
            raise
        raise IngestBusyError(
            f"another ingest into collection {parts.name!r} is running "
            f"({busy.holder or 'another process'}); wait for it to finish and try again"
        ) from None
