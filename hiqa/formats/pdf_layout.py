"""Layout analysis for PDF text: styled lines, running headers/footers and headings.

``hiqa.formats.pdf`` reads every page once and keeps only compact ``Line`` records (text,
box, dominant font size and weight); everything here works on those records for the whole
document at once.  That is what makes heading levels consistent: one style -> level table is
learned per document, so a level decided on page 10 is the level used on page 90.

Level rule (documents without an outline):
0. the title of a title page (a centred block opening the page: a book, a part) -> 1;
1. numbering depth when the title is numbered (``3`` -> 1, ``3.2`` -> 2, ``A.2.1`` -> 3,
   ``Chapter 4`` / ``Appendix B`` -> 1), shifted per numbering run (a set of books numbering
   each from 1) so each run's styles sit where the same styles sit in the longest run, and
   that run one level down under parts or a more prominent unnumbered title before it;
2. otherwise the level the document's numbered headings of the same font style have;
3. otherwise the style's rank among heading styles (larger, then bolder = shallower);
an unnumbered style never used directly under the level above it moves up (no level is
skipped unless the numbering says so).

Definition terms (``find_terms``) come from the same records: a short bold or monospace tag
with its description indented deeper.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

# Line roles: what a line became once the document-wide passes ran.
BODY, FURNITURE, HEADING, TABLE, CAPTION, NAV = range(6)  # NAV: a TOC or index page's line

MAX_LEVEL = 6
_LARGE_RATIO = 1.08  # a heading font is at least 8 % larger than the body font
_MAX_HEADING_LINES = 3  # a longer run of large text is a paragraph, not a heading
_MARGIN = 0.10  # running headers/footers live in the top/bottom 10 % of the page
_COVER_MAX_BODY_CHARS = 400

_BOLD_FONT = re.compile(r"bold|black|heavy|demi", re.IGNORECASE)
_MONO_FONT = re.compile(r"mono|courier|consol|cmtt|code", re.IGNORECASE)
_ITALIC_FONT = re.compile(r"italic|oblique|slant|cmsl|cmti", re.IGNORECASE)
_FLAG_ITALIC = 2
_FLAG_MONO = 8
_FLAG_BOLD = 16
_TAB_GAP = 0.5  # em; a wider gap between spans sets a term apart from its description
_TAB_STOP = 1.0  # em; a roman tag is set apart from its description by a tab, not a wide space
_TAG_PLAIN_SHARE = 0.25  # a term tag ("-o offset") is bold/monospace, with italic arguments

_LABEL_WORDS = r"chapter|part|appendix|annex|section|kapitel|anhang|chapitre|annexe"
_LABEL = re.compile(
    rf"^(?:{_LABEL_WORDS})\s+(?P<n>\d{{1,3}}(?:\.\d{{1,3}})*|[IVXLC]{{1,6}}|[A-Z])\b[.:]?",
    re.IGNORECASE,
)
_DOTTED = re.compile(r"^(?P<n>(?:\d{1,3}|[A-Z])(?:\.\d{1,3})+)\.?(?=\s|$)")
_PLAIN = re.compile(r"^(?P<n>\d{1,2})\.?(?=\s+\S)")
_ROMAN = re.compile(r"^(?P<n>[IVXLC]{1,6})\.(?=\s+\S)")
_LABEL_ONLY = re.compile(
    rf"^(?:(?:{_LABEL_WORDS})\s+(?:\d{{1,3}}(?:\.\d{{1,3}})*|[IVXLC]{{1,6}}|[A-Z])"
    r"|\d{1,3}(?:\.\d{1,3})*|[IVXLC]{1,6})[.:]?$",
    re.IGNORECASE,
)
_LEADER = re.compile(r"(?:\.\s?){4,}\s*\S{0,12}\s*$|\u2026\s*\S{0,12}\s*$|(?:_\s?){4,}")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+|p\.\s*|-\s*)?(?:\d{1,5}|[ivxlcdm]{1,8})(?:\s*(?:of|/)\s*\d{1,5})?(?:\s*-)?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_ELEMENT = re.compile(r"<(/?[A-Za-z][\w:.-]*(?:\s[^<>]*)?)>")  # <dir prefix="default">
_CENTRED = 0.04  # centred: indents from the text column (or page edges) differ by < 4 % of width
_SPACES = re.compile(r"\s+")
_WIDE_GAP = re.compile(r"\s{3,}")


@dataclass(slots=True)
class Line:
    """One visual line of text: pieces on the same baseline within a block are merged."""

    page: int  # 1-based
    block: int  # block id, unique within the document
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float  # dominant font size (weighted by characters)
    bold: bool
    mono: bool
    code: bool  # typewriter mixed with italic: a signature or a code fragment, not a title
    upright: bool
    role: int = BODY
    tag: int = 0  # length of a leading bold/monospace piece set apart by a gap (a term), or 0
    rest_x: float = 0.0  # where the text after that piece starts
    head: int = 0  # length of the leading piece set apart by a gap, whatever its font, or 0
    head_gap: float = 0.0  # width of that gap
    tail_gap: float = 0.0  # gap before the last piece when that piece is a short word or number

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 1.0)


@dataclass(frozen=True, slots=True)
class FoundHeading:
    """A heading located in the line stream: it is emitted before line ``anchor``."""

    anchor: int
    level: int
    title: str
    page: int


# ---------------------------------------------------------------------------------------------
# Lines from one page


def page_lines(page_dict: dict[str, Any], page_no: int, block_base: int) -> list[Line]:
    """Visual lines of one ``page.get_text("dict")`` result, in content-stream order."""
    out: list[Line] = []
    for b_idx, block in enumerate(page_dict.get("blocks", ())):
        if block.get("type", 0) != 0:
            continue
        # [x0, y0, x1, y1, text, chars, size_w, bold_n, mono_n, italic_n, upright,
        #  first piece's text if it reads as a term tag else "", x0 of the second piece,
        #  [first span strong, plain letters, letters] of the whole row, first piece's text,
        #  width of the gap after it]
        acc: list[list[Any]] = []
        for line in block.get("lines", ()):
            spans = line.get("spans", ())
            text = "".join(s.get("text", "") for s in spans)
            if not text.strip():
                continue
            chars = size_w = bold_n = mono_n = italic_n = 0.0
            plain_letters = letters = all_plain = all_letters = 0
            lead: bool | None = None  # is the first non-blank span bold or monospace?
            tag_text, gap_x, gap = "", None, 0.0  # spans before a tab-like gap: a term on its row
            tail_gap = 0.0
            prev_x1 = None
            for s in spans:
                t = s.get("text", "")
                n = len(t) - t.count(" ")
                if n <= 0:
                    if gap_x is None:
                        tag_text += t
                    continue
                size = float(s.get("size", 0.0))
                sx0, sx1 = s["bbox"][0], s["bbox"][2]
                if gap_x is None and prev_x1 is not None and sx0 - prev_x1 >= _TAB_GAP * size:
                    gap_x, gap = sx0, sx0 - prev_x1
                tail_gap = sx0 - prev_x1 if prev_x1 is not None and len(t.strip()) <= 7 else 0.0
                prev_x1 = sx1
                if gap_x is None:
                    tag_text += t
                font = s.get("font", "")
                flags = s.get("flags", 0)
                chars += n
                size_w += n * size
                strong = False
                if flags & _FLAG_BOLD or _BOLD_FONT.search(font):
                    bold_n += n
                    strong = True
                if flags & _FLAG_MONO or _MONO_FONT.search(font):
                    mono_n += n
                    strong = True
                italic = bool(flags & _FLAG_ITALIC or _ITALIC_FONT.search(font))
                if italic:
                    italic_n += n
                if lead is None:
                    lead = strong
                if lead:  # only a row opening in bold or monospace can hold a term tag
                    n_letters = sum(ch.isalpha() for ch in t)
                    all_letters += n_letters
                    if not strong and not italic:
                        all_plain += n_letters
                    if gap_x is None:
                        letters += n_letters
                        if not strong and not italic:
                            plain_letters += n_letters
            tagish = bool(lead) and plain_letters <= _TAG_PLAIN_SHARE * letters
            x0, y0, x1, y1 = line["bbox"]
            dx, dy = line.get("dir", (1.0, 0.0))
            upright = abs(dy) < 0.05 and dx > 0
            prev = acc[-1] if acc else None
            whole = [bool(lead), all_plain, all_letters]
            if prev is not None and upright and prev[10] and _same_row(prev, y0, y1, x0):
                if not lead:  # its letters were not counted: all of them are plain
                    all_plain = all_letters = sum(ch.isalpha() for ch in text)
                prev[13][1] += all_plain
                prev[13][2] += all_letters
                if prev[12] is None:
                    prev[12], prev[14], prev[15] = x0, prev[4], x0 - prev[2]
                if len(spans) == 1 and len(text.strip()) <= 7:
                    tail_gap = x0 - prev[2]
                prev[16] = tail_gap
                prev[2] = max(prev[2], x1)
                prev[1], prev[3] = min(prev[1], y0), max(prev[3], y1)
                prev[4] = prev[4].rstrip() + " " + text.lstrip()
                prev[5] += chars
                prev[6] += size_w
                prev[7] += bold_n
                prev[8] += mono_n
                prev[9] += italic_n
            else:
                acc.append(
                    [x0, y0, x1, y1, text, chars, size_w, bold_n, mono_n, italic_n, upright]
                    + [(tag_text or text) if tagish else "", gap_x, whole]
                    + [tag_text if gap_x is not None else None, gap, tail_gap]
                )
        for row in acc:
            x0, y0, x1, y1, text, chars, size_w, bold_n, mono_n, italic_n, upright = row[:11]
            chars = chars or 1.0
            mono = mono_n >= 0.6 * chars
            clean = _clean(text, keep_spaces=mono)
            lead_strong, plain, letters_n = row[13]
            if lead_strong and plain <= _TAG_PLAIN_SHARE * letters_n:
                tag = clean  # the whole row reads as a tag ("new-session [-d] [-c dir]")
            else:
                tag = _clean(row[11], keep_spaces=mono) if row[11] else ""
            head = _clean(row[14], keep_spaces=mono) if row[14] else ""
            out.append(
                Line(
                    page=page_no,
                    block=block_base + b_idx,
                    x0=x0,
                    y0=y0,
                    x1=x1,
                    y1=y1,
                    text=clean,
                    size=size_w / chars,
                    bold=bold_n >= 0.6 * chars,
                    mono=mono,
                    code=mono or (mono_n >= 0.1 * chars and mono_n + italic_n >= 0.5 * chars),
                    upright=upright,
                    tag=len(tag) if tag and clean.startswith(tag) else 0,
                    rest_x=x1 if row[12] is None else row[12],
                    head=len(head) if head and clean.startswith(head) else 0,
                    head_gap=row[15],
                    tail_gap=row[16],
                )
            )
    return out


def _same_row(prev: list[Any], y0: float, y1: float, x0: float) -> bool:
    h = min(prev[3] - prev[1], y1 - y0)
    centre_gap = abs((prev[1] + prev[3]) / 2 - (y0 + y1) / 2)
    return centre_gap < 0.5 * max(h, 1.0) and x0 >= prev[2] - 2.0


def _clean(text: str, keep_spaces: bool) -> str:
    text = text.replace("\u00ad", "").replace("\u00a0", " ").replace("\t", " ")
    if keep_spaces:
        return text.rstrip()
    return _SPACES.sub(" ", text).strip()


def margin_pieces(page_dict: dict[str, Any], height: float) -> list[str]:
    """Texts in the top and bottom margins of one page, split where a running header or
    footer leaves a wide gap ("LN(1)   User Commands   LN(1)" -> three pieces)."""
    out: list[str] = []
    for block in page_dict.get("blocks", ()):
        for line in block.get("lines", ()):
            y0, y1 = line["bbox"][1], line["bbox"][3]
            if not (y1 <= height * _MARGIN or y0 >= height * (1 - _MARGIN)):
                continue
            text = "".join(s.get("text", "") for s in line.get("spans", ()))
            out.extend(p for p in (_clean(t, False) for t in _WIDE_GAP.split(text)) if p)
    return out


# ---------------------------------------------------------------------------------------------
# Document-wide statistics


def body_size(lines: Sequence[Line]) -> float:
    """The font size that carries most characters (half-point buckets)."""
    weight: Counter[float] = Counter()
    for ln in lines:
        if ln.role == BODY:
            weight[_bucket(ln.size)] += len(ln.text)
    return weight.most_common(1)[0][0] if weight else 10.0


def _bucket(size: float) -> float:
    return round(size * 2) / 2


def mark_furniture(
    lines: Sequence[Line], page_heights: Sequence[float], body: float, running: str = ""
) -> None:
    """Mark running headers, footers and page numbers as ``FURNITURE``.

    A line in the top or bottom margin is furniture when it is a page number, when it holds
    the document's running title (``running``, found by ``hiqa.formats.pdf_title``; this is
    what catches the header of a one-page document), when a one-page document's edge line ends
    in its page number (its footer: "frobtools 1.0    February 2023    1"), or when the same
    text (digits ignored: "Chapter 3: Foo  41") recurs in the margins of several pages; any
    other body-size margin line on the same band as such recurring lines (a header that names
    a two-page chapter) is furniture too.
    """
    n_pages = len(page_heights)
    if not lines:
        return
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
    repeated = {k for k, pages in pages_by_key.items() if len(pages) >= threshold}
    bands: dict[tuple[bool, int], set[int]] = defaultdict(set)
    for i in margin:
        ln = lines[i]
        if ln.role == BODY and _furniture_key(ln.text) in repeated:
            ln.role = FURNITURE
            bands[_band(ln, page_heights)].add(ln.page)
    strong = {b for b, pages in bands.items() if len(pages) >= threshold}
    if not strong:
        return
    for i in margin:
        ln = lines[i]
        if ln.role == BODY and ln.size <= body + 1.0:
            top, y = _band(ln, page_heights)
            if any((top, y + d) in strong for d in (-1, 0, 1)):
                ln.role = FURNITURE


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


def _in_margin(ln: Line, page_heights: Sequence[float]) -> bool:
    h = page_heights[ln.page - 1]
    return ln.y1 <= h * _MARGIN or ln.y0 >= h * (1 - _MARGIN)


def _band(ln: Line, page_heights: Sequence[float]) -> tuple[bool, int]:
    h = page_heights[ln.page - 1]
    top = ln.y1 <= h * _MARGIN
    return top, round((ln.y0 if top else h - ln.y1) / 2.0)


def _furniture_key(text: str) -> str:
    return _DIGITS.sub("#", _SPACES.sub(" ", text.casefold()).strip())


# ---------------------------------------------------------------------------------------------
# Numbering


def numbering_depth(title: str) -> int | None:
    """Depth implied by a leading section number, or None for an unnumbered title."""
    m = _LABEL.match(title)
    if m:
        return min(m.group("n").count(".") + 1, MAX_LEVEL)
    m = _DOTTED.match(title)
    if m:
        return min(m.group("n").count(".") + 1, MAX_LEVEL)
    if _PLAIN.match(title) or _ROMAN.match(title):
        return 1
    return None


def strip_numbering(title: str) -> str:
    """The title without its leading label/number ("3.2 Foo" -> "Foo")."""
    for rx in (_LABEL, _DOTTED, _PLAIN, _ROMAN):
        m = rx.match(title)
        if m:
            rest = title[m.end() :].lstrip(" .:-\u2013\u2014")
            return rest or title
    return title


def norm_title(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold()
    t = t.translate(_QUOTES)
    t = _SPACES.sub(" ", t).strip()
    return t.rstrip(" .:;,")


_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "`": "'"})


# ---------------------------------------------------------------------------------------------
# Heading detection from layout


@dataclass(slots=True)
class _Candidate:
    first: int
    last: int
    title: str
    style: tuple[float, bool]
    depth: int | None
    large: bool
    part: bool = False  # the title of a title page (a book, a part): above every chapter


def detect_headings(
    lines: Sequence[Line], body: float, page_widths: Sequence[float] = ()
) -> list[FoundHeading]:
    """Headings of a document without an outline; marks their lines as ``HEADING``."""
    cands = _layout_candidates(lines, body, page_widths)
    return _found(lines, list(zip(cands, _levels(cands), strict=True)))


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
            numbers.add(_number_key(h.title))
    max_depth = max(by_depth, default=None)
    extra: list[tuple[_Candidate, int]] = []
    layout = _layout_candidates(lines, body, page_widths)
    parts = [c for c in layout if c.part]
    titles = {norm_title(c.title) for c in parts}
    if books >= 2 and len(parts) >= 2 and len(titles) == len(parts):
        # a set of books, each with its own TOC and title page: the books are level 1
        placed = [replace(h, level=min(h.level + 1, MAX_LEVEL)) for h in placed]
        extra += [(c, 1) for c in parts]
        by_depth = {d: Counter({lv + 1: n for lv, n in cnt.items()}) for d, cnt in by_depth.items()}
    if max_depth is None:
        return sorted([*placed, *_found(lines, extra)], key=lambda h: h.anchor)
    level_of_max = _dominant(by_depth[max_depth])
    for c in layout:
        if c.depth is None or c.depth <= max_depth or c.part:
            continue
        key = _number_key(c.title)
        if any(k in numbers for k in _ancestors(key)):
            numbers.add(key)
            extra.append((c, level_of_max + c.depth - max_depth))
    return sorted([*placed, *_found(lines, extra)], key=lambda h: h.anchor)


def _ancestors(key: str) -> list[str]:
    parts = key.split(".")
    return [".".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]


def _found(lines: Sequence[Line], cands: Sequence[tuple[_Candidate, int]]) -> list[FoundHeading]:
    found = []
    for c, level in cands:
        for i in range(c.first, c.last + 1):
            lines[i].role = HEADING
        found.append(
            FoundHeading(
                c.first, max(1, min(level, MAX_LEVEL)), _heading_title(c.title), lines[c.first].page
            )
        )
    return found


def _layout_candidates(
    lines: Sequence[Line], body: float, page_widths: Sequence[float] = ()
) -> list[_Candidate]:
    """Heading candidates from the layout, in document order; no line is marked."""
    cands = [c for c in _candidates(lines, body) if _acceptable(c, lines)]
    cands = _drop_term_tags(cands, lines)
    cands = _add_plain_numbered(cands, lines, body)
    cands = _drop_repeated_labels(cands)
    cands = _keep_cover_title_only(cands, lines)
    if page_widths:
        cands = _title_blocks(cands, lines, page_widths)
    return cands


def _heading_title(text: str) -> str:
    """A heading's title as Markdown can show it: element names lose their angle brackets
    (``<dir prefix="x">`` -> ``dir prefix="x"``), which a Markdown renderer would take for an
    HTML tag and hide, as the producers' own bookmarks do."""
    return _SPACES.sub(" ", _ELEMENT.sub(r"\1", text)).strip() or text


