"""The typographic heading model: headings from how a document sets them, where nothing else
says (no outline, no printed contents).

Everything is decided per document from its own statistics, never from a producer or a font
name.  The candidates and their levels are ``hiqa.formats.pdf.layout``'s (lines set apart by
size or weight, levels by numbering, then by style); this module decides what the document's
evidence allows them to be, in the order ``typographic_headings`` applies it:

* the **text size** is the size that carries most characters of running text; monospace and
  code are left out, since a manual whose pages are mostly listings (a ``.bib`` file's
  examples, a package's implementation) would otherwise make its prose look "larger than the
  body" and every prose line a heading;
* **blocks** never hold a heading: lines of a dense run of consecutive numbers (a listing's
  line numbers, a numbered list, contents rows: ``hiqa.formats.pdf.blocks``; a run stepping
  by two lines whose every line is set apart as a heading, bold or larger, alone and with
  space above, is sections of one line of text each), and monospace lines no larger than the
  text (code, bold or not: a listing sets its keywords in bold), unless set apart over prose
  in a style that is not a listing's;
* a heading **says something**: an unnumbered one has a word of three letters or more (a
  figure's panel labels "a b", axis names "S1 B1" are set large and alone too);
* a title followed by a page number, printed again later as a heading, is a row of a contents
  page (one too short or too plain to be read as a contents), not a heading;
* a regular-weight style carrying a tenth of the text in lines as long as the text's (a
  bibliography set a point larger), and a style whose titles are mostly **labels** (the same
  words printed three times or more: "Note Style" over every example) are not heading styles;
* a **sequence of numbers** ("I." … "II." … "III.", paragraphs between) numbers sections even
  where no size or weight tells its lines from the text (``hiqa.formats.pdf.sequences``);
* the lines **right under a centred title** that are centred too (a subtitle, the authors), or
  lighter than a bold title with nothing of the text's size between (authors in columns,
  their addresses in code type between), are part of the title block, not headings under it;
* a **bold lead** that opens its paragraph (the paragraph goes on in its block, and the line
  ends one sentence and starts another, or the line below goes on with its sentence), or the
  rest of a word the line above broke with a hyphen, is not a heading;
* an unnumbered heading more prominent than the chapters, after the last numbered one (the
  index, the references of a numbered article set large) closes the book at the chapters'
  level: nothing numbered follows it for it to be above (unless its style is a part's);
* a title repeated by the next heading of its level with nothing above it in between is one
  heading continued (a slide's title over its continuation slides), not a second one;
* an **index's letters** ("A", "B", "D", …: one capital alone on its line, set apart from the
  entries by weight or size, in alphabetical order, entries ending in page numbers between
  them) head the index's groups, one level below the heading before them (the index's own);
  so does a word or two in the letters' type just before the first ("Symbols", "Zahlen").
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from hiqa.formats.pdf.blocks import numbered_runs
from hiqa.formats.pdf.faces import with_face_headings
from hiqa.formats.pdf.layout import (
    FULL_LINE,
    HeadingCandidate,
    centred_in,
    found_headings,
    layout_candidates,
    text_column,
)
from hiqa.formats.pdf.levels import heading_levels, keep_numbered_parents
from hiqa.formats.pdf.lines import (
    _MAX_HEADING_LINES,
    BODY,
    CENTRED,
    LARGE_RATIO,
    FoundHeading,
    Line,
    bucket,
    norm_title,
    strip_numbering,
    text_width,
    title_forms,
)
from hiqa.formats.pdf.numbering import without_stray_numbers
from hiqa.formats.pdf.sequences import with_sequences
from hiqa.formats.pdf.title_lines import (
    PAGE_REF,
    TIGHT,
    centred_on_page,
    heads_text,
    line_style,
    says,
)

TEXT_SHARE = 0.2
"""Prose (lines not set in monospace) must carry at least this share of a document's body
characters to set the text size; a document that is nearly all code keeps the size of its
code."""


def typographic_headings(
    lines: Sequence[Line], body: float, page_widths: Sequence[float] = ()
) -> list[FoundHeading]:
    """Headings of a document with neither outline nor printed contents, from its typography;
    marks their lines as ``HEADING``."""
    text = text_size(lines, body)
    column = text_column(lines)  # no line's role changes before found_headings marks them
    listing = numbered_runs(lines, lambda i: heads_text(lines, i, text))
    blocked = listing | _code_lines(lines, text, listing, column[1])
    cands = [c for c in layout_candidates(lines, text, page_widths, blocked) if says(c)]
    cands = _without_label_styles(_without_text_styles(_without_contents_rows(cands), lines))
    cands = [c for c in cands if not _run_in(c, lines) and not _word_goes_on(c, lines)]
    cands = with_sequences(cands, lines, text, page_widths, column, blocked)
    cands = with_face_headings(cands, lines, text, column, blocked)
    cands = without_stray_numbers(_without_byline(cands, lines, page_widths, text, column))
    levels = _back_matter(cands, heading_levels(cands))
    kept = _with_index_letters(keep_numbered_parents(_drop_continued(cands, levels)), lines,
                               text)
    return found_headings(lines, kept)


def text_size(lines: Sequence[Line], body: float) -> float:
    """The size (half-point buckets) carrying most characters of proportional body text;
    ``body`` (every line counted) where prose is too rare to say."""
    prose: Counter[float] = Counter()
    total = 0
    for ln in lines:
        if ln.role != BODY:
            continue
        width = text_width(ln.text)
        total += width
        if not ln.code:
            prose[bucket(ln.size)] += width
    if not prose or sum(prose.values()) < TEXT_SHARE * total:
        return body
    return prose.most_common(1)[0][0]


def _code_lines(lines: Sequence[Line], text: float, listing: AbstractSet[int],
                right: float) -> set[int]:
    """Monospace lines no larger than the text: code, whatever its weight; except a bold one
    set apart from any code around it, in a style that is not a listing's: most of its lines
    set apart too, most of them over prose rather than code.  That is a heading naming a module
    or a function (``django.contrib.admin`` set in bold code type in release notes), not a
    listing's keyword in bold nor the name of a macro over its implementation."""
    mono = [i for i, ln in enumerate(lines) if ln.mono and ln.size < text * LARGE_RATIO]
    count: Counter[tuple[float, bool]] = Counter()
    code: Counter[tuple[float, bool]] = Counter()
    for i in mono:
        style = line_style(lines[i])
        count[style] += 1
        code[style] += _next_to_code(lines, i, right) or _over_code(lines, i, listing)
    return {i for i in mono
            if not lines[i].bold or _next_to_code(lines, i, right)
            or code[line_style(lines[i])] >= CODE_STYLE * count[line_style(lines[i])]}


