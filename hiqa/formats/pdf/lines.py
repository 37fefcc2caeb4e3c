"""PDF text as compact line records, and what holds for a whole document: the body size,
running headers and footers (furniture), heading numbering.

``hiqa.formats.pdf.reader`` reads every page once and keeps only ``Line`` records (text, box,
dominant font size and weight); the heading detector (``pdf_layout``), the definition terms
(``pdf_terms``), tables, figures, the title and the printed table of contents all work on them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from hiqa.tokenize import CJK

# Line roles: what a line became once the document-wide passes ran.
BODY, FURNITURE, HEADING, TABLE, CAPTION, NAV = range(6)  # NAV: a TOC or index page's line

MAX_LEVEL = 6
LARGE_RATIO = 1.08  # a heading font is at least 8 % larger than the body font
PLACED_RATIO = 1.05  # a line an outline or contents entry is placed on: this much larger, or bold
_MAX_HEADING_LINES = 3  # a longer run of large text is a paragraph, not a heading
_MARGIN = 0.10  # running headers/footers live in the top/bottom 10 % of the page
_COVER_MAX_BODY_CHARS = 400

_BOLD_FONT = re.compile(r"bold|black|heavy|demi", re.IGNORECASE)
_MONO_FONT = re.compile(r"mono|courier|consol|cmtt|code|typewriter|cursor", re.IGNORECASE)
_ITALIC_FONT = re.compile(r"italic|oblique|slant|cmsl|cmti", re.IGNORECASE)
_FLAG_ITALIC = 2
_FLAG_MONO = 8
_FLAG_BOLD = 16
_TAB_GAP = 0.5  # em; a wider gap between spans sets a term apart from its description
_TAB_STOP = 1.0  # em; a roman tag is set apart from its description by a tab, not a wide space
_TAG_PLAIN_SHARE = 0.25  # a term tag ("-o offset") is bold/monospace, with italic arguments

_LABEL_WORDS = (  # "Chapter 2", "Teil I", "Capítulo 3" ... in the languages of Europe's documents
    r"chapter|part|appendix|annex|section|kapitel|teil|anhang|abschnitt|chapitre|partie|annexe"
    r"|cap[ií]tulo|capitolo|parte|ap[eéê]ndice|appendice|anexo|secci[oó]n|sezione|se[cç][cç][aã]o"
    r"|hoofdstuk|deel|bijlage|kapittel|vedlegg|rozdzia[lł]|cz[eę][sś][cć]|dodatek"
    r"|глава|часть|раздел|приложение"
)
_LABEL = re.compile(
    rf"^(?:{_LABEL_WORDS})\s+(?P<n>\d{{1,3}}(?:\.\d{{1,3}})*|[IVXLC]{{1,6}}|[A-Z])\b[.:]?",
    re.IGNORECASE,
)
_SIGN = r"(?:\u00a7\s?)?"  # the section sign: "§1 Introduction", "§ 3.2 Haftung"
_GLUED = r"[A-Z][a-z]"  # a title set a kern, not a space, after its number: "1.1Motivation"
_DOTTED = re.compile(
    rf"^{_SIGN}(?P<n>(?:\d{{1,3}}|[A-Z])(?:\.\d{{1,3}})+)(?:[./]?(?=\s|$)|(?={_GLUED}))")  # "2.1/"
_PLAIN = re.compile(rf"^{_SIGN}(?P<n>\d{{1,2}})(?:\.?(?=\s+\S)|\.(?={_GLUED}))")
_ROMAN = re.compile(r"^(?P<n>[IVXLC]{1,6})\.(?=\s+\S)")
_CJK_LABEL = re.compile(r"^第\s*(?P<n>\d{1,3}|[〇零一二三四五六七八九十百]{1,4})\s*[章节](?=\s*\S)")
"""A chapter's or section's label in Chinese ("第2节 使用示例", "第一章 绪论"), as "Chapter 2"."""
WORD = re.compile(r"[^\W\d_]{3,}")  # a word of three letters or more, not a number
_CJK_RUN = re.compile(f"[{CJK}]+")
# CJK punctuation (、。「」), full-width forms (，：？［］～), quotes, dashes and the ellipsis
_CJK_STOPS = re.compile("[\u3001-\u3003\u3008-\u3011\u3014-\u301f"
                        "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
                        "\u2018-\u201f\u2014\u2026]")
FULL_STOP = (".", "\u3002", "\uff0e")  # . 。 ．
"""What ends a sentence, in Latin and in Chinese or Japanese text."""
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
_ELEMENT = re.compile(r"<(/?[A-Za-z][\w:.-]*(?:\s[^<>]*)?)>")  # <dir prefix="default">
CENTRED = 0.04  # centred: indents from the text column (or page edges) differ by < 4 % of width
_SPACES = re.compile(r"\s+")
_HYPHENATED = re.compile(r"[^\W\d_]-$")  # a word broken at a row's end ("adjust-")
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
    face: str = ""  # the font most of its characters are set in (a subset's prefix left out)

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


def page_lines(page_dict: dict[str, Any], page_no: int, block_base: int,
               fixed: AbstractSet[str] = frozenset()) -> list[Line]:
    """Visual lines of one ``page.get_text("dict")`` result, in content-stream order.  A line
    of white space on a row of its own inside a block ends its paragraph (a space between two
    words of a justified row does not): EDGAR's generator sets a whole page as one
    block, its paragraphs and headings ("Item 1. Business") parted by lines of no-break spaces.
    The parts after one get block ids above the page's blocks (``block_base`` + their count)."""
    out: list[Line] = []
    blocks = page_dict.get("blocks", ())
    extra = block_base + len(blocks) + 1  # ids for the parts of blocks split at blank lines
    for b_idx, block in enumerate(blocks):
        if block.get("type", 0) != 0:
            continue
        ids = [block_base + b_idx]  # a blank line inside a block starts a paragraph of its own
        blank = False
        # [x0, y0, x1, y1, text, chars, size_w, bold_n, mono_n, italic_n, upright,
        #  first piece's text if it reads as a term tag else "", x0 of the second piece,
        #  [first span strong, plain letters, letters] of the whole row, first piece's text,
        #  width of the gap after it, gap before a short last piece, paragraph id, characters
        #  per font]
        acc: list[list[Any]] = []
        for line in block.get("lines", ()):
            spans = line.get("spans", ())
            text = "".join(s.get("text", "") for s in spans)
            if not text.strip():  # a row of its own, below the text so far: a blank line
                centre = (line["bbox"][1] + line["bbox"][3]) / 2
                blank = blank or bool(acc) and centre > max(row[3] for row in acc)
                continue
            if blank:
                ids.append(extra)
                extra += 1
                blank = False
            chars = size_w = bold_n = mono_n = italic_n = 0.0
            faces: Counter[str] = Counter()
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
                faces[font] += n
                chars += n
                size_w += n * size
                strong = False
                if flags & _FLAG_BOLD or _BOLD_FONT.search(font):
                    bold_n += n
                    strong = True
                if typewriter(s, fixed):
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
                prev[18].update(faces)
            else:
                acc.append(
                    [x0, y0, x1, y1, text, chars, size_w, bold_n, mono_n, italic_n, upright]
                    + [(tag_text or text) if tagish else "", gap_x, whole]
                    + [tag_text if gap_x is not None else None, gap, tail_gap, ids[-1], faces]
                )
        for row in acc:
            x0, y0, x1, y1, text, chars, size_w, bold_n, mono_n, italic_n, upright = row[:11]
            chars = chars or 1.0
            mono = mono_n >= MONO_SHARE * chars
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
                    block=row[17],
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
                    face=_face(row[18]),
                )
            )
    return _attach_marks(out)


