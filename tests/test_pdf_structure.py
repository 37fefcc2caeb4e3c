"""PDF structure rules of issue #10 on generated PDFs: the title rule, contents pages, title
pages and numbering restarts, bold body-size headings, code blocks and borderless tables."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pdf_fixtures as fx
import pytest

from hiqa.formats.pdf.reader import parse_pdf
from hiqa.formats.pdf.title import (
    choose_pdf_title,
    humanised_file_name,
    running_title,
    spelt_as_file_name,
)
from hiqa.model import Document


def _parse(path: Path) -> Document:
    return parse_pdf(path, path.name)


def _outline(doc: Document) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in doc.headings]


# --- title rule ----------------------------------------------------------------------------------


def test_empty_metadata_title_uses_the_title_block(tmp_path: Path) -> None:
    doc = _parse(fx.title_block_pdf(tmp_path))
    assert doc.title == "Pump Station Audit 2024"
    assert doc.metadata["title_source"] == "title_block"


def test_metadata_title_wins_when_meaningful(tmp_path: Path) -> None:
    doc = _parse(fx.outline_pdf(tmp_path))
    assert doc.title == "Plant Report"
    assert doc.metadata["title_source"] == "metadata"


@pytest.mark.parametrize(
    ("metadata", "meaningful"),
    [
        ("TCP/IP Guide", True),
        ("Untitled Goose Manual", True),
        ("Untitled", False),
        ("untitled-3", False),
        ("Microsoft Word - report.doc", False),
        ("report.pdf", False),
        ("report", False),  # the file name itself
        ("C:\\docs\\report", False),
        ("NAME", False),
    ],
)
def test_metadata_title_must_be_meaningful(metadata: str, meaningful: bool) -> None:
    title, source = choose_pdf_title(metadata, [], [], [], [], 10.0, "/x/report.pdf")
    assert (source == "metadata") is meaningful
    assert title == (metadata if meaningful else "report")


def test_man_page_is_titled_by_its_running_header_not_by_name(tmp_path: Path) -> None:
    doc = _parse(fx.man_page_pdf(tmp_path, pages=2))
    assert doc.title == "frob(8)"  # "FROB(8)" spelt as its file, frob.8.pdf, spells it
    assert doc.metadata["title_source"] == "running_header"
    assert doc.headings[0].title == "NAME"  # the generic first heading is not the title


def test_one_page_man_page_is_titled_by_the_name_at_both_header_ends(tmp_path: Path) -> None:
    doc = _parse(fx.man_page_pdf(tmp_path, pages=1))
    assert doc.page_count == 1
    assert doc.title == "frob(8)"
    # one page shows no repetition: the header is known by the title, the footer by its number
    assert "Manual" not in doc.markdown and "frobtools 1.0" not in doc.markdown


@pytest.mark.parametrize(
    ("title", "file", "expected"),
    [
        ("FREE(1)", "free.1.pdf", "free(1)"),  # capitals as typography: the file's spelling
        ("E2UNDO(8)", "/x/e2undo.8.pdf", "e2undo(8)"),
        ("LM317", "LM317.pdf", "LM317"),  # the file spells it in capitals too
        ("LM317T", "lm317.pdf", "LM317T"),  # says more than the file name: as printed
        ("ACME ANNUAL REPORT 2023", "report.pdf", "ACME ANNUAL REPORT 2023"),
        ("Acme Annual Report", "acme_annual_report.pdf", "Acme Annual Report"),  # not capitals
        ("2023", "2023.pdf", "2023"),
    ],
)
def test_a_title_in_capitals_is_spelt_as_its_file_name_spells_it(
    title: str, file: str, expected: str
) -> None:
    assert spelt_as_file_name(title, file) == expected


def test_without_title_block_or_header_the_file_name_is_humanised(tmp_path: Path) -> None:
    doc = _parse(fx.numbered_pdf(tmp_path))  # its largest first-page text is "Preface"
    assert doc.metadata["title_source"] == "filename"
    assert doc.title == "numbered"
    assert humanised_file_name("/x/quarterly_report-2023.pdf") == "quarterly report-2023"


def test_running_title_needs_most_pages_and_skips_page_numbers() -> None:
    pieces = [["ACME Quarterly Report", str(n)] for n in range(1, 6)]
    assert running_title(pieces) == "ACME Quarterly Report"
    assert running_title([["Draft"], ["Draft"], []]) == ""  # generic
    assert running_title([["Chapter 1"], ["Chapter 2"], ["Chapter 3"]]) == ""  # not repeated
    assert running_title([["Only Page Header"]]) == ""  # one page, printed once
    assert running_title([["LONG_NAME(1) General Commands Manual LONG_NAME(1)"]]) == "LONG_NAME(1)"
    # the author beside the title: the piece that reads as one of the headings wins
    author_and_title = [["Jane Doe", "PUMP GUIDE", str(n)] for n in range(1, 5)]
    assert running_title(author_and_title, ["Pump Guide", "1 Scope"]) == "PUMP GUIDE"
    assert running_title([["Chapter 7: Reference"]] * 3) == ""  # a chapter, not the document
    assert running_title([["© 2024 ACME Corp"]] * 3) == ""


# --- structure -----------------------------------------------------------------------------------


def test_contents_page_lines_are_not_headings_nor_text(tmp_path: Path) -> None:
    doc = _parse(fx.toc_pdf(tmp_path))
    assert doc.metadata["headings_from"] == "toc"
    assert [(h.level, h.title, h.page) for h in doc.headings] == [
        (1, "1 Scope", 2),
        (2, "1.1 Terms", 2),
        (1, "2 Operation", 3),
        (2, "2.1 Start-up", 3),
    ]
    assert ". . ." not in doc.markdown and "Contents" not in doc.markdown


def test_printed_toc_gives_levels_fonts_cannot_and_its_pages_give_no_text(tmp_path: Path) -> None:
    """Every heading is bold body text, so only the TOC's indentation tells chapters from
    sections; its printed numbers start at 1 on PDF page 3; the index lists terms."""
    doc = _parse(fx.printed_toc_pdf(tmp_path))
    assert doc.metadata["headings_from"] == "toc"
    assert doc.title == "Pump Station Annual Review"
    assert [(h.level, h.title, h.page) for h in doc.headings] == [
        (1, "Overview", 3), (2, "Scope of the review", 3), (2, "Sites visited", 3),
        (1, "Maintenance", 4), (2, "Valve replacements", 4), (2, "Sensor calibration", 4),
        (1, "Outlook", 5), (2, "Budget for next year", 5),
    ]
    # neither the contents page nor the index page is text of any section
    assert "Contents" not in doc.markdown and "gaskets" not in doc.markdown
    assert all(". . ." not in s.body and "\u2026" not in s.body for s in doc.sections)
    assert {p for s in doc.sections for p in s.pages} == {1, 3, 4, 5}


def test_without_a_toc_the_layout_decides(tmp_path: Path) -> None:
    doc = _parse(fx.numbered_pdf(tmp_path))
    assert doc.metadata["headings_from"] == "layout"


def test_title_pages_are_parts_and_each_book_numbers_from_one(tmp_path: Path) -> None:
    doc = _parse(fx.book_pdf(tmp_path))
    assert _outline(doc) == [
        (1, "Operator Guide"),
        (2, "1. Operator Guide Chapter 1"),
        (3, "1.1. Operator Guide Section 1"),
        (2, "2. Operator Guide Chapter 2"),
        (3, "2.1. Operator Guide Section 2"),
        (1, "Service Manual"),
        (2, "1. Service Manual Chapter 1"),
        (3, "1.1. Service Manual Section 1"),
        (2, "2. Service Manual Chapter 2"),
        (3, "2.1. Service Manual Section 2"),
    ]
    assert "Release 2.1" in doc.markdown  # the title page's sub-line is text, not a heading


def test_bold_body_size_headings_are_found_and_levelled(tmp_path: Path) -> None:
    doc = _parse(fx.bold_body_headings_pdf(tmp_path))
    assert _outline(doc) == [
        (1, "Widget Reference"),
        (2, "Installation"),
        (2, "Configuration"),
        (2, "Troubleshooting"),
    ]


def test_plain_weight_subsections_continuing_the_numbering_are_headings(tmp_path: Path) -> None:
    doc = _parse(fx.plain_subsections_pdf(tmp_path))
    assert _outline(doc) == [
        (1, "1. Chapter 1"),
        (2, "1.1. Topic 1.1"),
        (2, "1.2. Topic 1.2"),
        (1, "2. Chapter 2"),
        (2, "2.1. Topic 2.1"),
        (2, "2.2. Topic 2.2"),
    ]


def test_man_page_sections_are_headings_and_header_is_furniture(tmp_path: Path) -> None:
    doc = _parse(fx.man_page_pdf(tmp_path, pages=2))
    assert [h.title for h in doc.headings] == [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "ENVIRONMENT",
        "SEE ALSO",
    ]
    assert "System Manager's Manual" not in doc.markdown


# --- scanned pages -------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs Debian's tesseract-ocr")
def test_scanned_page_is_read_by_ocr(tmp_path: Path) -> None:
    doc = _parse(fx.scanned_text_pdf(tmp_path))
    assert [h.title for h in doc.headings] == ["1 Pump Overview", "2 Pump Maintenance"]
    maintenance = next(s for s in doc.sections if s.title == "2 Pump Maintenance")
    assert maintenance.pages == (2,)
    assert maintenance.body == "Check the seals of pump P-101 every month."
    assert "```" not in doc.markdown  # OCR's placeholder font is not taken for code
    assert doc.warnings == (
        ("page(s) 2 have no text layer (scanned images); their text was read by OCR "
         "(tesseract) and may hold recognition errors"),
    )


# --- code and tables -----------------------------------------------------------------------------


def test_multi_line_code_block_is_one_fence(tmp_path: Path) -> None:
    doc = _parse(fx.code_pdf(tmp_path))
    assert doc.markdown.count("```") == 2
    fence = doc.markdown.split("```")[1].strip("\n")
    assert [ln.strip() for ln in fence.splitlines()] == [ln.strip() for ln in fx.CODE_LINES]
    assert '    printf("hello\\n");' in fence.splitlines()  # indentation kept
    assert "Compile the following program:" in doc.markdown
    assert "It prints a greeting and exits." in doc.markdown


def test_borderless_table_becomes_markdown_with_caption(tmp_path: Path) -> None:
    doc = _parse(fx.borderless_table_pdf(tmp_path))
    tables = [b for s in doc.sections for b in s.blocks if b.kind == "table"]
    assert len(tables) == 1
    assert tables[0].rows == tuple(tuple(r) for r in fx.BORDERLESS_ROWS)
    assert tables[0].caption == "Table 3: Pump ratings"
    texts = [b.text for s in doc.sections for b in s.blocks if b.kind == "text"]
    assert texts == [
        "The station runs four pumps; their ratings are listed below.",
        "Pump P-104 is the stand-by unit and runs only during peak demand.",
    ]


def test_prose_pages_have_no_borderless_tables(tmp_path: Path) -> None:
    for builder in (fx.numbered_pdf, fx.running_header_pdf, fx.code_pdf, fx.toc_pdf):
        doc = _parse(builder(tmp_path))
        assert not [b for s in doc.sections for b in s.blocks if b.kind == "table"], builder


# --- definition terms (issue #17) ----------------------------------------------------------------


def test_bold_option_lines_with_indented_bodies_are_terms_under_options(tmp_path: Path) -> None:
    doc = _parse(fx.man_page_pdf(tmp_path, pages=2))
    terms = [s for s in doc.sections if s.kind == "term"]
    assert [s.title for s in terms] == [
        *(f"-{'flmnqrstuvwxyz'[n]} value{n}" for n in range(8)),
        "FROBPATH",  # an indented bold name with its description below: a term, not a heading
        "FROBDEBUG",
    ]
    assert terms[-1].path == ("ENVIRONMENT", "FROBDEBUG")
    assert terms[-1].body == "Print every adjustment frob makes."
    terms = terms[:8]
    for n, term in enumerate(terms):
        assert term.path == ("OPTIONS", term.title)
        assert term.body.startswith(f"Option number {n} sets knob {n}.")
    options = next(s for s in doc.sections if s.title == "OPTIONS")
    assert terms[0].level == options.level + 1
    assert [h.title for h in doc.headings].count("OPTIONS") == 1  # terms are not headings
    see_also = next(s for s in doc.sections if s.title == "SEE ALSO")
    assert see_also.body == "unfrob(8), frobstat(1)"  # the list ends at the next heading


def _one_page(path: Path, texts: Sequence[tuple[Any, ...]]) -> Document:
    """A one-page PDF of ``(x, y, text, font[, size])`` pieces, 10 pt unless given (fonts:
    "tibo" Times-Bold, "tiro" Times-Roman, "hebo" Helvetica-Bold, "helv" Helvetica), parsed."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=fx.WIDTH, height=fx.HEIGHT)
    for x, y, text, font, *size in texts:
        page.insert_text((x, y), text, fontsize=size[0] if size else fx.BODY_SIZE, fontname=font)
    doc.save(path)
    return _parse(path)


