"""The printed table of contents of a PDF: found, read, and kept out of the text.

Many PDFs lose their outline on the way to the reader (printed and scanned back, "save as PDF"
without bookmarks, a copy from a producer that never wrote one), but keep the table of contents
printed on their first pages.  That page is the author's own statement of the heading tree:
every entry is a heading, its indentation is its level and its page number says where it is.
This module reads it from the page geometry alone, whoever made the file:

- **rows** are assembled per page from the lines' positions (a TOC's page numbers are often
  separate pieces, written before or after their titles; ``toc_rows``);
- a **TOC row** ends in a page reference: a number after dot leaders, or a number set apart at
  the right; a title wrapped over two rows is joined;
- a **navigation page** has mostly such rows; once the body confirms it, its entry rows become
  ``NAV`` and produce no segment (an analyst must not be shown a TOC line as evidence).  A TOC's
  page numbers ascend; a back-of-book index's terms run alphabetically and are words of the
  pages they name.  Rows ending in numbers that nothing confirms (a table by year, a price
  list) stay text;
- the **levels** are the entries' indentation steps, unless the numbering ("2.3.1") says
  otherwise for most numbered entries;
- the **page offset** between printed numbers and PDF pages is voted by the entries whose title
  appears as a line of the body; an entry is then placed on its page by the caller
  (``pdf._place_outline``, the same code that places a real outline).

A table of contents is used only when the body confirms it: enough of its entries are found
on the pages they point to.  Otherwise the headings come from the layout alone.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from hiqa.formats.pdf.lines import (
    BODY,
    FURNITURE,
    NAV,
    Line,
    norm_title,
    numbering_depth,
    section_number,
    set_apart,
    spaced_number,
    strip_numbering,
    title_forms,
)
from hiqa.formats.pdf.toc_rows import (
    MIN_ROWS,
    ROMAN,
    WRAP_ROWS,
    Row,
    aligned_references,
    continued,
    join_wrapped,
    page_rows,
    page_value,
    title_tail,
    wrapped_rows,
)

_LEADER_RUN = re.compile(r"(?:[.\u00b7\u2024\u2027_\u2026]\s*){3,}")

_PAGE_PREFIX = re.compile(r"^(?:\d{1,4}|" + ROMAN + r")(?:,\s*\d{1,4})*\s+")
_NAV_SHARE = 0.5  # ... and they are at least half of its rows
_ASCENDING = 0.75  # a TOC's page numbers ascend between most neighbours; an index's terms do
_FOUND_SHARE = 0.5  # a TOC page is one when half its entries are headings in the body ...
_CONFIRMING = 5  # ... or this many (its other entries may list tables or figures)
_LABEL_WORDS = 3  # a label above a TOC ("Table of Contents") is this short
_MAX_OFFSET = 40  # an index's pages are at most this many PDF pages after their printed numbers
_INDENT_TOL = 3.0  # points: entries whose indents differ by less are on one level
_PART_STEP = 1.0  # points: a part entry is set at least this much larger than the chapters


@dataclass(slots=True)
class TocEntry:
    title: str
    number: int  # printed page number (arabic), or the roman numeral's value
    roman: bool
    x0: float
    size: float
    bold: bool
    run: int = 0  # which TOC (consecutive TOC pages): a PDF may bind several books
    source: int = 0  # the PDF page the entry is printed on
    found: bool = False  # its title is a line of the body on the page it points to (±1)
    page: int = 0  # the PDF page it points to, once the offset is known
    level: int = 1


@dataclass
class Toc:
    entries: list[TocEntry] = field(default_factory=list)  # in printed order, placed
    toc_pages: list[int] = field(default_factory=list)
    index_pages: list[int] = field(default_factory=list)
    offset: int | None = None
    found: int = 0  # entries whose title was found on their page
    unconfirmed_pages: list[int] = field(default_factory=list)  # TOC-like, not confirmed: text
    unconfirmed_entries: int = 0

    @property
    def usable(self) -> bool:
        return bool(self.entries) and self.found >= max(3, _FOUND_SHARE * len(self.entries))

    def outline(self) -> list[tuple[int, str, int]]:
        return [(e.level, e.title, e.page) for e in self.entries if e.page]


def find_toc(lines: Sequence[Line], page_starts: Sequence[int]) -> Toc:
    """Find the printed TOC and index pages; mark their entry lines ``NAV``; read the TOC and
    set each entry's level and PDF page (``Toc.outline()``; the caller places them).

    Nothing is set aside unless the body confirms it: a TOC page when its entries are headings
    on the pages they name, an index page when its terms are words of the pages they name.
    Only the entry rows (with a title's wrapped first row and a short label such as "Contents"
    right above them) become ``NAV``; other text on such a page stays text."""
    toc = Toc()
    raw: list[tuple[int, list[Row]]] = []
    index: list[tuple[int, list[Row]]] = []
    sorted_pages: set[int] = set()  # TOC candidates whose titles run alphabetically too
    last_toc: tuple[int, int] | None = None  # (page, last page number) of the latest TOC page
    tail: list[Row] = []  # rows ending a page that begin a title the next page ends
    for p in range(len(page_starts) - 1):
        page_no = p + 1
        rows = page_rows(lines, page_starts[p], page_starts[p + 1])
        refs = [r for r in rows if r.ref]
        if len(refs) >= MIN_ROWS:
            aligned_references(rows, refs)
            refs = [r for r in rows if r.ref]
        follows = last_toc is not None and last_toc[0] == page_no - 1
        if follows and rows and (joined := continued(tail, rows[0])) is not None:
            rows[0] = joined  # an entry the page break split: its title began on the page before
            refs = [r for r in rows if r.ref]
        # the rows a wrapped title began on are the entries' too (many in a narrow column)
        nav = len(refs) >= MIN_ROWS and len(refs) >= _NAV_SHARE * (len(rows) - sum(
            len(wrapped_rows(rows, k)) for k, r in enumerate(rows) if r.ref))
        if not nav and refs:
            # the TOC's last entries, then the body; or a TOC below a title and an abstract
            rows = _leading_references(rows) if follows else _reference_run(rows)
            refs = [r for r in rows if r.ref]
        if not refs:
            continue
        tail = title_tail(rows)
        rows = _entry_rows(rows)
        _mark(rows, lines, NAV)
        pairs = [r.ref for r in refs if r.ref is not None]
        nums = [page_value(num)[0] for _, num in pairs]
        titles = [norm_title(strip_numbering(title)) for title, _ in pairs]
        rising = _ascending(nums, moves=True, restarts=True) >= _ASCENDING
        alphabetical = _ascending(titles) >= _ASCENDING
        if rising:  # a TOC, or a list whose titles also sort ("Lesson 1", ...): the body decides
            raw.append((page_no, rows))
            last_toc = (page_no, nums[-1])
            if alphabetical:
                sorted_pages.add(page_no)
        elif alphabetical:  # an index, if its terms are on the pages it names
            index.append((page_no, rows))
        else:  # numbers at the ends of rows, neither a TOC nor an index: a table, say
            _mark(rows, lines, BODY)
    entries = _entries(raw)
    if entries:
        _place(entries, lines, page_starts, toc)
    # a TOC page is one when the body confirms its entries; otherwise its rows are text
    # (a page may end the TOC and begin a list of tables, whose entries are captions)
    by_page: dict[int, list[TocEntry]] = defaultdict(list)
    for e in entries:
        by_page[e.source].append(e)
    for page_no, rows in raw:
        listed = by_page.get(page_no, [])
        found = sum(e.found for e in listed)
        if found and found >= min(_CONFIRMING, _FOUND_SHARE * len(listed)):
            toc.toc_pages.append(page_no)
        elif page_no in sorted_pages:  # not a TOC: an index whose numbers happen to rise?
            index.append((page_no, rows))
        else:
            _mark(rows, lines, BODY)
            toc.unconfirmed_pages.append(page_no)
            toc.unconfirmed_entries += len(listed)
    kept = set(toc.toc_pages)
    placed: set[tuple[str, int]] = set()  # a chapter's own mini-TOC repeats the main one
    toc.entries = []
    for e in entries:
        if e.source in kept and (key := (norm_title(e.title), e.page)) not in placed:
            placed.add(key)
            toc.entries.append(e)
    _assign_levels(toc.entries)  # from the confirmed pages' indents only
    toc.found = sum(e.found for e in toc.entries)
    if index:
        _confirm_index(index, lines, page_starts, toc)
    return toc


def _index_pairs(rows: Sequence[Row]) -> list[tuple[str, int]]:
    """(term, printed page) of an index page's rows, terms of three characters or more."""
    pairs = [(_term(r.ref[0]), page_value(r.ref[1])[0]) for r in rows if r.ref is not None]
    return [(t, n) for t, n in pairs if len(t) >= 3]


