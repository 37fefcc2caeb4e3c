"""PDF parser: outline and layout headings, tables, running headers, bad input."""

from __future__ import annotations

from pathlib import Path

import pdf_fixtures as fx
import pymupdf
import pytest

from hiqa.errors import DocumentError, EncryptedDocumentError, ScannedDocumentError
from hiqa.formats import load_document
from hiqa.formats.fidelity import fidelity
from hiqa.formats.pdf.lines import numbering_depth, strip_numbering
from hiqa.formats.pdf.reader import parse_pdf
from hiqa.model import Document, Section


def _parse(path: Path) -> Document:
    return parse_pdf(path, path.name)


def _outline(doc: Document) -> list[tuple[int, str, int]]:
    return [(h.level, h.title, h.page) for h in doc.headings]


def _section(doc: Document, title: str) -> Section:
    return next(s for s in doc.sections if s.title == title)


# --- outline -----------------------------------------------------------------------------------


def test_outline_is_used_exactly(tmp_path: Path) -> None:
    doc = _parse(fx.outline_pdf(tmp_path))
    assert _outline(doc) == [
        (1, "Introduction", 1),
        (2, "Background", 1),
        (1, "Methods", 2),
        (2, "Data Collection", 2),
        (2, "Unprinted Appendix Note", 3),
        (1, "Results", 3),
    ]
    assert doc.metadata["headings_from"] == "outline"
    assert doc.title == "Plant Report"


def test_outline_splits_body_between_sections(tmp_path: Path) -> None:
    doc = _parse(fx.outline_pdf(tmp_path))
    assert _section(doc, "Introduction").body.startswith("Alpha intro")
    assert _section(doc, "Background").body.startswith("Bravo background")
    assert "Charlie" not in _section(doc, "Background").body
    assert _section(doc, "Data Collection").body.startswith("Delta data")
    # not printed: placed at the top of page 3, so it owns the text that opens that page
    assert _section(doc, "Unprinted Appendix Note").body.startswith("Echo text")
    assert _section(doc, "Results").body.startswith("Foxtrot")
    # the printed heading lines are not repeated as body text
    assert "1.1 Background" not in doc.markdown
    assert doc.path_of(_section(doc, "Data Collection")) == (
        "Plant Report",
        "Methods",
        "Data Collection",
    )


# --- layout headings -----------------------------------------------------------------------------


def test_numbered_headings_levels_and_paths(tmp_path: Path) -> None:
    doc = _parse(fx.numbered_pdf(tmp_path))
    assert doc.metadata["headings_from"] == "layout"
    # the fidelity report names the evidence as for an HTML page styled the same way (#44 item 3)
    assert fidelity(doc).summary.endswith("from typography (font sizes, weights and numbering)")
    assert _outline(doc) == [
        (1, "Preface", 1),
        (1, "1 Getting Started", 1),
        (2, "1.1 Requirements", 1),
        (3, "1.1.1 Hardware", 1),
        (4, "1.1.1.1 Disk Layout", 1),
        (2, "1.2 Installation", 2),
        (1, "2 Usage", 3),
        (2, "2.1 Commands", 3),
        (3, "2.1.1 Query Command", 3),
    ]
    disk = _section(doc, "1.1.1.1 Disk Layout")
    assert disk.path == (
        "1 Getting Started",
        "1.1 Requirements",
        "1.1.1 Hardware",
        "1.1.1.1 Disk Layout",
    )
    assert disk.body == "Text about the disk layout of the data folder."
    assert _section(doc, "2.1.1 Query Command").body.startswith("Text about the query command")


def test_skipped_level_gets_nearest_shallower_parent(tmp_path: Path) -> None:
    doc = _parse(fx.skipped_levels_pdf(tmp_path))
    deep = _section(doc, "1.0.1 Deep Detail")
    assert deep.level == 3
    assert deep.path == ("1 Overview", "1.0.1 Deep Detail")
    assert _section(doc, "2.1 Normal Section").path == ("2 Next Chapter", "2.1 Normal Section")


def test_unnumbered_levels_follow_font_size_consistently(tmp_path: Path) -> None:
    doc = _parse(fx.unnumbered_pdf(tmp_path, pages=6))
    levels = {h.title: h.level for h in doc.headings}
    assert levels["Part Title 1"] == levels["Part Title 4"] == 1
    assert levels["Topic Number 2"] == levels["Topic Number 6"] == 2
    assert {levels[f"Detail Item {p}"] for p in range(1, 7)} == {3}
    detail = _section(doc, "Detail Item 6")
    assert detail.path == ("Part Title 4", "Topic Number 6", "Detail Item 6")
    assert detail.pages == (6,)