CODE_STYLE = 0.5
"""A monospace style is a listing's when at least this share of its lines touch code or head
it."""

OVER = 12
"""Lines read after a line to tell what it heads."""


def _over_code(lines: Sequence[Line], i: int, listing: AbstractSet[int]) -> bool:
    """The lines after ``i`` (up to the next in its style, at most ``OVER``) are mostly code."""
    style = line_style(lines[i])
    code = total = 0
    for j in range(i + 1, min(i + 1 + OVER, len(lines))):
        if lines[j].role != BODY:
            continue
        if line_style(lines[j]) == style and lines[j].mono:
            break
        n = len(lines[j].text)
        total += n
        code += n if lines[j].mono or j in listing else 0
    return total > 0 and code >= CODE_STYLE * total


def _next_to_code(lines: Sequence[Line], i: int, right: float) -> bool:
    """A monospace line right above or below, without the space that sets a heading apart:
    ``i`` is a row of a listing."""
    ln = lines[i]
    for j in (i - 1, i + 1):
        if not 0 <= j < len(lines) or lines[j].page != ln.page or not lines[j].mono:
            continue
        if _one_title(lines, i, j, right):
            continue  # its own title wrapping ("<test qual=… target="default"" / "compare=…>")
        gap = lines[j].y0 - ln.y1 if j > i else ln.y0 - lines[j].y1
        if gap < TIGHT * min(ln.height, lines[j].height):
            return True
    return False


