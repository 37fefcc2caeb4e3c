"""The title of a PDF, and where it came from (issue #10's title rule).

A collection of near-identical documents (man pages rendered to PDF, reports from one
template) all start with the same first heading ("NAME", "Introduction"); titled by it,
every cascaded path would begin with the same words and HCA would lose the one thing that
tells the documents apart.  So the title comes, in order, from:

1. ``metadata``: the PDF's metadata title, when it is meaningful (not empty, not a file
   name, not "untitled" or "Microsoft Word - report.doc");
2. ``title_block``: the largest text near the top of the first page, when it is clearly
   larger than the body text and is not a generic section name;
3. ``running_header``: a running header or footer that repeats on most pages and names the
   document (a man page's "LN(1)", printed at both ends of its header, wins);
4. ``filename``: the file name, humanised.

Never a generic heading: "NAME", "Contents" or "Introduction" name no document.

A title set in capitals (a man page's header "FREE(1)", many reports' running heads) that
spells the same letters and digits as the file name ("free.1.pdf") is written as the file
name writes it ("free(1)"): capitals there are typography, and the embedder is case-sensitive
while people write a name as they know it.  On the 80 dev man pages rendered to PDF, the
in-document dense ranking of the named questions' gold sections had MRR 0.781 with the
capitals and 0.843 with the file name's spelling (``bench/bench_peers.py``, docs/benchmarks.md).  A title
that is not all capitals, or that says anything the file name does not, is kept as printed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from hiqa.formats.pdf.lines import FURNITURE, Line, norm_title, numbering_depth

_TITLE_RATIO = 1.2  # a title block is set at least 20 % larger than the body text
_TITLE_ZONE = 0.4  # ... in the top 40 % of the first page
_MAX_TITLE_LINES = 3
_RUNNING_SHARE = 0.6  # a running header repeats on at least 60 % of the pages
_FILE_SUFFIX = re.compile(r"\.(?:pdf|docx?|odt|rtf|tex|dvi|ps|txt|md|html?|indd|pages)$", re.IGNORECASE)
_TOOL_PREFIX = re.compile(
    r"^(?:microsoft (?:word|powerpoint|excel)\s*-|untitled(?: document)?(?:[\s_-]*\d+)?$)", re.IGNORECASE
)
_PATH_LIKE = re.compile(r"^(?:[a-z]:\\|/|~/|\\\\)", re.IGNORECASE)  # a drive, root, home or UNC path
_PAGE_LIKE = re.compile(r"^(?:page\s*)?[\divxlc]+(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
_NOTICE = re.compile(r"©|\(c\)|\bcopyright\b|\ball rights reserved\b|\bconfidential\b", re.IGNORECASE)
_GENERIC = frozenset(
    norm_title(t)
    for t in (
        "name", "synopsis", "description", "options", "contents", "table of contents",
        "abstract", "introduction", "preface", "foreword", "overview", "summary", "index",
        "appendix", "references", "bibliography", "glossary", "notes", "acknowledgements",
        "acknowledgments", "executive summary", "background", "conclusion", "conclusions",
        "draft", "confidential", "copyright", "all rights reserved",
    )
)  # fmt: skip


def choose_pdf_title(
    metadata_title: str | None,
    lines: Sequence[Line],
    page_heights: Sequence[float],
    margin_pieces: Sequence[Sequence[str]],
    headings: Iterable[str],
    body: float,
    source: str,
) -> tuple[str, str]:
    """``(title, title_source)`` by the rule in the module docstring; ``margin_pieces`` are
    each page's header and footer texts, ``headings`` the titles of the detected headings."""
    meta = " ".join((metadata_title or "").split())
    if meta and _meaningful(meta, source):
        return meta, "metadata"
    block = title_block(lines, page_heights, body)
    if block:
        return spelt_as_file_name(block, source), "title_block"
    running = running_title(margin_pieces, headings)
    if running:
        return spelt_as_file_name(running, source), "running_header"
    return humanised_file_name(source), "filename"


def spelt_as_file_name(title: str, source: str) -> str:
    """``title`` in the file name's letter case when it is set in capitals and spells exactly
    the file name's letters and digits (``FREE(1)`` + ``free.1.pdf`` -> ``free(1)``; see the
    module docstring); otherwise ``title`` unchanged."""
    if any(ch.islower() for ch in title) or not any(ch.isupper() for ch in title):
        return title
    stem = _FILE_SUFFIX.sub("", Path(source).name)
    spelt = [ch for ch in stem if ch.isalnum()]
    if [ch.casefold() for ch in spelt] != [ch.casefold() for ch in title if ch.isalnum()]:
        return title
    letters = iter(spelt)
    return "".join(next(letters) if ch.isalnum() else ch for ch in title)


