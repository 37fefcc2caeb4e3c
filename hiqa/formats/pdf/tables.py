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
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hiqa.formats.pdf.lines import BODY, CAPTION, TABLE, Line

_CAPTION = re.compile(r"^(?:table|tab\.|tabelle|tableau)\s*[A-Z]?\d+(?:[.\-]\d+)*\b", re.IGNORECASE)
_MIN_RULES = 2
_MAX_OTHER_SHAPES = 0.1  # share of non-rule drawing items tolerated on a table page
_MIN_TABLE_ROWS = 3  # a borderless table: three rows and three columns at least (two columns
_MIN_TABLE_COLS = 3  # ... read as a definition list: a term and its description)
HEADER_WORDS = 8
"""Words a header cell holds at most (a form's "YES | PAGE" over questions left blank)."""
_MAX_CELL_CHARS = 60  # a longer "cell" is a line of prose that happens to align
_FLAG_MONO = 8  # PyMuPDF span flag: monospaced font
_SECTION_NUMBER = re.compile(r"^(?:\d+|[A-Z])(?:\.\d+)*\.?$")
_LEADERS = re.compile(r"(?:\.\s?){4,}")
_FIGURE = re.compile(r"\$?\s?\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?%?|\$?\s?[—–-]")


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
_MARGIN_BAND = 0.10  # rules entirely in the top or bottom 10 % of a page belong to its header/footer
_ADJOINING = 24.0  # points: ... unless this close to the other rules (a table's last rows)


@dataclass(frozen=True, slots=True)
class FoundTable:
    """A table to emit before line ``anchor`` (its first line of text)."""

    anchor: int
    page: int
    rows: tuple[tuple[str, ...], ...]
    markdown: str
    caption: str


Area = tuple[float, float, float, float]


def ruled_area(page: Any) -> tuple[Area | None, bool]:
    """Cheap gate: the area the page's rules cover when they are enough horizontal *and*
    vertical ones for a grid, else None; and whether the page is *tinted*: no grid, but one
    if the sides of boxes alone in their rows (``_lone_boxes``) counted as columns.  The
    table finder looks only in the area (a ruled table lies within its rules; the finder's
    cost grows with the characters it reads).  A tinted page is not searched for borderless
    tables either: its words are set in boxes, their alignment is not a table's.

    A grid has at least two columns: rules at three x positions or more.  Boxes stacked down
    the page (code listings, admonitions: each a rectangle) share their two x positions and
    are not tables; sending such pages to PyMuPDF's table finder cost 90 % of the time on a
    manual full of framed listings."""
    paths = page.get_cdrawings()
    lone = _lone_boxes(paths)
    horizontal = vertical = other = 0
    xs: set[int] = set()
    lone_xs: set[int] = set()
    ys: set[int] = set()
    area = [math.inf, math.inf, -math.inf, -math.inf]
    top, bottom = page.rect.height * _MARGIN_BAND, page.rect.height * (1 - _MARGIN_BAND)
    edge: list[Any] = []

    def cover(x0: float, y0: float, x1: float, y1: float) -> None:
        area[0], area[1] = min(area[0], x0, x1), min(area[1], y0, y1)
        area[2], area[3] = max(area[2], x0, x1), max(area[3], y0, y1)

    for n, path in enumerate(paths):
        for item in path.get("items", ()):
            kind = item[0]
            if kind in ("l", "re") and _in_margin(item, top, bottom):
                edge.append(item)  # a running header's or footer's rule, or a table's last one
                continue
            if kind == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                cover(ax, ay, bx, by)
                if abs(ay - by) < 1 and abs(ax - bx) > 4:
                    horizontal += 1
                    ys.add(round(ay))
                elif abs(ax - bx) < 1 and abs(ay - by) > 4:
                    vertical += 1
                    xs.add(round(ax))
                else:
                    other += 1
            elif kind == "re":
                x0, y0, x1, y1 = item[1]
                cover(x0, y0, x1, y1)
                w, h = abs(x1 - x0), abs(y1 - y0)
                if h < 4 and w > 4:  # a rule drawn as a thin filled bar
                    horizontal += 1
                    ys.add(round((y0 + y1) / 2))
                elif w < 4 and h > 4:
                    vertical += 1
                    xs.add(round((x0 + x1) / 2))
                else:
                    horizontal += 2
                    vertical += 2
                    (lone_xs if n in lone else xs).update((round(x0), round(x1)))
                    ys.update((round(y0), round(y1)))
            else:
                other += 1
    rules = horizontal + vertical
    if min(horizontal, vertical) < _MIN_RULES or other > _MAX_OTHER_SHAPES * rules:
        return None, False
    every = xs | lone_xs
    if _positions(every) < 3 or _blank_grid(page, area, every, ys):
        return None, False
    if _positions(xs) < 3:
        return None, True  # a grid only by boxes alone in their rows: tinted
    base = tuple(area)  # the rules outside the bands; margin rules are judged against it alone
    for item in edge:  # a margin rule right next to the ruled area closes a table there
        at = _item_ys(item)
        if min(at) - base[3] <= _ADJOINING and base[1] - max(at) <= _ADJOINING:
            area[1], area[3] = min(area[1], *at), max(area[3], *at)
    pad = 2.0
    return (area[0] - pad, area[1] - pad, area[2] + pad, area[3] + pad), False