def test_running_headers_footers_and_page_numbers_are_removed(tmp_path: Path) -> None:
    doc = _parse(fx.running_header_pdf(tmp_path, pages=6))
    titles = [h.title for h in doc.headings]
    assert titles[:4] == [
        "1 Chapter Heading 1",
        "1.1 Section Heading 1",
        "2 Chapter Heading 2",
        "2.1 Section Heading 2",
    ]
    assert len(titles) == 12
    assert fx.HEADER_TEXT not in doc.markdown
    assert "Page 3 of 6" not in doc.markdown
    for s in doc.sections:
        assert all(b.text.strip() not in {str(n) for n in range(1, 7)} for b in s.blocks)
    assert [h.page for h in doc.headings][::2] == [1, 2, 3, 4, 5, 6]


def test_cover_page_keeps_only_the_title(tmp_path: Path) -> None:
    doc = _parse(fx.cover_pdf(tmp_path))
    assert [h.title for h in doc.headings][:3] == [
        "Field Guide to Pumps",
        "1 Pump Type 1",
        "1.1 Maintenance 1",
    ]
    assert doc.title == "Field Guide to Pumps"
    assert "Jane Example" in doc.markdown


# --- tables --------------------------------------------------------------------------------------


def test_ruled_table_becomes_markdown_with_caption(tmp_path: Path) -> None:
    doc = _parse(fx.table_pdf(tmp_path))
    evaluation = _section(doc, "1 Evaluation")
    tables = [b for b in evaluation.blocks if b.kind == "table"]
    assert len(tables) == 1
    table = tables[0]
    assert table.rows == tuple(tuple(r) for r in fx.TABLE_ROWS)
    assert table.caption == "Table 1: Accuracy and latency per model"
    assert table.text.splitlines() == [
        "| Model | Accuracy | Latency |",
        "| --- | --- | --- |",
        "| Alpha | 0.91 | 12 ms |",
        "| Beta | 0.87 | 8 ms |",
    ]
    assert table.page == 1
    texts = [b.text for b in evaluation.blocks if b.kind == "text"]
    assert texts == [
        "We compare two models on the held-out set.",
        "Alpha is more accurate while Beta is faster.",
    ]
    assert doc.markdown.count("0.91") == 1
    assert doc.markdown.count("Table 1: Accuracy") == 1


def test_a_slides_sidebar_ruled_off_from_its_text_is_no_table(tmp_path: Path) -> None:
    """A slide deck's sidebar (section names on a coloured panel, the current one on a band)
    and its title rule make a grid the table finder reads: every slide's text became the
    second column of a table beside the section names, and no frame title was a heading
    (beamer's sidebar themes, texlive seed 73).  A grid in which no two rows hold two cells
    of text is no table."""
    path = tmp_path / "slides.pdf"
    doc = pymupdf.open()
    frames = (("Why pumps fail", 0), ("What we measured", 1), ("What we found", 2))
    for title, current in frames:
        page = doc.new_page(width=363, height=272)
        page.draw_rect((0, 0, 363, 272), color=None, fill=(1, 1, 1))
        page.draw_rect((0, 0, 70, 272), color=None, fill=(0.6, 0, 0))
        page.draw_rect((0, 58 + 14 * current, 70, 66 + 14 * current), color=None,
                       fill=(0.42, 0, 0))
        page.draw_rect((70, 25, 251, 27), color=None, fill=(0.6, 0, 0))
        for k, name in enumerate(("Introduction", "Methods", "Results")):
            page.insert_text((4, 64 + 14 * k), name, fontsize=5, color=(1, 1, 1))
        page.insert_text((80, 20), title, fontname="hebo", fontsize=14)
        for k, text in enumerate(("The pump draws water from the lower basin and lifts it",
                                  "to the tank on the hill, where it settles before it flows",
                                  "to the houses of the village below, day and night.")):
            page.insert_text((80, 50 + 13 * k), text, fontsize=10)
    doc.save(path)
    doc.close()
    parsed = _parse(path)
    assert [h.title for h in parsed.headings] == [title for title, _ in frames]
    assert all(b.kind != "table" for s in parsed.sections for b in s.blocks)
    assert parsed.markdown.count("the village below, day and night.") == 3


def test_a_form_whose_answers_are_blank_stays_a_table(tmp_path: Path) -> None:
    """A checklist ruled as a table, its header "YES | PAGE" over questions not yet answered:
    only the header row holds two cells of text, in a header's few words.  It stays a table."""
    rows = [["", "YES", "PAGE"], ["Children?", "", ""], ["Patients?", "", ""],
            ["Genetic material?", "", ""]]
    doc = pymupdf.open()
    w = fx.Writer(doc)
    w.heading("1 Ethics", 1)
    w.paragraph("Answer each question and give the page of the proposal that explains it.")
    w.table(rows, caption="Table 1: Ethical issues")
    w.paragraph("A proposal that answers yes explains how consent is obtained.")
    path = tmp_path / "form.pdf"
    doc.save(path)
    doc.close()
    tables = [b for b in _section(_parse(path), "1 Ethics").blocks if b.kind == "table"]
    assert [t.rows for t in tables] == [tuple(tuple(r) for r in rows)]