def _styled(ln: Line, body: float) -> bool:
    """Set like a heading: larger than the body, or bold at about its size.  Monospace is
    code, unless bold: a heading that names a module or function is often set all in a bold
    code face (``django.contrib.admin`` in HTML-to-PDF release notes), a listing seldom."""
    if ln.role != BODY or not ln.upright:
        return False
    if ln.code and not ln.bold:  # code, unless a larger numbered line ("3.4.1 mp_run(MP mp)")
        return ln.size >= body * _LARGE_RATIO and bool(_DOTTED.match(ln.text))
    return ln.size >= body * _LARGE_RATIO or (ln.bold and ln.size >= body - 0.6)


def _style(ln: Line) -> tuple[float, bool]:
    return _bucket(ln.size), ln.bold


def _candidates(lines: Sequence[Line], body: float) -> Iterable[_Candidate]:
    """Runs of consecutive heading-styled lines merged into one title each."""
    column = _column(lines)
    i, n = 0, len(lines)
    while i < n:
        ln = lines[i]
        if not _styled(ln, body):
            i += 1
            continue
        last = i
        parts = [ln.text]
        label_only = bool(_LABEL_ONLY.match(ln.text))
        while last + 1 < n:
            nxt, cur = lines[last + 1], lines[last]
            if nxt.page != cur.page or not _styled(nxt, body):
                break
            gap = nxt.y0 - cur.y1
            if label_only and len(parts) == 1:
                if not (-0.5 * cur.height < gap < 3.0 * cur.height):
                    break
            elif (
                _style(nxt) != _style(cur)
                or not (-0.5 * cur.height < gap < 0.8 * cur.height)
                or numbering_depth(nxt.text) is not None
                or _LABEL_ONLY.match(nxt.text)
                or _starts_apart(ln, cur, nxt, column)
            ):
                break
            last += 1
            parts.append(nxt.text)
            if last - i + 1 > _MAX_HEADING_LINES:
                break
        if last - i + 1 > _MAX_HEADING_LINES:
            # a paragraph set in a large font: skip the whole run
            while (
                last + 1 < n
                and _styled(lines[last + 1], body)
                and (_style(lines[last + 1]) == _style(lines[last]))
            ):
                last += 1
            i = last + 1
            continue
        title = _join_title(parts)
        head = lines[i + 1] if label_only and last > i else ln
        yield _Candidate(
            first=i,
            last=last,
            title=title,
            style=_style(head),
            depth=numbering_depth(title),
            large=head.size >= body * _LARGE_RATIO,
        )
        i = last + 1


