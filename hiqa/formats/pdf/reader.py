"""PDF -> ``Document`` (Markdown Formatter, paper §3.1).

One pass over the pages with PyMuPDF keeps compact ``Line`` records and the tables; the PDF
is closed before any document-wide analysis, so memory grows with the text, not with the
page dictionaries.  Headings then come from one of two places:

* the outline (bookmarks), when the PDF has one: titles, levels and pages are taken exactly
  as written, and each entry is located on its page (a line that reads like the title) to
  split the body text between sections; an entry whose title cannot be found is placed at
  the top of its page;
* otherwise the layout (``hiqa.formats.pdf.layout``): font size and weight, numbering,
  running headers/footers removed, one style -> level table for the whole document.

Definition terms (a bold or monospace tag with an indented description) become term events
(issue #17); consecutive code paragraphs one fence; ruled and borderless tables Markdown tables
(``hiqa.formats.pdf.tables``); captioned figures image blocks (``hiqa.formats.pdf.figures``).
The title follows the PDF title rule of ``hiqa.formats.pdf.title``, its source kept in
``metadata["title_source"]``.  Every failure of the PDF library is turned into a
``DocumentError`` subclass with a message a user can act on.
"""

from __future__ import annotations

import functools
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pymupdf

from hiqa.errors import DocumentError, EncryptedDocumentError, ScannedDocumentError
from hiqa.formats.pdf.below_toc import deeper_headings, first_form_item, headings_within
from hiqa.formats.pdf.figures import (
    FoundFigure,
    add_references,
    caption_unlabelled,
    figure_block,
    page_figures,
)
from hiqa.formats.pdf.furniture import mark_furniture
from hiqa.formats.pdf.labels import page_labels
from hiqa.formats.pdf.lines import (
    BODY,
    HEADING,
    FixedPitch,
    FoundHeading,
    Line,
    body_size,
    join_row,
    margin_pieces,
    norm_title,
    page_lines,
    set_apart,
    title_forms,
)
from hiqa.formats.pdf.tables import (
    FoundTable,
    aligned_regions,
    extract_borderless,
    extract_tables,
    ruled_area,
)
from hiqa.formats.pdf.terms import find_terms, term_text
from hiqa.formats.pdf.textlayer import TEXT_FLAGS, TextLayer
from hiqa.formats.pdf.title import choose_pdf_title, running_title
from hiqa.formats.pdf.toc import find_toc, page_ranges, title_elsewhere
from hiqa.formats.pdf.typography import typographic_headings
from hiqa.formats.structure import Event, build_document
from hiqa.model import Block, Document, Heading

_OCR_DPI = 300
_STORE_SHRINK_EVERY = 200  # pages; keeps MuPDF's font/image cache from growing unbounded
_MAX_TITLE_LINES = 3
_ONE_LETTER_LABEL = re.compile(r"^[A-Z]\s+\S")
_LEADER_DOTS = re.compile(r"(?:\s?\.){4,}\s?")


@dataclass
class _Scan:
    """What the page pass keeps: compact lines, tables and per-page facts."""

    lines: list[Line] = field(default_factory=list)
    tables: list[FoundTable] = field(default_factory=list)
    figures: list[FoundFigure] = field(default_factory=list)
    page_heights: list[float] = field(default_factory=list)
    page_widths: list[float] = field(default_factory=list)
    margin_pieces: list[list[str]] = field(default_factory=list)  # per page, header/footer texts
    page_starts: list[int] = field(default_factory=list)  # index of each page's first line
    textless_with_images: list[int] = field(default_factory=list)
    textless: list[int] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)  # scanned pages read by tesseract
    unreadable: list[int] = field(default_factory=list)
    table_failures: list[int] = field(default_factory=list)