def test_graph_paper_is_not_sent_to_the_table_finder(tmp_path: Path) -> None:
    """A lattice of many more cells than words (graph paper under a few labels: gridpapers,
    texlive seed 107, a second a page in the finder for nothing) is a drawing; a ruled table
    whose cells hold text is still looked at."""
    from hiqa.formats.pdf.tables import ruled_area

    doc = pymupdf.open()
    paper = doc.new_page()
    for k in range(41):  # 40 x 55 cells of 5 mm
        paper.draw_line((72 + 14 * k, 72), (72 + 14 * k, 72 + 14 * 55), width=0.3)
    for k in range(56):
        paper.draw_line((72, 72 + 14 * k), (72 + 14 * 40, 72 + 14 * k), width=0.3)
    paper.insert_text((80, 90), "Squared paper, 5 mm", fontsize=9)
    w = fx.Writer(doc)
    w.new_page()
    w.table(fx.TABLE_ROWS, caption="Table 1: Accuracy and latency per model")
    assert ruled_area(doc[0])[0] is None
    assert ruled_area(doc[1])[0] is not None


TINT = (0.98, 0.95, 0.74)


def test_tinted_words_are_no_table_columns(tmp_path: Path) -> None:
    """A manual that tints every inline macro name and every listing line (apnum, docby):
    the tints' scattered sides are no grid's columns, so the page goes to neither table
    finder and its prose stays prose; a table framed left and right whose current-year
    column is shaded down its rows (a filing's) has its columns there, and is a table."""
    from hiqa.formats.pdf.tables import ruled_area

    doc = pymupdf.open()
    page = doc.new_page()
    words = ["the", "macro", "reads", "its", "operand", "and", "pushes", "the", "value", "on",
             "the", "stack", "before"]
    y = 90.0
    for k in range(14):
        x = 72.0
        for j, word in enumerate(words):
            width = pymupdf.get_text_length(word, fontsize=10)
            if j == (k * 5) % len(words):  # one tinted word a line, a different one each line
                page.draw_rect((x - 1, y - 9, x + width + 1, y + 3), color=None, fill=TINT)
            page.insert_text((x, y), word, fontsize=10)
            x += width + 3.3
        y += 14
    for k in range(3):  # a listing: its lines tinted full width, one box each
        page.draw_rect((72, y - 9 + 11 * k, 523, y + 2 + 11 * k), color=None, fill=TINT)
        page.insert_text((80, y + 11 * k), f"{k + 84}: \\def\\apEVALpush#1#2#3", fontsize=8)
    shaded = doc.new_page()  # ruled across and framed left and right; its columns: the shading
    for x, head in ((76, "Region"), (254, "Fiscal 2023"), (354, "Fiscal 2022")):
        shaded.insert_text((x, 92), head, fontsize=9)
    shaded.draw_line((72, 96), (450, 96), width=0.5)
    for x in (72, 450):
        shaded.draw_line((x, 80), (x, 160), width=0.5)
    rows = [("North America", "21,608", "18,353"), ("Greater China", "7,248", "7,547"),
            ("Converse", "2,427", "2,346"), ("Corporate", "27", "(72)")]
    for k, row in enumerate(rows):
        top = 96 + 16 * k
        shaded.draw_rect((250, top, 350, top + 16), color=None, fill=TINT)  # the year, shaded
        shaded.draw_line((72, top + 16), (450, top + 16), width=0.5)
        for x, cell in zip((76, 300, 400), row, strict=True):
            shaded.insert_text((x, top + 12), cell, fontsize=9)
    path = tmp_path / "tinted.pdf"
    doc.save(path)
    assert ruled_area(doc[0]) == (None, True)
    assert ruled_area(doc[1])[0] is not None
    parsed = _parse(path)
    tables = [b for s in parsed.sections for b in s.blocks if b.kind == "table"]
    assert len(tables) == 1 and ("North America", "21,608", "18,353") in tables[0].rows
    assert "pushes the value on the stack" in parsed.markdown


# --- bad input -----------------------------------------------------------------------------------


def test_encrypted_pdf_raises(tmp_path: Path) -> None:
    with pytest.raises(EncryptedDocumentError, match="encrypted and needs a password"):
        _parse(fx.encrypted_pdf(tmp_path))


@pytest.mark.parametrize("builder", [fx.corrupt_pdf, fx.garbage_pdf])
def test_corrupt_pdf_raises_document_error(tmp_path: Path, builder) -> None:
    path = builder(tmp_path)
    with pytest.raises(DocumentError, match="not a valid PDF|damaged") as info:
        _parse(path)
    assert str(path) in str(info.value)