_RULE = 4.0  # points: a box this thin is a rule drawn as a filled bar
_ABUT = 1.5  # points: boxes this close side by side are cells of one row


def _lone_boxes(paths: Sequence[dict[str, Any]]) -> set[int]:
    """The boxes (a path of one rectangle, filled or stroked, no thinner than a rule) that no
    other box adjoins on the left or the right, nor one of the same sides right above or
    below.  Where a table is drawn as boxes, its columns are where one cell's box meets the
    next, or where a column's shading runs down its rows (a filing's current year); a box
    alone marks no column: a tinted word in a sentence, a listing's file-name tab.  (A manual
    whose every inline macro name is tinted, apnum, docby: those boxes' scattered sides passed
    for a grid's columns, every page went to the table finder, a tenth of a second each, and
    its listings came back as tables.)"""
    boxes = []
    for at, path in enumerate(paths):
        items = path.get("items", ())
        if len(items) != 1 or items[0][0] != "re":
            continue
        x0, y0, x1, y1 = items[0][1]
        x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        if min(x1 - x0, y1 - y0) > _RULE:
            boxes.append((at, x0, y0, x1, y1))
    lefts: dict[int, list[tuple[float, float]]] = defaultdict(list)
    rights: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for _, x0, y0, x1, y1 in boxes:
        lefts[round(x0)].append((y0, y1))
        rights[round(x1)].append((y0, y1))

    def beside(sides: dict[int, list[tuple[float, float]]], x: float, y0: float, y1: float) -> bool:
        return any(
            min(y1, b1) - max(y0, b0) > 0.5 * (y1 - y0)
            for k in range(round(x - _ABUT), round(x + _ABUT) + 1)
            for b0, b1 in sides.get(k, ())
        )

    columns: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for _, x0, y0, x1, y1 in boxes:
        columns[round(x0), round(x1)].append((y0, y1))

    def stacked(x0: float, y0: float, x1: float, y1: float) -> bool:
        """Another box of the same sides right above or below: a shaded column."""
        return any(
            (b0, b1) != (y0, y1) and b0 - _ABUT <= y1 and y0 <= b1 + _ABUT
            for i in (-1, 0, 1)
            for j in (-1, 0, 1)
            for b0, b1 in columns.get((round(x0) + i, round(x1) + j), ())
        )

    return {
        at for at, x0, y0, x1, y1 in boxes
        if not beside(lefts, x1, y0, y1) and not beside(rights, x0, y0, y1)
        and not stacked(x0, y0, x1, y1)
    }


CELLS_PER_WORD = 8
"""Cells a grid may hold per word of text inside it before it is a drawing, not a table."""


def _blank_grid(page: Any, area: Sequence[float], xs: set[int], ys: set[int]) -> bool:
    """Graph paper, a plot's grid, a form of empty boxes: a lattice of many more cells than
    there are words inside it (gridpapers: 3,400 cells to 200 words a page, 17 each; a
    log book's ruled table: 2.6).  The finder's cost grows with the cells, a second a page
    on graph paper, and what it would find holds no text."""
    cells = max(_positions(xs) - 1, 0) * max(_positions(ys) - 1, 0)
    if cells <= CELLS_PER_WORD:
        return False
    return cells > CELLS_PER_WORD * len(page.get_text("words", clip=tuple(area)))