def parse_pdf(path: Path, doc_id: str) -> Document:
    """Read a PDF into a ``Document``.

    Raises ``DocumentError`` for a file that is not a readable PDF, ``EncryptedDocumentError``
    when a password is needed and ``ScannedDocumentError`` when no page has a text layer.
    Pages without text in an otherwise digital PDF produce a warning instead.
    """
    source = str(path)
    with _quiet_mupdf():
        doc = _open(Path(path), source)
        try:
            page_count = doc.page_count
            scan = _scan_pages(doc, source)
            outline_problems: list[str] = []
            outline = _outline(doc, outline_problems)
            meta = {k: v for k, v in (doc.metadata or {}).items() if isinstance(v, str) and v}
            labels = page_labels(doc, scan.margin_pieces)
            repaired = _was_repaired()
        except DocumentError:
            raise
        except Exception as exc:  # PyMuPDF raises plain RuntimeError/ValueError variants
            raise DocumentError(source, f"not a valid PDF or the file is damaged ({exc})") from exc
        finally:
            doc.close()

    warnings = _warnings(scan, repaired) + outline_problems
    lines = scan.lines
    body = body_size(lines)
    running = running_title(scan.margin_pieces)
    mark_furniture(lines, scan.page_heights, body, running)
    toc = find_toc(lines, scan.page_starts)
    meta.update({"toc_pages": page_ranges(toc.toc_pages), "index_pages": page_ranges(toc.index_pages),
                 "toc_entries": str(len(toc.entries)), "toc_found": str(toc.found),
                 "toc_unconfirmed_pages": page_ranges(toc.unconfirmed_pages),
                 "toc_unconfirmed_entries": str(toc.unconfirmed_entries)})
    if labels:
        meta["page_labels"] = "\x1f".join(labels)  # metadata values are strings
    if outline:
        headings = _place_outline(outline, lines, scan.page_starts, body)
        meta["headings_from"] = "outline"
    elif toc.usable:
        placed = _place_outline(toc.outline(), lines, scan.page_starts, body, True)
        meta["toc_placed"] = str(len(placed))
        books = len({e.run for e in toc.entries})
        headings = deeper_headings(placed, lines, body, scan.page_widths, books)
        first_item = first_form_item(lines, set(toc.toc_pages))
        if first_item is not None:
            headings = headings_within(headings, lines, body, first_item, scan.page_widths)
        meta["headings_from"] = "toc"
    else:
        headings = typographic_headings(lines, body, scan.page_widths)
        meta["headings_from"] = "layout"
    title, meta["title_source"] = choose_pdf_title(
        meta.get("title"),
        lines,
        scan.page_heights,
        scan.margin_pieces,
        (h.title for h in headings),
        body,
        source,
    )
    figures = caption_unlabelled(scan.figures, lines)
    terms = find_terms(lines, term_text, (h.anchor for h in headings))
    events = add_references(_events(lines, headings, scan.tables, figures, terms))
    return build_document(
        doc_id=doc_id,
        source=source,
        fmt="pdf",
        events=events,
        metadata_title=title,
        page_count=page_count,
        warnings=warnings,
        metadata=meta,
    )


# ---------------------------------------------------------------------------------------------
# Opening and reading


@contextmanager
def _quiet_mupdf() -> Iterator[None]:
    """MuPDF prints repair messages on stderr; collect them instead."""
    previous = pymupdf.TOOLS.mupdf_display_errors()
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.reset_mupdf_warnings()
    try:
        yield
    finally:
        pymupdf.TOOLS.mupdf_display_errors(previous)


def _open(path: Path, source: str) -> Any:
    if not path.is_file():
        raise DocumentError(source, "file not found")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:
        raise DocumentError(
            source, f"not a valid PDF or the file is damaged and cannot be repaired ({exc})"
        ) from exc
    if doc.needs_pass:
        doc.close()
        raise EncryptedDocumentError(
            source,
            "the PDF is encrypted and needs a password; save an unprotected copy "
            "(e.g. `qpdf --decrypt --password=PASSWORD in.pdf out.pdf`) and add that instead",
        )
    if doc.page_count == 0:
        doc.close()
        raise DocumentError(source, "not a valid PDF or the file is damaged: it has no pages")
    return doc


def _was_repaired() -> bool:
    log = pymupdf.TOOLS.mupdf_warnings(reset=True) or ""
    return "repair" in log.casefold()


