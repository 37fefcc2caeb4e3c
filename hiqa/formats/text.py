"""Plain text: numbered heading lines (``3.2 Scope``, ``Chapter 4``), all-caps lines, and
lines underlined with ``===`` / ``---``.

A candidate line must be short, stand apart (blank line or start of file before it) and not
end like a sentence, so numbered list items ("1. Open the file and save it.") stay body text.
Levels: numbering depth for numbered lines (``1`` -> 1, ``1.2`` -> 2), ``Chapter``/``Part``/
``Appendix`` lines and ``===`` underlines -> 1, ``---`` underlines -> 2; all-caps lines -> 1,
or one level below the chapter lines when the text has those.
"""
from __future__ import annotations

import re

from hiqa.formats.structure import Event, build_document, is_term_text
from hiqa.model import Block, Document, Heading

_NUMBERED = re.compile(r"^((?:\d+|[A-Z])(?:\.\d+)*)\.?\s+(\S.{0,78})$")
_CHAPTER = re.compile(
    r"^(chapter|part|appendix|section)\s+([0-9IVXLC]+|[A-Z])\b[.:]?\s*(.*)$", re.IGNORECASE
)
_CAPS = re.compile(r"^[^a-z]*[A-Z][^a-z]*[A-Z][^a-z]*$")
_UNDERLINE = re.compile(r"^\s*(={3,}|-{3,})\s*$")


def _heading(line: str, prev_blank: bool, next_line: str | None) -> tuple[int, str] | None:
    s = line.strip()
    if not s or len(s) > 80 or not prev_blank:
        return None
    if s.endswith((".", ",", ";", ":")) and not re.match(r"^\d+(\.\d+)*\.$", s.split(" ")[0]):
        return None
    m = _CHAPTER.match(s)
    if m:
        return 1, s
    m = _NUMBERED.match(s)
    if m and re.match(r"[A-Z]", m.group(2)) and not m.group(2).endswith("."):
        number = m.group(1)
        if number.isdigit() and int(number) > 99:
            return None
        if re.fullmatch(r"[A-Z]", number) and "." not in s.split(" ")[0]:
            return None
        return number.count(".") + 1, s
    if _CAPS.match(s) and len(re.findall(r"[A-Z]", s)) >= 3 and len(s.split()) <= 10:
        return -1, s
    return None


def parse_text(
    text: str, *, doc_id: str, source: str, warnings: list[str] | tuple[str, ...] = ()
) -> Document:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    events: list[Event] = []
    para: list[str] = []
    has_chapter = any(_CHAPTER.match(ln.strip()) for ln in lines)

    def flush() -> None:
        if para:
            events.append(Block("text", "\n".join(para)))
            para.clear()

    prev_blank = True
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if line.strip() and nxt is not None and _UNDERLINE.match(nxt) and prev_blank and len(line) <= 80:
            flush()
            events.append(Heading(1 if nxt.strip()[0] == "=" else 2, line.strip()))
            i += 2
            prev_blank = True
            continue
        found = _heading(line, prev_blank, nxt)
        if found:
            flush()
            level, title = found
            if level == -1:
                level = 2 if has_chapter else 1
            elif has_chapter and not _CHAPTER.match(title):
                level += 1
            events.append(Heading(level, title))
            prev_blank = True
        elif not line.strip():
            flush()
            prev_blank = True
        else:
            para.append(line.rstrip())
            prev_blank = False
        i += 1
    flush()
    return build_document(doc_id=doc_id, source=source, fmt="text", events=mark_terms(events),
                          warnings=warnings)


MAX_SAME_LINE_TERM = 30  # a longer "term  text" line reads as a table row or prose
_SAME_LINE_TERM = re.compile(r"^(\s*)(\S.*?\S|\S)\s{2,}(\S.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def mark_terms(events: list[Event]) -> list[Event]:
    """Indented term/description blocks become term events (issue #17).

    A term is a short line whose description is indented deeper below it: on the following
    lines of its paragraph, in the next paragraph, or on its own line after two or more spaces
    with the continuation lines aligned under the description (the shape ``man`` renders).
    """
    out: list[Event] = []
    for i, ev in enumerate(events):
        if not isinstance(ev, Block) or ev.kind != "text":
            out.append(ev)
            continue
        lines = ev.text.split("\n")
        first, rest = lines[0], lines[1:]
        ind = _indent(first)
        nxt = events[i + 1] if i + 1 < len(events) else None
        same = _SAME_LINE_TERM.match(first)
        if same and is_term_text(same.group(2)) and len(same.group(2)) <= MAX_SAME_LINE_TERM:
            column = len(first) - len(same.group(3))
            if all(abs(_indent(r) - column) <= 1 for r in rest):
                out.append(Heading(0, same.group(2), ev.page, "term", first[:column].rstrip()))
                body = [same.group(3)] + [r.strip() for r in rest]
                out.append(Block("text", "\n".join(body), ev.page))
                continue
        if rest and is_term_text(first) and all(_indent(r) > ind for r in rest):
            out.append(Heading(0, first.strip(), ev.page, "term", first))
            out.append(Block("text", "\n".join(r.strip() for r in rest), ev.page))
            continue
        if (
            not rest
            and is_term_text(first)
            and isinstance(nxt, Block)
            and nxt.kind == "text"
            and all(_indent(r) > ind for r in nxt.text.split("\n"))
        ):
            out.append(Heading(0, first.strip(), ev.page, "term", first))
            continue
        out.append(ev)
    return out
