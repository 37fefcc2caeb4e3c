"""Headings set in a face of their own, at or below the text's size: a rule of the typographic
heading model (``hiqa.formats.pdf.typography``).

A conference template may set its sections in a bold sans a point smaller than its serif text
(ISCRAM: 9 pt Heros over 9.96 pt Termes) and its sub-sub-sections in the sans' italic; neither
is larger than the text nor bold at its size, so size and weight do not tell them.  The face
does: at that size it is used for nothing else.  A bold face at a size counts when nearly every
line the document sets so (``TITLES``, at least ``MIN_LINES`` lines) stands as a title at the
text column's left edge (a short line of its own, not a sentence, with space above it, no page
number after it: ``title_lines``), it is no typewriter face nor of the text's family, and its
lines are no smaller than ``SMALLEST`` of the text; then the other faces of its family count
the same way (the italic of the sans).  A caption in the text's bold, a running head in a
slanted face with its page number, an example's output set in another roman, do not count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from hiqa.formats.pdf.layout import HeadingCandidate, acceptable, capitals
from hiqa.formats.pdf.lines import BODY, LARGE_RATIO, Line, bucket, numbering_depth, text_width
from hiqa.formats.pdf.title_lines import PAGE_REF, says, space_above, title_end

MIN_LINES = 3
"""Lines a face must set before it reads as a heading face (one bold line is a word's)."""

TITLES = 0.8
"""The share of a face's lines that must stand as titles (one may sit tight under a figure)."""

SMALLEST = 0.85
"""A heading face is at least this share of the text's size."""


def with_face_headings(
    cands: list[HeadingCandidate], lines: Sequence[Line], text: float,
    column: tuple[float, float], blocked: AbstractSet[int] = frozenset(),
) -> list[HeadingCandidate]:
    """``cands`` with the lines of the document's heading faces that no other rule took."""
    taken = {i for c in cands for i in range(c.first, c.last + 1)}
    by_type: dict[tuple[str, float], list[int]] = defaultdict(list)
    chars: Counter[str] = Counter()
    for i, ln in enumerate(lines):
        if ln.role == BODY and ln.face:
            by_type[ln.face, bucket(ln.size)].append(i)
            chars[ln.face] += text_width(ln.text)
    if not chars:
        return cands
    text_family = family(chars.most_common(1)[0][0])
    heading_types: dict[tuple[str, float], list[int]] = {}
    for bold in (True, False):  # the bold faces first: they name the headings' family
        families = {family(face) for face, _ in heading_types}
        for (face, size), members in by_type.items():
            if (family(face) == text_family or len(members) < MIN_LINES
                    or not all(lines[i].bold == bold for i in members)
                    or (not bold and family(face) not in families)):
                continue
            standing = [i for i in members if _stands_as_title(lines, i, text, column)]
            if len(standing) >= TITLES * len(members):
                heading_types[face, size] = standing
    added = []
    for standing in heading_types.values():
        for i in standing:
            if i in taken or i in blocked:
                continue
            ln = lines[i]
            c = HeadingCandidate(i, i, ln.text, (bucket(ln.size), ln.bold),
                                 numbering_depth(ln.text), False,
                                 capitals=capitals(ln.text))
            if acceptable(c, lines, apart=True) and says(c):
                added.append(c)
    return sorted([*cands, *added], key=lambda c: c.first) if added else cands


def family(face: str) -> str:
    """A font's family: its name before the style ("TeXGyreHeros-Bold" -> "TeXGyreHeros")."""
    return face.split("-", 1)[0].split(",", 1)[0]


def _stands_as_title(lines: Sequence[Line], i: int, text: float,
                     column: tuple[float, float]) -> bool:
    ln = lines[i]
    return (not ln.mono and SMALLEST * text <= ln.size < text * LARGE_RATIO
            and PAGE_REF.match(ln.text) is None
            and title_end(lines, i) == i and space_above(lines, i)
            and abs(ln.x0 - column[0]) <= ln.size)