def test_term_on_the_same_row_as_its_description(tmp_path: Path) -> None:
    """groff puts a short tag and the start of its description on one row, at a tab stop."""
    tag_x, text_x = fx.LEFT + 36, fx.LEFT + 72
    parsed = _one_page(
        tmp_path / "rows.pdf",
        [
            (fx.LEFT, 100, "OPTIONS", "tibo"),
            (tag_x, 120, "-h", "tibo"),
            (text_x, 120, "Display a usage message.", "tiro"),
            (tag_x, 136, "-n", "tibo"),
            (text_x, 136, "Do not write anything.", "tiro"),
            (tag_x, 152, "-o offset", "tibo"),
            (text_x, 164, "Start at this offset in bytes.", "tiro"),
        ],
    )
    terms = {s.title: s.body for s in parsed.sections if s.kind == "term"}
    assert terms == {
        "-h": "Display a usage message.",
        "-n": "Do not write anything.",
        "-o offset": "Start at this offset in bytes.",
    }


def test_a_bold_word_opening_a_paragraph_is_not_a_term(tmp_path: Path) -> None:
    parsed = _one_page(
        tmp_path / "note.pdf",
        [
            (fx.LEFT, 100, "Note", "hebo"),
            (fx.LEFT + 30, 100, "that the pump must be primed first.", "helv"),
            (fx.LEFT, 113, "Otherwise the seals run dry and fail early.", "helv"),
        ],
    )
    assert not [s for s in parsed.sections if s.kind == "term"]
    assert "Note that the pump must be primed first." in parsed.markdown


