"""A page's lines as the rows of a printed table of contents (``hiqa.formats.pdf.toc``).

Rows are assembled from the lines' positions, column by column where the page is set in two;
a row that ends in a page reference (a number after dot leaders, or set apart at the right)
carries its title and number; a title wrapped over rows is joined.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import pairwise

from hiqa.formats.pdf.lines import _PAGE_NUMBER, BODY, Line, join_row

_DOTS = ".\u00b7\u2024\u2027\u2219\u22c5_"  # what leaders are drawn with: . · ․ ‧ ∙ ⋅ _
_LEADERS = re.compile(f"[ {_DOTS}\u2026]+$")  # dot leaders (or an ellipsis) and their spaces
_SHORT_LEADERS = re.compile(r"(?:\s[.\u00b7\u2219\u22c5])+\s+\S+$")  # ". . 5", " . 5": a short leader run
_ONLY_LEADERS = re.compile(f"^[ {_DOTS}\u2026]{{3,}}$")
ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_NUM = re.compile(r"(?<![\w,:;/-])(?<!\w\.)(?P<num>\d{1,4}|" + ROMAN + "|" + ROMAN.upper() + ")$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
MIN_ROWS = 3  # a navigation page has at least this many page-reference rows
_APART = 2.0  # em: a page number without leaders is set at least this far from its title
_EDGE_TOL = 2.0  # points: page numbers of one TOC page end at one right edge
WRAP_ROWS = 3  # a title wrapped in a narrow column (or set large) takes at most this many rows


@dataclass(slots=True)
class Row:
    idx: list[int]  # line indices, left to right
    x0: float
    x1: float
    y0: float
    y1: float
    text: str
    size: float
    bold: bool
    block: int  # the block of its first line
    ref: tuple[str, str] | None = None  # (title, page number) of a page-reference row
    face: str = ""  # the font most of its characters are set in


def page_rows(lines: Sequence[Line], start: int, stop: int) -> list[Row]:
    """The page's lines grouped into visual rows (overlapping vertically), in reading order:
    top to bottom, and column by column where the page sets its lines in two (``_columns``)."""
    idx = [i for i in range(start, stop) if lines[i].role == BODY]
    idx.sort(key=lambda i: (lines[i].y0 + lines[i].y1) / 2)
    return [row for ids, shift in _columns(idx, lines) for row in _group_rows(ids, lines, shift)]


def _columns(idx: Sequence[int], lines: Sequence[Line]) -> list[tuple[list[int], float]]:
    """The page's lines (top to bottom) as the runs a reader takes in turn, each with the shift
    that puts it under the first column: ``[(idx, 0.0)]`` for a page set in one column.

    A page is set in two columns (a TOC printed in two, as LaTeX's ``multicols`` does) when a
    gutter in the middle of its text is crossed by few lines (a full-width heading above, a
    footer below) and the lines on each side are text, not just page numbers: a one-column TOC
    without leaders also leaves a gap between its titles and their numbers.  A package
    manual's first page sets its contents in two columns between a one-column abstract and
    the first section: there the two columns are the band of lines no line crosses
    (``_band``).  The right column is shifted by the difference of the columns' right edges
    (where the page numbers end), so indents, and thus levels, compare across columns."""
    if len(idx) < 2 * MIN_ROWS:
        return [(list(idx), 0.0)]
    left = min(lines[i].x0 for i in idx)
    width = max(lines[i].x1 for i in idx) - left
    starts = sorted(lines[i].x0 for i in idx)
    ends = sorted(lines[i].x1 for i in idx)
    gutters = [x for x in sorted({e + 0.5 for e in ends} | {s - 0.5 for s in starts})
               if left + 0.3 * width <= x <= left + 0.7 * width]
    # lines crossing x: begun before it, not ended by it (every line ends after it begins)
    crossing = [(bisect_left(starts, x) - bisect_right(ends, x), x) for x in gutters]
    best = min(crossing, default=None)
    if best is not None and best[0] <= max(2, 0.1 * len(idx)):
        gutter = best[1]
        first = [i for i in idx if lines[i].x1 <= gutter]
        second = [i for i in idx if lines[i].x0 >= gutter]
        if _two_columns(first, second, lines):
            top = min(lines[i].y0 for i in first + second)
            spanning = [i for i in idx if lines[i].x0 < gutter < lines[i].x1]
            above = [i for i in spanning if lines[i].y1 <= top]
            below = [i for i in spanning if lines[i].y1 > top]
            return _runs(above, first, second, below, lines)
    numbered = {i for i in idx if _numbered(lines[i])}
    if len(numbered) >= 2 * MIN_ROWS:
        band = _band(idx, lines, gutters, numbered)
        if band is not None:
            # the band from its first entry: a title block above set in two columns too (an
            # author's name beside the version) is read before it, with the label over it
            top = min((lines[i].y0 for i in band[0] + band[1] if i in numbered),
                      default=-math.inf) - 1
            first = [i for i in band[0] if lines[i].y0 >= top]
            second = [i for i in band[1] if lines[i].y0 >= top]
            if not _two_columns(first, second, lines):
                first, second, top = band[0], band[1], -math.inf
            inside = set(first) | set(second)
            rest = [i for i in idx if i not in inside]
            return _runs([i for i in rest if lines[i].y0 < top], first, second,
                         [i for i in rest if lines[i].y0 >= top], lines)
    return [(list(idx), 0.0)]


def _numbered(line: Line) -> bool:
    """The line ends in what may be a page number ("Basis 2", ". . . 17"; not "21/04/2017")."""
    return bool(_NUM.search(line.text))


def _two_columns(first: Sequence[int], second: Sequence[int], lines: Sequence[Line]) -> bool:
    """Enough lines on each side of a gutter, the right-hand ones text (a one-column TOC's
    page numbers alone at the right are no column)."""
    return min(len(first), len(second)) >= MIN_ROWS and sum(
        1 for i in second if sum(ch.isalpha() for ch in lines[i].text) >= 3) >= 0.5 * len(second)


def _runs(above: list[int], first: list[int], second: list[int], below: list[int],
          lines: Sequence[Line]) -> list[tuple[list[int], float]]:
    shift = max(lines[i].x1 for i in second) - max(lines[i].x1 for i in first)
    runs = [(above, 0.0), (first, 0.0), (second, shift), (below, 0.0)]
    return [(ids, dx) for ids, dx in runs if ids]


def _band(idx: Sequence[int], lines: Sequence[Line], gutters: Sequence[float],
          numbered: AbstractSet[int]) -> tuple[list[int], list[int]] | None:
    """The largest band of two columns between lines set across the page: for a gutter, the
    lines (top to bottom) that no line crossing it interrupts, each column as far as it holds
    entries (``_ending``; ``numbered``: the lines that end in a page number); its left and
    right lines, or None."""
    best: tuple[int, list[int], list[int]] | None = None
    for x in gutters:
        run: list[int] = []
        for i in [*idx, -1]:  # -1: the end of the page closes the last run
            if i >= 0 and not lines[i].x0 < x < lines[i].x1:
                run.append(i)
                continue
            first = [k for k in run if lines[k].x1 <= x]
            second = [k for k in run if lines[k].x0 >= x]
            run = []
            if not (first and second):
                continue
            bottom = min(lines[first[-1]].y0, lines[second[-1]].y0)
            first = _ending(first, bottom, lines, numbered)
            second = _ending(second, bottom, lines, numbered)
            if _two_columns(first, second, lines) and (
                    best is None or len(first) + len(second) > best[0]):
                best = (len(first) + len(second), first, second)
    return None if best is None else (best[1], best[2])


def _ending(ids: list[int], bottom: float, lines: Sequence[Line], numbered: AbstractSet[int]
            ) -> list[int]:
    """A column's lines (top to bottom) down to the other column's last line (``bottom``),
    then as long as they are entries: lines ending in a page number, or a title's first
    line over one.  What follows under the longer column (the first section's heading, a
    footnote) is no more of it."""
    head = [k for k in ids if lines[k].y0 <= bottom + 1]
    tail = ids[len(head):]
    kept = 0
    for n, k in enumerate(tail):
        if k in numbered:
            kept = n + 1
        elif not (n + 1 < len(tail) and tail[n + 1] in numbered):
            break
    return head + tail[:kept]


def _group_rows(idx: Sequence[int], lines: Sequence[Line], shift: float = 0.0) -> list[Row]:
    """``idx`` (top to bottom) grouped into rows; ``shift`` is taken off their x positions."""
    groups: list[list[int]] = []
    top = bottom = 0.0  # of the last group
    for i in idx:
        ln = lines[i]
        if groups:
            overlap = min(bottom, ln.y1) - max(top, ln.y0)
            if overlap >= 0.5 * min(ln.height, bottom - top):
                groups[-1].append(i)
                top, bottom = min(top, ln.y0), max(bottom, ln.y1)
                continue
        groups.append([i])
        top, bottom = ln.y0, ln.y1
    rows = []
    for g in groups:
        g.sort(key=lambda i: lines[i].x0)
        parts = [lines[i] for i in g]
        # leaders written as a piece of their own (their place in the text is not reliable:
        # the title and its number may come as one piece that spans them)
        words = [p for p in parts if not _ONLY_LEADERS.match(p.text)] or parts
        leaders = len(words) < len(parts)
        text = " ".join(p.text for p in words)
        chars = sum(len(p.text) for p in parts) or 1
        size = sum(p.size * len(p.text) for p in parts) / chars
        bold = sum(len(p.text) for p in parts if p.bold) >= 0.6 * chars
        faces: Counter[str] = Counter()
        for p in parts:
            faces[p.face] += len(p.text)
        row = Row(g, parts[0].x0 - shift, parts[-1].x1 - shift, min(p.y0 for p in parts),
                  max(p.y1 for p in parts), text, size, bold, parts[0].block,
                  face=faces.most_common(1)[0][0])
        row.ref = _reference(text, words, leaders)
        rows.append(row)
    return rows


def aligned_references(rows: Sequence[Row], refs: Sequence[Row]) -> None:
    """On a page with page-reference rows, a row ending in a number at their right edge is one
    too, leaders or not (LaTeX sets chapter entries without leaders, and a title and its number
    in one piece when they share a font)."""
    edge = sorted(r.x1 for r in refs)[len(refs) // 2]
    for k, r in enumerate(rows):
        if r.ref is not None or abs(r.x1 - edge) > _EDGE_TOL:
            continue
        # a justified line of a paragraph ends at that edge too ("... founded in 2003"): a row
        # continuing the block of a row above that is no reference is not one, unless it is
        # the last row of a wrapped title: dots lead to its number ("pressure filter . . 5"),
        # or it hangs indented under the row above, as no paragraph line does
        above = rows[k - 1] if k else None
        if (above is not None and above.ref is None and above.block == r.block
                and not _SHORT_LEADERS.search(r.text) and r.x0 <= above.x0 + 1):
            continue
        m = _NUM.search(r.text)
        if m and m.group("num").isdigit():
            title = r.text[: m.start()].strip()
            if title and not title[-1].isdigit():
                r.ref = (_LEADERS.sub("", title).strip() or title, m.group("num"))


def _reference(text: str, parts: Sequence[Line], leaders: bool) -> tuple[str, str] | None:
    """(title, page number) when the row ends in a page reference: a number after dot
    leaders, or a number that is its own piece, set well apart to the right of the title."""
    m = _NUM.search(text)
    if m is None:
        return None
    before = text[: m.start()]
    title = _LEADERS.sub("", before).strip()
    if not title:  # leaders and a number alone: the end of a title wrapped from the row above
        return ("", m.group("num")) if leaders or _dotted(before) else None
    leaders = leaders or _dotted(before[len(title):])
    last = parts[-1]
    if len(parts) >= 2 and last.text.strip() == m.group("num"):
        gap = last.x0 - parts[-2].x1
    else:
        gap = last.tail_gap if last.text.endswith(m.group("num")) else 0.0
    apart = gap >= _APART * last.size
    return (title, m.group("num")) if leaders or apart else None


def _dotted(leaders: str) -> bool:
    """``leaders`` (what ``_LEADERS`` strips after a title) holds dot leaders: three dots or
    more, or an ellipsis."""
    return sum(leaders.count(c) for c in _DOTS) >= 3 or "\u2026" in leaders


def page_value(num: str) -> tuple[int, bool]:
    if num.isdigit():
        return int(num), False
    total, prev = 0, 0
    for ch in reversed(num.lower()):
        v = _ROMAN_VALUES[ch]
        total = total - v if v < prev else total + v
        prev = max(prev, v)
    return total, True


def wrapped_rows(rows: Sequence[Row], k: int) -> list[int]:
    """The rows above reference row ``k`` that its title began on (a narrow column wraps one
    title over up to ``WRAP_ROWS`` rows), top first; none when the row above is no part of it."""
    out: list[int] = []
    j = k - 1
    while (j >= 0 and len(out) < WRAP_ROWS - 1 and rows[j].ref is None
           and _wraps(rows[j], rows[j + 1])):
        out.insert(0, j)
        j -= 1
    return out


def title_tail(rows: Sequence[Row]) -> list[Row]:
    """The rows after a page's last reference row when they may begin a title the next page
    ends: fewer than ``WRAP_ROWS``, set alike, one close below the other (the page's own
    number printed below them is not one of them)."""
    k = len(rows)
    while k and _PAGE_NUMBER.match(rows[k - 1].text):
        k -= 1
    rows = rows[:k]
    while k and rows[k - 1].ref is None:
        k -= 1
    tail = list(rows[k:])
    if len(tail) >= WRAP_ROWS or not all(_wraps(a, b) for a, b in pairwise(tail)):
        return []
    return tail


def continued(tail: Sequence[Row], row: Row) -> Row | None:
    """``row``, a reference row opening a page, joined to the ``tail`` of the page before when
    it ends the title that tail begins ("7 Adjusting the motor seal" / "assembly and its long
    ser-" | "vice procedures  15"): set alike, and its text starts in lower case."""
    if (not tail or row.ref is None or not row.ref[0][:1].islower()
            or abs(tail[0].size - row.size) > 0.5 or tail[0].bold != row.bold):
        return None
    first = tail[0]
    title = join_wrapped([*(t.text for t in tail), row.ref[0]])
    return Row([i for t in (*tail, row) for i in t.idx], first.x0, row.x1, row.y0, row.y1,
               title, first.size, first.bold, first.block, (title, row.ref[1]), first.face)


def join_wrapped(texts: Sequence[str]) -> str:
    """A title's rows as one line; a word hyphenated at a row's end is joined ("adjust-" +
    "ment" is "adjustment")."""
    out = ""
    for k, text in enumerate(texts):
        text = text.strip() if k == len(texts) - 1 else _LEADERS.sub("", text).strip()
        out = join_row(out, text)
    return out


def _wraps(first: Row, row: Row) -> bool:
    """``first`` is the first row of the title ``row`` ends: set alike (sizes within a point:
    a row's mean size moves with the typewriter words it holds), close above it.  Close is
    measured from where ``first``'s type ends at its size: some fonts' glyph boxes are only
    their x-height, and the gap under such a box is a line's leading."""
    return (len(first.text) > 3 and abs(first.size - row.size) <= 1.0 and first.bold == row.bold
            and row.y0 - max(first.y1, first.y0 + first.size) < 0.6 * row.size
            and row.x0 >= first.x0 - 1)
