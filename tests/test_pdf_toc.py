"""The printed table of contents (issue #30) and the fidelity report.  A real PDF: groff's own ``pdfmark`` manual
(groff -ms via gropdf, installed with Debian's ``groff``, which ``scripts/test.sh`` installs),
its outline removed as a "save as PDF" without bookmarks would.  The TOC page gives the heading
tree and is no text of the document: a search for a section's title finds the section."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pdf_fixtures as fx
import pymupdf
import pytest

from hiqa.cli import main
from hiqa.collection import Collection
from hiqa.formats import load_document
from hiqa.formats.fidelity import fidelity
from hiqa.formats.pdf import parse_pdf

PDFMARK = Path("/usr/share/doc/groff-base/pdf/pdfmark.pdf.gz")


@pytest.fixture
def pdfmark(tmp_path: Path) -> Path:
    assert PDFMARK.is_file(), "Debian's groff is needed (scripts/test.sh installs it)"
    doc = pymupdf.open(stream=gzip.decompress(PDFMARK.read_bytes()), filetype="pdf")
    outline = doc.get_toc()
    assert outline, "the original has an outline: the gold this test compares with"
    doc.set_toc([])
    out = tmp_path / "pdfmark.pdf"
    doc.save(out)
    (tmp_path / "outline.txt").write_text(
        "\n".join(f"{lv}\t{page}\t{title}" for lv, title, page in outline), encoding="utf-8")
    return out


def test_the_printed_toc_of_a_real_pdf_gives_its_tree(pdfmark: Path) -> None:
    doc = parse_pdf(pdfmark, pdfmark.name)
    assert doc.metadata["headings_from"] == "toc"
    gold = [line.split("\t") for line in
            (pdfmark.parent / "outline.txt").read_text(encoding="utf-8").splitlines()]
    by_title = {h.title: h for h in doc.headings}
    # every outline entry printed without groff escapes is a heading at its level and page
    # (the outline writes "F[C]pdfmarkF[]" where the page prints "pdfmark": those differ)
    plain = [(int(lv), int(page), title) for lv, page, title in gold
             if "F[" not in title and title != "Table of Contents"]
    assert len(plain) >= 25
    for level, page, title in plain:
        h = by_title[title]
        assert (h.level, h.page) == (level, page), title
    section = next(s for s in doc.sections if s.title == "2.4.1. A Basic Document Outline")
    assert section.path[:-1] == ("2. Exploiting PDF Document Features",
                                 "2.4. Creating a Document Outline")
    # the TOC page (PDF page 2) is in no section; its leaders are nowhere in the text
    assert all(2 not in s.pages for s in doc.sections)
    assert ". . . ." not in doc.markdown


def test_a_search_for_a_section_title_returns_the_section_not_its_toc_line(
        settings, pdfmark: Path) -> None:
    col = Collection("manuals", settings, create=True)
    col.ingest([pdfmark])
    hits = col.search("Creating a Document Outline", k=5)
    assert "2.4. Creating a Document Outline" in [h.segment.path[-1] for h in hits[:3]]
    assert all("2.4. Creating a Document Outline" in h.segment.path for h in hits[:3])
    assert all(2 not in h.segment.pages for h in hits)


# --- the fidelity report ---------------------------------------------------------------------


def test_structure_report_names_the_evidence_and_the_pages_set_aside(tmp_path: Path,
                                                                     capsys) -> None:
    pdf = fx.printed_toc_pdf(tmp_path)
    assert main(["structure", str(pdf), "--report"]) == 0
    out = capsys.readouterr().out
    assert "8 headings (L1 3 · L2 5) from the printed table of contents" in out
    assert "table of contents: pages 2 (8 entries, 8 found in the text)" in out
    assert "index:     pages 6" in out and "warnings:  none" in out
    assert main(["structure", str(pdf), "--report", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["report"]["evidence"] == "toc" and data["report"]["per_level"] == {"1": 3, "2": 5}
    assert [h["title"] for h in data["headings"]][:2] == ["Overview", "Scope of the review"]


@pytest.mark.parametrize("case", ["flat", "dense", "toc unused", "no headings", "sound"])
def test_structure_report_warns_when_the_tree_looks_wrong(tmp_path: Path, case: str) -> None:
    if case in ("flat", "dense", "sound"):
        lines = 1 if case == "dense" else 4
        sections = "".join(
            f"{'##' if case == 'flat' or k % 5 else '#'} Part {k}\n\n"
            + "\n".join(f"Line {j} of part {k}." for j in range(lines)) + "\n\n"
            for k in range(60))
        path = tmp_path / "doc.md"
        path.write_text(sections, encoding="utf-8")
    elif case == "toc unused":
        path = fx.toc_pdf(tmp_path)
        doc = pymupdf.open(path)  # the TOC lists titles the pages do not print
        for k, page in enumerate(doc.pages(1)):
            for block in page.get_text("blocks"):
                page.add_redact_annot(pymupdf.Rect(block[:4]))
            page.apply_redactions()
            page.insert_text((72, 100), f"Chapter page {k}", fontsize=10)
        path = tmp_path / "renamed.pdf"
        doc.save(path)
    else:
        path = fx.unnumbered_pdf(tmp_path)
        doc = pymupdf.open(path)
        for page in doc:
            text = page.get_text()
            for block in page.get_text("blocks"):
                page.add_redact_annot(pymupdf.Rect(block[:4]))
            page.apply_redactions()
            page.insert_text((72, 100), " ".join(text.split()[-12:]), fontsize=10)
        path = tmp_path / "plain.pdf"
        doc.save(path)
    loaded = load_document(path)
    warnings = " | ".join(fidelity(loaded).warnings)
    if case == "toc unused":  # an unconfirmed TOC is kept as text, never dropped
        assert "1 Scope" in loaded.markdown and "2.1 Start-up" in loaded.markdown
    expected = {"flat": "one flat level: all 60 headings are level 2",
                "dense": "60 headings for 60 lines of text",
                "toc unused": "page(s) 1 look like a table of contents, but its 4 entries are "
                              "not headings on the pages they name",
                "no headings": "no headings", "sound": None}[case]
    if expected is None:
        assert warnings == ""
    else:
        assert expected in warnings


@pytest.mark.parametrize("years", [(2019, 2020, 2021, 2022, 2023), (2023, 2019, 2022, 2020, 2021)])
def test_rows_ending_in_numbers_that_no_heading_confirms_stay_text(tmp_path: Path,
                                                                   years: tuple[int, ...]) -> None:
    """A page of rows ending in numbers set apart at the right (a table of figures by year) is
    neither a TOC nor an index: nothing on it may be dropped."""
    doc = pymupdf.open()
    page = doc.new_page(width=fx.WIDTH, height=fx.HEIGHT)
    page.insert_text((fx.LEFT, 90), "Output by year", fontsize=16, fontname="hebo")
    labels = ("Pumps serviced", "Valves replaced", "Sensors calibrated", "Leaks repaired",
              "Audits passed")
    for k, (label, year) in enumerate(zip(labels, years, strict=True)):
        y = 130 + 16 * k
        page.insert_text((fx.LEFT, y), label, fontsize=fx.BODY_SIZE, fontname="helv")
        page.insert_text((fx.WIDTH - fx.LEFT - 24, y), str(year), fontsize=fx.BODY_SIZE,
                         fontname="helv")
    page.insert_text((fx.LEFT, 250), fx.LOREM[:90], fontsize=fx.BODY_SIZE, fontname="helv")
    path = tmp_path / "figures.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    for label, year in zip(labels, years, strict=True):
        assert label in parsed.markdown and str(year) in parsed.markdown
    assert parsed.metadata["toc_pages"] == "" and parsed.metadata["index_pages"] == ""