def _starts_apart(first: Line, cur: Line, nxt: Line, column: tuple[float, float]) -> bool:
    """``nxt`` starts another block rather than continuing ``cur``'s title: its left edge is at
    least an em away, and the two are not both centred in the text column (a centred title
    wraps with another left edge).  A numbered title may hang its second line under the text
    after the number.  ("Options" over a bold option tag, groff's ``.SS`` over ``.TP``, is a
    heading over a term, not one title; a bold description over the next tag is no title.)"""
    shift = nxt.x0 - cur.x0
    if abs(shift) < max(cur.size, 4.0) or (shift > 0 and numbering_depth(first.text) is not None):
        return False
    return not (_centred_in(cur, column) and _centred_in(nxt, column))


def _centred_in(ln: Line, column: tuple[float, float]) -> bool:
    left, right = column
    indent, short = ln.x0 - left, right - ln.x1
    return indent > ln.size and abs(indent - short) <= _CENTRED * max(right - left, 1.0)


def _drop_term_tags(cands: list[_Candidate], lines: Sequence[Line]) -> list[_Candidate]:
    """Body-size bold lines inside the text rather than over it are not sub-headings:

    * one indented from the page's left edge whose next line is indented deeper still is a
      definition term (groff ``.TP``: "MANPATH" under ENVIRONMENT), unless it ends in a colon
      and so announces the block (``_introduces_block``: groff's ``.SS "Exit status:"``);
    * one indented at least an em deeper than the line right above it (no paragraph gap), and
      not centred, is part of the item above it (a bold description under its tag)."""
    left: dict[int, float] = {}
    for ln in lines:
        if ln.role == BODY:
            left[ln.page] = min(left.get(ln.page, ln.x0), ln.x0)
    column = _column(lines)
    out = []
    for c in cands:
        first = lines[c.first]
        if c.large or c.depth is not None:
            out.append(c)
            continue
        nxt = lines[c.last + 1] if c.last + 1 < len(lines) else None
        prev = lines[c.first - 1] if c.first else None
        em = max(first.size, 4.0)
        if (
            nxt is not None
            and nxt.page == first.page
            and not nxt.bold
            and first.x0 - left.get(first.page, first.x0) >= first.size
            and not c.title.endswith(":")
            and nxt.x0 - first.x0 >= max(0.9 * first.size, 4.0)
        ):
            continue
        if (
            prev is not None
            and prev.page == first.page
            and first.y0 - prev.y1 < 0.8 * first.height
            and first.x0 - prev.x0 >= em
            and not _centred_in(first, column)
        ):
            continue
        out.append(c)
    return out