def _term(title: str) -> str:
    """The term an index row's page number belongs to: the last one on the row (the rows of
    two columns are read as one, "aes . . . 37 base64 . . . 9"), up to a comma."""
    chunks = [c.strip() for c in _LEADER_RUN.split(norm_title(title)) if c.strip()]
    last = _PAGE_PREFIX.sub("", chunks[-1]) if chunks else ""
    return last.split(",")[0].strip()[:40]


def _entry_rows(rows: Sequence[Row]) -> list[Row]:
    """The rows a TOC or index page sets aside: its reference rows, the rows a wrapped title
    starts on, and a short label ("Contents", "Index") right above the first of them."""
    keep = [r.ref is not None for r in rows]
    for k, r in enumerate(rows):
        if r.ref is not None:
            for j in wrapped_rows(rows, k):
                keep[j] = True
    first = next((k for k, r in enumerate(rows) if r.ref is not None), None)
    if first and not keep[first - 1] and len(rows[first - 1].text.split()) <= _LABEL_WORDS:
        keep[first - 1] = True
    return [r for r, kept in zip(rows, keep, strict=True) if kept]


def _confirm_index(index: Sequence[tuple[int, list[Row]]], lines: Sequence[Line],
                   page_starts: Sequence[int], toc: Toc) -> None:
    """Index candidates stay set aside when half their terms are words of the page they name
    (the printed-to-PDF offset: the TOC's, else the best over a sample); else they are text."""
    n_pages = len(page_starts) - 1
    texts = [" ".join(lines[i].text for i in range(page_starts[p], page_starts[p + 1])
                      if lines[i].role != NAV).casefold() for p in range(n_pages)]
    pairs = [pair for _, rows in sorted(index) for pair in _index_pairs(rows)]

    def hits(offset: int, sample: Sequence[tuple[str, int]]) -> int:
        return sum(1 for t, n in sample
                   if any(0 <= n + offset + d - 1 < n_pages and t in texts[n + offset + d - 1]
                          for d in (-1, 0, 1)))

    sample = pairs[:: max(1, len(pairs) // 30)]
    offsets = [toc.offset] if toc.offset is not None else range(_MAX_OFFSET)
    best = max(offsets, key=lambda o: hits(o, sample), default=0)
    for page_no, rows in index:
        own = _index_pairs(rows)
        if own and hits(best, own) >= _FOUND_SHARE * len(own):
            toc.index_pages.append(page_no)
        else:
            _mark(rows, lines, BODY)


def _mark(rows: Sequence[Row], lines: Sequence[Line], role: int) -> None:
    for r in rows:
        for i in r.idx:
            lines[i].role = role


def page_ranges(pages: Sequence[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3-5, 9"``."""
    out: list[str] = []
    for p in sorted(pages):
        if out and p == int(out[-1].rsplit("-", 1)[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{p}"
        else:
            out.append(str(p))
    return ", ".join(out)


def _leading_references(rows: Sequence[Row]) -> list[Row]:
    """The rows from the top of a page that still belong to the TOC ended on the page before:
    page-reference rows and the rows their titles wrap from (the row above one, or rows set
    alike over it: ``wrapped_rows``), up to the first other row."""
    out: list[Row] = []
    for k, r in enumerate(rows):
        if r.ref is None and not (k + 1 < len(rows) and rows[k + 1].ref is not None) and not any(
                rows[j].ref is not None and k in wrapped_rows(rows, j)
                for j in range(k + 2, min(len(rows), k + WRAP_ROWS))):
            break
        out.append(r)
    while out and out[-1].ref is None:
        out.pop()
    return out


def _reference_run(rows: Sequence[Row]) -> list[Row]:
    """The longest run of page-reference rows (with the rows their titles wrap from) on a page
    that also holds other text, when it has ``MIN_ROWS`` of them or more under a label set as
    a heading ("Contents", larger or bolder than the rows): an article prints its TOC below
    its title and abstract, its label set apart by size, weight or a face of its own (small
    capitals, italics: "Contents" in the rows' size and weight).  A table's rows ending in
    numbers have no such label."""
    def label(row: Row, first: Row) -> bool:
        return (row.ref is None and len(row.text.split()) <= _LABEL_WORDS
                and sum(ch.isalpha() for ch in row.text) >= 3
                and (row.size > first.size + 0.5 or row.bold > first.bold
                     or bool(row.face) and bool(first.face) and row.face != first.face))

    best: list[Row] = []
    k = 0
    while k < len(rows):
        run = _leading_references(rows[k:])
        # past a run of entries; one row on where the run opens with rows that may begin a
        # title (the abstract's last line over "Contents" and the first entry)
        step = len(run) if run and run[0].ref is not None else 1
        above = rows[k - 1] if k else None
        if len(run) >= 2 and label(run[0], run[1]):  # the label, read as a title's first row
            above, run = run[0], run[1:]
        if run and above is not None and len(run) > len(best) and label(above, run[0]):
            best = run
        k += step
    return best if sum(r.ref is not None for r in best) >= MIN_ROWS else []


def _ascending(values: Sequence[Any], *, moves: bool = False, restarts: bool = False) -> float:
    """Share of neighbours in ascending order: a TOC's page numbers ascend, an index's titles.
    ``moves``: of the neighbours that differ only (an index column names one page for many
    related terms in a row, and those equal neighbours made its numbers look ascending).
    ``restarts``: a fall back to page 1 is no descent (a TOC of several documents bound
    together, each numbering its pages from 1)."""
    pairs = [(a, b) for a, b in pairwise(values) if (not moves or a != b)
             and not (restarts and b == 1)]
    return sum(b >= a for a, b in pairs) / max(1, len(pairs))


def _entries(pages: Sequence[tuple[int, list[Row]]]) -> list[TocEntry]:
    """TOC entries in printed order; a title wrapped onto the next row is joined, and an
    entry printed twice in one TOC is kept once (a set of books repeats "1. Introduction,
    page 1" in each book's TOC: those are different headings)."""
    out: list[TocEntry] = []
    seen: set[tuple[int, str, int]] = set()
    run, prev_page = 0, None
    last: dict[bool, int] = {}  # the run's last page number, arabic and roman
    for page_no, rows in pages:
        if prev_page is not None and page_no - prev_page > 2:
            run, last = run + 1, {}
        prev_page = page_no
        for k, r in enumerate(rows):
            if r.ref is None:
                continue
            title = r.ref[0]
            x0, size, bold = r.x0, r.size, r.bold
            if wrapped := wrapped_rows(rows, k):  # a title wrapped over rows: joined
                title = join_wrapped([*(rows[j].text for j in wrapped), title])
                first = rows[wrapped[0]]
                x0, size, bold = first.x0, first.size, first.bold
            if not _worded(strip_numbering(title)):  # a figure's labels ("1 2 3", "B4")
                continue
            number, roman = page_value(r.ref[1])
            if number == 1 and last.get(roman, 1) > 1:  # numbering starts again: another document
                run, last = run + 1, {}
            last[roman] = number
            key = (run, norm_title(title), number)
            if key in seen:
                continue
            seen.add(key)
            out.append(TocEntry(spaced_number(title), number, roman, x0, size, bold, run,
                                page_no))
    return out


_DIAGRAM_LABEL = re.compile(r"[^\W\d_]?\d{1,2}")


def _worded(title: str) -> bool:
    """Whether a title says something: a token besides the one- or two-digit numbers, a letter
    before one or not, that are all a diagram's labels hold ("1 2 3", "B4", "C2 1 2") when its
    rows end in numbers.  A one-letter section ("5.29 x"), a year ("9.1.1 2003") or a
    version's date ("[2004/07/18 v0.5]") does."""
    if not norm_title(title):
        return False
    return any(not _DIAGRAM_LABEL.fullmatch(t) for t in title.split())


def _assign_levels(entries: list[TocEntry]) -> None:
    """Level = the rank of the entry's indent among the TOC's indents; when the numbering
    disagrees with the indents for most numbered entries, the numbering decides."""
    if not entries:
        return
    # facing pages (a two-sided book) shift the whole column between odd and even pages:
    # indents are then measured from the column of entries on pages of the same parity
    left = {parity: min((e.x0 for e in entries if e.source % 2 == parity), default=0.0)
            for parity in (0, 1)}
    sides = {e.source % 2 for e in entries}
    if len(sides) == 2 and abs(left[0] - left[1]) > _INDENT_TOL:
        for e in entries:
            e.x0 -= left[e.source % 2]
    indents: list[float] = []
    for x in sorted(e.x0 for e in entries):
        if not indents or x - indents[-1] > _INDENT_TOL:
            indents.append(x)
    for e in entries:
        e.level = 1 + max(k for k, x in enumerate(indents) if e.x0 >= x - _INDENT_TOL)
    _hung_marks(entries, indents)
    _parts_above(entries)
    depths = [(e, numbering_depth(e.title)) for e in entries]
    numbered = [(e, d) for e, d in depths if d is not None]
    if len(numbered) < 0.5 * len(entries):
        return
    shift = Counter(e.level - d for e, d in numbered).most_common(1)[0][0]
    agree = sum(e.level - d == shift for e, d in numbered)
    if agree >= 0.8 * len(numbered):
        return
    for e, d in numbered:
        e.level = d


def _hung_marks(entries: list[TocEntry], indents: Sequence[float]) -> None:
    """An entry whose mark hangs in the margin ("⋆Solution 29" among "Solution 28" rows)
    starts a little left of its siblings, at an indent of its own: an indent that one entry
    alone takes, among ``_HUNG_AMONG`` or more, within an em or two left of the next one and
    set like the entries there, is that next one's.  (Right-aligned part numbers put "II"
    left of "I": both larger than the chapters under them, they go together.)"""
    if len(entries) < _HUNG_AMONG:
        return
    by_level: dict[int, list[TocEntry]] = defaultdict(list)
    for e in entries:
        by_level[e.level].append(e)
    for e in entries:
        k = e.level  # 1-based: indents[k] is the next indent to the right
        if len(by_level[k]) != 1 or k >= len(indents) or indents[k] - e.x0 > 2 * e.size:
            continue
        there = by_level[k + 1]
        if (abs(statistics.median(n.size for n in there) - e.size) <= 0.5
                and sum(n.bold == e.bold for n in there) * 2 > len(there)):
            e.level = k + 1
    levels = sorted({e.level for e in entries})
    for e in entries:
        e.level = levels.index(e.level) + 1


_HUNG_AMONG = 10
"""Entries in a TOC before an indent one of them alone takes can be a hung mark's."""


def _parts_above(entries: list[TocEntry]) -> None:
    """Entries at the first indent set larger than most there (LaTeX's and beamer's parts,
    printed at the chapters' indent) are a level above the others: every other entry goes one
    level down.  Parts take turns with the chapters they hold; larger entries in one run are a
    list of their own (octave's short contents before its full TOC), not parts."""
    first = [e for e in entries if e.level == 1]
    bucket = Counter(round(e.size * 2) / 2 for e in first).most_common(1)[0][0]
    # the usual size as set, not its half-point bucket: 10.9 pt chapters fall in the 11 pt
    # bucket, and 12 pt parts (11.96 as read) would not be a point above that
    usual = statistics.median(e.size for e in first if round(e.size * 2) / 2 == bucket)
    parts = {id(e) for e in first if e.size >= usual + _PART_STEP}
    if not parts or len(parts) * 2 >= len(first):
        return
    in_a_row = sum(id(a) in parts and id(b) in parts for a, b in pairwise(first))
    if in_a_row * 2 > len(parts):
        return
    for e in entries:
        if id(e) not in parts:
            e.level += 1


def _place(entries: list[TocEntry], lines: Sequence[Line], page_starts: Sequence[int],
           toc: Toc) -> None:
    """Vote the page offset (per numbering style) from entries found in the body, then set
    each entry's PDF page and whether its title is found there."""
    n_pages = len(page_starts) - 1
    where: dict[str, list[int]] = defaultdict(list)  # title key -> pages holding it as a line
    for p in range(n_pages):
        body = [lines[i] for i in range(page_starts[p], page_starts[p + 1])
                if lines[i].role == BODY]
        for ln in body:
            for k in _keys(ln.text):
                where[k].append(p + 1)
        # a heading set large wraps ("Coupling pressure" / "operation 4"): up to
        # ``WRAP_ROWS`` lines set alike, one right below the other
        for start in range(len(body)):
            run = [body[start]]
            for ln in body[start + 1:start + WRAP_ROWS]:
                last = run[-1]
                if not (abs(last.size - ln.size) <= 0.5 and last.bold == ln.bold
                        and 0 <= ln.y0 - last.y1 < last.size):
                    break
                run.append(ln)
                for k in _keys(join_wrapped([x.text for x in run])):
                    where[k].append(p + 1)
    offsets: dict[tuple[int, bool], Counter[int]] = defaultdict(Counter)
    for e in entries:
        pages = {pg for k in _keys(e.title) for pg in where.get(k, ())}
        for pg in pages:
            offsets[e.run, e.roman][pg - e.number] += 1
            offsets[-1, e.roman][pg - e.number] += 1
    for e in entries:
        votes = offsets.get((e.run, e.roman)) or offsets.get((-1, e.roman))
        if not votes:
            continue
        off = votes.most_common(1)[0][0]
        page = e.number + off
        if not 1 <= page <= n_pages:
            continue
        e.page = page
        keys = _keys(e.title)
        e.found = any(pg in range(page - 1, page + 2) for k in keys for pg in where.get(k, ()))
    arabic = offsets.get((-1, False))
    toc.offset = arabic.most_common(1)[0][0] if arabic else None


def _keys(text: str) -> set[str]:
    """A title's forms to find it by (``title_forms``), three characters or more."""
    return {k for k in title_forms(text) if len(k) >= 3}


def title_elsewhere(title: str, lines: Sequence[Line], start: int, stop: int, body: float
                    ) -> tuple[int, int] | None:
    """Where a confirmed TOC's numbered entry stands when no line in ``start:stop`` reads like
    its title: printed word for word in a page's margin (``_in_margin``), or a heading with its
    number and other words (``_by_number``); the first line and the last that the heading
    takes, or None.  A reworded heading takes none (``(i, i - 1)``): the entry's title is the
    heading, as the producer's own outline has it, and the page's words stay the section's
    first text, where a search finds them."""
    if numbering_depth(title) is None:
        return None
    return _in_margin(title, lines, start, stop) or _by_number(title, lines, start, stop, body)


def _in_margin(title: str, lines: Sequence[Line], start: int, stop: int
               ) -> tuple[int, int] | None:
    """The entry printed word for word in a page's top or bottom margin.  A title that recurs
    under other numbers at the top of pages ("4.4.2 Constructor & Destructor Documentation",
    "4.6.2 ..." in a Doxygen manual) was taken for a running header; the TOC says it is a
    heading."""
    key = norm_title(title)
    for i in range(start, stop):
        if lines[i].role == FURNITURE and norm_title(lines[i].text) == key:
            return i, i
    return None


def _by_number(title: str, lines: Sequence[Line], start: int, stop: int, body: float
               ) -> tuple[int, int] | None:
    """A heading (bold or larger than the text, no code) that opens with the entry's section
    number, in other words: LaTeX's short contents title ("4.2 Bewerbungsmappe" for the page's
    "4.2 Erstellung einer Bewerbungsmappe"), a title the author reworded."""
    number = section_number(title)
    if not number:
        return None
    depth = numbering_depth(title)
    for i in range(start, stop):
        ln = lines[i]
        if (ln.role == BODY and not ln.code and set_apart(ln, body)
                and section_number(ln.text) == number
                and numbering_depth(ln.text) == depth
                and _worded(strip_numbering(ln.text))):
            return i, i - 1
    return None

