"""Citations give the page number printed on the page (issue #34, item 4): the PDF's own page
labels, else the numbers in its running footer, and both numbers when they differ."""
from __future__ import annotations

from pathlib import Path

import pymupdf

from hiqa.augment import segment_document
from hiqa.formats import load_document
from hiqa.model import segment_pages_label

CHAPTERS = ("Installing the pump", "Priming the pump", "Cleaning the filter")


def manual(path: Path, *, first_printed: int | None = None, labels: bool = False) -> Path:
    """Three pages, one chapter each; with ``first_printed`` a footer number on every page
    (a chapter file of a longer book); with ``labels`` roman front matter declared in the PDF."""
    doc = pymupdf.open()
    for i, title in enumerate(CHAPTERS):
        page = doc.new_page()
        page.insert_text((72, 90), title, fontsize=18)
        page.insert_text((72, 130), f"This chapter explains {title.lower()} step by step for "
                         "the service technician.", fontsize=11)
        page.insert_text((72, 150), "Follow the steps in order and check each valve twice.",
                         fontsize=11)
        if first_printed is not None:
            page.insert_text((300, 800), str(first_printed + i), fontsize=9)
    if labels:
        doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                             {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1}])
    doc.save(path)
    return path


def labels_of(path: Path) -> dict[str, str]:
    doc = load_document(path)
    return {s.path[-1]: segment_pages_label(s) for s in segment_document(doc, "hca")
            if s.path and s.path[-1] in CHAPTERS}


def test_printed_footer_numbers_are_cited_beside_the_pdf_page(tmp_path):
    got = labels_of(manual(tmp_path / "chapter-3.pdf", first_printed=231))
    assert got == {"Installing the pump": "p. 231 (PDF page 1)",
                   "Priming the pump": "p. 232 (PDF page 2)",
                   "Cleaning the filter": "p. 233 (PDF page 3)"}


def test_the_pdfs_own_page_labels_win(tmp_path):
    got = labels_of(manual(tmp_path / "book.pdf", first_printed=231, labels=True))
    assert got == {"Installing the pump": "p. i (PDF page 1)",
                   "Priming the pump": "p. 1 (PDF page 2)",
                   "Cleaning the filter": "p. 2 (PDF page 3)"}


def test_pages_numbered_as_the_file_counts_them_are_cited_once(tmp_path):
    got = labels_of(manual(tmp_path / "plain.pdf", first_printed=1))
    assert got["Priming the pump"] == "p. 2"
    assert labels_of(manual(tmp_path / "bare.pdf"))["Priming the pump"] == "p. 2"


def _yellow(png: bytes) -> int:
    pix = pymupdf.Pixmap(png)
    data = pix.samples
    n = pix.n
    return sum(1 for i in range(0, len(data), n)
               if data[i] > 200 and data[i + 1] > 200 and data[i + 2] < 120)


def test_a_cited_passage_is_highlighted_on_its_pdf_page(tmp_path):
    """Issue #34, item 5: a citation opens its source; for a PDF, the page with the passage
    highlighted."""
    from app_pages._shared import pdf_page_png

    pdf = manual(tmp_path / "pump.pdf", first_printed=231)
    before = pdf.read_bytes()
    marked = pdf_page_png(str(pdf), 2, "Follow the steps in order and check each valve twice.")
    plain = pdf_page_png(str(pdf), 2, "words that are on no page at all")
    assert marked is not None and plain is not None
    assert _yellow(marked) > 500 and _yellow(plain) == 0
    assert pdf_page_png(str(tmp_path / "gone.pdf"), 1, "x") is None  # moved since: no picture
    assert pdf.read_bytes() == before  # the highlight is drawn in memory, the file untouched


def _two_page_passage(path: Path) -> Path:
    """One section whose passage runs from the foot of page 1 onto page 2."""
    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((72, 90), "Cash flows", fontsize=18)
    first.insert_text((72, 700), "Purchases of property and equipment rose in the year",
                      fontsize=11)
    second = doc.new_page()
    second.insert_text((72, 100), "because the company built a second plant in Ohio.",
                       fontsize=11)
    doc.save(path)
    return path


def _show(segment) -> None:
    from app_pages._shared import show_in_context

    show_in_context(segment, "pp. 1–2", "t")


def test_a_passage_over_two_pages_shows_each_page_highlighted(tmp_path):
    """Issue #43, item 4: the cited passage's every page, its part highlighted on each."""
    from streamlit.testing.v1 import AppTest

    pdf = _two_page_passage(tmp_path / "cash.pdf")
    segments = segment_document(load_document(pdf), strategy="hca")
    seg = next(s for s in segments if "second plant" in s.text)
    assert seg.pages == (1, 2)
    at = AppTest.from_function(_show, args=(seg,), default_timeout=30).run()
    assert not at.exception, at.exception
    images = [img for element in at.get("image") for img in element.proto.imgs]
    assert [img.caption for img in images] == [
        "pp. 1–2 · page 1: the cited passage highlighted",
        "pp. 1–2 · page 2: the cited passage highlighted"]
    from app_pages._shared import pdf_page_png

    for page in (1, 2):  # each page's part of the passage is found and marked
        png = pdf_page_png(str(pdf), page, seg.text)
        assert png is not None and _yellow(png) > 200