def _add_plain_numbered(
    cands: list[_Candidate], lines: Sequence[Line], body: float
) -> list[_Candidate]:
    """Sub-sections set in the body's weight ("3.1. Creating links" in roman, a hair larger):
    a one-line block at least body size whose dotted number continues a numbered heading
    already found ("3.1." under "3.") is a heading too.  Contents pages are left alone."""
    known = {_number_key(c.title) for c in cands if c.depth is not None}
    taken = {i for c in cands for i in range(c.first, c.last + 1)}
    leaders: Counter[int] = Counter(ln.page for ln in lines if _LEADER.search(ln.text))
    added: list[_Candidate] = []
    for i, ln in enumerate(lines):
        if (
            i in taken
            or ln.role != BODY
            or ln.code
            or not ln.upright
            or ln.size < body - 0.25
            or leaders[ln.page] >= 3
            or not _alone(lines, i)
        ):
            continue
        m = _DOTTED.match(ln.text)
        if not m or m.group("n").rsplit(".", 1)[0] not in known:
            continue
        cand = _Candidate(i, i, ln.text, _style(ln), numbering_depth(ln.text), False)
        words = ln.text.split()
        if len(words) > 12 or ln.text.endswith(".") or not _acceptable(cand, lines):
            continue
        added.append(cand)
        known.add(m.group("n"))
    return sorted([*cands, *added], key=lambda c: c.first) if added else cands


