"""Definition terms in PDF text (issue #17): a short bold or monospace tag with its
description indented deeper, or a roman tag set apart by a tab (``find_terms``); what the PDF's
type may not make a term (``term_text``)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from hiqa.formats.pdf.lines import (
    _LEADER,
    _TAB_STOP,
    BODY,
    FURNITURE,
    HEADING,
    Line,
    _prose,
)
from hiqa.formats.statements import figure_row, header_only
from hiqa.formats.structure import is_term_text

# ---------------------------------------------------------------------------------------------
# Definition terms (issue #17)


def find_terms(
    lines: Sequence[Line],
    is_term_text: Callable[[str], bool],
    section_starts: Iterable[int] = (),
) -> dict[int, str]:
    """Lines that open a definition item, mapped to the term: a short bold or monospace tag
    (groff ``.TP``, texinfo ``@table``, DocBook variablelist) whose description is indented
    deeper, either on the same row after a gap (``-h      Display help``) or on the lines
    below it.  The description must read as prose, so code and table rows are not terms.
    Tags set in roman type are found by their layout alone (``_hanging_items``); the
    sections they are counted in start at ``section_starts`` (the headings' anchors)."""
    out = _strong_terms(lines, is_term_text)
    out.update(_hanging_items(lines, is_term_text, set(section_starts), out))
    return out


def _strong_terms(lines: Sequence[Line], is_term_text: Callable[[str], bool]) -> dict[int, str]:
    out: dict[int, str] = {}
    for i, ln in enumerate(lines):
        if ln.role != BODY or not ln.tag:
            continue
        tag = ln.text[: ln.tag].strip()
        if not is_term_text(tag) or sum(ch.isalnum() for ch in tag) < 1:
            continue
        indent = max(0.9 * ln.size, 4.0)
        if ln.tag < len(ln.text):
            rest = ln.text[ln.tag :].strip()
            if ln.rest_x - ln.x0 >= indent and _prose(rest) and _column_at(lines, i, ln.rest_x):
                out[i] = tag
            continue
        nxt = _next_body(lines, i)
        if (
            nxt is not None
            and nxt.x0 - ln.x0 >= indent
            and not nxt.code
            and _prose(nxt.text)
            and (nxt.page != ln.page or nxt.y0 - ln.y1 < 2.5 * ln.height)
        ):
            out[i] = tag
    return out


def _hanging_items(
    lines: Sequence[Line],
    is_term_text: Callable[[str], bool],
    section_starts: set[int],
    strong: dict[int, str],
) -> dict[int, str]:
    """Definition items recognised by their shape, whatever the font: a hanging-indent list.

    An item is a short line at indent x whose description sits at a deeper indent x', on the
    same row after a gap or on the lines below it, every line of it at x' (``_description``).
    One such line is not a list, it may be a paragraph's short last line before an indented
    one; a list is two or more items with the same x and x' in one section, which is what
    ordinary paragraphs, first-line indents and prose do not repeat.  At least half of the
    items must read as described rather than tabulated: a tag alone on its row, a description
    that wraps to x', or a one-line description that is a sentence ("C-z  Suspend the tmux
    client."); rows of a borderless table ("pane_pid  PID of first process in pane") are not
    a list.  Items already taken as bold or monospace terms count towards the repetition.
    """
    right: dict[int, float] = {}
    for ln in lines:
        if ln.role == BODY:
            right[ln.page] = max(right.get(ln.page, ln.x1), ln.x1)
    groups: dict[tuple[int, int, int], list[tuple[int, str, bool]]] = defaultdict(list)
    section = 0
    for i, ln in enumerate(lines):
        if i in section_starts or ln.role == HEADING:
            section += 1
        if ln.role != BODY or ln.code or not ln.upright:
            continue
        item = _hanging_item(lines, i, right, is_term_text)
        if item is None:
            continue
        term, desc_x, wraps = item
        if i in strong:
            term = strong[i]
        groups[(section, round(ln.x0 / 2), round(desc_x / 2))].append((i, term, wraps))
    out: dict[int, str] = {}
    for items in groups.values():
        if len(items) >= 2 and 2 * sum(wraps for _, _, wraps in items) >= len(items):
            out.update((i, term) for i, term, _ in items if i not in strong)
    return out


def _hanging_item(
    lines: Sequence[Line], i: int, right: dict[int, float], is_term_text: Callable[[str], bool]
) -> tuple[str, float, bool] | None:
    """The term, its description's indent and whether the item reads as described (see
    ``_hanging_items``), when line ``i`` opens a hanging-indent item."""
    ln = lines[i]
    indent = max(0.9 * ln.size, 4.0)
    if _LEADER.search(ln.text):
        return None
    same_row = ln.head > 0 and ln.head_gap >= _TAB_STOP * ln.size
    if _continues(lines, i, right) or (not same_row and _filled(ln, right)):
        return None
    if same_row:
        term, desc_x = ln.text[: ln.head].strip(), ln.rest_x
        first_desc = replace(ln, text=ln.text[ln.head :].strip(), x0=ln.rest_x)
        start = i + 1
    else:
        term = ln.text
        start = next((j for j in range(i + 1, len(lines)) if lines[j].role != FURNITURE), 0)
        if not start or lines[start].role != BODY:
            return None
        first_desc, desc_x, start = lines[start], lines[start].x0, start + 1
        below = first_desc.y0 - ln.y1
        if first_desc.page == ln.page and not -0.5 * ln.height < below < 2.5 * ln.height:
            return None  # a paragraph gap, or the top of the next column
    if (
        desc_x - ln.x0 < indent
        or not is_term_text(term)
        or sum(ch.isalnum() for ch in term) < 1
        or _sentence(term)
        or term.endswith("\\")  # a shell command continued on the next line, set in roman
        or first_desc.code
        or not _prose(first_desc.text)
    ):
        return None
    wraps = _description(lines, start, first_desc, desc_x, right)
    if wraps is None:
        return None
    return term, desc_x, wraps or not same_row or first_desc.text.endswith(".")


def _description(
    lines: Sequence[Line], start: int, first: Line, x: float, right: dict[int, float]
) -> bool | None:
    """Does the description that ``first`` opens keep to indent ``x``?  Its next line, when
    one follows without a paragraph gap, is either at ``x`` (True: the description wraps to
    its own column) or, the description being one short line, the next item (False): a short
    line left of ``x``, or a row with its own tag and its description at ``x``.  A full line
    back at the left edge, or a full first line followed by a line left of it, is a paragraph
    whose first line was indented (None: not an item)."""
    at = next((j for j in range(start, len(lines)) if lines[j].role != FURNITURE), None)
    nxt = None if at is None else lines[at]
    if nxt is None or nxt.role != BODY or nxt.page != first.page:
        return False
    if nxt.y0 - first.y1 >= 0.8 * first.height:
        return False
    if abs(nxt.x0 - x) <= 1.5:
        return True
    if nxt.head and abs(nxt.rest_x - x) <= 1.5 and nxt.head_gap >= _TAB_STOP * nxt.size:
        return False  # the next item, its tag and description on one row
    if nxt.x0 < x and not _filled(nxt, right) and not _filled(first, right):
        return False
    return None


def _sentence(term: str) -> bool:
    """A run of four or more plain words ("To watch for mail, you might do") is a sentence
    leading into an example, not a term; option syntax has dashes, brackets or bars."""
    words = term.split()
    plain = sum(w.strip(",;:'\u2019\"()").isalpha() for w in words)
    return len(words) >= 4 and plain >= 0.75 * len(words)


def _filled(ln: Line, right: dict[int, float]) -> bool:
    """A line that runs to the right edge of the text: a wrapped line of a paragraph."""
    edge = right.get(ln.page, ln.x1)
    return ln.x1 >= edge - 0.15 * max(edge - ln.x0, 1.0)


def _continues(lines: Sequence[Line], i: int, right: dict[int, float]) -> bool:
    """Is line ``i`` the continuation of a paragraph (the line above it is filled and close)?"""
    ln = lines[i]
    prev = lines[i - 1] if i > 0 else None
    return (
        prev is not None
        and prev.role == BODY
        and prev.page == ln.page
        and ln.y0 - prev.y1 < 0.8 * ln.height
        and abs(prev.x0 - ln.x0) <= 1.5
        and _filled(prev, right)
    )


def _column_at(lines: Sequence[Line], i: int, x: float, reach: int = 8) -> bool:
    """Does another line near line ``i`` start at ``x``?  A description column is shared by
    the items of a list; a bold word opening a justified paragraph has no such column."""
    near = [*lines[max(0, i - reach) : i], *lines[i + 1 : i + 1 + reach]]
    return any(abs(ln.x0 - x) <= 1.5 and ln.page == lines[i].page for ln in near)


def _next_body(lines: Sequence[Line], i: int) -> Line | None:
    for ln in lines[i + 1 :]:
        if ln.role == BODY:
            return ln
        if ln.role != FURNITURE:
            return None
    return None


def term_text(text: str) -> bool:
    """A term the PDF's type suggests (``is_term_text``), unless it is a statement's column
    header ("2021", "52 Weeks Ended") or one of its rows ("INCOME BEFORE INCOME TAXES 6,680
    5,367 4,765"), which a bold first column sets apart as a term is set.  A header holds a
    year, a unit or a period: a number alone is an exit status's or an exhibit's term ("0",
    "3.1"), a month alone a glossary's ("MAY")."""
    header = header_only(text) and re.search(
        r"\b(?:19|20)\d\d\b|millions|thousands|billions|weeks|months|ended", text, re.IGNORECASE)
    return is_term_text(text) and not header and not figure_row(text)
