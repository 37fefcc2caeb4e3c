"""Headings from PDF layout: candidates by style and numbering, levels for the whole document.

Everything here works on the ``Line`` records of ``pdf_lines`` for the whole document at once.
That is what makes heading levels consistent: one style -> level table is learned per
document, so a level decided on page 10 is the level used on page 90.

Level rule (documents without an outline):
0. the title of a title page (a centred block opening the page: a book, a part) -> 1;
1. numbering depth when the title is numbered (``3`` -> 1, ``3.2`` -> 2, ``A.2.1`` -> 3,
   ``Chapter 4`` / ``Appendix B`` -> 1), shifted per numbering run (a set of books numbering
   each from 1) so each run's styles sit where the same styles sit in the longest run, and
   that run one level down under parts or a more prominent unnumbered title before it;
2. otherwise the level the document's numbered headings of the same font style have;
3. otherwise the style's rank among heading styles (larger, then bolder = shallower);
an unnumbered style never used directly under the level above it moves up (no level is
skipped unless the numbering says so).  Definition terms are ``pdf_terms``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from hiqa.formats.pdf.lines import (
    _COVER_MAX_BODY_CHARS,
    _DOTTED,
    _ELEMENT,
    _LABEL,
    _LABEL_ONLY,
    _LEADER,
    _MAX_HEADING_LINES,
    _PLAIN,
    _SPACES,
    BODY,
    CENTRED,
    FULL_STOP,
    HEADING,
    LARGE_RATIO,
    MAX_LEVEL,
    FoundHeading,
    Line,
    bucket,
    ideographs,
    norm_title,
    numbering_depth,
    spaced_number,
    strip_numbering,
    word_count,
)

# ---------------------------------------------------------------------------------------------
# Heading detection from layout


@dataclass(slots=True)
class HeadingCandidate:
    first: int
    last: int
    title: str
    style: tuple[float, bool]
    depth: int | None
    large: bool
    part: bool = False  # the title of a title page (a book, a part): above every chapter
    capitals: bool = False  # its words in capitals ("ABSTRACT"), a level above mixed case


def ancestors(key: str) -> list[str]:
    parts = key.split(".")
    return [".".join(parts[:k]) for k in range(len(parts) - 1, 0, -1)]


def found_headings(
    lines: Sequence[Line], cands: Sequence[tuple[HeadingCandidate, int]]
) -> list[FoundHeading]:
    """``cands`` at their levels as headings; marks their lines as ``HEADING``."""
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


def layout_candidates(
    lines: Sequence[Line], body: float, page_widths: Sequence[float] = (),
    blocked: AbstractSet[int] = frozenset(),
) -> list[HeadingCandidate]:
    """Heading candidates from the layout, in document order; no line is marked.  A line in
    ``blocked`` (a listing's, a list's: ``hiqa.formats.pdf.typography``) starts none."""
    cands = [c for c in _candidates(lines, body, blocked) if acceptable(c, lines)]
    cands = _drop_term_tags(cands, lines)
    cands = _add_plain_numbered(cands, lines, body, blocked)
    cands = _drop_repeated_labels(cands)
    cands = _keep_cover_title_only(cands, lines)
    if page_widths:
        cands = _title_blocks(cands, lines, page_widths)
    return cands


def _heading_title(text: str) -> str:
    """A heading's title as Markdown can show it: element names lose their angle brackets
    (``<dir prefix="x">`` -> ``dir prefix="x"``), which a Markdown renderer would take for an
    HTML tag and hide, as the producers' own bookmarks do.  A glyph the font maps to no
    character (U+FFFD: a dingbat between a section's number and its words, "1 \ufffd
    Motivation") says nothing and goes."""
    shown = spaced_number(_ELEMENT.sub(r"\1", text).replace(UNMAPPED, ""))
    return _SPACES.sub(" ", shown).strip() or text


UNMAPPED = "\ufffd"
"""The replacement character PyMuPDF reads for a glyph its font maps to no character."""


def _styled(ln: Line, body: float) -> bool:
    """Set like a heading: larger than the body, or bold at about its size.  Monospace is
    code, unless bold: a heading that names a module or function is often set all in a bold
    code face (``django.contrib.admin`` in HTML-to-PDF release notes), a listing seldom."""
    if ln.role != BODY or not ln.upright:
        return False
    if ln.code and not ln.bold:  # code, unless a larger numbered line ("3.4.1 mp_run(MP mp)")
        return ln.size >= body * LARGE_RATIO and bool(_DOTTED.match(ln.text))
    return ln.size >= body * LARGE_RATIO or (ln.bold and ln.size >= body - 0.6)


def _style(ln: Line) -> tuple[float, bool]:
    return bucket(ln.size), ln.bold


def _same_style(a: Line, b: Line) -> bool:
    """One style for a title's lines: one weight, sizes in one half-point bucket or a quarter
    point apart (a line's mean size moves with a logo's small letters: mpgraphics' "5 Your
    LATEX packages and macros used within" averages 14.23 pt over its second line's 14.35,
    either side of a bucket's edge, and the title was cut in two)."""
    return a.bold == b.bold and (bucket(a.size) == bucket(b.size) or abs(a.size - b.size) <= 0.25)


def _candidates(
    lines: Sequence[Line], body: float, blocked: AbstractSet[int] = frozenset()
) -> Iterable[HeadingCandidate]:
    """Runs of consecutive heading-styled lines merged into one title each."""
    column = text_column(lines)
    i, n = 0, len(lines)
    while i < n:
        ln = lines[i]
        if i in blocked or not _styled(ln, body):
            i += 1
            continue
        last = i
        parts = [ln.text]
        label_only = bool(_LABEL_ONLY.match(ln.text))
        while last + 1 < n:
            nxt, cur = lines[last + 1], lines[last]
            if nxt.page != cur.page or last + 1 in blocked or not _styled(nxt, body):
                break
            gap = nxt.y0 - cur.y1
            if label_only and len(parts) == 1:
                if not (-0.5 * cur.height < gap < 3.0 * cur.height):
                    break
            elif (
                not _runs_on(cur, nxt)
                or numbering_depth(nxt.text) is not None
                or _LABEL_ONLY.match(nxt.text)
                or _starts_apart(ln, cur, nxt, column)
            ):
                break
            last += 1
            parts.append(nxt.text)
            if last - i + 1 > _MAX_HEADING_LINES:
                break
        if _indented_paragraph(lines, last, column):
            last += 1  # and the rest of the paragraph
            while last + 1 < n and _same_paragraph(lines[last], lines[last + 1]):
                last += 1
            i = last + 1
            continue
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
        title = join_title(parts)
        head = lines[i + 1] if label_only and last > i else ln
        yield HeadingCandidate(
            first=i,
            last=last,
            title=title,
            style=_style(head),
            depth=numbering_depth(title),
            large=head.size >= body * LARGE_RATIO,
            capitals=capitals(title),
        )
        i = last + 1


CAPITALS = 2
"""Letters a title in capitals holds before its case tells a style ("GIT", a manual page's
section; one capital alone is an index's letter or a figure's panel)."""


def capitals(title: str) -> bool:
    letters = [ch for ch in strip_numbering(title) if ch.isalpha()]
    return len(letters) >= CAPITALS and all(ch.isupper() for ch in letters)


def _indented_paragraph(lines: Sequence[Line], last: int, column: tuple[float, float]) -> bool:
    """``lines[last]`` runs to the text column's right edge and the next line, right under it
    in its block and type, starts an em or more to its left: the first line of a paragraph
    indented as paragraphs are, not a title (wrapstuff's Chinese prose, indented two
    characters, in a larger type than its index)."""
    if last + 1 >= len(lines):
        return False
    cur, nxt = lines[last], lines[last + 1]
    return (
        _same_paragraph(cur, nxt)
        and cur.x0 - nxt.x0 >= max(cur.size, 4.0)
        and column[1] - cur.x1 <= cur.size
    )


def _runs_on(cur: Line, nxt: Line) -> bool:
    """``nxt`` could go on under ``cur``: its page, its type, no space between."""
    return (
        nxt.page == cur.page
        and _same_style(nxt, cur)
        and -0.5 * cur.height < nxt.y0 - cur.y1 < 0.8 * cur.height
    )


def _same_paragraph(cur: Line, nxt: Line) -> bool:
    """``nxt`` goes on under ``cur`` in its block."""
    return nxt.block == cur.block and _runs_on(cur, nxt)


def _starts_apart(first: Line, cur: Line, nxt: Line, column: tuple[float, float]) -> bool:
    """``nxt`` starts another block rather than continuing ``cur``'s title: its left edge is at
    least an em away, and the two are not both centred in the text column (a centred title
    wraps with another left edge).  A numbered title may hang its second line under the text
    after the number.  ("Options" over a bold option tag, groff's ``.SS`` over ``.TP``, is a
    heading over a term, not one title; a bold description over the next tag is no title.)"""
    shift = nxt.x0 - cur.x0
    if abs(shift) < max(cur.size, 4.0) or (shift > 0 and numbering_depth(first.text) is not None):
        return False
    return not (centred_in(cur, column) and centred_in(nxt, column))


def centred_in(ln: Line, column: tuple[float, float]) -> bool:
    left, right = column
    indent, short = ln.x0 - left, right - ln.x1
    return indent > ln.size and abs(indent - short) <= CENTRED * max(right - left, 1.0)


def _drop_term_tags(cands: list[HeadingCandidate], lines: Sequence[Line]) -> list[HeadingCandidate]:
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
    column = text_column(lines)
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
            and not centred_in(first, column)
        ):
            continue
        out.append(c)
    return out


