"""Headings below a printed table of contents: what the layout adds to the contents' entries.

A contents lists chapters and sections; ``deeper_headings`` adds the numbered headings below its
deepest entries.  A filing's contents lists the Parts and Items its form defines and nothing
inside them; ``headings_within`` adds, from the first Item on (``first_form_item``), the
unnumbered headings its type sets apart (issue #46).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

from hiqa.formats.form import CONTENTS_ITEMS, MIN_ITEMS
from hiqa.formats.form import label as form_label
from hiqa.formats.pdf.layout import (
    HeadingCandidate,
    ancestors,
    found_headings,
    layout_candidates,
    number_key,
)
from hiqa.formats.pdf.levels import dominant, heading_levels
from hiqa.formats.pdf.lines import (
    BODY,
    HEADING,
    MAX_LEVEL,
    FoundHeading,
    Line,
    norm_title,
    numbering_depth,
)


def deeper_headings(
    placed: Sequence[FoundHeading], lines: Sequence[Line], body: float,
    page_widths: Sequence[float] = (), books: int = 1,
) -> list[FoundHeading]:
    """``placed`` (headings from a printed TOC, their lines marked) with the headings the
    layout finds below the TOC's depth: a TOC often lists chapters and sections only.

    A PDF that binds several books (two TOCs or more, and as many distinct title pages,
    ``_title_blocks``; a cover and an inner title page are one book) gets its books' titles as
    level-1 headings above their TOCs' entries.  A layout heading is kept when its
    numbering is deeper than the TOC's deepest numbering and
    continues a TOC heading's number ("3.1.2" under the TOC's "3.1"); its level follows the
    numbering.  Unnumbered layout headings are not added: measured on the development PDFs,
    below a TOC they are terms, captions and signatures far more often than headings.
    """
    if not placed:
        return list(placed)
    by_depth: dict[int, Counter[int]] = defaultdict(Counter)
    numbers: set[str] = set()
    for h in placed:
        d = numbering_depth(h.title)
        if d is not None:
            by_depth[d][h.level] += 1
            numbers.add(number_key(h.title))
    max_depth = max(by_depth, default=None)
    extra: list[tuple[HeadingCandidate, int]] = []
    layout = layout_candidates(lines, body, page_widths)
    parts = [c for c in layout if c.part]
    titles = {norm_title(c.title) for c in parts}
    if books >= 2 and len(parts) >= 2 and len(titles) == len(parts):
        # a set of books, each with its own TOC and title page: the books are level 1
        placed = [replace(h, level=min(h.level + 1, MAX_LEVEL)) for h in placed]
        extra += [(c, 1) for c in parts]
        by_depth = {d: Counter({lv + 1: n for lv, n in cnt.items()}) for d, cnt in by_depth.items()}
    if max_depth is None:
        return sorted([*placed, *found_headings(lines, extra)], key=lambda h: h.anchor)
    level_of_max = dominant(by_depth[max_depth])
    for c in layout:
        if c.depth is None or c.depth <= max_depth or c.part:
            continue
        key = number_key(c.title)
        if any(k in numbers for k in ancestors(key)):
            numbers.add(key)
            extra.append((c, level_of_max + c.depth - max_depth))
    return sorted([*placed, *found_headings(lines, extra)], key=lambda h: h.anchor)


_COLUMN_HEADS = {"page", "pages", "page no.", "page number"}
"""The page column's head of an index of the statements, set in bold like a sub-heading."""


def headings_within(
    placed: Sequence[FoundHeading], lines: Sequence[Line], body: float, start: int,
    page_widths: Sequence[float] = (),
) -> list[FoundHeading]:
    """``placed`` (a printed contents' entries, their lines marked) with the layout's
    unnumbered headings from line ``start`` on, ranked by style one level below the deepest
    entry.  For a filing (``start`` is its first Item, ``form.label``): its contents list the
    sections the form defines and never what the producer put inside them (MD&A's "Results of
    Operations", "Backlog", a note's "Principles of Consolidation"), which its pages set apart
    by their type alone.  The form's structure (``form.form_structure``) then puts each below
    its Item."""
    taken = {h.anchor for h in placed}
    extra = [c for c in layout_candidates(lines, body, page_widths)
             if c.first >= start and c.depth is None and not c.part and c.first not in taken
             and c.title.strip().casefold() not in _COLUMN_HEADS
             and not any(lines[i].role == HEADING for i in range(c.first, c.last + 1))]
    if not extra:
        return list(placed)
    deepest = max((h.level for h in placed), default=0)
    levels = heading_levels(extra)
    found = found_headings(lines, [(c, deepest + r) for c, r in zip(extra, levels, strict=True)])
    return sorted([*placed, *found], key=lambda h: h.anchor)



def first_form_item(lines: Sequence[Line], contents: set[int]) -> int | None:
    """The first line of a filing's body, where its Items start: four Items of a form or more
    on lines of their own (``form.label``), off the printed contents (its pages, or a page
    listing eight Items); ``None`` for any other document."""
    items: list[tuple[int, int, tuple[int, ...]]] = []
    for i, ln in enumerate(lines):
        if ln.role in (BODY, HEADING) and ln.page not in contents:
            items += [(i, ln.page, key) for key in form_label(ln.text) if key[1] >= 0]
    per_page = Counter(page for _, page, _ in items)
    items = [it for it in items if per_page[it[1]] < CONTENTS_ITEMS]
    if len({key for _, _, key in items}) < MIN_ITEMS:
        return None
    return items[0][0]