def _scan_pages(doc: Any, source: str) -> _Scan:
    scan = _Scan()
    block_base = 0
    layer = TextLayer(source)  # repairs of the text; what the pages so far proved
    fixed = FixedPitch()  # fonts proved fixed-pitch on the pages so far
    for pno in range(doc.page_count):
        page_no = pno + 1
        scan.page_starts.append(len(scan.lines))
        try:
            page = doc.load_page(pno)
            height = float(page.rect.height) or 792.0
            page_dict = layer.page_dict(page, page_no)
        except Exception:  # noqa: BLE001 - a damaged page is skipped with a warning
            scan.page_heights.append(792.0)
            scan.page_widths.append(612.0)
            scan.margin_pieces.append([])
            scan.unreadable.append(page_no)
            continue
        scan.page_heights.append(height)
        scan.page_widths.append(float(page.rect.width) or 612.0)
        lines = page_lines(page_dict, page_no, block_base, fixed.learn(page_dict))
        if not lines and _has_images(page):
            ocr = _ocr_dict(page)
            if ocr is not None and (lines := page_lines(ocr, page_no, block_base)):
                page_dict = ocr
                scan.ocr_pages.append(page_no)
        scan.margin_pieces.append(margin_pieces(page_dict, height))
        # a borderless table has rows of several pieces; a page of prose has none
        regions = aligned_regions(page_dict) if _multi_piece_rows(lines) >= 3 else []
        block_base = max(block_base + len(page_dict.get("blocks", ())) + 1,
                         max((ln.block for ln in lines), default=0) + 1)
        del page_dict
        if not lines:
            scan.textless.append(page_no)
            if _has_images(page):
                scan.textless_with_images.append(page_no)
            continue
        offset = len(scan.lines)
        scan.lines.extend(lines)
        try:
            area, tinted = ruled_area(page)
            if area is not None:
                scan.tables.extend(extract_tables(page, lines, offset, area))
            elif regions and not tinted:
                scan.tables.extend(extract_borderless(page, lines, offset, regions))
        except Exception:  # noqa: BLE001 - the page's text is kept, only the grid is lost
            scan.table_failures.append(page_no)
        scan.figures.extend(page_figures(page, lines, offset))
        if page_no % _STORE_SHRINK_EVERY == 0:
            pymupdf.TOOLS.store_shrink(100)
    scan.page_starts.append(len(scan.lines))
    if not scan.lines:
        if len(scan.unreadable) == doc.page_count:
            raise DocumentError(
                source, "not a valid PDF or the file is damaged: no page can be read"
            )
        raise ScannedDocumentError(source, scan.textless or list(range(1, doc.page_count + 1)))
    return scan


@functools.cache
def _ocr_language() -> str | None:
    """Tesseract's language for scanned pages: English when installed, else the first
    installed one; None when tesseract (Debian's ``tesseract-ocr``) is not there."""
    if shutil.which("tesseract") is None:
        return None
    try:
        tessdata = Path(pymupdf.get_tessdata())
    except Exception:  # noqa: BLE001 - no tessdata folder: no OCR
        return None
    langs = sorted(p.stem for p in tessdata.glob("*.traineddata") if p.stem != "osd")
    if not langs:
        return None
    return "eng" if "eng" in langs else langs[0]


def _ocr_dict(page: Any) -> dict[str, Any] | None:
    """A scanned page's text read by tesseract through PyMuPDF, as a text dictionary; None
    where tesseract is missing or fails.  OCR knows no font, so the spans lose theirs (its
    placeholder font is flagged monospace, which would make every line code)."""
    language = _ocr_language()
    if language is None:
        return None
    try:
        textpage = page.get_textpage_ocr(language=language, dpi=_OCR_DPI, full=True)
        page_dict = page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage)
    except Exception:  # noqa: BLE001 - an OCR failure leaves the page textless, with a warning
        return None
    for block in page_dict.get("blocks", ()):
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                span["flags"], span["font"] = 0, ""
    return page_dict


def _multi_piece_rows(lines: Sequence[Line]) -> int:
    return sum(ln.rest_x < ln.x1 - 1 for ln in lines)


def _has_images(page: Any) -> bool:
    try:
        return bool(page.get_images(full=False))
    except Exception:  # noqa: BLE001 - damaged resources: treat as no image
        return False


def _outline(doc: Any, problems: list[str]) -> list[tuple[int, str, int]]:
    """The outline entries; an unreadable outline appends a warning to ``problems`` and gives
    none, so headings come from the layout instead."""
    try:
        toc = doc.get_toc(simple=True)
    except RecursionError:
        problems.append("the PDF outline (bookmarks) is nested too deeply to read; headings were "
                        "detected from the page layout instead")
        return []
    except Exception as exc:  # noqa: BLE001 - a broken outline falls back to layout headings
        problems.append(f"the PDF outline (bookmarks) could not be read ({exc}); headings were "
                        "detected from the page layout instead")
        return []
    return [(int(lvl), str(title), int(page)) for lvl, title, page in toc if str(title).strip()]