def _add_plain_numbered(
    cands: list[HeadingCandidate], lines: Sequence[Line], body: float,
    blocked: AbstractSet[int] = frozenset(),
) -> list[HeadingCandidate]:
    """Sub-sections set in the body's weight ("3.1. Creating links" in roman, a hair larger):
    a one-line block at least body size whose dotted number continues a numbered heading
    already found ("3.1." under "3.") is a heading too.  Contents pages are left alone."""
    known = {number_key(c.title) for c in cands if c.depth is not None}
    taken = {i for c in cands for i in range(c.first, c.last + 1)}
    leaders: Counter[int] = Counter(ln.page for ln in lines if _LEADER.search(ln.text))
    faces: Counter[str] = Counter()
    for ln in lines:
        if ln.role == BODY and not ln.mono:
            faces[ln.face] += len(ln.text)
    text_face = faces.most_common(1)[0][0] if faces else ""
    added: list[HeadingCandidate] = []
    for i, ln in enumerate(lines):
        if (
            i in taken
            or i in blocked
            or ln.role != BODY
            or ln.code
            or not ln.upright
            or ln.size < body - 0.25
            or leaders[ln.page] >= 3
            or not alone(lines, i)
        ):
            continue
        m = _DOTTED.match(ln.text)
        if not m or m.group("n").rsplit(".", 1)[0] not in known:
            continue
        cand = HeadingCandidate(i, i, ln.text, _style(ln), numbering_depth(ln.text), False)
        if (word_count(ln.text) > 12 or _sentence(ln.text, ln.face == text_face)
                or not acceptable(cand, lines)):
            continue
        added.append(cand)
        known.add(m.group("n"))
    return sorted([*cands, *added], key=lambda c: c.first) if added else cands