def _face(faces: Counter[str]) -> str:
    """The font most characters are set in, without a subset's tag ("ABCDEF+LMRoman10-Regular")."""
    if not faces:
        return ""
    font = faces.most_common(1)[0][0]
    return font.split("+", 1)[1] if len(font) > 7 and font[6] == "+" else font


MONO_SHARE = 0.6  # a row is typewriter when this share of its characters is


def typewriter(span: dict[str, Any], fixed: AbstractSet[str] = frozenset()) -> bool:
    """Whether a ``get_text("dict")`` span is set in a typewriter face: its flag, its font's
    name, or its font among ``fixed`` (``FixedPitch``: every glyph one width, measured)."""
    font = span.get("font", "")
    return bool(span.get("flags", 0) & _FLAG_MONO or _MONO_FONT.search(font) or font in fixed)


class FixedPitch:
    """The fonts of a document whose glyphs all have one width, from the spans printed so far.

    A typewriter face is known by its flag or its name, when the PDF gives them; XeTeX embeds
    Menlo with neither (gbt7714's manual, texlive), and its listings read as prose.  Measured
    instead: a span's width divided by its characters and its size is the font's one advance
    when every glyph has it, and moves with the share of narrow letters otherwise.  A font is
    fixed-pitch when ``FIXED_SPANS`` spans or more holding a narrow letter and a wide one agree
    on it within ``FIXED_SPREAD`` although their shares of narrow glyphs differ by
    ``MAKEUP_SPREAD`` or more: long spans of prose in a proportional font average out to one
    width too (NIKE's Arial: five within 3 %), but they are all made alike.  CJK characters, one
    width in any font, never count."""

    def __init__(self) -> None:
        self._spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.fonts: set[str] = set()

    def learn(self, page_dict: dict[str, Any]) -> frozenset[str]:
        """Take in a page's spans; the fixed-pitch fonts known so far."""
        for block in page_dict.get("blocks", ()):
            for line in block.get("lines", ()):
                for span in line.get("spans", ()):
                    text, size = span.get("text", ""), float(span.get("size", 0.0))
                    font = span.get("font", "")
                    if (size <= 0 or font in self.fonts or len(text) < 4 or text != text.strip()
                            or not _NARROW.search(text) or not _WIDE.search(text)
                            or text_width(text) != len(text)):
                        continue
                    seen = self._spans[font]
                    seen.append(((span["bbox"][2] - span["bbox"][0]) / (len(text) * size),
                                 len(_NARROW_GLYPHS.findall(text)) / len(text)))
                    if len(seen) >= FIXED_SPANS:
                        widths, narrow = [w for w, _ in seen], [n for _, n in seen]
                        if (max(widths) - min(widths) <= FIXED_SPREAD * min(widths)
                                and max(narrow) - min(narrow) >= MAKEUP_SPREAD):
                            self.fonts.add(font)
        return frozenset(self.fonts)


