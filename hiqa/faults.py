"""Named crash points for the fault-injection test (``tests/test_faults.py``).

``HIQA_CRASH_AT=name[@n]`` (e.g. ``ingest:mid-upsert@2``) makes the process ``SIGKILL`` itself the ``n``-th time (default 1st)
it passes the checkpoint ``name``: a ``kill -9`` at a precise, repeatable moment of an ingest,
with nothing flushed or cleaned up.  Unset (always, outside that test) a checkpoint is a dict
lookup.  The points are listed in ``POINTS`` so the test can prove it visits every one.
"""
from __future__ import annotations

import os
import signal

POINTS = (
    "ingest:before-upsert",      # a document parsed and embedded, nothing written
    "ingest:mid-upsert",         # some of a document's points written
    "ingest:after-upsert",       # all its points written, the registry does not name them yet
    "ingest:before-commit",      # several documents written, the registry write about to start
    "ingest:after-commit",       # registry names the new versions, old versions still stored
    "ingest:mid-delete-old",     # some old versions deleted
    "ingest:after-markdown",     # Markdown written, registry not yet
    "ingest:before-derived",     # everything committed, the lexical index not rebuilt
    "ingest:mid-finalize",       # the helper building the lexical index, the store's not built
    "embed:before-write",        # dense vectors computed, not written
    "embed:mid-write",           # some dense vectors written
    "remove:after-registry",     # a document unregistered, its points still stored
    "repair:after-registry",     # repair re-registered / forgot documents, stale points stored
    "repair:mid-reindex",        # repair re-read some documents from their sources, not all
)

_counts: dict[str, int] = {}


def checkpoint(name: str) -> None:
    """Die here with SIGKILL if ``HIQA_CRASH_AT`` names this point (and its count is reached)."""
    target = os.environ.get("HIQA_CRASH_AT")
    if not target:
        return
    point, _, nth = target.partition("@")
    if point != name:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