def _meaningful(title: str, source: str) -> bool:
    low = title.casefold()
    stem = Path(source).stem.casefold()
    return not (
        _FILE_SUFFIX.search(title)
        or _TOOL_PREFIX.match(title)
        or low in {stem, Path(source).name.casefold()}
        or _PATH_LIKE.match(title)
        or _generic(title)
    )


def _generic(text: str) -> bool:
    t = norm_title(text)
    return t in _GENERIC or sum(ch.isalpha() for ch in t) < 2


def title_block(lines: Sequence[Line], page_heights: Sequence[float], body: float) -> str:
    """The largest text in the top part of page 1 (up to three lines of that size), when it is
    clearly larger than the body text and not a numbered or generic heading."""
    if not lines or not page_heights:
        return ""
    zone = page_heights[0] * _TITLE_ZONE
    first_page = [ln for ln in lines if ln.page == 1 and ln.role != FURNITURE]
    top = [i for i, ln in enumerate(first_page) if ln.y0 <= zone and ln.upright]
    if not top:
        return ""
    size = max(first_page[i].size for i in top)
    if size < body * _TITLE_RATIO:
        return ""
    start = next(i for i in top if first_page[i].size >= size - 0.25)
    parts = [first_page[start]]
    for ln in first_page[start + 1 : start + _MAX_TITLE_LINES]:
        prev = parts[-1]
        if abs(ln.size - size) > 0.25 or ln.y0 - prev.y1 > 1.2 * prev.height:
            break
        parts.append(ln)
    title = " ".join(" ".join(ln.text for ln in parts).split())
    if _generic(title) or numbering_depth(title) is not None or len(title) > 200:
        return ""
    return title


def running_title(margin_pieces: Sequence[Sequence[str]], headings: Iterable[str] = ()) -> str:
    """A header/footer piece on most pages that names the document.

    A piece printed twice on the same page (a man page's "LN(1) ... LN(1)") names it
    surely; otherwise, provided the document has more than one page (on one page everything
    "repeats"), a piece that reads as one of the document's headings ("USING AUTOMAKE ..."
    beside the author's name), else the longest (a name is longer than an author or a date).
    Numbered pieces ("Chapter 7: Reference", on most pages of a manual whose chapter 7 is
    most of it) and notices (copyright, confidential) never name the document.
    """
    pages = len(margin_pieces)
    if not pages:
        return ""
    on_pages: Counter[str] = Counter()
    twice: Counter[str] = Counter()
    order: dict[str, int] = {}
    for pieces in margin_pieces:
        counts = Counter(pieces)
        for piece in list(counts):
            end = _both_ends(piece)
            if end:
                counts[end] += 2
        for piece, n in counts.items():
            on_pages[piece] += 1
            if n >= 2:
                twice[piece] += 1
            order.setdefault(piece, len(order))
    need = max(1, round(_RUNNING_SHARE * pages))
    usable = [
        p
        for p, n in on_pages.items()
        if n >= need
        and not _PAGE_LIKE.match(p)
        and not _generic(p)
        and not _NOTICE.search(p)
        and numbering_depth(p) is None
        and len(p) <= 120
    ]
    if not usable:
        return ""
    twins = [p for p in usable if twice[p] >= need]
    if twins:
        return min(twins, key=lambda p: order[p])
    if pages < 2:
        return ""
    named = {norm_title(h) for h in headings}
    return min(usable, key=lambda p: (norm_title(p) not in named, -len(p), order[p]))


def _both_ends(text: str) -> str:
    """The name a header prints at both of its ends when its pieces run together
    ("LONG_NAME(1) General Commands Manual LONG_NAME(1)" -> "LONG_NAME(1)")."""
    for k in range(len(text) // 2, 2, -1):
        end = text[:k]
        if text.endswith(end) and end.strip() == end and sum(ch.isalpha() for ch in end) >= 2:
            return end
    return ""


def humanised_file_name(source: str) -> str:
    """``quarterly_report-2023.pdf`` -> ``quarterly report-2023``."""
    name = Path(source).name
    stem = _FILE_SUFFIX.sub("", name) or name
    return " ".join(stem.replace("_", " ").split()) or name
