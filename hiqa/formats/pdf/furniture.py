"""Page furniture: running headers and footers, page numbers and the heads that name a section,
marked ``FURNITURE`` so that neither the text nor the headings take them (from ``lines``, whose
lines they mark)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence

from hiqa.formats.pdf.lines import (
    _LABEL,
    _LEADER,
    _MARGIN,
    _PAGE_NUMBER,
    _SPACES,
    BODY,
    FURNITURE,
    WORD,
    Line,
)
from hiqa.formats.statements import family

_DIGITS = re.compile(r"\d+")


def mark_furniture(
    lines: Sequence[Line], page_heights: Sequence[float], body: float, running: str = ""
) -> None:
    """Mark running headers, footers and page numbers as ``FURNITURE``.

    A line in the top or bottom margin is furniture when it is a page number, when it holds
    the document's running title (``running``, found by ``hiqa.formats.pdf.title``; this is
    what catches the header of a one-page document), when a one-page document's edge line ends
    in its page number (its footer: "frobtools 1.0    February 2023    1"), or when the same
    text (digits ignored: "Chapter 3: Foo  41") recurs in the margins of several pages; any
    other body-size margin line on the same band as such recurring lines (a header that names
    a two-page chapter) is furniture too, unless it has dot leaders (a TOC row that opens a
    page printed without a header).
    """
    n_pages = len(page_heights)
    if not lines:
        return
    _mark_fixed_lines(lines, page_heights)
    threshold = min(max(2, math.ceil(0.3 * n_pages)), 5)
    edge = _page_edges(lines)
    pages_by_key: dict[str, set[int]] = defaultdict(set)
    margin: list[int] = []
    for i, ln in enumerate(lines):
        if ln.role != BODY or not _in_margin(ln, page_heights):
            continue
        margin.append(i)
        if (
            (i in edge and _PAGE_NUMBER.match(ln.text))
            or (running and running in ln.text and ln.size <= body + 1.0)  # not a title block
            or (n_pages == 1 and i in edge and ln.text.endswith(" 1") and ln.size <= body + 1.0)
        ):
            ln.role = FURNITURE
        else:
            pages_by_key[_furniture_key(ln.text)].add(ln.page)
    _mark_flowing_footers(lines, page_heights, body)
    repeated = {k for k, pages in pages_by_key.items() if len(pages) >= threshold}
    bands: dict[tuple[bool, int], set[int]] = defaultdict(set)
    for i in margin:
        ln = lines[i]
        if ln.role == BODY and _furniture_key(ln.text) in repeated:
            ln.role = FURNITURE
            bands[_band(ln, page_heights)].add(ln.page)
    strong = {b for b, pages in bands.items() if len(pages) >= threshold}
    # the band of the body's first line is no header's: where the text starts inside the top
    # margin, a line repeated there on a few pages (a table's heading) made every page's first
    # line furniture (Corning's 10-K lost its Item 7 and 7A, at the top of their pages)
    varied = _varied_bands(lines, margin, page_heights)
    strong -= varied
    for i in margin if strong else ():
        ln = lines[i]
        # a row with dot leaders is a TOC's, its first on a page without a header; a primary
        # financial statement's caption is its page's title, though it stands where the notes'
        # running caption stands on the pages after it (Pfizer's 10-Q lost its cash flows)
        if (ln.role == BODY and ln.size <= body + 1.0 and not _LEADER.search(ln.text)
                and family(ln.text) in (None, "notes")):
            top, y = _band(ln, page_heights)
            if any((top, y + d) in strong for d in (-1, 0, 1)):
                ln.role = FURNITURE
    _mark_section_heads(lines, margin, page_heights, body, varied)


def _mark_section_heads(lines: Sequence[Line], margin: Sequence[int],
                        page_heights: Sequence[float], body: float,
                        varied: set[tuple[bool, int]]) -> None:
    """A running head that names the current section ("4. The Database" over that section's
    two or three pages) repeats too seldom to count as furniture by repetition, and each one
    then read as the section's heading again on every page it heads.  A top-margin line is
    such a head when the top margins of two pages or more print its text, and the body sets
    that text apart as a heading (bold or larger than the body, outside the margins) more
    prominently than the margin does (larger, or bold where the margin line is not), in a
    band that holds a header's few texts, not the body's first lines (``varied``: a
    10-K's tables start inside the top margin, their "At December 31," on several pages).
    A heading that happens to open one page is printed at the top once.  A top line made of
    two headings' titles in words (the sub-section's and the section's, a new pair on nearly
    every page) is such a head in any band: no body's first line is two titles.  Nor is a
    heading's words beside a page's number, whatever label and number the head prints ("18
    CHAPTER 2. DOWNLOAD AND INSTALLATION" over "2 Download and Installation"): such a head is
    one in any band, and in a band where others stand, on one page too (a short section's)."""
    titles: dict[str, Line] = {}
    worded: dict[str, Line] = {}
    for ln in lines:
        if (ln.role == BODY and (ln.bold or ln.size > body + 1.0)
                and not _in_margin(ln, page_heights)):
            titles.setdefault(_furniture_key(ln.text), ln)
            worded.setdefault(_title_words(ln.text), ln)
    heads: dict[str, list[Line]] = defaultdict(list)
    for i in margin:
        ln = lines[i]
        key = _furniture_key(ln.text)
        title = titles.get(key)
        band = _band(ln, page_heights)
        body_first = band in varied
        if title is None and _folio(ln.text, len(page_heights)):  # "18 CHAPTER 2. DOWNLOAD ..."
            key = _title_words(ln.text)
            title = worded.get(key) if len(key) >= _MIN_TITLE_WORDS else None
            body_first = False  # a title's words beside the page's number: no body's line
        if title is None:  # the section's and the sub-section's titles at the two ends
            title = _two_titles(key, titles)
            key, body_first = _TWO_TITLES, False  # no body's line is two titles
        if (ln.role == BODY and band[0] and not body_first and title is not None
                and (ln.size < title.size - 0.5 or title.bold and not ln.bold)):
            heads[key].append(ln)
    confirmed = {_band(ln, page_heights) for found in heads.values()
                 if len({ln.page for ln in found}) >= 2 for ln in found}
    for found in heads.values():  # a short section's one head, where the others stand
        if len({ln.page for ln in found}) >= 2 or all(
                _folio(ln.text, len(page_heights)) and _band(ln, page_heights) in confirmed
                for ln in found):
            for ln in found:
                ln.role = FURNITURE


_TWO_TITLES = "\x00two titles"  # the heads made of two titles, counted together
_FOLIO = re.compile(r"^(\d{1,4})\s+\S|\S\s+(\d{1,4})$")  # a page's number at a head's one end
_FOLIO_EDGE = re.compile(r"^\d{1,4}\s+|\s+\d{1,4}$")  # that number and its space
_NOT_WORDS = re.compile(r"[\W\d_]+")
_MIN_TITLE_WORDS = 8  # characters: a title's words, not one short word that many lines hold


def _folio(text: str, pages: int) -> bool:
    """``text`` begins or ends with a number that can be a page's, no larger than the page
    count: "18 CHAPTER 2. ..." does, a table's "At December 31, 2022 2021" at a page's top
    does not."""
    m = _FOLIO.search(text.strip())
    return m is not None and 1 <= int(m.group(1) or m.group(2)) <= pages


def _title_words(text: str) -> str:
    """A title's words alone: no page number, chapter label, section number, case or
    punctuation.  A book's running heads print "18 CHAPTER 2. DOWNLOAD AND INSTALLATION" and
    "2.5. PACKAGE DEPENDENCIES 19" over the headings "2 Download and Installation" and "2.5/
    Package Dependencies"; their words are the same."""
    text = _FOLIO_EDGE.sub("", text.strip())
    text = _LABEL.sub(" ", text, count=1)
    return " ".join(_NOT_WORDS.sub(" ", text.casefold()).split())


def _two_titles(key: str, titles: dict[str, Line]) -> Line | None:
    """The less prominent of two headings' titles that ``key`` is made of, one after the other
    ("6.2. Restoring the settings" left, "6. Options" right: a header naming the section and
    the sub-section a page is in); None if it is not two titles."""
    words = key.split(" ")
    for k in range(1, len(words)):
        first, second = titles.get(" ".join(words[:k])), titles.get(" ".join(words[k:]))
        if (first is not None and second is not None  # titles in words, not a table's years
                and WORD.search(first.text) and WORD.search(second.text)):
            return min(first, second, key=lambda t: (t.size, t.bold))
    return None


def _varied_bands(lines: Sequence[Line], margin: Sequence[int],
                  page_heights: Sequence[float]) -> set[tuple[bool, int]]:
    """Margin bands whose lines say something else on most pages: more distinct texts (digits
    ignored) than ``HEADER_VARIETY`` of the pages printing a line there.  A running header
    repeats (the book's title, the chapter's over the chapter's pages); the body's first line,
    where the text starts inside the margin, is each page's own."""
    texts: dict[tuple[bool, int], set[str]] = defaultdict(set)
    pages: dict[tuple[bool, int], set[int]] = defaultdict(set)
    for i in margin:
        ln = lines[i]
        top, y = _band(ln, page_heights)
        for d in (-1, 0, 1):
            texts[(top, y + d)].add(_furniture_key(ln.text))
            pages[(top, y + d)].add(ln.page)
    return {b for b, seen in texts.items() if len(seen) > HEADER_VARIETY * len(pages[b])}


HEADER_VARIETY = 0.5
"""A band is a running header's only while it holds at most this many distinct texts per page
printing there: a chapter's header over its pages, a section's over two or three (the dev
manuals' headers: 0.2-0.4 per page), never a new text on most pages as the body's first line
has (Corning's 10-K: 0.8)."""


FLOWING_SHARE = 0.25
"""A flowing footer ends at least this share of the pages: a page-numbered footer ends every
page or every other one (alternating footers), a sentence that happens to end two pages in the
same words ("… page 110.") does not."""


def _mark_flowing_footers(lines: Sequence[Line], page_heights: Sequence[float],
                          body: float) -> None:
    """A footer that flows with the text: the last line of a page, above its bottom margin (the
    margin rules see the rest), holding a number, at most eight words, set no larger than the
    body, whose text (digits ignored) ends a quarter of the pages or more ("2019 FORM 10-K
    49", "50 NIKE, INC.").  HTML printed to PDF (EDGAR's filings) puts the page's footer
    right after its last paragraph, wherever that ends."""
    last: dict[int, int] = {}
    for i, ln in enumerate(lines):
        if ln.page not in last or ln.y1 > lines[last[ln.page]].y1:
            last[ln.page] = i
    ends = [i for i in last.values()
            if lines[i].role == BODY and lines[i].size <= body + 0.5
            and _DIGITS.search(lines[i].text) and len(lines[i].text.split()) <= 8
            and not _in_margin(lines[i], page_heights)]
    pages_by_key: dict[str, set[int]] = defaultdict(set)
    for i in ends:
        pages_by_key[_furniture_key(lines[i].text)].add(lines[i].page)
    least = max(3, math.ceil(FLOWING_SHARE * len(page_heights)))
    for i in ends:
        if len(pages_by_key[_furniture_key(lines[i].text)]) >= least:
            lines[i].role = FURNITURE
    _mark_counting_pages(lines, list(last.values()))


COUNTING_PAGES = 3
"""Pages whose last lines are bare numbers in step with the pages (each page's number minus the
page's place is one constant) before those lines count as page numbers."""


def _mark_counting_pages(lines: Sequence[Line], last: Sequence[int]) -> None:
    """Bare numbers ending pages in step with them (page 142 ends "1", 144 "3", 145 "4") are
    those pages' numbers, however few pages they number: an exhibit bound after a report (a
    plan, an indenture) numbers its own ten pages right under its text, too few for the
    quarter ``_mark_flowing_footers`` asks of a footer.  A figure that happens to end a page
    (a table's last cell) is not in step with two others."""
    steps: dict[int, list[int]] = defaultdict(list)
    for i in last:
        text = lines[i].text.strip()
        if text.isdigit() and len(text) <= 4:
            steps[lines[i].page - int(text)].append(i)
    for found in steps.values():
        if len(found) >= COUNTING_PAGES:
            for i in found:
                if lines[i].role == BODY:
                    lines[i].role = FURNITURE


def _page_edges(lines: Sequence[Line]) -> set[int]:
    """Indices of the two top-most and two bottom-most lines of every page."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(lines):
        by_page[ln.page].append(i)
    out: set[int] = set()
    for idx in by_page.values():
        idx_sorted = sorted(idx, key=lambda i: lines[i].y0)
        out.update(idx_sorted[:2])
        out.update(idx_sorted[-2:])
    return out


def _mark_fixed_lines(lines: Sequence[Line], page_heights: Sequence[float]) -> None:
    """A line printed word for word at one place on half the pages or more (``FIXED_PAGES`` at
    least), just outside the margin bands but within the page's outer ``FIXED_BAND``: a running
    head set lower than most (pdfx's authors at 80-91 pt of an 842 pt page, the top 11 %).
    Its whole block repeats so (a paragraph that merely opens alike on every page does not),
    and the page holds other text (a page's only line is its text, whatever it repeats)."""
    n_pages = len(page_heights)
    if n_pages < FIXED_PAGES:
        return
    at: dict[tuple[str, int, int], list[Line]] = defaultdict(list)
    for ln in lines:
        h = page_heights[ln.page - 1]
        if (ln.role == BODY and not _in_margin(ln, page_heights)
                and (ln.y1 <= h * FIXED_BAND or ln.y0 >= h * (1 - FIXED_BAND))):
            at[(ln.text, round(ln.x0), round(ln.y0))].append(ln)
    fixed = {id(ln) for found in at.values()
             if len({ln.page for ln in found}) >= max(FIXED_PAGES, 0.5 * n_pages)
             for ln in found}
    if not fixed:
        return
    blocks: dict[int, list[Line]] = defaultdict(list)
    others: set[int] = set()  # pages with body text besides
    for ln in lines:
        if ln.role == BODY:
            blocks[ln.block].append(ln)
            if id(ln) not in fixed:
                others.add(ln.page)
    for block in blocks.values():
        if all(id(ln) in fixed for ln in block) and block[0].page in others:
            for ln in block:
                ln.role = FURNITURE


FIXED_BAND = 0.2
"""The page's top and bottom share in which a line at one place on most pages is a running head."""
FIXED_PAGES = 4
"""Pages at least that print a line at one place before it is a running head by that alone."""


def _in_margin(ln: Line, page_heights: Sequence[float]) -> bool:
    h = page_heights[ln.page - 1]
    return ln.y1 <= h * _MARGIN or ln.y0 >= h * (1 - _MARGIN)


def _band(ln: Line, page_heights: Sequence[float]) -> tuple[bool, int]:
    h = page_heights[ln.page - 1]
    top = ln.y1 <= h * _MARGIN
    return top, round((ln.y0 if top else h - ln.y1) / 2.0)


def _furniture_key(text: str) -> str:
    return _DIGITS.sub("#", _SPACES.sub(" ", text.casefold()).strip())
