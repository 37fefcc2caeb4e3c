"""Sections numbered in a sequence ("I." … "II." … "III.", paragraphs between) that no size
or weight tells from the text: a rule of the typographic heading model
(``hiqa.formats.pdf.typography``).

A sparse number sequence on short lines set apart from the text (a title of their own, and
centred on the page or in the text column, in capitals, bold or of another size, not ending
in a page number) numbers sections, even where their type is no larger than the text (small
capitals); the other titles set in a sequence's type, in its place, are headings too
("ABSTRACT", "REFERENCES" beside "1. INTRODUCTION"); in the text's own type, a sequence whose
lines stand between paragraphs (an MLA paper's "1. Introduction") numbers sections too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

from hiqa.formats.pdf.blocks import numbered_sequences
from hiqa.formats.pdf.layout import HeadingCandidate, acceptable, alone, centred_in, join_title
from hiqa.formats.pdf.lines import BODY, WORD, Line, bucket, numbering_depth, strip_numbering
from hiqa.formats.pdf.title_lines import (
    PAGE_REF,
    centred_on_page,
    heads_text,
    line_style,
    says,
    space_above,
    title_end,
    title_line,
)


def with_sequences(
    cands: list[HeadingCandidate], lines: Sequence[Line], text: float, page_widths: Sequence[float],
    column: tuple[float, float], blocked: AbstractSet[int] = frozenset(),
) -> list[HeadingCandidate]:
    """``cands`` with the lines of sparse number sequences whose every line reads as a
    section's title set apart from the text by its type or place, or, in the text's own type,
    stands between paragraphs (``_between_paragraphs``; then the document's other numbered
    lines that stand so are titles too, since the type says nothing)."""
    taken = {i for c in cands for i in range(c.first, c.last + 1)}
    typed: list[HeadingCandidate] = []  # set apart by their type or place
    placed: list[HeadingCandidate] = []  # in the text's type, standing between paragraphs

    def titles(starts: Iterable[int]) -> list[HeadingCandidate]:
        return [c for c in (_sequence_title(lines, i) for i in starts)
                if acceptable(c, lines) and says(c)]

    for run in numbered_sequences(lines, lambda i: heads_text(lines, i, text)):
        fresh = [i for i in run if i not in taken]
        if not fresh or not all(i not in blocked or alone(lines, i) for i in run):
            continue
        if all(_set_apart(lines, i, text, page_widths, column) for i in run):
            typed += titles(fresh)
        elif all(_between_paragraphs(lines, i, column) for i in run):
            placed += titles(fresh)
    added = typed + placed
    have = taken | {i for c in added for i in range(c.first, c.last + 1)}
    added += _in_sequence_type(lines, typed, have, blocked, column)
    if placed:
        added += titles(i for i, ln in enumerate(lines)
                        if i not in have and i not in blocked and ln.role == BODY
                        and numbering_depth(ln.text) is not None
                        and _between_paragraphs(lines, i, column))
    return sorted([*cands, *added], key=lambda c: c.first) if added else cands


def _type(ln: Line) -> tuple[str, bool, float]:
    return ln.face, ln.bold, bucket(ln.size)


def _in_sequence_type(lines: Sequence[Line], found: Sequence[HeadingCandidate],
                      taken: AbstractSet[int], blocked: AbstractSet[int],
                      column: tuple[float, float]) -> list[HeadingCandidate]:
    """The other titles set in the type of the numbered sections ``found``: a document that
    sets "1. INTRODUCTION" and "2. METHODS" in a type of their own sets its "ABSTRACT",
    "REFERENCES" and the sub-section that has no sibling ("2.1 Subsection") in it too, on a
    line of their own, in the same place (``_placed_as``), saying something besides a number
    ("2.5 cm" in a figure does not)."""
    if not found:
        return []
    placed: dict[tuple[str, bool, float], list[Line]] = defaultdict(list)
    for c in found:
        placed[_type(lines[c.first])].append(lines[c.first])
    have = {i for c in found for i in range(c.first, c.last + 1)} | set(taken)
    out = []
    for i, ln in enumerate(lines):
        if (ln.role != BODY or i in have or i in blocked or _type(ln) not in placed
                or title_end(lines, i) != i or not space_above(lines, i)
                or not _placed_as(ln, placed[_type(ln)], column)):
            continue
        c = _sequence_title(lines, i)
        if acceptable(c, lines, apart=True) and WORD.search(strip_numbering(c.title)):
            out.append(c)
            have.update(range(c.first, c.last + 1))
    return out


def _placed_as(ln: Line, headings: Sequence[Line], column: tuple[float, float]) -> bool:
    """``ln`` stands where one of ``headings`` stands: centred in the text column as it is,
    or at its left edge (within an em): a heading type has its place, a label set in the
    same type inside a figure does not."""
    centred = centred_in(ln, column)
    return any(centred and centred_in(h, column) or abs(ln.x0 - h.x0) <= ln.size
               for h in headings)


def _sequence_title(lines: Sequence[Line], i: int) -> HeadingCandidate:
    """The heading a sequence's line ``i`` opens, its title's lines joined."""
    end = title_end(lines, i)
    last = i if end is None else end
    return HeadingCandidate(i, last, join_title([lines[k].text for k in range(i, last + 1)]),
                            line_style(lines[i]), numbering_depth(lines[i].text), False)


def _set_apart(lines: Sequence[Line], i: int, text: float, page_widths: Sequence[float],
               column: tuple[float, float]) -> bool:
    """A short title line, not a sentence, and set apart from the text by its type or its
    place: centred (on the page or in the text column), in capitals, bold, or of another
    size."""
    ln = lines[i]
    words = strip_numbering(ln.text)
    if PAGE_REF.match(ln.text) is not None:
        return False  # a contents row or a running head, its page number last
    return title_line(lines, i) and (ln.bold or bucket(ln.size) != text or words.isupper()
                                      or centred_on_page(ln, page_widths)
                                      or centred_in(ln, column))


def _between_paragraphs(lines: Sequence[Line], i: int, column: tuple[float, float]) -> bool:
    """A short title line in the text's own type standing between two paragraphs: at the text
    column's left edge, after a paragraph's last line (short of the right edge) or a page's
    top, and before a paragraph's first line, indented by two ems or more and filling half the
    column or more.  A double-spaced paper (MLA) sets "1. Introduction" so, only its number
    and its place telling it from the text; a list item's wrapped line hangs under its text.
    """
    left, right = column
    ln = lines[i]
    if i + 1 >= len(lines) or not title_line(lines, i):
        return False
    em, after = ln.size, lines[i + 1]
    before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].role == BODY), None)
    return (abs(ln.x0 - left) <= em and ln.x1 < right - 2 * em
            and (before is None or before.page != ln.page or before.x1 < right - 2 * em)
            and after.page == ln.page and after.x0 - ln.x0 >= 2 * em
            and after.x1 - after.x0 >= (right - left) / 2
            and abs(after.size - ln.size) < 0.5)