TITLE_STOP_WORDS = 3
"""At most this many words before a full stop make a title that keeps its stop ("4.4.1
Punctuation."), not a sentence, in a face of its own."""


def _sentence(text: str, text_face: bool) -> bool:
    """A numbered line in the body's weight that ends in a full stop is a sentence ("1.2 Open
    the file.", "5.3 Time is essential." in the text's own face), unless it is set in a face of
    its own (``text_face`` False: currency's italic "4.4.1 Punctuation.") and its words are a
    title's few, with no other stop among them."""
    if not text.endswith(FULL_STOP):
        return False
    bare = strip_numbering(text)[:-1]
    return (text_face or word_count(bare) > TITLE_STOP_WORDS
            or any(ch in bare for ch in FULL_STOP))


def number_key(title: str) -> str:
    m = _LABEL.match(title) or _DOTTED.match(title) or _PLAIN.match(title)
    return m.group("n") if m else ""


def alone(lines: Sequence[Line], i: int) -> bool:
    """Line ``i`` is a block of its own: no line of its paragraph right before or after it."""
    ln = lines[i]
    return (i == 0 or lines[i - 1].block != ln.block) and (
        i + 1 >= len(lines) or lines[i + 1].block != ln.block
    )


def join_title(parts: Sequence[str]) -> str:
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