def _item_ys(item: Any) -> tuple[float, float]:
    """The y extent of a line ("l": two points) or a rectangle ("re": a rect) drawing item."""
    return (item[1][1], item[2][1]) if item[0] == "l" else (item[1][1], item[1][3])


def _in_margin(item: Any, top: float, bottom: float) -> bool:
    ys = _item_ys(item)
    return max(ys) <= top or min(ys) >= bottom


def _positions(xs: set[int], tol: int = 4) -> int:
    """Distinct positions among ``xs``, those closer than ``tol`` points counted once."""
    ordered = sorted(xs)
    return min(1, len(ordered)) + sum(1 for a, b in pairwise(ordered) if b - a > tol)


def aligned_regions(page_dict: dict[str, Any]) -> list[tuple[float, float, float, float]]:
    """Where a page may hold a borderless table: three or more consecutive rows of three or
    more text pieces (set apart by gaps of an em or more) whose pieces overlap column by
    column.  Code (monospace), dot-leader lines and two-piece rows (a definition list:
    option and description) never qualify.  Cheap: it reads the page dictionary only."""
    pieces = sorted(
        (p for block in page_dict.get("blocks", ()) for line in block.get("lines", ())
         for p in _pieces(line.get("spans", ()))),
        key=lambda p: (p[1] + p[3]) / 2,
    )  # fmt: skip
    rows: list[list[tuple[float, float, float, float]]] = []
    for piece in pieces:
        if rows:
            r = rows[-1][0]
            if abs((r[1] + r[3]) / 2 - (piece[1] + piece[3]) / 2) < 0.5 * max(r[3] - r[1], 1.0):
                rows[-1].append(piece)
                continue
        rows.append([piece])
    rows = [sorted(r) for r in rows]
    regions = []
    run: list[list[tuple[float, float, float, float]]] = []
    for row in [*rows, []]:
        if run and row and _compatible(run[-1], row) and row[0][1] - run[-1][0][3] < 2.5 * (
            run[-1][0][3] - run[-1][0][1]
        ):
            run.append(row)
            continue
        if len(run) >= _MIN_TABLE_ROWS:
            boxes = [p for r in run for p in r]
            regions.append(
                (
                    min(b[0] for b in boxes) - 1,
                    min(b[1] for b in boxes) - 1,
                    max(b[2] for b in boxes) + 1,
                    max(b[3] for b in boxes) + 1,
                )
            )
        run = [row] if row and len(row) >= _MIN_TABLE_COLS else []
    return regions


def _pieces(spans: Sequence[dict[str, Any]]) -> list[tuple[float, float, float, float]]:
    """A line's spans grouped into pieces at gaps of an em or more; none for code or leaders."""
    if _LEADERS.search("".join(s.get("text", "") for s in spans)):
        return []
    out: list[list[float]] = []
    for s in spans:
        text = s.get("text", "")
        if not text.strip():
            continue
        if s.get("flags", 0) & _FLAG_MONO:
            return []
        x0, y0, x1, y1 = s["bbox"]
        if out and x0 - out[-1][2] < float(s.get("size", 10.0)):
            out[-1][2] = max(out[-1][2], x1)
            out[-1][1], out[-1][3] = min(out[-1][1], y0), max(out[-1][3], y1)
        else:
            out.append([x0, y0, x1, y1])
    return [(a, b, c, d) for a, b, c, d in out]


def _compatible(a: Sequence[tuple[float, ...]], b: Sequence[tuple[float, ...]]) -> bool:
    return len(a) == len(b) >= _MIN_TABLE_COLS and all(
        p[0] <= q[2] and q[0] <= p[2] for p, q in zip(a, b, strict=True)
    )


def extract_borderless(
    page: Any,
    lines: Sequence[Line],
    offset: int,
    regions: Sequence[tuple[float, float, float, float]],
) -> list[FoundTable]:
    """Borderless tables: PyMuPDF's text strategy, run only inside ``aligned_regions`` and
    kept only when the result looks like a table (at least three rows and columns, short
    cells, every column filled in most rows); anything else stays text."""
    found: list[FoundTable] = []
    for region in regions:
        with contextlib.redirect_stdout(io.StringIO()):
            tables = page.find_tables(clip=region, strategy="text", **_FINDER_OPTIONS).tables
        for table in tables:
            rows = _clean_rows(_cell_texts(page, table))
            if _plausible(rows):
                found.extend(_found(page, table, rows, lines, offset))
    return found


