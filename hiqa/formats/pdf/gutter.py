"""A page's printed line numbers, taken out of its lines: "5 1.1 Section" -> "1.1 Section".

Critical editions, legal pleadings and bills, patents and some program listings number their
lines in a margin.  MuPDF reads each number as the first piece of its row (or a row of its
own, which ``lines`` then joins to the row as a reference mark), so every line of such a page
opened with a number: prose read as a numbered listing, and the rules that keep listings from
being headings (``blocks``) took its headings too (issue #44: the reledmac examples of a
texlive check draw, 0 headings of 8).  The page's own geometry and type decide, never a font
name, producer or file: see :func:`line_numbers`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, NamedTuple

from hiqa.formats.pdf.lines import MARK_SIZE, MONO_SHARE, typewriter

_LINE_NUMBER = re.compile(r"\s*\d{1,4}\s*")


class _Row(NamedTuple):
    """A row's text (after its leading number, if any)."""

    x0: float
    y0: float
    x1: float
    y1: float
    size: float  # its largest type
    code: bool  # mostly typewriter
    runs_on: bool  # starts lower case: continues a sentence from the row above
GUTTER_RUN = 5
"""Numbers in one column of a page, counting up from top to bottom beside lines of text,
before the column is read as the page's line numbering."""


def line_numbers(page_dict: dict[str, Any]) -> set[int]:
    """The ids of the ``page_dict`` spans that are the page's printed line numbers (a critical
    edition, a legal pleading, a listing numbered in its margin): ``GUTTER_RUN`` or more
    numbers, each the first piece of its row or a row of its own, in one column (right edges
    within a point and a half) left of where every other row of the page starts, counting up
    from the top of the page, each on the row of a line of text.  They number the lines and
    are not part of them: joined to their rows they made every line of such a page open with a
    number ("5 1.1 Section"), a numbered listing to the rules that keep listings from being
    headings.  A contents page's or a table's numbers stand inside the text column, footnote
    marks at the ends of lines or before a few notes: neither forms such a column."""
    pieces = []  # each row's leading number
    text_rows: list[_Row] = []
    for block in page_dict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        for line in block.get("lines", ()):
            spans = [sp for sp in line.get("spans", ()) if sp.get("text", "").strip()]
            if not spans:
                continue
            if _LINE_NUMBER.fullmatch(spans[0]["text"]):
                pieces.append(spans[0])
                rest = spans[1:]
            else:
                rest = spans
            if rest:
                text_rows.append(_Row(
                    min(sp["bbox"][0] for sp in rest), line["bbox"][1],
                    max(sp["bbox"][2] for sp in rest), line["bbox"][3],
                    max(float(sp.get("size", 0.0)) for sp in rest), _mono(rest),
                    "".join(sp["text"] for sp in rest).strip()[:1].islower()))
    pieces.sort(key=lambda sp: sp["bbox"][2])
    columns: list[list[dict[str, Any]]] = []
    for sp in pieces:
        if columns and sp["bbox"][2] - columns[-1][0]["bbox"][2] <= 1.5:
            columns[-1].append(sp)
        else:
            columns.append([sp])
    out: set[int] = set()
    text_starts = min((row.x0 for row in text_rows), default=0.0)
    for column in columns:
        if len(column) < GUTTER_RUN or max(sp["bbox"][2] for sp in column) >= text_starts - 1.0:
            continue  # a column inside the text: a table's or a contents page's numbers
        column.sort(key=lambda sp: sp["bbox"][1])
        if _numbers_lines(column, text_rows):
            out.update(id(sp) for sp in column)
    return out


def _numbers_lines(column: Sequence[dict[str, Any]], rows: Sequence[_Row]) -> bool:
    """Whether ``column`` (top to bottom) counts the page's lines: each number set smaller than
    the text of its row, and from one number to the next as many rows of text as the numbers
    step (a number on every line, or on every fifth) -- four pairs in five at least -- and
    those rows running text: most not code, a quarter at least continuing a sentence from
    the row above (starting lower case).  A list of figures sets its numbers as large as its
    entries; a program listing numbered in its margin, or a list of one-line steps, keeps its
    numbers, which tell the listing rules (``blocks``) what its lines are, as before."""
    centres: list[float] = []  # one per row of text: pieces whose extents overlap are one row
    bottom_of_row = -math.inf
    for r in sorted(rows, key=lambda r: (r.y0 + r.y1) / 2):
        centre = (r.y0 + r.y1) / 2
        if centre > bottom_of_row:
            centres.append(centre)
            bottom_of_row = r.y1
    agree = 0
    for a, b in pairwise(column):
        step = int(b["text"]) - int(a["text"])
        if step <= 0:
            return False
        top, bottom = (a["bbox"][1] + a["bbox"][3]) / 2, (b["bbox"][1] + b["bbox"][3]) / 2
        agree += sum(1 for c in centres if top + 2 < c <= bottom + 2) == step
    if agree < 0.8 * (len(column) - 1):
        return False
    beside = [[r for r in rows if _beside(sp, r)] for sp in column]
    if not all(beside):
        return False
    # a listing's own numbers stand beside code; the listing rules read them (``blocks``)
    if sum(all(r.code for r in found) for found in beside) > len(column) / 2:
        return False
    # and the numbered rows run on as prose does, some continuing a sentence from the row
    # above: a list's items (one per row, each its own sentence) keep their numbers
    return sum(any(r.runs_on for r in found) for found in beside) >= len(column) / 4


def _mono(spans: Sequence[dict[str, Any]]) -> bool:
    """Whether most of the spans' characters are set in a typewriter face."""
    sizes = [(len(sp.get("text", "").strip()), typewriter(sp)) for sp in spans]
    return sum(n for n, mono in sizes if mono) >= MONO_SHARE * max(sum(n for n, _ in sizes), 1)


def _beside(number: dict[str, Any], row: _Row) -> bool:
    """Text on the number's row, set larger than the number (as a reference mark is)."""
    box = number["bbox"]
    centre = (box[1] + box[3]) / 2
    height = max(row.y1 - row.y0, 1.0)
    return (row.y0 - 0.25 * height <= centre <= row.y1
            and float(number.get("size", 0.0)) <= MARK_SIZE * row.size)


def drop_line_numbers(page_dict: dict[str, Any]) -> int:
    """Take the page's line numbers (:func:`line_numbers`) out of ``page_dict`` (in place);
    how many were taken."""
    numbers = line_numbers(page_dict)
    if numbers:
        for block in page_dict.get("blocks", ()):
            for line in block.get("lines", ()):
                line["spans"] = [sp for sp in line.get("spans", ()) if id(sp) not in numbers]
    return len(numbers)
