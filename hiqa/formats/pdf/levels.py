"""Heading levels from numbering and style, for the headings the layout found
(``hiqa.formats.pdf.layout``): one level per heading, consistent across the document
(``heading_levels``)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hiqa.formats.pdf.layout import HeadingCandidate, number_key
from hiqa.formats.pdf.lines import section_number


def _numbering_runs(cands: Sequence[HeadingCandidate]) -> list[list[int]]:
    """Numbered headings split where the numbering starts again ("1." after "6."): a
    collection of books or articles numbers each one from 1."""
    runs: list[list[int]] = []
    prev: int | None = None
    for k, c in enumerate(cands):
        if c.depth is None:
            continue
        number = section_number(c.title)
        top = number[0] if number else None
        if not runs or (
            top is not None and prev is not None and (top < prev or (top == prev and c.depth == 1))
        ):
            runs.append([])
        runs[-1].append(k)
        if top is not None:
            prev = top
    return runs


def dominant(counter: Counter) -> Any:
    return counter.most_common(1)[0][0]


Rank = tuple[float, bool, bool]


def _ranks(cands: Sequence[HeadingCandidate]) -> list[Rank]:
    """Each heading's style as its level reads it: size, weight, then capitals over mixed case
    where the style's first heading is in capitals.  A conference template sets "ABSTRACT" and
    its sections in capitals, their sub-sections in the same type in mixed case; a manual that
    sets one section of many in capitals ("EXAMPLE CONFIGURATION FILE" after "Name",
    "Synopsis") has no level above its mixed-case headings for it to be."""
    first: dict[tuple[float, bool], bool] = {}
    for c in cands:
        first.setdefault(c.style, c.capitals)
    return [(*c.style, c.capitals and first[c.style]) for c in cands]


def heading_levels(cands: Sequence[HeadingCandidate]) -> list[int]:
    """One level per heading, consistent across the document.

    Numbered headings: their numbering depth, shifted per numbering run so that the run's
    styles sit where the same styles sit in the main (longest) run; the main run is shifted
    one level down when parts or more prominent unnumbered headings (a book title) precede it.
    Parts: level 1.  Unnumbered headings: the level the numbered headings of the same style
    have, else a level between the known styles by prominence (size, then weight, then
    centred over flush, then capitals over mixed case: ``_rank``), else the style's rank; a
    style whose headings never sit directly under the level above it is lifted (no level is
    skipped without numbering saying so).
    """
    levels = [0] * len(cands)
    ranks = _ranks(cands)
    cands = _with_divisions(cands, ranks)
    runs = _numbering_runs(cands)
    style_level: dict[Rank, int] = {}
    if runs:
        main = max(runs, key=len)
        start = main[0]
        first_style = dominant(Counter(ranks[k] for k in main if cands[k].depth == 1)) \
            if any(cands[k].depth == 1 for k in main) else None
        above = any(
            c.part or (c.depth is None and first_style is not None and r > first_style)
            for c, r in zip(cands[:start], ranks, strict=False)
        )
        main_offset = 1 if above else 0
        per_style: dict[Rank, Counter[int]] = defaultdict(Counter)
        for k in main:
            per_style[ranks[k]][cands[k].depth + main_offset] += 1  # type: ignore[operator]
        main_levels = {s: dominant(cnt) for s, cnt in per_style.items()}
        for run in runs:
            if run is main:
                offset = main_offset
            else:
                votes: Counter[int] = Counter()
                for k in run:
                    known = main_levels.get(ranks[k])
                    if known is not None:
                        votes[known - cands[k].depth] += 1  # type: ignore[operator]
                offset = dominant(votes) if votes else main_offset
                offset = max(offset, 0)
            for k in run:
                levels[k] = cands[k].depth + offset  # type: ignore[operator]
        learned: dict[Rank, Counter[int]] = defaultdict(Counter)
        for run in runs:
            for k in run:
                learned[ranks[k]][levels[k]] += 1
        style_level = {s: dominant(cnt) for s, cnt in learned.items()}
    has_parts = any(c.part for c in cands)
    unnumbered = {r for c, r in zip(cands, ranks, strict=True) if c.depth is None and not c.part}
    if not style_level:
        base = 1 if has_parts else 0
        ranked = sorted(unnumbered, reverse=True)
        style_level = {s: base + r + 1 for r, s in enumerate(ranked)}
    else:
        known = dict(style_level)
        for s in unnumbered - known.keys():
            bigger = [k for k in known if k > s]
            smaller = [k for k in known if k < s]
            if not bigger:
                style_level[s] = 1
                continue
            level = known[min(bigger)] + 1
            if smaller:
                level = min(level, known[max(smaller)])
            style_level[s] = max(1, level)
    for k, c in enumerate(cands):
        if c.part:
            levels[k] = 1
        elif c.depth is None:
            levels[k] = style_level[ranks[k]]
    _lift_skipping_styles(cands, ranks, levels)
    return levels


def _with_divisions(cands: Sequence[HeadingCandidate], ranks: Sequence[Rank]
                    ) -> list[HeadingCandidate]:
    """Headings numbered without digits ("Part I. Preliminaries", "II Usage") in a style more
    prominent than every section numbered "1", "2" … are divisions above them, as a title
    page's part is: the depth their number reads (one) is the sections' too, and the sections
    would have stood beside the parts that hold them (thalie, substances).  Two at least."""
    numbered = [r for c, r in zip(cands, ranks, strict=True)
                if c.depth == 1 and section_number(c.title)]
    if not numbered:
        return list(cands)
    top = max(numbered)
    divisions = {k for k, c in enumerate(cands)
                 if c.depth == 1 and not section_number(c.title) and ranks[k] > top}
    if len(divisions) < 2:
        return list(cands)
    return [replace(c, depth=None, part=True) if k in divisions else c
            for k, c in enumerate(cands)]


def _lift_skipping_styles(cands: Sequence[HeadingCandidate], ranks: Sequence[Rank],
                          levels: list[int]) -> None:
    """An unnumbered style whose headings never sit directly under the level above theirs
    (a body-size bold style used only under chapters) moves up to the deepest level its
    headings do sit under."""
    unnumbered = [k for k, c in enumerate(cands) if c.depth is None and not c.part]
    for style in sorted({ranks[k] for k in unnumbered}, reverse=True):
        members = [k for k, c in enumerate(cands) if ranks[k] == style and c.depth is None]
        own = {levels[k] for k in members}
        if len(own) != 1:
            continue
        level = own.pop()
        parents = []
        for k in members:
            parent = next((levels[j] for j in range(k - 1, -1, -1) if levels[j] < level), 0)
            parents.append(parent)
        target = max(parents) + 1
        if target < level and level - 1 not in parents:
            for k in members:
                levels[k] = target


def keep_numbered_parents(kept: Sequence[tuple[HeadingCandidate, int]]
                          ) -> list[tuple[HeadingCandidate, int]]:
    """A numbered heading stays under the heading its number names ("4.4.2" under "4.4"): an
    unnumbered heading between them set above it (currency's starred "Using a prefix", in the
    style of "4.4", between 4.4.1 and 4.4.2) would take it and the numbered ones after it as
    its own, so it moves down to the numbered heading's level and stands beside it.  Applied
    to the headings kept (``typography._drop_continued`` has already kept a repeated title
    once, at the level its style gives it)."""
    cands = [c for c, _ in kept]
    levels = [lv for _, lv in kept]
    where: dict[str, int] = {}
    for k, c in enumerate(cands):
        key = number_key(c.title) if c.depth is not None else ""
        if not key:
            continue
        parent = where.get(key.rsplit(".", 1)[0]) if "." in key else None
        if parent is not None and levels[parent] < levels[k]:
            between = range(parent + 1, k)
            if all(levels[j] >= levels[k] for j in between if cands[j].depth is not None):
                for j in between:
                    if cands[j].depth is None and not cands[j].part and levels[j] < levels[k]:
                        levels[j] = levels[k]
        where[key] = k
    return list(zip(cands, levels, strict=True))