def _number_key(title: str) -> str:
    m = _LABEL.match(title) or _DOTTED.match(title) or _PLAIN.match(title)
    return m.group("n") if m else ""


def _alone(lines: Sequence[Line], i: int) -> bool:
    ln = lines[i]
    return (i == 0 or lines[i - 1].block != ln.block) and (
        i + 1 >= len(lines) or lines[i + 1].block != ln.block
    )


def _join_title(parts: Sequence[str]) -> str:
    """A title broken over lines: a line ending in a hyphen before a lower-case word keeps the
    hyphen and joins without a space ("branch-" + "prediction")."""
    text = ""
    for part in parts:
        part = part.strip()
        if text.endswith("-") and part[:1].islower():
            text += part
        else:
            text = f"{text} {part}" if text else part
    return _SPACES.sub(" ", text).strip()


def _acceptable(c: _Candidate, lines: Sequence[Line]) -> bool:
    t = c.title
    if len(t) < 2 or len(t) > 200 or _LEADER.search(t) or _LABEL_ONLY.match(t):
        return False
    bare = strip_numbering(t)  # "7.2.1 AES": the number is not part of the words
    non_space = len(bare) - bare.count(" ")
    letters = sum(ch.isalpha() for ch in bare)
    if letters < 2 or letters < 0.4 * non_space:
        return False
    words = t.split()
    if len(words) > 25 or t.endswith((",", ";")):
        return False
    if t.endswith(":") and not (not c.large and c.depth is None and _introduces_block(c, lines)):
        return False
    if t.endswith(".") and len(words) > 10:
        return False
    if c.large:
        return True
    # body-size bold: only numbered titles, or a short stand-alone line that reads like a title
    if c.depth is not None:
        return True
    first, last = lines[c.first], lines[c.last]
    alone = (c.first == 0 or lines[c.first - 1].block != first.block) and (
        c.last + 1 >= len(lines) or lines[c.last + 1].block != last.block
    )
    return (
        alone
        and len(words) <= 12
        and not t.endswith(".")
        and ": " not in t
        and (t[0].isupper() or t[0].isdigit() or bool(_ELEMENT.match(t)) or first.code)
    )