def acceptable(c: HeadingCandidate, lines: Sequence[Line], apart: bool = False) -> bool:
    """``c``'s title reads as a heading's: words, not a number, a leader row or a sentence.
    ``apart``: its lines are known to be set apart from the paragraph under them though the
    text layer put them in its block (``title_lines.title_end``)."""
    t = c.title
    if len(t) < 2 or len(t) > 200 or _LEADER.search(t) or _LABEL_ONLY.match(t):
        return False
    bare = strip_numbering(t)  # "7.2.1 AES": the number is not part of the words
    non_space = len(bare) - bare.count(" ")
    # an ideograph counts twice (a word or half of one): familytree-ja's sections "1.2 例"
    letters = sum(ch.isalpha() for ch in bare) + ideographs(bare)
    if letters < 2 or letters < 0.4 * non_space:
        return False
    words = word_count(t)
    if words > 25 or t.endswith((",", ";", "\uff0c", "\uff1b")):  # , ; ， ；
        return False
    if t.endswith(":") and not (not c.large and c.depth is None and _introduces_block(c, lines)):
        return False
    if t.endswith(FULL_STOP) and (words > 10 or c.depth is None and not t.endswith(".")):
        return False  # a sentence; an unnumbered Chinese or Japanese heading takes no full stop
    if c.large:
        return True
    # body-size bold: only numbered titles, or a short stand-alone line that reads like a title
    if c.depth is not None:
        return True
    first, last = lines[c.first], lines[c.last]
    on_its_own = (c.first == 0 or lines[c.first - 1].block != first.block) and (
        apart or c.last + 1 >= len(lines) or lines[c.last + 1].block != last.block
    )
    return (
        on_its_own
        and words <= 12
        and not t.endswith(FULL_STOP)
        and ": " not in t
        and (t[0].isupper() or t[0].isdigit() or bool(_ELEMENT.match(t)) or first.code)
    )


def _introduces_block(c: HeadingCandidate, lines: Sequence[Line]) -> bool:
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


def _drop_repeated_labels(cands: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """Body-size bold lines repeated verbatim many times ("Example", "Note") are labels."""
    counts = Counter(norm_title(c.title) for c in cands if not c.large and c.depth is None)
    return [c for c in cands if c.large or c.depth is not None or counts[norm_title(c.title)] < 3]


def _keep_cover_title_only(
    cands: list[HeadingCandidate], lines: Sequence[Line]
) -> list[HeadingCandidate]:
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


def text_column(lines: Sequence[Line]) -> tuple[float, float]:
    """The text column: the commonest left edge of body lines and the 90th percentile of their
    right edges (ragged or justified)."""
    margins = Counter(round(ln.x0) for ln in lines if ln.role == BODY)
    left = margins.most_common(1)[0][0] if margins else 0.0
    ends = sorted(ln.x1 for ln in lines if ln.role == BODY)
    right = ends[int(0.9 * (len(ends) - 1))] if ends else 0.0
    return left, right


FULL_LINE = 0.85
"""A line this share of the text column's width or wider fills it (``_opens_paragraph``)."""


def _opens_paragraph(lines: Sequence[Line], i: int, column_width: float) -> bool:
    """Line ``i`` is a justified paragraph's, not a centred one: it fills the column and the next
    line of its block starts at its left edge.  Set symmetrically on a symmetric page, such a line
    reads as centred (dccpaper's first paragraph under a centred section heading made that heading
    a title block's, a part over its siblings); a wide centred subtitle or a row of authors has
    no such line under it."""
    ln = lines[i]
    if ln.x1 - ln.x0 < FULL_LINE * column_width or i + 1 >= len(lines):
        return False
    nxt = lines[i + 1]
    return nxt.page == ln.page and nxt.block == ln.block and abs(nxt.x0 - ln.x0) <= 1.0


def _title_blocks(
    cands: list[HeadingCandidate], lines: Sequence[Line], page_widths: Sequence[float]
) -> list[HeadingCandidate]:
    """A title block (book or part title page, the head of a paper): the page's first line is
    its largest heading, centred, and more centred lines follow it (subtitle, release,
    authors) before the text or the first left-aligned heading.  Its title becomes a *part*
    heading above every chapter; the centred lines under it are body text, not headings."""
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, ln in enumerate(lines):
        if ln.role == BODY:
            by_page[ln.page].append(i)
    left, right = text_column(lines)
    drop: set[int] = set()
    for k, c in enumerate(cands):
        page = lines[c.first].page
        idx = by_page.get(page, [])
        if c.depth is not None or not idx or idx[0] != c.first or page > len(page_widths):
            continue
        width = page_widths[page - 1]

        def _centred(ln: Line, width: float = width) -> bool:
            indent, short = ln.x0 - left, right - ln.x1
            on_page = abs((ln.x0 + ln.x1 - width) / 2) <= CENTRED * width / 2
            in_column = abs(indent - short) <= CENTRED * width
            return indent > 0.02 * width and (in_column or on_page)

        if not _centred(lines[c.first]):
            continue
        if any(lines[i].size > lines[c.first].size + 0.25 for i in idx):
            continue
        after = [i for i in idx if i > c.last]
        block = []
        for i in after:
            if not _centred(lines[i]) or _opens_paragraph(lines, i, right - left):
                break
            block.append(i)
        if not block:
            continue
        c.part = True
        inside = set(block)
        drop.update(j for j, d in enumerate(cands) if j != k and d.first in inside)
    return [c for j, c in enumerate(cands) if j not in drop]
