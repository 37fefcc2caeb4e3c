"""The one place that talks to an LLM: any OpenAI-compatible chat endpoint.

HiQA works offline without an LLM (answers become extractive, the formatter stays rule-based);
when ``HIQA_LLM_BASE_URL`` is set, the answer generator, the sliding-window formatter and the
keyword extractor call it through ``LLMClient``.  Every failure of the endpoint becomes an
``LLMError`` whose message names the endpoint and says what to do, so the CLI and the app can
show ``str(error)`` as is.  ``CachedLLM`` stores replies in SQLite so that re-running the
formatter or the keyword extractor over the same documents costs no further calls.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hiqa.errors import LLMError

if TYPE_CHECKING:
    from hiqa.settings import Settings

Message = Mapping[str, str]

ENV_BASE_URL = "HIQA_LLM_BASE_URL"
ENV_MODEL = "HIQA_LLM_MODEL"
ENV_API_KEY = "HIQA_LLM_API_KEY"
ENV_TIMEOUT = "HIQA_LLM_TIMEOUT"


@dataclass(frozen=True)
class LLMConfig:
    """Where the endpoint is and how to call it.

    ``max_retries`` is passed to the ``openai`` client (it retries connection errors, 429 and
    5xx with back-off); set it to 0 for a local server where a retry only delays the error.
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    max_tokens: int = 512
    temperature: float = 0.0
    max_retries: int = 2

    @classmethod
    def from_env(cls) -> LLMConfig | None:
        """Read ``HIQA_LLM_*`` (through ``hiqa.settings``, the one place that reads the
        environment); ``None`` when no base URL is set, the offline default."""
        from hiqa.settings import Settings

        try:
            settings = Settings()
        except ValueError:
            raise LLMError(f"{ENV_TIMEOUT} must be a number of seconds") from None
        return cls.from_settings(settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMConfig | None:
        base_url = (settings.llm_base_url or "").strip()
        if not base_url:
            return None
        model = (settings.llm_model or "").strip()
        if not model:
            raise LLMError(
                f"{ENV_BASE_URL} is set to {redact(base_url)} but {ENV_MODEL} is empty; set it to "
                "the model name the endpoint serves (see its /v1/models)"
            )
        if not settings.llm_timeout > 0:
            raise LLMError(f"{ENV_TIMEOUT} must be a positive number of seconds")
        return cls(
            base_url=base_url,
            model=model,
            api_key=(settings.llm_api_key or "").strip() or None,
            timeout=float(settings.llm_timeout),
        )


@dataclass(frozen=True)
class Completion:
    """One chat reply with what it cost; ``cached`` is true when it came from ``CachedLLM``."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    seconds: float = 0.0
    cached: bool = False


class ChatModel(Protocol):
    """What the answer generator, formatter and keyword extractor need from an LLM."""

    @property
    def model(self) -> str: ...

    def chat(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Completion: ...

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str: ...

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> Iterator[str]: ...


class LLMClient:
    """A thin wrapper over ``openai.OpenAI`` that turns every failure into ``LLMError``."""

    def __init__(self, config: LLMConfig):
        from openai import OpenAI

        self.config = config
        self._client = OpenAI(
            base_url=config.base_url,
            # Local servers accept any key, but the client refuses to start without one.
            api_key=config.api_key or "not-needed",
            timeout=config.timeout,
            max_retries=config.max_retries,
        )

    @property
    def model(self) -> str:
        return self.config.model

    def chat(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Completion:
        started = time.monotonic()
        try:
            reply = self._client.chat.completions.create(
                model=self.config.model,
                messages=[dict(m) for m in messages],  # type: ignore[misc]
                max_tokens=max_tokens or self.config.max_tokens,
                temperature=self.config.temperature,
            )
        except Exception as exc:
            raise self._error(exc) from exc
        choices = getattr(reply, "choices", None)
        if not choices or choices[0].message is None or choices[0].message.content is None:
            raise LLMError(
                f"LLM endpoint {redact(self.config.base_url)} returned a reply without message "
                f"content (model {self.config.model!r}); check that it serves OpenAI chat completions"
            )
        usage = getattr(reply, "usage", None)
        return Completion(
            text=choices[0].message.content,
            model=self.config.model,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=str(choices[0].finish_reason or "stop"),
            seconds=time.monotonic() - started,
        )

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        return self.chat(messages, max_tokens=max_tokens).text

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> Iterator[str]:
        """Yield the reply's text deltas as they arrive (empty deltas are skipped)."""
        try:
            chunks = self._client.chat.completions.create(
                model=self.config.model,
                messages=[dict(m) for m in messages],  # type: ignore[misc]
                max_tokens=max_tokens or self.config.max_tokens,
                temperature=self.config.temperature,
                stream=True,
            )
            for chunk in chunks:
                choices = getattr(chunk, "choices", None)
                if not choices:
                    continue
                delta = choices[0].delta
                if delta is not None and delta.content:
                    yield delta.content
        except LLMError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    def _error(self, exc: Exception) -> LLMError:
        """Translate an ``openai``/transport exception into a message a user can act on.

        The message is shown in the app and the terminal, so it never carries the API key
        (some endpoints echo it back) or credentials written into the URL.
        """
        error = self._describe(exc)
        message = redact(str(error), self.config.api_key)
        return error if message == str(error) else LLMError(message)

    def _describe(self, exc: Exception) -> LLMError:
        import openai

        where = f"LLM endpoint {redact(self.config.base_url)}"
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(
                f"{where} did not answer within {self.config.timeout:g} s; raise "
                f"{ENV_TIMEOUT}, ask for fewer tokens or use a faster model"
            )
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(
                f"{where} is not reachable ({_root_cause(exc)}); start the server or fix "
                f"{ENV_BASE_URL}"
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _status_detail(exc)
            if status in (401, 403):
                hint = f"the endpoint rejected the API key; set {ENV_API_KEY}"
            elif status == 404:
                hint = (
                    f"check {ENV_BASE_URL} (it usually ends in /v1) and {ENV_MODEL} "
                    f"(currently {self.config.model!r})"
                )
            elif status == 429:
                hint = "the endpoint is rate-limiting; wait and retry"
            elif status >= 500:
                hint = "the server failed; check its log"
            else:
                hint = "the endpoint refused the request"
            return LLMError(f"{where} answered HTTP {status}: {detail}; {hint}")
        if isinstance(exc, openai.OpenAIError):
            return LLMError(f"{where} failed: {exc}")
        return LLMError(
            f"{where} sent a reply that could not be read ({type(exc).__name__}: {exc}); "
            "check that it speaks the OpenAI chat-completions protocol"
        )


def redact(text: str, *secrets: str | None) -> str:
    """``text`` without the given secrets, ``user:password@`` in URLs, or ``sk-...`` keys."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = re.sub(r"(?<=://)[^/@\s]+@", "***@", text)
    return re.sub(r"\b(sk-[A-Za-z0-9_*-]{2})[A-Za-z0-9_*-]{8,}", r"\1***", text)


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc) or type(exc).__name__
    return text if len(text) < 200 else text[:197] + "..."


def _status_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, dict) else err
        if message:
            return str(message)[:300]
    return str(getattr(exc, "message", "") or exc)[:300]


def cache_key(model: str, messages: Sequence[Message], max_tokens: int, temperature: float) -> str:
    """Hash of everything that determines a reply: model, prompt messages and sampling."""
    payload = json.dumps(
        {
            "model": model,
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedLLM:
    """An ``LLMClient`` whose ``chat``/``complete`` replies are stored in SQLite.

    Meant for deterministic calls (temperature 0) such as the formatter and the keyword
    extractor: the key is ``cache_key(model, messages, max_tokens, temperature)``, so a new
    model or prompt misses the cache while a re-run of the same documents makes no HTTP call.
    ``stream`` is not cached: it serves interactive answers.
    """

    FILENAME = "llm-cache.sqlite"

    def __init__(self, client: LLMClient, cache_dir: str | os.PathLike[str]):
        self.client = client
        self.path = Path(cache_dir) / self.FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS replies ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,"
                " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
                " finish_reason TEXT NOT NULL, created REAL NOT NULL)"
            )
        self.hits = 0
        self.misses = 0

    @property
    def model(self) -> str:
        return self.client.model

    def _connect(self) -> sqlite3.Connection:
        try:
            return sqlite3.connect(self.path, timeout=30)
        except sqlite3.Error as exc:
            raise LLMError(f"cannot open the LLM cache {self.path}: {exc}") from exc

    def chat(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Completion:
        cfg = self.client.config
        tokens = max_tokens or cfg.max_tokens
        key = cache_key(cfg.model, messages, tokens, cfg.temperature)
        with self._connect() as db:
            row = db.execute(
                "SELECT text, prompt_tokens, completion_tokens, finish_reason FROM replies "
                "WHERE key = ?",
                (key,),
            ).fetchone()
        if row is not None:
            self.hits += 1
            return Completion(
                text=row[0],
                model=cfg.model,
                prompt_tokens=row[1],
                completion_tokens=row[2],
                finish_reason=row[3],
                cached=True,
            )
        self.misses += 1
        reply = self.client.chat(messages, max_tokens=tokens)
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    cfg.model,
                    reply.text,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    reply.finish_reason,
                    time.time(),
                ),
            )
        return reply

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        return self.chat(messages, max_tokens=max_tokens).text

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> Iterator[str]:
        return self.client.stream(messages, max_tokens=max_tokens)
