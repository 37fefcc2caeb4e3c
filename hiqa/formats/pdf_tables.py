"""Tables of a PDF page as Markdown (paper A.4/A.6: tables keep caption, header and cells).

``page.find_tables()`` costs 0.1-1 s per page, so it only runs on pages whose vector graphics
look like a ruled grid: at least two horizontal and two vertical rules and few other shapes
(a plot or a diagram has many curves and slanted lines).  Text inside a table's box is marked
``TABLE`` so it is not repeated as a paragraph; a "Table N ..." line next to the box becomes
the caption.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .pdf_layout import BODY, CAPTION, TABLE, Line

_CAPTION = re.compile(r"^(?:table|tab\.|tabelle|tableau)\s*[A-Z]?\d+(?:[.\-]\d+)*\b", re.IGNORECASE)
_MIN_RULES = 2
_MAX_OTHER_SHAPES = 0.1  # share of non-rule drawing items tolerated on a table page


def _finder_options() -> dict[str, Any]:
    """PyMuPDF >= 2.0 gates ``find_tables`` through a neural layout model (about 1 s a page);
    the ruled-grid detector alone is what we want, at a tenth of the cost."""
    try:
        from pymupdf import table as _table

        params = inspect.signature(_table.find_tables).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        return {}
    return {"use_layout": False} if "use_layout" in params else {}


_FINDER_OPTIONS = _finder_options()


@dataclass(frozen=True, slots=True)
class FoundTable:
    """A table to emit before line ``anchor`` (its first line of text)."""

    anchor: int
    page: int
    rows: tuple[tuple[str, ...], ...]
    markdown: str
    caption: str


def looks_ruled(page: Any) -> bool:
    """Cheap gate: does the page draw enough horizontal *and* vertical rules for a grid?"""
    horizontal = vertical = other = 0
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            kind = item[0]
            if kind == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ay - by) < 1 and abs(ax - bx) > 4:
                    horizontal += 1
                elif abs(ax - bx) < 1 and abs(ay - by) > 4:
                    vertical += 1
                else:
                    other += 1
            elif kind == "re":
                x0, y0, x1, y1 = item[1]
                w, h = abs(x1 - x0), abs(y1 - y0)
                if h < 2 and w > 4:
                    horizontal += 1
                elif w < 2 and h > 4:
                    vertical += 1
                else:
                    horizontal += 2
                    vertical += 2
            else:
                other += 1
    rules = horizontal + vertical
    return (
        horizontal >= _MIN_RULES and vertical >= _MIN_RULES and other <= _MAX_OTHER_SHAPES * rules
    )


def extract_tables(page: Any, lines: Sequence[Line], offset: int) -> list[FoundTable]:
    """Find ruled tables on ``page``; ``lines`` are the page's lines, ``offset`` the global
    index of ``lines[0]``.  Marks table and caption lines."""
    found: list[FoundTable] = []
    with contextlib.redirect_stdout(io.StringIO()):  # PyMuPDF may print advice on stdout
        tables = page.find_tables(**_FINDER_OPTIONS).tables
    for table in tables:
        rows = _clean_rows(_cell_texts(page, table))
        if len(rows) < 2 or max(len(r) for r in rows) < 2:
            continue
        x0, y0, x1, y1 = table.bbox
        inside = [
            i
            for i, ln in enumerate(lines)
            if ln.role == BODY
            and x0 - 1 <= (ln.x0 + ln.x1) / 2 <= x1 + 1
            and y0 - 1 <= (ln.y0 + ln.y1) / 2 <= y1 + 1
        ]
        if not inside:
            continue
        for i in inside:
            lines[i].role = TABLE
        caption = _caption(lines, (x0, y0, x1, y1))
        found.append(
            FoundTable(
                anchor=offset + inside[0],
                page=lines[inside[0]].page,
                rows=rows,
                markdown=to_markdown(rows),
                caption=caption,
            )
        )
    return found


def _cell_texts(page: Any, table: Any) -> list[list[str | None]]:
    """Cell texts from the page's words (by word centre), in reading order.

    ``Table.extract()`` re-reads characters with shrunken glyph boxes and can scramble
    punctuation ("0.91" -> "091 ."); the words of the text layer are what the body text uses.
    """
    words = page.get_text("words", clip=table.bbox, sort=False)
    grid: list[list[str | None]] = []
    for row in table.rows:
        out_row: list[str | None] = []
        for cell in row.cells:
            if cell is None:
                out_row.append(None)
                continue
            x0, y0, x1, y1 = cell
            inside = [
                w for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1
            ]
            inside.sort(key=lambda w: (w[5], w[6], w[7]))
            lines: list[str] = []
            last = None
            for w in inside:
                if (w[5], w[6]) != last:
                    lines.append(w[4])
                    last = (w[5], w[6])
                else:
                    lines[-1] += " " + w[4]
            out_row.append("\n".join(lines))
        grid.append(out_row)
    return grid


def _clean_rows(raw: Sequence[Sequence[str | None]]) -> tuple[tuple[str, ...], ...]:
    rows = [[" ".join(c.split()) for c in r] for r in _split_unruled_rows(raw)]
    rows = [r for r in rows if any(r)]
    if not rows:
        return ()
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    keep = [j for j in range(width) if any(r[j] for r in rows)]
    return tuple(tuple(r[j] for j in keep) for r in rows)


def _split_unruled_rows(raw: Sequence[Sequence[str | None]]) -> list[list[str]]:
    """A grid without rules between rows returns several text rows per cell; split a row
    whose non-empty cells all hold the same number (>1) of text lines into that many rows."""
    out: list[list[str]] = []
    for r in raw:
        cells = [(c or "").split("\n") for c in r]
        counts = {len(c) for c in cells if any(part.strip() for part in c)}
        if len(counts) == 1 and (k := counts.pop()) > 1:
            for n in range(k):
                out.append([c[n] if len(c) == k else "" for c in cells])
        else:
            out.append(["\n".join(c) for c in cells])
    return out


def to_markdown(rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-style Markdown table; the first row is the header."""

    def fmt(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"

    header, *body = rows
    sep = "| " + " | ".join("---" for _ in header) + " |"
    return "\n".join([fmt(header), sep, *(fmt(r) for r in body)])


def _caption(lines: Sequence[Line], bbox: tuple[float, float, float, float]) -> str:
    """The "Table N ..." line just above (preferred) or below the table, with the rest of its
    block; those lines are marked ``CAPTION``."""
    x0, y0, x1, y1 = bbox
    best: tuple[float, int] | None = None
    for i, ln in enumerate(lines):
        if ln.role != BODY or not _CAPTION.match(ln.text):
            continue
        if ln.x1 < x0 or ln.x0 > x1:
            continue
        reach = 3 * ln.height
        above = y0 - ln.y1
        below = ln.y0 - y1
        if -1 <= above <= reach:
            score = above
        elif -1 <= below <= reach:
            score = below + 1000  # captions above win
        else:
            continue
        if best is None or score < best[0]:
            best = (score, i)
    if best is None:
        return ""
    i = best[1]
    parts = [lines[i]]
    j = i + 1
    while j < len(lines) and len(parts) < 3 and lines[j].block == lines[i].block:
        if lines[j].role == BODY:
            parts.append(lines[j])
        j += 1
    for ln in parts:
        ln.role = CAPTION
    return " ".join(ln.text for ln in parts)