def test_roman_hanging_indent_options_are_terms(tmp_path: Path) -> None:
    """xxd(1) sets its option tags in roman: the list is known by its layout alone."""
    doc = _parse(fx.roman_options_pdf(tmp_path))
    terms = [s for s in doc.sections if s.kind == "term"]
    assert [s.title for s in terms] == ["-a | -autoskip", "-c cols | -cols cols", "-e"]
    assert [s.path for s in terms] == [("OPTIONS", s.title) for s in terms]
    assert terms[0].body.startswith("Toggle autoskip: a star replaces nul-lines. The committee")
    assert terms[2].body.startswith("Switch to little-endian hexdump. The committee")  # tag cut
    options = next(s for s in doc.sections if s.title == "OPTIONS")
    assert options.body == "If no infile is given, standard input is read."


def test_roman_paragraphs_with_a_first_line_indent_stay_prose(tmp_path: Path) -> None:
    """A paragraph's short last line before the next paragraph's indented first line has the
    shape of one item, and it repeats; the line above it (a full line at the same indent) or
    the full line under it (back at the left edge) says it is prose."""
    doc = _parse(fx.indented_prose_pdf(tmp_path))
    assert not [s for s in doc.sections if s.kind == "term"]
    assert all(f"see frob.conf(5) and frob-{n}(8):" in doc.markdown for n in range(5))