def _introduces_block(c: _Candidate, lines: Sequence[Line]) -> bool:
    """A body-size bold line ending in a colon is a run-in label ("Note:") unless it stands on
    its own and the text under it is indented deeper: then it heads that block (groff's
    ``.SS "The following options are useful only when verifying:"`` over its option list)."""
    first, last = lines[c.first], lines[c.last]
    nxt = lines[c.last + 1] if c.last + 1 < len(lines) else None
    return (
        nxt is not None
        and nxt.page == last.page
        and nxt.block != last.block
        and nxt.x0 - first.x0 >= max(first.size, 4.0)
    )


def _drop_repeated_labels(cands: list[_Candidate]) -> list[_Candidate]:
    """Body-size bold lines repeated verbatim many times ("Example", "Note") are labels."""
    counts = Counter(norm_title(c.title) for c in cands if not c.large and c.depth is None)
    return [c for c in cands if c.large or c.depth is not None or counts[norm_title(c.title)] < 3]


def _keep_cover_title_only(cands: list[_Candidate], lines: Sequence[Line]) -> list[_Candidate]:
    """A cover page (page 1 of a longer document, almost no body text, no numbered heading)
    shows the title, the authors and the publisher in large fonts; only the largest of them
    is a heading."""
    if not lines or lines[-1].page < 3:
        return cands
    on_cover = [c for c in cands if lines[c.first].page == 1]
    if len(on_cover) < 2 or any(c.depth is not None for c in on_cover):
        return cands
    in_heading = {i for c in on_cover for i in range(c.first, c.last + 1)}
    body_chars = sum(
        len(ln.text)
        for i, ln in enumerate(lines)
        if ln.page == 1 and ln.role == BODY and i not in in_heading
    )
    if body_chars >= _COVER_MAX_BODY_CHARS:
        return cands
    title = max(on_cover, key=lambda c: (lines[c.first].size, -c.first))
    return [c for c in cands if c is title or lines[c.first].page != 1]


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