def _warnings(scan: _Scan, repaired: bool) -> list[str]:
    out = []
    if repaired:
        out.append("the PDF structure was damaged and has been repaired; some text may be missing")
    if scan.ocr_pages:
        out.append(
            f"page(s) {_page_list(scan.ocr_pages)} have no text layer (scanned images); their "
            "text was read by OCR (tesseract) and may hold recognition errors"
        )
    missed = scan.textless_with_images  # OCR was not there or read nothing
    if missed:
        hint = (
            "OCR found no text on them"
            if _ocr_language()
            else "install tesseract-ocr, or run OCR (e.g. `ocrmypdf`), to include it"
        )
        out.append(
            f"page(s) {_page_list(missed)} have no text layer (scanned images?); their content "
            f"is not indexed — {hint}"
        )
    if scan.unreadable:
        out.append(
            f"page(s) {_page_list(scan.unreadable)} could not be read (damaged) and were skipped"
        )
    if scan.table_failures:
        out.append(
            f"table detection failed on page(s) {_page_list(scan.table_failures)}; "
            "their tables are kept as plain text"
        )
    return out


def _page_list(pages: Sequence[int]) -> str:
    return ", ".join(map(str, pages[:20])) + (" ..." if len(pages) > 20 else "")


# ---------------------------------------------------------------------------------------------
# Outline


def _place_outline(
    outline: Sequence[tuple[int, str, int]],
    lines: Sequence[Line],
    page_starts: Sequence[int],
    body: float,
    confirmed_only: bool = False,
) -> list[FoundHeading]:
    """Locate each outline entry on its page, in outline order.

    Titles, levels and pages are the outline's own.  The anchor (where the body is split) is
    the first line at or after the previous entry's anchor that reads like the title (larger
    or bold lines preferred); without one, the top of the page.  Anchors never go backwards,
    so the sections keep the outline's order.  ``confirmed_only`` (a printed TOC, which may
    also list figures and tables): an entry whose title is not on its page (±1) is left out.
    """
    n_pages = len(page_starts) - 1
    found: list[FoundHeading] = []
    cursor = 0
    prev_page = 1
    # each entry reads its pages' line windows again: their title forms are worked out once
    # (ltnews35: 42 entries, 34,000 calls, three quarters of its parse)
    keys_of = functools.cache(_title_keys)
    for level, title, page in outline:
        level = max(1, level)
        if not 1 <= page <= n_pages:
            found.append(FoundHeading(cursor, level, title, prev_page))
            continue
        lo, hi = (page - 1, min(page + 1, n_pages)) if confirmed_only else (page, page)
        start, stop = max(cursor, page_starts[max(lo, 1) - 1]), page_starts[hi]
        match = _find_title(title, lines, start, stop, body, keys_of)
        if match is None and confirmed_only:
            match = title_elsewhere(title, lines, start, stop, body)
        if match is None and confirmed_only:
            continue
        if match is None:
            anchor = max(cursor, page_starts[page - 1])
        else:
            anchor, last = match
            for i in range(anchor, last + 1):
                lines[i].role = HEADING
        page = lines[anchor].page if match is not None else page
        found.append(FoundHeading(anchor, level, title, page))
        cursor = anchor
        prev_page = page
    return found


def _find_title(
    title: str, lines: Sequence[Line], start: int, stop: int, body: float,
    keys_of: Callable[[str], frozenset[str]],
) -> tuple[int, int] | None:
    """The first line (and the last, a title wrapped) in ``start:stop`` reading like
    ``title``, larger or bold lines preferred; ``keys_of``: ``_title_keys``, cached by the
    caller across the entries of one outline."""
    keys = keys_of(title)
    if not keys:
        return None
    plain: tuple[int, int] | None = None
    for i in range(start, stop):
        if lines[i].role != BODY:
            continue
        text = joined = unbroken = ""
        for j in range(i, min(i + _MAX_TITLE_LINES, stop)):
            if lines[j].role != BODY:
                break
            piece = lines[j].text
            # a title hyphenated over two lines is also tried whole, hyphen kept ("branch-" /
            # "prediction") and word joined ("argu-" / "ments")
            joined = joined + piece if joined.endswith("-") else f"{joined} {piece}".strip()
            unbroken = join_row(unbroken, piece)
            text = f"{text} {piece}" if text else piece
            if (keys_of(text) | keys_of(joined) | keys_of(unbroken)) & keys:
                if set_apart(lines[i], body):
                    return i, j
                if plain is None:
                    plain = (i, j)
                break
            if len(norm_title(text)) > 2 * max(len(k) for k in keys) + 20:
                break
    return plain