def test_a_single_roman_hanging_item_stays_a_paragraph(tmp_path: Path) -> None:
    doc = _parse(fx.single_hanging_item_pdf(tmp_path))
    assert not [s for s in doc.sections if s.kind == "term"]
    section = next(s for s in doc.sections if s.title == "ENVIRONMENT")
    assert section.body.startswith("FROBPATH\n\nWhere frob looks for its level tables.")


# groff's man(7) layout: .SH at the page's left edge, .SS an indent in, .TP tags at the
# paragraphs' indent and their descriptions deeper still (measured on man -Tpdf output)
SH_X, SS_X, TAG_X, DESC_X = fx.LEFT, fx.LEFT + 15, fx.LEFT + 36, fx.LEFT + 72
SH_SIZE = 10.9


def test_subsection_ending_in_a_colon_heads_the_option_list_under_it(tmp_path: Path) -> None:
    """``.SS "The following options are useful only when verifying:"`` is a sub-heading of
    DESCRIPTION and the options under it are its terms, not DESCRIPTION's."""
    parsed = _one_page(
        tmp_path / "ss.pdf",
        [
            (SH_X, 100, "DESCRIPTION", "tibo", SH_SIZE),
            (TAG_X, 116, "Print or check checksums of each file.", "tiro"),
            (TAG_X, 134, "-b, --binary", "tibo"),
            (DESC_X, 146, "read in binary mode", "tiro"),
            (TAG_X, 164, "-c, --check", "tibo"),
            (DESC_X, 176, "read checksums from the files and check them", "tiro"),
            (SS_X, 194, "The following options are useful only when verifying:", "tibo"),
            (TAG_X, 206, "--quiet", "tibo"),
            (DESC_X, 218, "do not print OK for each successfully verified file", "tiro"),
            (TAG_X, 236, "--strict", "tibo"),
            (DESC_X, 248, "exit non-zero for improperly formatted checksum lines", "tiro"),
        ],
    )
    sub = "The following options are useful only when verifying:"
    assert [h.title for h in parsed.headings] == ["DESCRIPTION", sub]
    terms = {s.title: s.path for s in parsed.sections if s.kind == "term"}
    assert terms == {
        "-b, --binary": ("DESCRIPTION", "-b, --binary"),
        "-c, --check": ("DESCRIPTION", "-c, --check"),
        "--quiet": ("DESCRIPTION", sub, "--quiet"),
        "--strict": ("DESCRIPTION", sub, "--strict"),
    }


