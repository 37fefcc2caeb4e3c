"""Heading tree construction shared by every format parser.

A parser turns its source into a flat, ordered stream of ``Heading`` and ``Block`` events; this
module turns the stream into canonical Markdown and ``Section`` objects with parents and paths.
Parents follow one rule for every format: a heading's parent is the nearest earlier heading of a
*shallower* level, so a skipped level (H1 -> H3) still gets the right parent and a duplicate
heading stays a separate section.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from hiqa.formats.form import form_structure, note_headings
from hiqa.formats.statements import caption_key, family
from hiqa.model import Block, Document, Heading, NodeKind, Section

Event = Heading | Block


@dataclass
class _Open:
    order: int
    level: int
    title: str
    path: tuple[str, ...]
    parent: int | None
    start: int
    body_start: int
    page: int
    kind: NodeKind = "heading"
    blocks: list[Block] = field(default_factory=list)


MAX_TERM_CHARS = 100


def is_term_text(term: str) -> bool:
    """A definition term (every format's parser asks) is short and reads as a name, not as a
    sentence."""
    term = term.strip()
    return 0 < len(term) <= MAX_TERM_CHARS and not term.endswith((".", ",", ";", "!", "?"))


def choose_title_and_source(metadata_title: str | None, headings: list[Heading],
                            source: str) -> tuple[str, str]:
    """Document title rule: metadata title -> first top-level heading -> file name; returns the
    title and where it came from (``metadata`` | ``heading`` | ``filename``).

    "Top-level" means the shallowest level used in the document.  Metadata titles that are
    blank or look like a file name written by a tool ("Microsoft Word - x.doc", "untitled")
    are ignored.  PDFs choose their title in ``hiqa.formats.pdf.title`` and pass it here.
    """
    if metadata_title:
        t = " ".join(metadata_title.split())
        low = t.casefold()
        if t and not low.startswith(("microsoft word", "untitled")) and not low.endswith(
            (".doc", ".docx", ".pdf", ".tex", ".dvi")
        ):
            return t, "metadata"
    if headings:
        top = min(h.level for h in headings)
        return next(h.title for h in headings if h.level == top), "heading"
    name = os.path.basename(source)
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return stem or name, "filename"


def build_document(
    *,
    doc_id: str,
    source: str,
    fmt: str,
    events: Iterable[Event],
    metadata_title: str | None = None,
    page_count: int = 1,
    warnings: Iterable[str] = (),
    metadata: dict[str, str] | None = None,
) -> Document:
    """Assemble a ``Document`` from parser events (see module docstring)."""
    events = resolve_terms(list(events))
    headings = [e for e in events if isinstance(e, Heading) and e.kind == "heading"]
    title, title_source = choose_title_and_source(metadata_title, headings, source)
    metadata = {"title_source": title_source, **(metadata or {})}

    parts: list[str] = []
    pos = 0

    def emit(text: str) -> tuple[int, int]:
        nonlocal pos
        if parts:
            parts.append("\n\n")
            pos += 2
        start = pos
        parts.append(text)
        pos += len(text)
        return start, pos

    sections: list[Section] = []
    stack: list[_Open] = []  # open headings, shallowest first
    current = _Open(0, 0, "", (), None, 0, 0, 1)
    heading_level = 0  # level of the nearest real heading: terms go one below it

    def close(sec: _Open) -> None:
        pages = sorted({sec.page, *(b.page for b in sec.blocks)}) if sec.level else sorted(
            {b.page for b in sec.blocks}
        )
        body_end = pos if sec.blocks else sec.body_start
        sections.append(
            Section(
                order=sec.order,
                level=sec.level,
                title=sec.title,
                path=sec.path,
                parent=sec.parent,
                blocks=tuple(sec.blocks),
                pages=tuple(pages),
                span=(sec.start, pos),
                body_span=(sec.body_start if sec.blocks else body_end, body_end),
                kind=sec.kind,
            )
        )

    for ev in events:
        if isinstance(ev, Heading):
            title_text = " ".join(ev.title.split())
            if not title_text:
                continue
            if current.level > 0 or current.blocks:
                close(current)
            if ev.kind == "term":
                level = heading_level + 1
                line = ev.raw.strip() or f"**{title_text}**"
            else:
                level = heading_level = ev.level
                line = f"{'#' * max(1, min(ev.level, 6))} {_escape_heading(title_text)}"
            while stack and (stack[-1].level >= level or stack[-1].kind == "term"):
                stack.pop()
            parent = stack[-1] if stack else None
            start, end = emit(line)
            current = _Open(
                order=len(sections),
                level=level,
                kind=ev.kind,
                title=title_text,
                path=(*(parent.path if parent else ()), title_text),
                parent=parent.order if parent else None,
                start=start,
                body_start=end + 2,
                page=ev.page,
            )
            stack.append(current)
        else:
            if not ev.text.strip():
                continue
            s, _ = emit(ev.markdown)
            if not current.blocks:
                current.body_start = s
            current.blocks.append(ev)
    if current.level > 0 or current.blocks:
        close(current)
    # Sections were closed in document order, but the root (order 0) may be empty and late.
    sections.sort(key=lambda s: s.order)
    fixed = _fix_spans(sections, pos)
    return Document(
        doc_id=doc_id,
        title=title,
        source=source,
        format=fmt,
        markdown="".join(parts),
        sections=tuple(fixed),
        page_count=page_count,
        warnings=tuple(warnings),
        metadata=dict(metadata or {}),
    )


def resolve_terms(events: list[Event]) -> list[Event]:
    """Keep definition terms only where they form a list (issue #17).

    A term is the finest level of the tree only when its section holds at least two of them; a
    lone term (a one-item list) goes back to being the paragraph it was written as.
    """
    out: list[Event] = []
    run: list[int] = []  # positions in ``out`` of the terms since the last real heading

    def settle() -> None:
        if len(run) == 1:
            term = out[run[0]]
            assert isinstance(term, Heading)
            out[run[0]] = Block("text", term.raw.strip() or term.title, term.page)
        run.clear()

    for ev in events:
        if isinstance(ev, Heading) and ev.kind == "heading":
            settle()
        elif isinstance(ev, Heading):
            run.append(len(out))
        out.append(ev)
    settle()
    events, items = form_structure(_captions_over_terms(out))
    return note_headings(_statement_captions(events, items), items)


def _statement_captions(events: list[Event], items: dict[int, int]) -> list[Event]:
    """A paragraph that is a financial statement's caption ("Consolidated Balance Sheets",
    ``hiqa.formats.statements``) is a heading one level below the enclosing heading, so the
    statement's rows carry its name in their path (issue #46).

    Filings set the caption in body type, so no typographic rule sees it.  Not a heading: a
    caption followed by another (an index of the statements), the caption of the statement
    already open (its "(continued)" page), and the notes' caption after its first time (it
    runs at the head of every page of the notes, between the notes' own headings).  Inside a
    filing's Item (``items``: the Item's level at each position, ``formats.form``) a caption is
    one level below the Item, whatever heading the auditor's report above it got, and so is a
    caption the type made a heading or a definition term: the statements are siblings (General
    Mills' cash flows, a term, came out under its balance sheet, its comprehensive income under
    its earnings).  Nor, once the notes have begun, is the name of a statement captioned before
    them: in the notes it is a table's column head ("Balance Sheet / Classification" over a
    fair-value table) or a mention, and the notes go on."""
    out: list[Event] = []
    level = 0
    open_caption = ""
    notes_seen = False
    captioned: set[str] = set()  # the statements captioned before the notes
    for i, ev in enumerate(events):
        if isinstance(ev, Heading) and ev.kind == "heading":
            name = family(ev.title)
            if name is None:
                level, open_caption = ev.level, ""
            else:
                notes_seen = notes_seen or name == "notes"
                if not notes_seen:
                    captioned.add(name)
                open_caption = caption_key(ev.title)
                if i in items and ev.level != items[i] + 1:  # statements are siblings
                    ev = Heading(items[i] + 1, ev.title, ev.page, ev.kind, ev.raw)
        term = isinstance(ev, Heading) and ev.kind == "term"
        if not (isinstance(ev, Block) and ev.kind == "text" or term):
            out.append(ev)
            continue
        text = ev.title if isinstance(ev, Heading) else ev.text
        name = family(text)
        key = caption_key(text) if name else ""
        if (name is None or key == open_caption or (name == "notes" and notes_seen)
                or (notes_seen and name in captioned)
                or family(_following(events, i)) is not None):
            out.append(ev)
            continue
        notes_seen = notes_seen or name == "notes"
        if not notes_seen:
            captioned.add(name)
        open_caption = key
        out.append(Heading(items.get(i, level) + 1, " ".join(text.split()), ev.page,
                           "heading"))
    return out


def _following(events: list[Event], i: int) -> str:
    """The text of the first event after ``i`` that has any (a heading's title)."""
    for ev in itertools.islice(events, i + 1, None):
        if isinstance(ev, Heading):
            return ev.title
        if ev.text.strip():
            return ev.text
    return ""


def _captions_over_terms(events: list[Event]) -> list[Event]:
    """A term with no text of its own, set in capitals and followed by terms, is the caption of
    the terms after it: a heading one level below the enclosing heading, so they sit under it.

    A financial statement set as short lines reads as a definition list: its caption
    ("CONSOLIDATED BALANCE SHEETS") a term without text, then "(In millions)" and "Current
    assets:" each a term over their rows.  As siblings, the rows' cascaded path lost the
    statement's name (issue #46).  Options listed on two lines ("-e" above "--regexp") are
    never in capitals, so they stay terms."""
    out = list(events)
    level = 0
    for i, ev in enumerate(out):
        if not isinstance(ev, Heading):
            continue
        if ev.kind == "heading":
            level = ev.level
            continue
        nxt = out[i + 1] if i + 1 < len(out) else None
        if (isinstance(nxt, Heading) and nxt.kind == "term" and _caption(ev.title)):
            out[i] = Heading(level + 1, ev.title, ev.page, "heading", ev.raw)
    return out


def _caption(title: str) -> bool:
    letters = [c for c in title if c.isalpha()]
    return len(title.split()) >= 2 and len(letters) >= 6 and all(c.isupper() for c in letters)


def _fix_spans(sections: list[Section], total: int) -> list[Section]:
    """A section's span ends where the next section starts (its heading line included)."""
    out = []
    for i, s in enumerate(sections):
        end = sections[i + 1].span[0] if i + 1 < len(sections) else total
        end = max(end, s.span[0])
        body_end = min(max(s.body_span[1], s.body_span[0]), end)
        out.append(
            Section(
                order=s.order,
                level=s.level,
                title=s.title,
                path=s.path,
                parent=s.parent,
                blocks=s.blocks,
                pages=s.pages,
                span=(s.span[0], end),
                body_span=(s.body_span[0], body_end),
                kind=s.kind,
            )
        )
    return out


def _escape_heading(title: str) -> str:
    # A title ending in '#' characters would lose them in ATX syntax; escape the last one.
    return title[:-1] + "\\#" if title.endswith("#") else title


def children(doc: Document, order: int) -> list[Section]:
    return [s for s in doc.sections if s.parent == order]
