"""Markdown sources: ATX and setext headings, fenced code, pipe tables, front matter.

Rules (issue #2): ``#`` inside fenced code is not a heading; a skipped level gets the nearest
shallower heading as parent (``hiqa.formats.structure``); text before the first heading belongs to the
document root; duplicate headings stay separate sections.
"""
from __future__ import annotations

import re

from hiqa.formats.structure import Event, build_document, is_term_text
from hiqa.model import Block, Document, Heading

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_DELIM = re.compile(r"^ {0,3}\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")
_CAPTION = re.compile(r"^(table|tab\.)\s*[\w.-]*\s*[:.\-–]", re.IGNORECASE)


def split_row(line: str) -> tuple[str, ...]:
    """Cells of a pipe-table row (escaped pipes ``\\|`` stay inside their cell)."""
    s = line.strip()
    s = s.removeprefix("|")
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return tuple(c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s))


def markdown_events(text: str) -> tuple[list[Event], str | None]:
    """Turn Markdown text into heading/block events; also return a front-matter title."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fm_title = None
    i = 0
    if lines and lines[0].strip() == "---":
        for j in range(1, min(len(lines), 200)):
            if lines[j].strip() in ("---", "..."):
                for fm in lines[1:j]:
                    m = re.match(r"^title:\s*(.+?)\s*$", fm)
                    if m:
                        fm_title = m.group(1).strip("'\"")
                i = j + 1
                break
    events: list[Event] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            events.append(Block("text", "\n".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            block = [line]
            i += 1
            while i < len(lines):
                block.append(lines[i])
                stripped = lines[i].strip()
                if stripped.startswith(marker[0] * len(marker)) and not stripped.strip(marker[0]):
                    i += 1
                    break
                i += 1
            events.append(Block("text", "\n".join(block)))
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            title = (atx.group(2) or "").strip()
            if title:
                events.append(Heading(len(atx.group(1)), heading_text(title)))
            i += 1
            continue
        if (
            "|" in line
            and i + 1 < len(lines)
            and _TABLE_DELIM.match(lines[i + 1])
            and "-" in lines[i + 1]
        ):
            caption = ""
            if len(para) == 1 and _CAPTION.match(para[0]):
                caption = para.pop()
            flush()
            rows = [split_row(line)]
            raw = [line, lines[i + 1]]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(split_row(lines[i]))
                raw.append(lines[i])
                i += 1
            events.append(Block("table", "\n".join(raw), caption=caption, rows=tuple(rows)))
            continue
        setext = _SETEXT.match(line)
        if setext and para and not _is_list_item(para[-1]):
            title = " ".join(p.strip() for p in para)
            para.clear()
            events.append(Heading(1 if setext.group(1)[0] == "=" else 2, heading_text(title)))
            i += 1
            continue
        if not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return mark_terms(events), fm_title


_ITEM = re.compile(r"^ {0,3}[-*+][ \t]+(\S.*?)\s*$")
_DEF_LINE = re.compile(r"^ {0,3}:[ \t]+\S")
def mark_terms(events: list[Event]) -> list[Event]:
    """Definition items become term events (issue #17).

    Two shapes: a one-line list item standing alone as a paragraph followed by a paragraph that
    is not a list item (``- -f`` / blank line / its description), and the definition-list
    extension ``TERM`` + ``: definition`` lines.  ``hiqa.formats.structure`` decides whether a section
    holds enough of them to be a list.
    """
    out: list[Event] = []
    for i, ev in enumerate(events):
        if not isinstance(ev, Block) or ev.kind != "text":
            out.append(ev)
            continue
        lines = ev.text.split("\n")
        nxt = events[i + 1] if i + 1 < len(events) else None
        item = _ITEM.match(lines[0]) if len(lines) == 1 else None
        if (
            item
            and is_term_text(item.group(1))
            and isinstance(nxt, Block)
            and nxt.kind == "text"
            and not _is_list_item(nxt.text.split("\n")[0])
            and not _FENCE.match(nxt.text)
        ):
            out.append(Heading(0, _strip_emphasis(item.group(1)), ev.page, "term", ev.text))
            continue
        if len(lines) >= 2 and _DEF_LINE.match(lines[1]) and is_term_text(lines[0]) and not (
            _is_list_item(lines[0])
        ):
            out.append(Heading(0, _strip_emphasis(lines[0].strip()), ev.page, "term", lines[0]))
            body = [re.sub(r"^ {0,3}:[ \t]+", "", ln) for ln in lines[1:]]
            out.append(Block("text", "\n".join(body), ev.page))
            continue
        out.append(ev)
    return out


def _strip_emphasis(term: str) -> str:
    """``**-f**`` or ```--force``` names the term ``-f`` / ``--force``."""
    m = re.fullmatch(r"(\*\*|__|`)(.+?)\1", term)
    return _unescape(m.group(2) if m else term)


def _is_list_item(line: str) -> bool:
    return bool(re.match(r"^\s*([-*+]|\d+[.)])\s", line))


_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\](?:\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_CODE = re.compile(r"(`+)(.+?)\1")
_EMPHASIS = re.compile(r"(?<![\w\\])(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)")


def heading_text(title: str) -> str:
    """A heading's words, as a reader sees them: links and images by their text
    (``[`django.contrib.admin`](../ref/admin.html "Admin")`` is ``django.contrib.admin``),
    code and emphasis marks dropped, a closing permalink mark (¶) too; a path built from
    headings should not carry URLs.  ``snake_case`` and ``2*3`` stay as written, and so does
    inline HTML: it is shown as the text it is (``tests/test_e2e_browser.py``)."""
    title = _IMAGE.sub(r"\1", title)
    title = _LINK.sub(r"\1", title)
    title = _AUTOLINK.sub(r"\1", title)
    title = _CODE.sub(lambda m: m.group(2).strip(), title)
    for _ in range(2):  # ***both*** is strong inside emphasis
        title = _EMPHASIS.sub(r"\2", title)
    return " ".join(_unescape(title).rstrip("¶ ").split())


def _unescape(title: str) -> str:
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!|>])", r"\1", title)


def parse_markdown(
    text: str, *, doc_id: str, source: str, warnings: list[str] | tuple[str, ...] = ()
) -> Document:
    events, fm_title = markdown_events(text)
    return build_document(
        doc_id=doc_id,
        source=source,
        fmt="markdown",
        events=events,
        metadata_title=fm_title,
        warnings=warnings,
    )