def _one_title(lines: Sequence[Line], i: int, j: int, right: float) -> bool:
    """Lines ``i`` and ``j`` are one title wrapped: the same block, in the same style, the
    upper line ending where the lower one's first word would not have fitted before the text
    column's ``right`` edge, and the block no longer than a title (``_MAX_HEADING_LINES``).
    Two short tags stacked in one block ("main-pane-height height" over "main-pane-width
    width") are two rows, not one title."""
    block = lines[i].block
    if lines[j].block != block or line_style(lines[j]) != line_style(lines[i]):
        return False
    upper, lower = lines[min(i, j)], lines[max(i, j)]
    words = lower.text.split()
    advance = (lower.x1 - lower.x0) / max(len(lower.text), 1)
    if not words or upper.x1 + advance * (len(words[0]) + 1) < right:
        return False
    k = i
    while k > 0 and lines[k - 1].block == block:
        k -= 1
    size = 0
    while k + size < len(lines) and lines[k + size].block == block:
        size += 1
    return size <= _MAX_HEADING_LINES


_SENTENCE_INSIDE = re.compile(r"\w[.!?]\s+[A-Z]")


def _run_in(c: HeadingCandidate, lines: Sequence[Line]) -> bool:
    """A paragraph's lead set in bold, not a heading: its paragraph goes on in the same block
    below it, and its line ends one sentence and goes on with the next ("1. Superfluous
    font-styles should be omitted. Do not use small"), or the line below, in its size, goes
    on with its sentence ("3. Differing capitalization styles should be used to make" /
    "names of authors …")."""
    below = c.last + 1
    if below >= len(lines) or lines[below].block != lines[c.last].block:
        return False
    nxt = lines[below]
    return (_SENTENCE_INSIDE.search(strip_numbering(c.title)) is not None
            or (nxt.text[:1].islower() and bucket(nxt.size) == bucket(lines[c.last].size)))


def _word_goes_on(c: HeadingCandidate, lines: Sequence[Line]) -> bool:
    """The candidate opens with the rest of a word the line right above it broke with a hyphen
    ("docu-" / "ment", a table cell's wrapped text): the rest of a line, not a title."""
    if c.first == 0 or not c.title[:1].islower():
        return False
    above, ln = lines[c.first - 1], lines[c.first]
    return (above.page == ln.page and -ln.height / 2 < ln.y0 - above.y1 < ln.height
            and above.text.rstrip().endswith("-"))