def _plausible(rows: Sequence[Sequence[str]]) -> bool:
    if len(rows) < _MIN_TABLE_ROWS or min(len(r) for r in rows) < _MIN_TABLE_COLS:
        return False
    cells = [c for r in rows for c in r]
    if max(len(c) for c in cells) > _MAX_CELL_CHARS:
        return False
    width = len(rows[0])
    if not all(sum(bool(r[j]) for r in rows) >= 0.6 * len(rows) for j in range(width)):
        return False
    return not _contents_lines(rows)


def _contents_lines(rows: Sequence[Sequence[str]]) -> bool:
    """Contents entries without leaders: a section number, a title, a rising page number."""
    pages = [r[-1] for r in rows]
    if not all(p.isdigit() for p in pages) or [int(p) for p in pages] != sorted(
        int(p) for p in pages
    ):
        return False
    return all(_SECTION_NUMBER.match(r[0]) for r in rows)


def extract_tables(
    page: Any, lines: Sequence[Line], offset: int,
    clip: tuple[float, float, float, float] | None = None,
) -> list[FoundTable]:
    """Find ruled tables on ``page`` (within ``clip``, the ``ruled_area``); ``lines`` are the
    page's lines, ``offset`` the global index of ``lines[0]``.  Marks table and caption lines."""
    found: list[FoundTable] = []
    with contextlib.redirect_stdout(io.StringIO()):  # PyMuPDF may print advice on stdout
        tables = page.find_tables(clip=clip, **_FINDER_OPTIONS).tables
    words = page.get_text("words", sort=False) if tables else []  # once a page, not a table
    for table in tables:
        grid = _cell_texts(page, table)
        inside = _words_inside(words, table.bbox)
        if _rows_merged(grid) or _words_lost(inside, grid):
            by_line = _line_grid(inside, table)
            if _a_row_per_line(by_line):
                grid = by_line
        rows = _clean_rows(grid)
        if not _crossed(rows):
            continue  # a page's panels (a slide's sidebar beside its text), not a table
        found.extend(_found(page, table, rows, lines, offset))
    return found


def _found(
    page: Any,
    table: Any,
    rows: tuple[tuple[str, ...], ...],
    lines: Sequence[Line],
    offset: int,
) -> list[FoundTable]:
    """The table anchored at its first line of text, its lines marked ``TABLE`` and its
    caption's ``CAPTION``; nothing when no line of the page falls inside it."""
    x0, y0, x1, y1 = table.bbox
    inside = [
        i
        for i, ln in enumerate(lines)
        if ln.role == BODY
        and x0 - 1 <= (ln.x0 + ln.x1) / 2 <= x1 + 1
        and y0 - 1 <= (ln.y0 + ln.y1) / 2 <= y1 + 1
    ]
    if not inside:
        return []
    for i in inside:
        lines[i].role = TABLE
    return [
        FoundTable(
            anchor=offset + inside[0],
            page=lines[inside[0]].page,
            rows=rows,
            markdown=to_markdown(rows),
            caption=_caption(lines, (x0, y0, x1, y1)),
        )
    ]


def _crossed(rows: Sequence[Sequence[str]]) -> bool:
    """A table is read across: two rows hold two cells of text or more, or its first row
    does, in a header's few words (a form's "YES | PAGE" over questions still unanswered).
    A slide's sidebar of section names ruled off from its text is a grid of another kind:
    its first row is the first name beside all the slide's text, the other names alone."""
    crossed = [r for r in rows if sum(map(bool, r)) >= 2]
    return len(crossed) >= 2 or (
        len(rows) >= 2 and crossed == [rows[0]]
        and all(len(cell.split()) <= HEADER_WORDS for cell in rows[0]))


