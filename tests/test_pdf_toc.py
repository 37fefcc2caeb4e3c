"""The printed table of contents of a real PDF (issue #30): groff's own ``pdfmark`` manual
(groff -ms via gropdf, installed with Debian's ``groff``, which ``scripts/test.sh`` installs),
its outline removed as a "save as PDF" without bookmarks would.  The TOC page gives the heading
tree and is no text of the document: a search for a section's title finds the section."""
from __future__ import annotations

import gzip
from pathlib import Path

import pymupdf
import pytest

from hiqa.collection import Collection
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