def _without_contents_rows(cands: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """A candidate that is a later heading's title followed by a page number is a row of a
    contents page that was not recognised as one ("2 Use 2" before "2 Use"; "第2 节使用示例 2"
    before "第2 节 使用示例": ``title_forms``); so are rows listed without page numbers
    (``_without_listed_ahead``)."""
    later: set[str] = set()
    keep = []
    for c in reversed(cands):
        m = PAGE_REF.match(c.title)
        if m is None or not title_forms(m.group(1)) & later:
            keep.append(c)
        later |= title_forms(c.title)
    return _without_listed_ahead(keep[::-1])


LISTED_AHEAD = 3
"""Numbered candidates in a row, each a later heading's title, that make a contents list."""

LISTED_GAP = 2
"""At most this many lines between two rows of such a list."""


def _without_listed_ahead(cands: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """Numbered candidates that repeat later headings' titles, number and all,
    ``LISTED_AHEAD`` or more in a row on lines at most ``LISTED_GAP`` apart, are a contents
    list printed without page numbers (linegoal's boxed "Contents of linegoal", a chapter's
    mini contents), not headings: a heading has its text under it before the next.  A
    collection whose articles repeat "1 Introduction", "2 Methods" sets text between them and
    keeps them."""
    later: set[str] = set()
    ahead = [False] * len(cands)
    for k in range(len(cands) - 1, -1, -1):
        title = norm_title(cands[k].title)  # number and all: "1.2.1 First Use" is no "1.9.1"'s
        ahead[k] = cands[k].depth is not None and title in later
        later.add(title)
    drop: set[int] = set()
    k = 0
    while k < len(cands):
        if not ahead[k]:
            k += 1
            continue
        end = k  # the row runs on while the next one repeats too, close under it
        while (end + 1 < len(cands) and ahead[end + 1]
               and cands[end + 1].first - cands[end].last - 1 <= LISTED_GAP):
            end += 1
        if end - k + 1 >= LISTED_AHEAD:
            drop.update(range(k, end + 1))
        k = end + 1
    return [c for k, c in enumerate(cands) if k not in drop] if drop else cands


TEXT_STYLE_SHARE = 0.1
"""A regular-weight style carrying this share of a document's characters or more, in lines as
long as a text's, is a second text style (a bibliography's, the annotations' of a style
guide), not a heading style."""

TEXT_LINE = 45
"""Characters a line of running text holds on average (a heading's line holds far fewer)."""


def _without_text_styles(
    cands: list[HeadingCandidate], lines: Sequence[Line]
) -> list[HeadingCandidate]:
    """Unnumbered candidates in a text style dropped: a heading style is rare and short."""
    chars: Counter[tuple[float, bool]] = Counter()
    count: Counter[tuple[float, bool]] = Counter()
    for ln in lines:
        if ln.role == BODY and not ln.code:
            chars[line_style(ln)] += text_width(ln.text)
            count[line_style(ln)] += 1
    total = sum(chars.values()) or 1
    text_styles = {s for s, n in chars.items()
                   if not s[1] and n >= TEXT_STYLE_SHARE * total and n >= TEXT_LINE * count[s]}
    return [c for c in cands if c.depth is not None or c.style not in text_styles]


LABEL_REPEATS = 3
"""A title printed this many times is a label ("Note Style", "Example"), not a section's."""


def _without_label_styles(cands: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """Unnumbered candidates of a style whose titles are mostly labels (each printed
    ``LABEL_REPEATS`` times or more) dropped, the style's other titles with them: a style
    that sets "Note Style" over every example is the examples' labels' style."""
    by_style: dict[tuple[float, bool], list[HeadingCandidate]] = defaultdict(list)
    for c in cands:
        if c.depth is None and not c.part:
            by_style[c.style].append(c)
    labels = set()
    for style, members in by_style.items():
        titles = [norm_title(c.title) for c in members]
        # a title over consecutive pages (a slide continued) is printed once
        counts = Counter(t for k, t in enumerate(titles) if k == 0 or titles[k - 1] != t)
        repeated = sum(1 for c in members if counts[norm_title(c.title)] >= LABEL_REPEATS)
        if repeated >= 0.5 * len(members):
            labels.add(style)
    return [c for c in cands if c.depth is not None or c.part or c.style not in labels]


def _without_byline(
    cands: list[HeadingCandidate], lines: Sequence[Line], page_widths: Sequence[float],
    text: float, column: tuple[float, float],
) -> list[HeadingCandidate]:
    """The document's first heading centred on its page or in its text column (a one-sided
    layout sets the column off the page's middle), without the unnumbered candidates that
    follow it with no line of the text's size between but short centred ones (its subtitle,
    its authors and their affiliations, an e-mail address in code type between them), no
    larger than it and centred or lighter than a bold title (a conference paper's authors
    stand in columns side by side, each centred in its own), and not in the style the document
    numbers its sections in ("ABSTRACT" in the type of "1. INTRODUCTION" is a heading)."""
    left, right = column

    def centred(ln: Line) -> bool:  # a title as wide as the column has less than an em inside
        return (centred_on_page(ln, page_widths) or centred_in(ln, column)
                or ln.x0 > left + 1 and abs(ln.x0 + ln.x1 - left - right) / 2
                <= CENTRED * (right - left))

    def in_block(ln: Line) -> bool:  # centred and short: a paragraph's full line is neither
        return centred(ln) and ln.x1 - ln.x0 < FULL_LINE * (right - left)

    if not cands or cands[0].depth is not None or not centred(lines[cands[0].first]):
        return cands
    title, k = cands[0], 1
    head = lines[title.first]
    numbered = {c.style for c in cands if c.depth is not None}
    while k < len(cands):
        c = cands[k]
        ln = lines[c.first]
        between = range(cands[k - 1].last + 1, c.first)
        in_middle = centred(ln)
        if c.depth is not None or ln.page != head.page or ln.size > head.size:
            break
        if not (in_middle and not between) and (
                c.style in numbered or not (in_middle or head.bold and not ln.bold)
                or any(lines[j].role == BODY and bucket(lines[j].size) == text
                       and not in_block(lines[j]) for j in between)):
            break
        k += 1
    return [title, *cands[k:]]


def _back_matter(cands: Sequence[HeadingCandidate], levels: list[int]) -> list[int]:
    """Unnumbered headings after the last numbered one, above the numbered top level, put at
    that level, unless their style heads numbered headings elsewhere (a part's style: the
    index of a book in parts is a part of its own)."""
    numbered = [k for k, c in enumerate(cands) if c.depth is not None]
    if not numbered:
        return levels
    top = min(levels[k] for k in numbered)
    heads = {c.style for k, c in enumerate(cands) if k < numbered[-1] and c.depth is None}
    return [top if k > numbered[-1] and lv < top and not c.part and c.style not in heads
            else lv for k, (c, lv) in enumerate(zip(cands, levels, strict=True))]


def _drop_continued(
    cands: Sequence[HeadingCandidate], levels: Sequence[int]
) -> list[tuple[HeadingCandidate, int]]:
    """Candidates with their levels, a title repeated by the next candidate at its level or
    above (only deeper ones between) kept once: the first."""
    out: list[tuple[HeadingCandidate, int]] = []
    for c, level in zip(cands, levels, strict=True):
        prev = next(((p, lv) for p, lv in reversed(out) if lv <= level), None)
        if prev is not None and prev[1] == level and norm_title(prev[0].title) == norm_title(
            c.title
        ):
            continue
        out.append((c, level))
    return out


MIN_LETTERS = 3
"""Index letters in alphabetical order before they count as an index's group heads."""


def _with_index_letters(
    kept: list[tuple[HeadingCandidate, int]], lines: Sequence[Line], text: float
) -> list[tuple[HeadingCandidate, int]]:
    """``kept`` with the group letters of an index inserted, one level below the heading that
    precedes each run of them."""
    taken = {i for c, _ in kept for i in range(c.first, c.last + 1)}
    runs = _letter_runs(lines, text, taken)
    if not runs:
        return kept
    grouped = {i for run in runs for i in run}  # a lead group read as a heading joins its run
    out = [(c, lv) for c, lv in kept if grouped.isdisjoint(range(c.first, c.last + 1))]
    for run in runs:
        before = [lv for c, lv in out if c.first < run[0]]
        level = (before[-1] if before else 0) + 1
        out += [(HeadingCandidate(i, i, lines[i].text, line_style(lines[i]), None, False), level)
                for i in run]
    return sorted(out, key=lambda x: x[0].first)


def _letter_runs(lines: Sequence[Line], text: float, taken: set[int]) -> list[list[int]]:
    """Runs of index letters: lines of one capital letter, bold or larger than the text,
    ascending, each with lines of entries after it, most of the entries ending in a page
    number (a figure's panel letters have no page references between them)."""
    letters = [i for i, ln in enumerate(lines)
               if i not in taken and ln.role == BODY and len(ln.text) == 1 and ln.text.isupper()
               and (ln.bold or ln.size >= text * LARGE_RATIO)]
    runs: list[list[int]] = []
    for i in letters:
        run = runs[-1] if runs else None
        if run and lines[i].text > lines[run[-1]].text and line_style(lines[i]) == line_style(
            lines[run[-1]]
        ) and i - run[-1] >= 2:
            run.append(i)
        else:
            runs.append([i])
    return [_with_lead_group(lines, run, taken) for run in runs
            if len(run) >= MIN_LETTERS and _entries_between(lines, run)]


def _with_lead_group(lines: Sequence[Line], run: list[int], taken: set[int]) -> list[int]:
    """``run`` with the group that an index opens before its letters ("Symbols", "Numbers",
    "Zahlen"): the nearest line before the first letter in the letters' own style, a word or
    two of letters, with only entries between them, most ending in a page number."""
    style, first = line_style(lines[run[0]]), run[0]
    for i in range(first - 1, max(-1, first - LEAD_GROUP_LINES), -1):
        ln = lines[i]
        alike = line_style(ln) == style
        if ln.role != BODY or (i in taken and not alike):
            return run
        if alike and not ln.code:
            words = ln.text.split()
            entries = [lines[k].text for k in range(i + 1, first) if lines[k].role == BODY]
            lead = (0 < len(words) <= 2 and all(w.isalpha() for w in words)
                    and _page_references(entries))
            return [i, *run] if lead else run
    return run


LEAD_GROUP_LINES = 40
"""Lines before an index's first letter searched for the group it opens with."""


def _entries_between(lines: Sequence[Line], run: Sequence[int]) -> bool:
    inside = set(run)
    entries = [ln.text for i, ln in enumerate(lines[run[0]:run[-1]], run[0])
               if i not in inside and ln.role == BODY]
    return _page_references(entries)


def _page_references(entries: Sequence[str]) -> bool:
    """An index's entries: some, most of them ending in a page number."""
    return sum(t[-1:].isdigit() for t in entries) >= 0.5 * len(entries) > 0