FIXED_SPANS = 5
FIXED_SPREAD = 0.03
MAKEUP_SPREAD = 0.15
_NARROW = re.compile(r"[il]")
_NARROW_GLYPHS = re.compile(r"[iljtfr.,:;'!| ]")
_WIDE = re.compile(r"[mw]")


_MARK = re.compile(r"[0-9*\u2020\u2021\u00a7]{1,2}")  # 1, 12, *, †, ‡, §
MARK_SIZE = 0.85  # a reference mark is set smaller than the line it belongs to


def _attach_marks(lines: list[Line]) -> list[Line]:
    """A footnote reference mark some producers write as a block of its own (a smaller "1"
    against the end of "plan or policy.", or before the footnote's first word) goes back into
    the line it touches: read apart, it stands alone at the page's end as a bare number. A mark
    after a figure is dropped rather than glued into it ("1,577" + "1" is no number)."""
    per_block = Counter(ln.block for ln in lines)
    marks = [ln for ln in lines if per_block[ln.block] == 1 and _MARK.fullmatch(ln.text)]
    if not marks:
        return lines
    gone: set[int] = set()
    for m in marks:
        centre = (m.y0 + m.y1) / 2
        for host in lines:
            if (host.block == m.block or id(host) in gone or m.size > MARK_SIZE * host.size
                    or not host.y0 - 0.25 * host.height <= centre <= host.y1):
                continue
            after = -1.0 <= m.x0 - host.x1 <= 0.6 * host.size
            before = -1.0 <= host.x0 - m.x1 <= 1.0 * host.size
            if after:
                if not host.text[-1:].isdigit():
                    host.text += m.text
                    host.x1 = max(host.x1, m.x1)
            elif before:
                host.text = f"{m.text} {host.text}"
                host.x0, host.tag, host.head = min(host.x0, m.x0), 0, 0
            else:
                continue
            gone.add(id(m))
            break
    return [ln for ln in lines if id(ln) not in gone]


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
    """The font size that carries most text (half-point buckets, by ``text_width``)."""
    weight: Counter[float] = Counter()
    for ln in lines:
        if ln.role == BODY:
            weight[bucket(ln.size)] += text_width(ln.text)
    return weight.most_common(1)[0][0] if weight else 10.0


def word_count(text: str) -> int:
    """Words in ``text``: what stands between spaces, and in Chinese or Japanese, which set no
    spaces, one word to two characters (their words' common length).  Counted by spaces alone,
    a paragraph of Chinese prose was a "title" of five words (wrapstuff, texlive seed 89)."""
    n = ideographs(text)
    if not n:
        return len(text.split())
    rest = _CJK_STOPS.sub(" ", _CJK_RUN.sub(" ", text)).split()
    return len(rest) + (n + 1) // 2


def ideographs(text: str) -> int:
    """How many Chinese or Japanese characters (``tokenize.CJK``) ``text`` holds."""
    return 0 if text.isascii() else sum(len(run) for run in _CJK_RUN.findall(text))


