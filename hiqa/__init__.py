"""HiQA engine: Markdown Formatter, Hierarchical Contextual Augmentor, Multi-Route Retriever.

The engine never imports Streamlit; the app in ``app.py``/``pages/`` and the ``hiqa`` CLI call it.
"""
from .errors import HiqaError
from .model import Block, Document, Heading, Section, Segment

__all__ = ["Block", "Document", "Heading", "HiqaError", "Section", "Segment"]
__version__ = "0.1.0"