def test_scanned_pdf_raises_and_names_pages(tmp_path: Path) -> None:
    with pytest.raises(ScannedDocumentError, match="run OCR") as info:
        _parse(fx.scanned_pdf(tmp_path, pages=2))
    assert info.value.pages == [1, 2]
    assert "page(s) 1, 2" in str(info.value)


def test_one_textless_page_is_a_warning(tmp_path: Path) -> None:
    doc = _parse(fx.mixed_pdf(tmp_path))
    assert [h.title for h in doc.headings] == ["1 First", "2 Third"]
    assert _section(doc, "2 Third").pages == (3,)
    assert len(doc.warnings) == 1
    assert "page(s) 2 have no text layer" in doc.warnings[0]


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="file not found"):
        _parse(tmp_path / "nope.pdf")


def test_load_document_dispatches_pdf(tmp_path: Path) -> None:
    doc = load_document(fx.table_pdf(tmp_path))
    assert doc.format == "pdf" and doc.doc_id == "table.pdf" and doc.page_count == 1


# --- numbering rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "depth"),
    [
        ("3 Results", 1),
        ("3.2 Setup", 2),
        ("3.2.1. Sensors", 3),
        ("2.5.1/ Package Dependencies", 3),  # a class that ends its numbers in a slash
        ("1/2 cup of flour", None),
        ("A.2 Extra Tables", 2),
        ("Chapter 4 Storage", 1),
        ("Appendix B Tests", 1),
        ("IV. DISCUSSION", 1),
        ("A Brief Introduction", None),
        ("Results", None),
        ("2023 in Review", None),
        ("§1 Introduction", 1),  # the section sign
        ("§ 3.2 Haftung", 2),
        ("1.1Motivation", 2),  # a kern, no space, between number and title in the text layer
        ("1.Introduction", 1),
        ("2.4GHz radio", None),  # a quantity, not a glued number
        ("1.5V supply", None),
    ],
)
def test_numbering_depth(title: str, depth: int | None) -> None:
    assert numbering_depth(title) == depth


def test_strip_numbering() -> None:
    assert strip_numbering("3.2.1 Sensors") == "Sensors"
    assert strip_numbering("Appendix B Tests") == "Tests"
    assert strip_numbering("Results") == "Results"
    assert strip_numbering("§1 Introduction") == "Introduction"
    assert strip_numbering("1.1Motivation") == "Motivation"
    assert strip_numbering("Section 1 · Introduction") == "Introduction"  # wallcalendar


def test_a_glued_number_is_shown_apart_and_an_unmapped_glyph_is_no_part_of_a_title() -> None:
    """A contents row or heading whose number the text layer glued to its title is shown as
    the page shows it ("15.10.1 First Use"); a glyph mapped to no character (U+FFFD, a
    dingbat between number and title) does not keep a heading from its contents entry."""
    from hiqa.formats.pdf.lines import norm_title, spaced_number

    assert spaced_number("15.10.1First Use") == "15.10.1 First Use"
    assert spaced_number("1.Introduction") == "1. Introduction"
    assert spaced_number("2.4GHz radio") == "2.4GHz radio"
    assert spaced_number("3 Results") == "3 Results"
    assert norm_title("1 \ufffdUser interface") == norm_title("1 User interface")


def test_the_body_first_line_band_is_not_a_header_band(tmp_path: Path) -> None:
    """A filing prints a running link ("Table of Contents") above the text, and its text starts
    at the same height on every page, inside the top margin; a table heading repeated at the
    top of a few pages recurs there.  That band is the body's first line, not a header's: the
    pages' own first lines ("Item 7. …") stay (Corning's 10-K lost every one of them)."""
    import pymupdf

    doc = pymupdf.open()
    firsts = []
    for n in range(1, 11):
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 30), "Table of Contents", fontsize=8)
        topics = ("Business", "Risk Factors", "Properties", "Legal Proceedings", "Selected Data",
                  "Management's Discussion", "", "", "", "Controls and Procedures")
        first = ("Notes to Consolidated Financial Statements (continued)" if n in (7, 8, 9)
                 else f"Item {n}. {topics[n - 1]}")
        firsts.append(first)
        page.insert_text((72, 52), first, fontsize=9, fontname="hebo")
        for k in range(12):
            page.insert_text((72, 90 + 14 * k), f"Body sentence {k} of page {n} tells the reader "
                                                 "about the topic in plain words.", fontsize=9)
        page.insert_text((300, 760), str(n), fontsize=8)
    path = tmp_path / "first-lines.pdf"
    doc.save(path)
    parsed = _parse(path)
    for n, first in enumerate(firsts, start=1):
        if n not in (7, 8, 9):
            assert first in parsed.markdown, first
    assert "Table of Contents" not in parsed.markdown