def test_a_subsection_over_a_bold_tag_is_not_one_title_with_it(tmp_path: Path) -> None:
    """cmake(1): ``.SS Options`` right above the first bold ``.TP`` tag, no gap between."""
    parsed = _one_page(
        tmp_path / "options.pdf",
        [
            (SH_X, 100, "GENERATE A PROJECT BUILDSYSTEM", "tibo", SH_SIZE),
            (TAG_X, 116, "Run cmake with one of these command signatures.", "tiro"),
            (SS_X, 134, "Options", "tibo"),
            (TAG_X, 146, "-S <path-to-source>", "tibo"),
            (DESC_X, 158, "Path to the root directory of the project to build.", "tiro"),
            (TAG_X, 176, "-B <path-to-build>", "tibo"),
            (DESC_X, 188, "Path to the directory cmake will use as the build tree.", "tiro"),
        ],
    )
    assert [h.title for h in parsed.headings] == ["GENERATE A PROJECT BUILDSYSTEM", "Options"]
    terms = [s for s in parsed.sections if s.kind == "term"]
    assert [s.title for s in terms] == ["-S <path-to-source>", "-B <path-to-build>"]
    assert all(s.path[:-1] == ("GENERATE A PROJECT BUILDSYSTEM", "Options") for s in terms)