def text_width(text: str) -> int:
    """How much text a line holds, in the widths of Latin letters: a CJK character is set an
    em wide, two of them (East Asian Width W or F).  What the body size and the text styles
    are weighed by (``typography.text_size``, ``_without_text_styles``): counted by characters,
    a line of Chinese prose held 40 where a line of running text holds some 45, so
    caspervector's prose (texlive) was no text style, and its lines were headings."""
    if text.isascii():  # most lines: no character to look up
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) >= 0x1100
                           and unicodedata.east_asian_width(ch) in "WF")


def bucket(size: float) -> float:
    return round(size * 2) / 2


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
    if _PLAIN.match(title) or _ROMAN.match(title) or _CJK_LABEL.match(title):
        return 1
    return None


def section_number(title: str) -> tuple[int, ...]:
    """A title's leading section number as integers ("5.2 Foo" -> (5, 2)), or () where it has
    none in digits (an appendix's letter, a roman numeral)."""
    m = _LABEL.match(title) or _DOTTED.match(title) or _PLAIN.match(title)
    if not m:
        return ()
    parts = m.group("n").split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else ()


def strip_numbering(title: str) -> str:
    """The title without its leading label/number ("3.2 Foo" -> "Foo")."""
    for rx in (_LABEL, _DOTTED, _PLAIN, _ROMAN, _CJK_LABEL):
        m = rx.match(title)
        if m:
            rest = title[m.end() :].lstrip(" .:-\u2013\u2014\u00b7\u2022")  # "Section 1 · Foo"
            return rest or title
    return title


def set_apart(line: Line, body: float) -> bool:
    """Set as a heading is where an outline or contents entry is placed: bold, or larger than
    the text (``body``) by ``PLACED_RATIO``."""
    return line.bold or line.size >= body * PLACED_RATIO


def spaced_number(title: str) -> str:
    """The title with a space after a number its text layer glued to it ("1.1Motivation" ->
    "1.1 Motivation"), as the page shows it; any other title as it is."""
    m = _DOTTED.match(title) or _PLAIN.match(title)
    if m and title[m.end():m.end() + 1].isalpha():
        return f"{title[:m.end()]} {title[m.end():]}"
    return title


_PART_NUMBER = re.compile(r"^(?:Part\s+)?(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3})\.?\s+(?=\w)")


def title_forms(title: str) -> set[str]:
    """The normal forms a title is found by on a page: as printed, without its number, and
    without a leading roman part number (a TOC or an outline says "II Casing systems" where
    the page prints "Part II" above "Casing systems").  Spaces beside a CJK character are no
    part of a form: Chinese is written without them, and a contents row's "第一章绪论" is the
    chapter's "第一章 绪论" (a thesis template's label and title, a space apart on the page);
    nor is a chapter number in Chinese numerals (``_CJK_NUMBER``)."""
    forms = {norm_title(title), norm_title(strip_numbering(title)),
             norm_title(_PART_NUMBER.sub("", title, count=1))}
    if title.isascii():
        return forms
    forms.add(norm_title(_CJK_NUMBER.sub("", title, count=1)))
    return forms | {_CJK_SPACE.sub("", f) for f in forms}


_CJK_SPACE = re.compile(rf" (?=[{CJK}])|(?<=[{CJK}]) ")
_CJK_NUMBER = re.compile(r"^\s*(?:第[〇零一二三四五六七八九十百千\d]+[章节篇部]\s*"
                         r"|[〇零一二两三四五六七八九十百]+(?:\s+|[、．.]\s*))")
"""A chapter's number in Chinese numerals, as the page prints what the contents numbers in
figures ("一 基本格式测试" for "1 基本格式测试"): "第一章 ", or numerals and a space or 、."""


def join_row(head: str, row: str) -> str:
    """``row`` appended to ``head``, a word hyphenated at ``head``'s end joined ("adjust-" +
    "ment" is "adjustment"; "Sun-" + "Microsystems" keeps its hyphen)."""
    if _HYPHENATED.search(head) and row[:1].islower():
        return head[:-1] + row
    return f"{head} {row}".strip()


def norm_title(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold()
    t = t.translate(_QUOTES)
    t = _SPACES.sub(" ", t).strip()
    return t.rstrip(" .:;,")


_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "`": "'",
                         "\ufffd": None})  # a glyph mapped to no character says nothing


def _prose(text: str) -> bool:
    non_space = len(text) - text.count(" ")
    return len(text.split()) >= 2 and sum(ch.isalpha() for ch in text) >= 0.5 * non_space
