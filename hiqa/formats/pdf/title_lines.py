"""What sets a line apart as a title, for the typographic heading model's rules
(``hiqa.formats.pdf.typography``, ``hiqa.formats.pdf.sequences``): a short line that is not a
sentence, a block of its own or the lines opening a block in a type of their own, with space
above it; set apart as a heading over text when bold or larger than the text as well."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hiqa.formats.pdf.layout import HeadingCandidate
from hiqa.formats.pdf.lines import (
    _MAX_HEADING_LINES,
    CENTRED,
    FULL_STOP,
    LARGE_RATIO,
    WORD,
    Line,
    bucket,
    word_count,
)

TIGHT = 0.5
"""A gap under half a line's height between two rows: no space sets them apart."""


def says(c: HeadingCandidate) -> bool:
    """Numbered, or holding a word of three letters or more."""
    return c.depth is not None or bool(WORD.search(c.title))


PAGE_REF = re.compile(r"^(.*\S)\s+[—–]?(?:\d{1,4}|[ivxlc]{1,6})$")


SENTENCE_END = (*FULL_STOP, ",", ";", ":", "，", "；", "：", "！", "？")

MAX_TITLE_WORDS = 12
"""Words a numbered line may hold to read as a section's title rather than a list item's."""


def heads_text(lines: Sequence[Line], i: int, text: float) -> bool:
    """Set apart as a heading over text: a short line alone in its block, not a sentence, bold
    or larger than the text, with space above it, and not ending in a number as a contents
    row ends in its page.  A listing's numbered lines have no space above them, a list's
    items wrap in their block or have no type of their own."""
    ln = lines[i]
    return (title_line(lines, i) and (ln.bold or ln.size >= text * LARGE_RATIO)
            and PAGE_REF.match(ln.text) is None and space_above(lines, i))


def title_line(lines: Sequence[Line], i: int) -> bool:
    """A short title line (or the first of a title's lines), not a sentence."""
    return title_end(lines, i) is not None


def title_end(lines: Sequence[Line], i: int) -> int | None:
    """The last line of the title that line ``i`` opens, or None when it opens none.

    A title is a block of its own, or the lines that open a block in a type of their own (the
    text layer often puts a heading into the block of the paragraph under it when the space
    between them is tight: "1. INTRODUCTION" in bold sans over serif text): up to
    ``_MAX_HEADING_LINES`` lines in one type (face, weight and size), the line after them in
    another block or another face and weight or size.  Its lines hold few words each
    (``MAX_TITLE_WORDS``) and its last does not end a sentence."""
    ln = lines[i]
    if i and lines[i - 1].block == ln.block and lines[i - 1].page == ln.page:
        return None
    end = i
    while (end + 1 < len(lines) and lines[end + 1].block == ln.block
           and lines[end + 1].page == ln.page):
        nxt = lines[end + 1]
        if nxt.face != ln.face and (nxt.bold != ln.bold or bucket(nxt.size) != bucket(ln.size)):
            break  # the paragraph under the title, in the text's type
        if (nxt.face, nxt.bold, bucket(nxt.size)) != (ln.face, ln.bold, bucket(ln.size)):
            return None  # neither the title's type nor another: one paragraph
        end += 1
        if end - i + 1 > _MAX_HEADING_LINES:
            return None
    words = max(word_count(lines[k].text) for k in range(i, end + 1))
    if words > MAX_TITLE_WORDS or lines[end].text.endswith(SENTENCE_END):
        return None
    return end


def space_above(lines: Sequence[Line], i: int) -> bool:
    """Line ``i`` opens its page or stands at least ``TIGHT`` of its height below the line
    before it."""
    ln, prev = lines[i], lines[i - 1] if i else None
    return prev is None or prev.page != ln.page or ln.y0 - prev.y1 >= TIGHT * ln.height


def centred_on_page(ln: Line, page_widths: Sequence[float]) -> bool:
    if not 1 <= ln.page <= len(page_widths):
        return False
    width = page_widths[ln.page - 1]
    return abs((ln.x0 + ln.x1 - width) / 2) <= CENTRED * width and ln.x0 > 0.1 * width


def line_style(ln: Line) -> tuple[float, bool]:
    return bucket(ln.size), ln.bold