def _title_keys(text: str) -> frozenset[str]:
    """Normal forms a title may be printed in: as is, without its number, without a roman part
    number ("II Casing systems" vs "Part II" / "Casing systems"), and without a one-letter
    appendix label (outline "B Tests" vs page "Appendix B Tests")."""
    keys = title_forms(text)
    if _ONE_LETTER_LABEL.match(text):
        keys.add(norm_title(text[2:]))
    return frozenset(k for k in keys if k)


# ---------------------------------------------------------------------------------------------
# Events


def _events(
    lines: Sequence[Line],
    headings: Sequence[FoundHeading],
    tables: Sequence[FoundTable],
    figures: Sequence[FoundFigure],
    terms: dict[int, str],
) -> list[Event]:
    inserts: dict[int, list[tuple[int, int, Event]]] = defaultdict(list)
    for k, h in enumerate(headings):
        inserts[h.anchor].append((0, k, Heading(h.level, h.title, h.page)))
    for k, t in enumerate(tables):
        block = Block(kind="table", text=t.markdown, page=t.page, caption=t.caption, rows=t.rows)
        inserts[t.anchor].append((1, k, block))
    for k, f in enumerate(figures):
        inserts[f.anchor].append((2, k, figure_block(f)))

    events: list[Event] = []
    para: list[Line] = []
    code: list[Line] = []  # the code block being built: its paragraphs become one fence

    def flush() -> None:
        if not para:
            return
        if _is_code(para):
            if code:
                events.pop()
            code.extend(para)
            events.append(Block(kind="text", text=_fence(code), page=code[0].page))
        else:
            code.clear()
            events.append(Block(kind="text", text=_paragraph(para), page=para[0].page))
        para.clear()

    for i, ln in enumerate(lines):
        if i in inserts:
            flush()
            code.clear()
            events.extend(e for _, _, e in sorted(inserts.pop(i), key=lambda x: x[:2]))
        if ln.role != BODY:
            flush()
            continue
        if i in terms:
            flush()
            code.clear()
            term = terms[i]
            raw = "\\" + term if term.startswith(("#", "- ", "* ", "+ ", ">")) else term
            events.append(Heading(0, term, ln.page, "term", raw))
            rest = ln.text[ln.text.find(term) + len(term) :].strip()
            if not rest:
                continue
            ln = replace(ln, text=rest, x0=ln.rest_x, tag=0, head=0)
        if para and (
            ln.block != para[-1].block or ln.page != para[-1].page or ln.code != para[-1].code
        ):
            flush()
        para.append(ln)
    flush()
    for i in sorted(inserts):
        events.extend(e for _, _, e in sorted(inserts[i], key=lambda x: x[:2]))
    return events


def _is_code(lines: Sequence[Line]) -> bool:
    return sum(len(ln.text) for ln in lines if ln.code) >= 0.8 * sum(len(ln.text) for ln in lines)


def _fence(lines: Sequence[Line]) -> str:
    """Consecutive code paragraphs as one fenced block; a gap of more than a line between
    them on the page is the blank line the program had there."""
    out = [lines[0].text]
    for prev, ln in pairwise(lines):
        if ln.page == prev.page and ln.block != prev.block and ln.y0 - prev.y0 > 1.5 * prev.height:
            out.append("")
        out.append(ln.text)
    return "```\n" + "\n".join(out) + "\n```"


_ENDS_IN_FIGURE = re.compile(r"\s\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?%?$|\s[—–]$")


def _figure_rows(texts: Sequence[str]) -> bool:
    """Lines that are a statement's rows, a label and its figures each ("Cost of sales 24,576
    21,162 21,643"): three or more, most ending in a figure.  Joined as prose they ran into one
    line that no reader (nor ``answer.figures``) can take apart again."""
    return len(texts) >= 3 and sum(1 for t in texts if _ENDS_IN_FIGURE.search(t)) >= 0.6 * len(
        texts)


def _paragraph(lines: Sequence[Line]) -> str:
    """Lines of one block as Markdown: table-of-contents lines kept one per line (dot leaders
    shortened), prose joined and de-hyphenated."""
    texts = [_LEADER_DOTS.sub(" \u2026 ", ln.text).strip() for ln in lines]
    if any(_LEADER_DOTS.search(ln.text) for ln in lines) or _figure_rows(texts):
        text = "\n".join(texts)
    else:
        text = ""
        for t in texts:
            if not text:
                text = t
            elif text.endswith("-") and len(text) > 1 and text[-2].isalpha() and t[:1].islower():
                text = text[:-1] + t
            else:
                text = f"{text} {t}"
    if text.startswith("#"):
        text = "\\" + text
    return text