def _cell_texts(page: Any, table: Any) -> list[list[str | None]]:
    """Cell texts from the page's words (by word centre), in reading order.

    ``Table.extract()`` re-reads characters with shrunken glyph boxes and can scramble
    punctuation ("0.91" -> "091 ."); the words of the text layer are what the body text uses.
    """
    x0, y0, x1, y1 = table.bbox  # a little room: a clip cuts glyphs that touch its edge
    words = page.get_text("words", clip=(x0 - 2, y0 - 2, x1 + 2, y1 + 2), sort=False)
    centred = [((w[0] + w[2]) / 2, (w[1] + w[3]) / 2, w) for w in words]
    grid: list[list[str | None]] = []
    for row in table.rows:
        out_row: list[str | None] = []
        cells = [c for c in row.cells if c is not None]
        top = min((c[1] for c in cells), default=0.0)
        foot = max((c[3] for c in cells), default=0.0)
        in_row = [c for c in centred if top <= c[1] <= foot]  # a row's words, once a row
        for cell in row.cells:
            if cell is None:
                out_row.append(None)
                continue
            cx0, cy0, cx1, cy1 = cell
            inside = [w for x, y, w in in_row if cx0 <= x <= cx1 and cy0 <= y <= cy1]
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


def _rows_merged(grid: Sequence[Sequence[str | None]]) -> bool:
    """A row of the grid holds several printed rows that its cells split differently: two
    cells or more of several lines each, in different numbers, one of them a column of
    figures (a statement ruled only under its totals: six labels in one cell beside five
    figures in the next, the sixth figure a row of its own).  Cells of wrapped words (a
    description, a name broken at a hyphen) are not that, however their lines fall."""
    for row in grid:
        cells = [c.split("\n") for c in row if c and c.strip()]
        multi = [c for c in cells if len(c) > 1]
        if (len(multi) >= 2 and len({len(c) for c in multi}) > 1
                and any(all(_FIGURE.fullmatch(x.strip()) for x in c) for c in multi)):
            return True
    return False


def _words_lost(inside: Sequence[Any], grid: Sequence[Sequence[str | None]]) -> bool:
    """Words inside the table's box (``inside``) that no cell of the grid holds (a row the grid
    left without cells: a statement's "Cost of sales" line, shaded or unruled, lost label and
    figures)."""
    held = sum(len((c or "").split()) for row in grid for c in row)
    return held < len(inside)


def _words_inside(words: Sequence[Any], bbox: Sequence[float]) -> list[Any]:
    """The page's ``words`` whose centre lies in ``bbox``, whole (a clip would cut a line that
    only touches the box into glyph fragments: "( , p p )")."""
    x0, y0, x1, y1 = bbox
    return [w for w in words
            if x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1 and y0 - 1 <= (w[1] + w[3]) / 2 <= y1 + 1]


def _line_grid(inside: Sequence[Any], table: Any) -> list[list[str | None]]:
    """The table read a printed line per row, its columns where the grid has them: for a grid
    whose rows merged printed rows (``_rows_merged``).  A label that wraps (a line with only a
    label, the next one's label going on in lower case) is joined to its figures' line;
    ``inside`` are the words in the table's box."""
    edges = sorted({c[0] for c in table.cells if c is not None} | {table.bbox[2]})
    words = sorted(inside, key=lambda w: ((w[1] + w[3]) / 2, w[0]))
    lines: list[list[Any]] = []
    for w in words:
        mid, height = (w[1] + w[3]) / 2, w[3] - w[1]
        if lines and abs(mid - (lines[-1][0][1] + lines[-1][0][3]) / 2) <= 0.5 * height:
            lines[-1].append(w)
        else:
            lines.append([w])
    grid: list[list[str]] = []
    for line in lines:
        cells = [""] * (len(edges) - 1)
        for w in sorted(line, key=lambda w: w[0]):
            centre = (w[0] + w[2]) / 2
            k = max(0, min(len(cells) - 1, sum(1 for e in edges[1:-1] if e <= centre)))
            cells[k] = f"{cells[k]} {w[4]}".strip()
        grid.append(cells)
    out: list[list[str | None]] = []
    for cells in grid:
        prev = out[-1] if out else None
        if (prev is not None and prev[0] and not any(prev[1:]) and cells[0][:1].islower()):
            out[-1] = [f"{prev[0]} {cells[0]}", *cells[1:]]
        else:
            out.append(list(cells))
    return out


def _a_row_per_line(grid: Sequence[Sequence[str | None]]) -> bool:
    """The table reads a printed line per row: no line holds words beside an empty first cell
    but figures (a description wrapped in its cell would come out a line per row)."""
    return all(row[0] or all(not c or _FIGURE.fullmatch(c.strip()) for c in row[1:])
               for row in grid)


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