def test_a_bold_description_under_its_tag_is_not_a_heading(tmp_path: Path) -> None:
    """free(1): "buff/cache" over "Sum of **buffers** and **cache**", mostly bold, one step in
    and without a gap: part of that item, and the next tag is not glued to it."""
    parsed = _one_page(
        tmp_path / "free.pdf",
        [
            (SH_X, 100, "DESCRIPTION", "tibo", SH_SIZE),
            (TAG_X, 116, "total", "tibo"),
            (DESC_X, 128, "Total installed memory", "tiro"),
            (TAG_X, 146, "buff/cache", "tibo"),
            (DESC_X, 158, "Sum of buffers and cache", "tibo"),
            (TAG_X, 176, "available", "tibo"),
            (DESC_X, 188, "Estimation of how much memory is available for new work", "tiro"),
        ],
    )
    assert [h.title for h in parsed.headings] == ["DESCRIPTION"]
    assert "Sum of buffers and cache" in parsed.markdown


def test_a_run_in_label_ending_in_a_colon_stays_text(tmp_path: Path) -> None:
    """A bold "Warning:" with its paragraph at the same indent below announces nothing
    indented: not a heading (only a colon line over an indented block heads it)."""
    parsed = _one_page(
        tmp_path / "label.pdf",
        [
            (SH_X, 100, "MAINTENANCE", "tibo", SH_SIZE),
            (SH_X, 116, "Check the seals every month.", "tiro"),
            (SH_X, 134, "Warning:", "tibo"),
            (SH_X, 146, "The pump must be primed before it is started again.", "tiro"),
        ],
    )
    assert [h.title for h in parsed.headings] == ["MAINTENANCE"]
    assert "Warning:" in parsed.markdown


def test_headings_set_all_in_a_bold_code_face_are_headings_and_code_stays_text(
        tmp_path: Path) -> None:
    # HTML-to-PDF release notes: a module's sub-section is titled by its name in bold monospace
    # (an h4 holding <code>), a hair smaller than the body; listings and inline code are not bold
    import pymupdf

    modules = "".join(f"<h4><code>django.contrib.{m}</code></h4><ul><li>The {m} app "
                      f"gained <code>{m}_helper()</code> and clearer errors.</li></ul>"
                      for m in ("admin", "auth", "gis"))
    html = (f"<h1>Release 3.0 notes</h1><p>Welcome to the release.</p><h2>What is new</h2>"
            f"<h3>Minor features</h3>{modules}<h4>Cache</h4><ul><li>Faster keys.</li></ul>"
            "<pre><code>python -m pip install acme\nacme --check</code></pre>"
            "<h2>Removed features</h2><p>Old settings are gone.</p>")
    css = ("body {font-size: 10pt;} h1 {font-size: 20pt;} h2 {font-size: 15pt;} "
           "h3 {font-size: 12.5pt;} h4 {font-size: 11pt;} code, pre {font-family: monospace; "
           "font-size: 0.9em;}")
    path = tmp_path / "notes.pdf"
    story = pymupdf.Story(html=html, user_css=css)
    writer = pymupdf.DocumentWriter(str(path))
    more = True
    while more:
        dev = writer.begin_page(pymupdf.paper_rect("a4"))
        more, _ = story.place(pymupdf.Rect(54, 54, 540, 788))
        story.draw(dev)
        writer.end_page()
    writer.close()
    doc = parse_pdf(path, doc_id="notes.pdf")
    titles = [s.title for s in doc.sections if s.level > 0 and s.kind == "heading"]
    assert {"django.contrib.admin", "django.contrib.auth", "django.contrib.gis"} <= set(titles)
    admin = next(s for s in doc.sections if s.title == "django.contrib.admin")
    assert "Minor features" in doc.path_of(admin)
    assert not any("pip install" in t or "_helper" in t for t in titles)