def _prose(text: str) -> bool:
    non_space = len(text) - text.count(" ")
    return len(text.split()) >= 2 and sum(ch.isalpha() for ch in text) >= 0.5 * non_space


def _column(lines: Sequence[Line]) -> tuple[float, float]:
    """The text column: the commonest left edge of body lines and the 90th percentile of their
    right edges (ragged or justified)."""
    margins = Counter(round(ln.x0) for ln in lines if ln.role == BODY)
    left = margins.most_common(1)[0][0] if margins else 0.0
    ends = sorted(ln.x1 for ln in lines if ln.role == BODY)
    right = ends[int(0.9 * (len(ends) - 1))] if ends else 0.0
    return left, right


def _title_blocks(
    cands: list[_Candidate], lines: Sequence[Line], page_widths: Sequence[float]
) -> list[_Candidate]:
    """A title block (book or part title page, the head of a paper): the page's first line is
    its largest heading, centred, and more centred lines follow it (subtitle, release,
    authors) before the text or the first left-aligned heading.  Its title becomes a *part*
    heading above every chapter; the centred lines under it are body text, not headings."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(lines):
        if ln.role == BODY:
            by_page[ln.page].append(i)
    left, right = _column(lines)
    drop: set[int] = set()
    for k, c in enumerate(cands):
        page = lines[c.first].page
        idx = by_page.get(page, [])
        if c.depth is not None or not idx or idx[0] != c.first or page > len(page_widths):
            continue
        width = page_widths[page - 1]

        def _centred(ln: Line, width: float = width) -> bool:
            indent, short = ln.x0 - left, right - ln.x1
            on_page = abs((ln.x0 + ln.x1 - width) / 2) <= _CENTRED * width / 2
            in_column = abs(indent - short) <= _CENTRED * width
            return indent > 0.02 * width and (in_column or on_page)

        if not _centred(lines[c.first]):
            continue
        if any(lines[i].size > lines[c.first].size + 0.25 for i in idx):
            continue
        after = [i for i in idx if i > c.last]
        block = []
        for i in after:
            if not _centred(lines[i]):
                break
            block.append(i)
        if not block:
            continue
        c.part = True
        inside = set(block)
        drop.update(j for j, d in enumerate(cands) if j != k and d.first in inside)
    return [c for j, c in enumerate(cands) if j not in drop]


def _top_number(title: str) -> int | None:
    m = _LABEL.match(title) or _DOTTED.match(title) or _PLAIN.match(title)
    if not m:
        return None
    head = re.split(r"[.]", m.group("n"))[0]
    return int(head) if head.isdigit() else None


def _numbering_runs(cands: Sequence[_Candidate]) -> list[list[int]]:
    """Numbered headings split where the numbering starts again ("1." after "6."): a
    collection of books or articles numbers each one from 1."""
    runs: list[list[int]] = []
    prev: int | None = None
    for k, c in enumerate(cands):
        if c.depth is None:
            continue
        top = _top_number(c.title)
        if not runs or (
            top is not None and prev is not None and (top < prev or (top == prev and c.depth == 1))
        ):
            runs.append([])
        runs[-1].append(k)
        if top is not None:
            prev = top
    return runs


def _dominant(counter: Counter) -> Any:
    return counter.most_common(1)[0][0]


def _levels(cands: Sequence[_Candidate]) -> list[int]:
    """One level per heading, consistent across the document.

    Numbered headings: their numbering depth, shifted per numbering run so that the run's
    styles sit where the same styles sit in the main (longest) run; the main run is shifted
    one level down when parts or more prominent unnumbered headings (a book title) precede it.
    Parts: level 1.  Unnumbered headings: the level the numbered headings of the same style
    have, else a level between the known styles by prominence (size, then weight), else the
    style's rank; a style whose headings never sit directly under the level above it is
    lifted (no level is skipped without numbering saying so).
    """
    levels = [0] * len(cands)
    runs = _numbering_runs(cands)
    style_level: dict[tuple[float, bool], int] = {}
    if runs:
        main = max(runs, key=len)
        start = main[0]
        first_style = _dominant(Counter(cands[k].style for k in main if cands[k].depth == 1)) \
            if any(cands[k].depth == 1 for k in main) else None
        above = any(
            c.part or (c.depth is None and first_style is not None and c.style > first_style)
            for c in cands[:start]
        )
        main_offset = 1 if above else 0
        per_style: dict[tuple[float, bool], Counter[int]] = defaultdict(Counter)
        for k in main:
            per_style[cands[k].style][cands[k].depth + main_offset] += 1  # type: ignore[operator]
        main_levels = {s: _dominant(cnt) for s, cnt in per_style.items()}
        for run in runs:
            if run is main:
                offset = main_offset
            else:
                votes: Counter[int] = Counter()
                for k in run:
                    known = main_levels.get(cands[k].style)
                    if known is not None:
                        votes[known - cands[k].depth] += 1  # type: ignore[operator]
                offset = _dominant(votes) if votes else main_offset
                offset = max(offset, 0)
            for k in run:
                levels[k] = cands[k].depth + offset  # type: ignore[operator]
        learned: dict[tuple[float, bool], Counter[int]] = defaultdict(Counter)
        for run in runs:
            for k in run:
                learned[cands[k].style][levels[k]] += 1
        style_level = {s: _dominant(cnt) for s, cnt in learned.items()}
    has_parts = any(c.part for c in cands)
    unnumbered = {c.style for c in cands if c.depth is None and not c.part}
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
            levels[k] = style_level[c.style]
    _lift_skipping_styles(cands, levels)
    return levels


def _lift_skipping_styles(cands: Sequence[_Candidate], levels: list[int]) -> None:
    """An unnumbered style whose headings never sit directly under the level above theirs
    (a body-size bold style used only under chapters) moves up to the deepest level its
    headings do sit under."""
    for style in sorted({c.style for c in cands if c.depth is None and not c.part}, reverse=True):
        members = [k for k, c in enumerate(cands) if c.style == style and c.depth is None]
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
