"""Domain objects passed between the pipeline stages.

Data flows one way (see STYLE.md):
source file -> Document (Markdown Formatter) -> Section tree -> Segment (HCA) -> index.
Every object here is a small frozen dataclass; a path is always a tuple of titles, never a
joined string, so titles containing "/", ">" or "|" cannot break it.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

BlockKind = Literal["text", "table", "image"]
NodeKind = Literal["heading", "term"]


@dataclass(frozen=True)
class Heading:
    """A heading as shown in the document: level 1 is the top level, page is 1-based.

    ``kind="term"`` marks a definition-list term (an option, an error code, a register field):
    the finest level of the hierarchy (issue #17).  A parser emits it with ``level=0`` right
    before the term's description; ``hiqa.formats.structure`` places it one level below the enclosing
    heading and, when the term is alone in its section, turns it back into the paragraph ``raw``.
    """

    level: int
    title: str
    page: int = 1
    kind: NodeKind = "heading"
    raw: str = ""


@dataclass(frozen=True)
class Block:
    """A run of body content under one heading: a paragraph group, a table or a figure.

    For tables ``text`` is the Markdown table and ``caption`` its caption (may be empty);
    ``rows`` keeps the cells so HCA can build the caption + header + first-column text
    (paper A.4/A.6).  For a figure (paper A.3/A.5) ``text`` is what is indexed for it: the
    caption and the sentences that refer to it; ``image`` names its picture file (stored per
    document by the collection at ingest) and ``bbox`` where it sits on ``page``, so the
    picture can be rendered from the source.
    """

    kind: BlockKind
    text: str
    page: int = 1
    caption: str = ""
    rows: tuple[tuple[str, ...], ...] = ()
    image: str = ""
    bbox: tuple[float, float, float, float] | None = None

    @property
    def markdown(self) -> str:
        """The block as canonical Markdown: a table under its caption, a figure as an image
        link (its caption the alt text)."""
        text = self.text.strip("\n")
        if self.kind == "image":
            alt = re.sub(r"([\\\[\]])", r"\\\1", " ".join(self.caption.split()))
            return f"![{alt}]({self.image})"
        if self.kind == "table" and self.caption:
            return f"{self.caption}\n\n{text}"
        return text


@dataclass(frozen=True)
class Section:
    """One node of the heading tree with the body that sits directly under its heading.

    ``path`` holds the heading titles from the top level down to this one (the document
    title is not included; ``Document.path_of`` adds it).  The root section (text before the
    first heading) has ``level == 0`` and an empty path.  ``span`` is the section's
    character range (heading line included) in ``Document.markdown``; ``body_span`` the range of
    its body alone.
    """

    order: int
    level: int
    title: str
    path: tuple[str, ...]
    parent: int | None
    blocks: tuple[Block, ...]
    pages: tuple[int, ...]
    span: tuple[int, int]
    body_span: tuple[int, int]
    kind: NodeKind = "heading"

    @property
    def body(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


@dataclass(frozen=True)
class Document:
    """A source file in canonical form: Markdown text plus its heading tree.

    ``doc_id`` is the file's name relative to the corpus folder (or its base name), so
    evaluation gold (``{"doc": "open.2.md"}``) can name it.
    """

    doc_id: str
    title: str
    source: str
    format: str
    markdown: str
    sections: tuple[Section, ...]
    page_count: int = 1
    warnings: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def headings(self) -> list[Heading]:
        """Detected headings in document order (the `hiqa structure` output), terms left out."""
        return [h for h in self.nodes if h.kind == "heading"]

    @property
    def nodes(self) -> list[Heading]:
        """Headings and definition terms in document order (``hiqa structure --terms``)."""
        return [
            Heading(s.level, s.title, s.pages[0] if s.pages else 1, s.kind)
            for s in self.sections
            if s.level > 0
        ]

    def path_of(self, section: Section) -> tuple[str, ...]:
        """The cascaded path ``(document title, chapter, ..., section)``.

        A top-level heading that repeats the document title (``# wc(1)`` in ``wc.1.md``) is
        not repeated in the path.
        """
        path = section.path
        if path and normalize_title(path[0]) == normalize_title(self.title):
            path = path[1:]
        return (self.title, *path)

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.markdown.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Segment:
    """The unit that is embedded, indexed and retrieved (paper §3.2, Alg. 1).

    ``text`` is the body given to the LLM (full table values included); ``augmented_text`` is
    what is embedded and BM25-indexed for the chosen strategy (for ``hca``: the cascaded path
    then the body, see ``hiqa.augment``); ``span`` is the character range in the document's
    canonical Markdown, used to judge ``fixed`` chunks against gold sections.
    """

    segment_id: str
    doc_id: str
    doc_title: str
    source: str
    path: tuple[str, ...]
    level: int
    order: int
    piece: int
    pages: tuple[int, ...]
    text: str
    augmented_text: str
    is_table: bool
    strategy: str
    span: tuple[int, int]
    keywords: tuple[str, ...] = ()
    kind: NodeKind = "heading"
    image: str = ""
    page_labels: tuple[str, ...] = ()
    """The page number printed on each page of the document (index ``page - 1``; empty where
    none is known), when it differs from the file's count: ``segment_pages_label`` cites it."""

    @property
    def is_image(self) -> bool:
        """A figure's segment: ``image`` names its picture (``Collection.image_path``)."""
        return bool(self.image)

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.augmented_text.encode("utf-8")).hexdigest()

    @property
    def context_path(self) -> tuple[str, ...]:
        """The heading section this segment belongs to: a term's is its parent section's."""
        return self.path[:-1] if self.kind == "term" and len(self.path) > 1 else self.path

    @property
    def heading(self) -> str:
        return self.path[-1] if self.path else self.doc_title

    @property
    def section_path(self) -> tuple[str, ...]:
        """The path below the document title (empty for a segment of the document root)."""
        if self.path and normalize_title(self.path[0]) == normalize_title(self.doc_title):
            return self.path[1:]
        return self.path


def normalize_title(text: str) -> str:
    """How headings and titles are compared: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def pages_label(pages: tuple[int, ...] | list[int]) -> str:
    """``p. 3`` or ``pp. 3–5`` (empty when no page is known)."""
    ps = sorted(set(pages))
    if not ps:
        return ""
    return f"p. {ps[0]}" if len(ps) == 1 else f"pp. {ps[0]}–{ps[-1]}"


PAGINATED_SUFFIXES = frozenset({".pdf"})
"""Source types whose page numbers mean something; HTML, Markdown and text are one long page."""


def segment_pages_label(segment: Segment) -> str:
    """``pages_label`` of a segment from a paginated source (PDF), else empty: "p. 1" on an
    HTML page tells the reader nothing.  Where the page carries another printed number than the
    file's count, both are given: ``p. 12 (PDF page 20)``, ``pp. 12–13 (PDF pages 20–21)``."""
    suffix = segment.source.rsplit(".", 1)[-1].casefold() if "." in segment.source else ""
    if f".{suffix}" not in PAGINATED_SUFFIXES:
        return ""
    pages = sorted(set(segment.pages))
    labels = segment.page_labels
    printed = [labels[p - 1] if 0 < p <= len(labels) else "" for p in pages]
    if not pages or not all(printed) or printed == [str(p) for p in pages]:
        return pages_label(pages)
    if len(pages) == 1:
        return f"p. {printed[0]} (PDF page {pages[0]})"
    return f"pp. {printed[0]}–{printed[-1]} (PDF pages {pages[0]}–{pages[-1]})"


def page_labels_of(doc: Document) -> tuple[str, ...]:
    """The printed page labels a reader found (``metadata["page_labels"]``), one per page."""
    raw = doc.metadata.get("page_labels", "")
    return tuple(raw.split("\x1f")) if raw else ()
