"""Markdown Formatter (paper §3.1): every supported source becomes a ``Document``.

``load_document`` dispatches on the file extension.  Each parser emits ``Heading``/``Block``
events and ``hiqa.formats.structure.build_document`` turns them into canonical Markdown plus a heading
tree, so the hierarchy rules are the same for every format.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from hiqa.errors import EmptyDocumentError, UnsupportedFormatError
from hiqa.model import Document

PDF_EXTENSIONS = {".pdf"}
MARKDOWN_EXTENSIONS = {".md", ".markdown", ".mdown", ".mkd"}
TEXT_EXTENSIONS = {".txt", ".text", ".rst", ".log"}
HTML_EXTENSIONS = {".html", ".htm", ".xhtml"}
SUPPORTED_EXTENSIONS = PDF_EXTENSIONS | MARKDOWN_EXTENSIONS | TEXT_EXTENSIONS | HTML_EXTENSIONS


def load_document(path: str | os.PathLike[str], doc_id: str | None = None) -> Document:
    """Read ``path`` and return its canonical ``Document``.

    Raises a ``DocumentError`` subclass with a message a user can act on for unsupported,
    empty, corrupt, encrypted or scanned inputs.
    """
    p = Path(path)
    source = str(p)
    doc_id = doc_id or p.name
    ext = p.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        supported = ", ".join(sorted(SUPPORTED_EXTENSIONS))
        raise UnsupportedFormatError(
            source, f"unsupported file type {ext or '(no extension)'!r}; supported: {supported}"
        )
    if not p.is_file():
        raise EmptyDocumentError(source, "not a regular file (a folder, pipe or device); only "
                                 "regular files are read" if p.exists() else "file not found")
    if p.stat().st_size == 0:
        raise EmptyDocumentError(source, "the file is empty (0 bytes)")
    if ext in PDF_EXTENSIONS:
        from hiqa.formats.pdf.reader import parse_pdf

        doc = parse_pdf(p, doc_id)
    else:
        from hiqa.formats.textio import read_text

        text, warnings = read_text(p)
        if not text.strip():
            raise EmptyDocumentError(source, "the file contains no text")
        if ext in MARKDOWN_EXTENSIONS:
            from hiqa.formats.markdown import parse_markdown

            doc = parse_markdown(text, doc_id=doc_id, source=source, warnings=warnings)
        elif ext in HTML_EXTENSIONS:
            from hiqa.formats.html import parse_html

            doc = parse_html(text, doc_id=doc_id, source=source, warnings=warnings)
        else:
            from hiqa.formats.text import parse_text

            doc = parse_text(text, doc_id=doc_id, source=source, warnings=warnings)
    if not doc.markdown.strip():
        raise EmptyDocumentError(source, "no text could be extracted")
    return doc


def save_figures(doc: Document, write: Callable[[str, bytes], None]) -> list[str]:
    """Hand the picture of each of ``doc``'s figures to ``write(name, png)`` (``name`` is
    ``Block.image``); returns warnings for figures whose picture could not be made.  Only PDFs
    have figures."""
    if doc.format != "pdf":
        return []
    from hiqa.formats.pdf.figures import render_figures

    blocks = [b for s in doc.sections for b in s.blocks if b.kind == "image"]
    return render_figures(Path(doc.source), blocks, write)
