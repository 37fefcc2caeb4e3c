"""HiQA engine: Markdown Formatter, Hierarchical Contextual Augmentor, Multi-Route Retriever.

The engine never imports Streamlit; the app in ``app.py``/``pages/`` and the ``hiqa`` CLI call it.
"""
from hiqa.errors import HiqaError
from hiqa.model import Block, Document, Heading, Section, Segment

__all__ = ["Block", "Document", "Heading", "HiqaError", "Section", "Segment"]


def __getattr__(name: str) -> str:
    """``hiqa.__version__`` from the installed metadata, so pyproject.toml is its one source."""
    if name == "__version__":
        from hiqa.version import package_version

        return package_version()
    raise AttributeError(f"module 'hiqa' has no attribute {name!r}")
