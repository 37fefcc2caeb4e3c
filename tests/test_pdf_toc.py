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

from hiqa.cli.main import main
from hiqa.collection import Collection
from hiqa.formats import load_document
from hiqa.formats.fidelity import fidelity
from hiqa.formats.pdf.reader import parse_pdf

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


# --- what must never be set aside, and trees that must come out right (a table of cases) -------


def _rows_page(page: pymupdf.Page, y: float, rows, leaders: bool = False, x_num: float = 500,
               x: float = 72, indent: dict[str, float] | None = None) -> float:
    for label, num in rows:
        left = x + (indent or {}).get(label, 0)
        page.insert_text((left, y), label, fontsize=10)
        if leaders:
            w = pymupdf.get_text_length(label, fontsize=10)
            page.insert_text((left + w + 4, y), "." * int((x_num - left - w - 12) / 2.8),
                             fontsize=10)
        page.insert_text((x_num, y), num, fontsize=10)
        y += 14
    return y


def _prose(page: pymupdf.Page, y: float, n: int, text: str) -> float:
    for _ in range(n):
        page.insert_text((72, y), text, fontsize=10)
        y += 14
    return y


def _chapters(doc: pymupdf.Document, titles, sizes=None) -> None:
    for k, t in enumerate(titles):
        page = doc.new_page()
        page.insert_text((72, 72), t, fontsize=(sizes or {}).get(t, 16))
        _prose(page, 100, 6, f"Body text of {t.lower()} with several sentences of detail.")


def case_staff_table(doc: pymupdf.Document) -> list[str]:
    page = doc.new_page()
    page.insert_text((72, 60), "Annual Report 2023", fontsize=16)
    page.insert_text((72, 100), "Staff by office", fontsize=12)
    offices = ["Amsterdam", "Berlin", "Chicago", "Dublin", "Geneva", "Helsinki", "Lisbon",
               "Madrid", "Oslo", "Paris", "Rome", "Vienna", "Zurich"]
    y = _rows_page(page, 130, [(o, str(40 + 37 * k % 400)) for k, o in enumerate(offices)])
    page.insert_text((72, y + 10), "Headcount rose in most offices.", fontsize=10)
    return ["Amsterdam", "Zurich", "Headcount rose"]


def case_price_list(doc: pymupdf.Document) -> list[str]:
    page = doc.new_page()
    page.insert_text((72, 60), "Price list", fontsize=14)
    items = ["Anchor bolt", "Bracket", "Cable tie", "Dowel", "Eye bolt", "Flange", "Gasket",
             "Hinge", "Lock nut", "Nail", "Padlock"]
    y = _rows_page(page, 90, [(i, str(2 + 7 * k % 90)) for k, i in enumerate(items)],
                   leaders=True)
    page.insert_text((72, y + 10), "Trade discounts apply above 100 units.", fontsize=10)
    return ["Price list", "Anchor bolt", "Padlock", "Trade discounts"]


def case_summary_beside_contents(doc: pymupdf.Document) -> list[str]:
    page = doc.new_page()
    page.insert_text((72, 60), "Water Quality Report", fontsize=18)
    page.insert_text((72, 90), "Contents", fontsize=12)
    secs = ["Introduction", "Study area", "Sampling methods", "Results", "Discussion"]
    y = _rows_page(page, 110, [(s, str(k + 2)) for k, s in enumerate(secs)], leaders=True)
    page.insert_text((72, y + 14), "Executive summary", fontsize=12)
    _prose(page, y + 34, 1, "KEY FINDING: nitrate exceeded the limit at four of nine stations.")
    _chapters(doc, secs)
    return ["Water Quality Report", "Executive summary", "KEY FINDING"]


@pytest.mark.parametrize("case", [case_staff_table, case_price_list,
                                  case_summary_beside_contents])
def test_text_beside_or_like_a_toc_is_never_dropped(tmp_path: Path, case) -> None:
    doc = pymupdf.open()
    kept = case(doc)
    path = tmp_path / "case.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    for text in kept:
        assert text in parsed.markdown, text


def _tree(tmp_path: Path, doc: pymupdf.Document) -> list[tuple[int, str]]:
    path = tmp_path / "tree.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    assert parsed.metadata["headings_from"] == "toc"
    return [(h.level, h.title) for h in parsed.headings]


def test_a_toc_whose_titles_sort_is_still_a_toc(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Contents", fontsize=14)
    lessons = [f"Lesson {k}: {t}" for k, t in enumerate(
        ["Getting started", "Variables", "Loops", "Functions", "Lists", "Files"], 1)]
    _rows_page(page, 90, [(s, str(k + 2)) for k, s in enumerate(lessons)], leaders=True)
    _chapters(doc, lessons)
    assert _tree(tmp_path, doc) == [(1, s) for s in lessons]


def test_facing_pages_shift_the_toc_column_not_the_levels(tmp_path: Path) -> None:
    doc = pymupdf.open()
    entries = [(c if not s else f"{c} {s}", bool(s)) for c in ("Background", "Methods",
               "Findings", "Outlook") for s in ("", "scope", "limits")]
    for half, left in ((entries[:6], 72), (entries[6:], 90)):  # recto, then verso
        page = doc.new_page()
        page.insert_text((left, 60), "Contents", fontsize=14)
        first = entries.index(half[0])
        _rows_page(page, 100, [(t, str(first + k + 1)) for k, (t, _) in enumerate(half)],
                   leaders=True, x=left, x_num=left + 430,
                   indent={t: 15 for t, sub in half if sub})
    _chapters(doc, [t for t, _ in entries], {t: 12 for t, sub in entries if sub})
    assert _tree(tmp_path, doc) == [(2 if sub else 1, t) for t, sub in entries]


def test_a_cover_and_an_inner_title_page_are_one_book(tmp_path: Path) -> None:
    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        for y, text, size in ((300, "Water Quality Report", 24),
                              (340, "Annual assessment of the river basin", 12)):
            w = pymupdf.get_text_length(text, fontsize=size)
            page.insert_text(((595 - w) / 2, y), text, fontsize=size)
    page = doc.new_page()
    page.insert_text((72, 60), "Contents", fontsize=14)
    secs = ["1 Introduction", "2 Study area", "3 Results"]
    _rows_page(page, 100, [(s, str(k + 1)) for k, s in enumerate(secs)], leaders=True)
    _chapters(doc, secs)
    assert _tree(tmp_path, doc) == [(1, s) for s in secs]


def test_a_heading_the_body_hyphenates_over_two_lines_is_found(tmp_path: Path) -> None:
    """The TOC prints "Configure shells for auto-completion of command arguments" whole; the
    body sets it large and breaks "argu-" / "ments" (Sphinx's manuals do). It was not found:
    the two lines were only tried joined with the hyphen kept ("argu-ments")."""
    secs = ["1 Getting started", "2 Configure shells for auto-completion of command arguments",
            "3 Removing the installation", "4 Known limitations", "5 Reporting problems"]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Contents", fontsize=14)
    _rows_page(page, 100, [(s, str(k + 2)) for k, s in enumerate(secs)], leaders=True)
    for title in secs:
        page = doc.new_page()
        if title.startswith("2 "):
            page.insert_text((72, 72), "2 Configure shells for auto-completion of command argu-",
                             fontsize=16)
            page.insert_text((92, 92), "ments", fontsize=16)
        else:
            page.insert_text((72, 72), title, fontsize=16)
        _prose(page, 120, 6, f"Body text of {title[2:].lower()} with several sentences.")
    assert _tree(tmp_path, doc) == [(1, s) for s in secs]


def test_a_numbered_title_that_recurs_at_page_tops_is_a_heading_when_the_toc_lists_it(
        tmp_path: Path) -> None:
    """A reference manual starts each class's "N.2 Constructor Documentation" at the top of a
    page, under the running header: the same words on six pages' tops, numbers aside, looked
    like a running header and were dropped with it. The TOC lists each one: it is a heading."""
    classes = ["Grid", "Vector", "Cone", "Jet", "Split", "Merge"]
    entries = []
    for k, name in enumerate(classes, 1):
        entries += [(1, f"{k} Class {name}", 2 + 2 * (k - 1)), (2, f"{k}.1 Description", 2 + 2 * (k - 1)),
                    (2, f"{k}.2 Constructor Documentation", 3 + 2 * (k - 1))]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Contents", fontsize=14)
    _rows_page(page, 100, [(t, str(n)) for _, t, n in entries], leaders=True,
               indent={t: 15 for lvl, t, _ in entries if lvl == 2})
    for k, name in enumerate(classes, 1):
        for sub, top in ((f"{k} Class {name}", f"{k}.1 Description"),
                         (f"{k}.2 Constructor Documentation", None)):
            page = doc.new_page()
            page.insert_text((72, 40), f"Reference manual   {doc.page_count - 1}", fontsize=9)
            page.insert_text((72, 76), sub, fontsize=14 if top else 12)
            y = _prose(page, 110, 3, f"Text about {sub.lower()} and what it does in detail.")
            if top:
                page.insert_text((72, y + 20), top, fontsize=12)
                _prose(page, y + 44, 3, f"Description of class {name.lower()} and its uses.")
    assert _tree(tmp_path, doc) == [(lvl, t) for lvl, t, _ in entries]


def test_a_toc_row_that_opens_a_page_where_others_print_their_header_is_kept(
        tmp_path: Path) -> None:
    """A TOC's second page has no running header, and its first row sits where the body pages
    print theirs: by position alone it was taken for the header and its entry was lost."""
    secs = [f"{k} {t}" for k, t in enumerate(["Scope", "Sampling sites", "Field methods",
            "Laboratory analysis", "Quality control", "Results", "Discussion", "Outlook"], 1)]
    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((72, 60), "Contents", fontsize=14)
    _rows_page(first, 100, [(t, str(k + 3)) for k, t in enumerate(secs[:5])], leaders=True)
    _rows_page(doc.new_page(), 44, [(t, str(k + 8)) for k, t in enumerate(secs[5:])],
               leaders=True)
    for title in secs:
        page = doc.new_page()
        page.insert_text((72, 44), f"Field guide, chapter {title.split()[0]}", fontsize=10)
        page.insert_text((72, 100), title, fontsize=16)
        _prose(page, 130, 6, f"Body text of {title[2:].lower()} with several sentences.")
    assert _tree(tmp_path, doc) == [(1, s) for s in secs]


def test_an_entry_the_page_break_splits_is_joined(tmp_path: Path) -> None:
    """A TOC entry begins at the foot of one TOC page ("6 Adjusting the motor seal" /
    "assembly and its long ser-") and ends at the head of the next ("vice procedures . . 8"):
    the rows are joined (the page number printed below them left aside), so the chapter is
    found, and the rows of both pages are TOC lines, not text. Its sections hung under the
    chapter before."""
    long = "6 Adjusting the motor seal assembly and its long service procedures"
    secs = ["1 Scope", "2 Sampling sites", "3 Field methods", "4 Laboratory analysis",
            "5 Quality control", long, "6.1 Results", "6.2 Discussion", "7 Outlook",
            "8 Glossary"]
    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((72, 60), "Contents", fontsize=14)
    y = _rows_page(first, 100, [(t, str(k + 3)) for k, t in enumerate(secs[:5])], leaders=True)
    first.insert_text((72, y), "6 Adjusting the motor seal", fontsize=10)
    first.insert_text((87, y + 14), "assembly and its long ser-", fontsize=10)
    first.insert_text((300, 700), "iii", fontsize=10)
    second = doc.new_page()
    _rows_page(second, 72, [("vice procedures", "8"), ("6.1 Results", "8"),
                            ("6.2 Discussion", "8"), ("7 Outlook", "9"), ("8 Glossary", "10")],
               leaders=True, indent={"vice procedures": 15, "6.1 Results": 15,
                                     "6.2 Discussion": 15})
    for title in secs:
        if title.startswith("6."):
            continue
        page = doc.new_page()
        if title == long:
            page.insert_text((72, 80), "6 Adjusting the motor seal assembly and its", fontsize=16)
            page.insert_text((72, 100), "long service procedures", fontsize=16)
            y = _prose(page, 130, 3, "Body text of the service procedures with detail.")
            for sub in secs[6:8]:
                page.insert_text((72, y + 20), sub, fontsize=12)
                y = _prose(page, y + 44, 3, f"Body text of {sub[4:].lower()} with detail.")
        else:
            page.insert_text((72, 100), title, fontsize=16)
            _prose(page, 130, 6, f"Body text of {title[2:].lower()} with several sentences.")
    path = tmp_path / "split.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    assert parsed.metadata["headings_from"] == "toc"
    assert [(h.level, h.title) for h in parsed.headings] == [
        (2 if "." in t.split()[0] else 1, t) for t in secs]
    assert "ser-" not in parsed.markdown and "\nvice procedures" not in parsed.markdown


def test_a_toc_of_documents_that_each_number_their_pages_from_one_is_read(
        tmp_path: Path) -> None:
    """Two reports bound in one PDF, each numbering its pages from 1, one TOC for both
    (groff mom's collated documents print one): the fall back to page 1 is no descent, so
    the TOC is one, and each report's entries find their pages by their own offset. Before,
    the numbers did not ascend, the TOC was text (its rows segments) and the fonts decided."""
    first = ["1 Scope", "2 Sampling sites", "3 Field methods", "4 Results"]
    second = ["1 Budget overview", "2 Staff costs", "3 Equipment", "4 Outlook"]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Contents", fontsize=14)
    rows = [(t, str(k // 2 + 1)) for k, t in enumerate(first)]
    rows += [(t, str(k // 2 + 1)) for k, t in enumerate(second)]
    _rows_page(page, 100, rows, leaders=True)
    for titles in (first, second):
        for k in range(0, 4, 2):
            page = doc.new_page()
            y = 80
            for title in titles[k:k + 2]:
                page.insert_text((72, y), title, fontsize=16)
                y = _prose(page, y + 30, 8, f"Body text of {title[2:].lower()} in detail.") + 20
    path = tmp_path / "bound.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    assert parsed.metadata["headings_from"] == "toc"
    assert [(h.title, h.page) for h in parsed.headings] == [
        (t, 2 + k // 2) for k, t in enumerate(first)] + [(t, 4 + k // 2) for k, t in enumerate(second)]
    assert "Budget overview ." not in parsed.markdown


def test_a_toc_below_a_title_and_an_abstract_is_read(tmp_path: Path) -> None:
    """An article prints its title, authors and abstract, then "Contents" and the TOC, on
    its first page: the TOC rows were fewer than half the page's rows, so the page was no
    TOC, its rows became headings ("1 Scope 2" at level 3) and segments. Now the run of
    reference rows under a label set as a heading is the TOC; a table whose rows end in
    numbers, with no such label, stays text (``test_text_beside_or_like_a_toc...``)."""
    secs = ["1 Scope", "2 Sampling sites", "3 Field methods", "4 Results", "5 Discussion"]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((120, 80), "Nitrate in the upper river basin, 2019 to 2023", fontsize=17)
    page.insert_text((220, 110), "A. Author and B. Author", fontsize=12)
    page.insert_text((270, 140), "Abstract", fontsize=9, fontname="hebo")
    y = _prose(page, 160, 12, "We measured nitrate at nine stations over five years and report.")
    page.insert_text((72, y + 20), "Contents", fontsize=14, fontname="hebo")
    _rows_page(page, y + 50, [(t, str(k + 2)) for k, t in enumerate(secs)], leaders=True)
    _chapters(doc, secs)
    path = tmp_path / "article.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    assert parsed.metadata["headings_from"] == "toc"
    assert [(h.level, h.title, h.page) for h in parsed.headings] == [
        (1, t, k + 2) for k, t in enumerate(secs)]
    assert "We measured nitrate" in parsed.markdown and "Sampling sites ." not in parsed.markdown


def test_levels_come_from_the_confirmed_toc_pages_only(tmp_path: Path) -> None:
    """A page later in the document reads like a TOC (a price list with leaders, prices
    rising) but nothing in the body confirms it: it stays text, and its indent (further
    left than the TOC's) no longer ranks the TOC's indents, which pushed every chapter to
    level 2."""
    entries = [("1 Scope", False), ("1.1 Area", True), ("2 Methods", False),
               ("2.1 Sampling", True), ("3 Results", False), ("3.1 Nitrate", True)]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Contents", fontsize=14)
    _rows_page(page, 100, [(t, str(2 + k // 2)) for k, (t, _) in enumerate(entries)],
               leaders=True, indent={t: 15 for t, sub in entries if sub})
    for k in range(0, 6, 2):
        page = doc.new_page()
        page.insert_text((72, 80), entries[k][0], fontsize=16)
        y = _prose(page, 110, 4, f"Body text of {entries[k][0][2:].lower()} in some detail.")
        page.insert_text((72, y + 20), entries[k + 1][0], fontsize=12)
        _prose(page, y + 44, 4, f"Body text of {entries[k + 1][0][4:].lower()} in detail.")
    page = doc.new_page()
    page.insert_text((40, 60), "Prices", fontsize=14)
    items = ["Anchor bolt", "Bracket", "Cable tie", "Dowel", "Eye bolt", "Flange"]
    _rows_page(page, 90, [(i, str(10 + 5 * k)) for k, i in enumerate(items)], leaders=True,
               x=40)
    path = tmp_path / "levels.pdf"
    doc.save(path)
    parsed = parse_pdf(path, path.name)
    assert parsed.metadata["headings_from"] == "toc"
    assert [(h.level, h.title) for h in parsed.headings] == [
        (2 if sub else 1, t) for t, sub in entries]
    assert "Anchor bolt" in parsed.markdown


def test_a_toc_printed_in_two_columns_gives_its_tree(tmp_path: Path) -> None:
    """A TOC set in two columns (LaTeX's multicols; biblatex's manual prints one), narrow enough
    that titles wrap over two or three rows with a hyphen: both columns are read as entries
    (their rows were read across the page as one, so the TOC went unconfirmed and its second
    page came out as text), wrapped titles are joined, levels come from the indents within each
    column, and a chapter title the body sets on two lines is found there."""
    chapters = [("Adjusting the drain casing assembly and its long service procedures",
                 ["Cleaning the gasket", "Checking the impeller"]),
                ("Mounting the vent", ["Lubricating the seal filter", "Aligning the casing"]),
                ("Replacing the housing", ["Testing the flange", "Draining the rotor outlet"]),
                ("Tightening the motor", ["Sealing the bearing", "Inspecting the valve"])]
    doc = pymupdf.open()
    toc = doc.new_page()
    toc.insert_text((72, 60), "Contents", fontsize=16)
    column = {0: (72.0, 250.0), 1: (320.0, 498.0)}  # left edge, right edge of each column
    rows: list[tuple[float, str, str]] = []  # (indent, row text, page number or "")
    page_no = 2
    for k, (chapter, sections) in enumerate(chapters, 1):
        lines = [f"{k} Adjusting the drain casing as-", "sembly and its long service",
                 "procedures"] if k == 1 else [f"{k} {chapter}"]
        rows += [(0, t, "") for t in lines[:-1]] + [(0, lines[-1], str(page_no))]
        for j, section in enumerate(sections, 1):
            text = f"{k}.{j} {section}"
            if len(text) > 24:  # wraps in the narrow column
                cut = text.rfind(" ", 0, 24)
                rows += [(15, text[:cut], ""), (27, text[cut + 1:] + " . .", str(page_no))]
            else:
                rows.append((15, text + " . . . .", str(page_no)))
        page_no += 1
    half = (len(rows) + 1) // 2
    while rows[half - 1][2] == "":  # a column ends at the end of an entry
        half += 1
    for c, part in ((0, rows[:half]), (1, rows[half:])):
        left, right = column[c]
        y = 100.0
        for indent, text, num in part:
            toc.insert_text((left + indent, y), text, fontsize=10)
            if num:
                toc.insert_text((right - pymupdf.get_text_length(num, fontsize=10), y), num,
                                fontsize=10)
            y += 13
    for k, (chapter, sections) in enumerate(chapters, 1):
        page = doc.new_page()
        if k == 1:  # set large, the title wraps
            page.insert_text((72, 72), "Adjusting the drain casing assembly", fontsize=18)
            page.insert_text((72, 94), "and its long service procedures", fontsize=18)
        else:
            page.insert_text((72, 72), chapter, fontsize=18)
        y = _prose(page, 120, 3, f"Body text of {chapter.lower()} with detail.")
        for j, section in enumerate(sections, 1):
            page.insert_text((72, y + 14), f"{k}.{j} {section}", fontsize=12)
            y = _prose(page, y + 36, 3, f"Body text of {section.lower()} with detail.")
    expected = [t for k, (c, secs) in enumerate(chapters, 1)
                for t in [(1, f"{k} {c}"), *((2, f"{k}.{j} {s}") for j, s in enumerate(secs, 1))]]
    assert _tree(tmp_path, doc) == expected
    markdown = parse_pdf(tmp_path / "tree.pdf", "tree.pdf").markdown
    assert "as-" not in markdown and ". . . ." not in markdown  # no TOC row is text


@pytest.mark.parametrize(("chapter_pt", "part_pt"), [(10.0, 13.0), (10.95, 11.95)])
def test_parts_printed_at_the_chapters_indent_are_a_level_above_them(
        tmp_path: Path, chapter_pt: float, part_pt: float) -> None:
    """LaTeX (and beamer) print a part's TOC entry at its chapters' indent, only larger; its
    page prints "Part II" above the title.  Indents alone put parts and chapters side by side
    (beamer's manual: path accuracy 0.560); the larger entries that take turns with the others
    are a level above them, and "II Casing systems" is found under "Part II".  An 11 pt
    class sets chapters at 10.95 pt and parts at 12 (exsheets): a point apart, though the
    chapters' half-point bucket is 11."""
    parts = {"I Rotor systems": ["1 Checking the rotor", "2 Draining the housing"],
             "II Casing systems": ["3 Sealing the casing", "4 Testing the flange"]}
    doc = pymupdf.open()
    toc = doc.new_page()
    toc.insert_text((72, 60), "Contents", fontsize=16)
    y, page_no = 100.0, 2
    for part, chapters in parts.items():
        toc.insert_text((72, y), part, fontsize=part_pt, fontname="hebo")
        toc.insert_text((500, y), str(page_no), fontsize=part_pt, fontname="hebo")
        y, page_no = y + 20, page_no + 1
        for chapter in chapters:
            toc.insert_text((72, y), f"{chapter} . . . . . . . . . .", fontsize=chapter_pt)
            toc.insert_text((500, y), str(page_no), fontsize=chapter_pt)
            y, page_no = y + 14, page_no + 1
    for part, chapters in parts.items():
        page = doc.new_page()
        page.insert_text((72, 200), f"Part {part.split()[0]}", fontsize=20, fontname="hebo")
        page.insert_text((72, 240), part.split(" ", 1)[1], fontsize=24, fontname="hebo")
        _chapters(doc, chapters)
    assert _tree(tmp_path, doc) == [(lv, t) for part, chapters in parts.items()
                                     for lv, t in [(1, part), *((2, c) for c in chapters)]]


def test_a_contents_label_set_apart_by_its_face_alone(tmp_path: Path) -> None:
    """lie-hasse's manual (texlive, seed 31): "Contents" in small capitals, in the rows' size and
    weight, over a TOC printed on the title page below a diagram whose rows of labels end in
    numbers; its headings are set in the body's size, centred, so nothing but the TOC says what
    they are.  The label was not taken for one (larger or bolder only) and the file had no tree;
    and the diagram's rows ("2 1 3  4") must not join the TOC's levels."""
    secs = ["1. Quick introduction", "2. Inherited options", "3. Root order",
            "4. Parabolic subgroups", "References"]
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((200, 60), "THE EXAMPLE PACKAGE", fontsize=10, fontname="tibo")
    for k in range(6):  # a diagram: rows of small labels, each ending in a number
        page.insert_text((250, 100 + 9 * k), " ".join(str((k + j) % 5 + 1) for j in range(3)),
                         fontsize=7)
        page.insert_text((330, 100 + 9 * k), str(k + 2), fontsize=7)
    page.insert_text((260, 180), "Contents", fontsize=10, fontname="tiit")
    y = 200
    for k, s in enumerate(secs):
        page.insert_text((200, y), s, fontsize=10, fontname="tiro")
        page.insert_text((400, y), str(k + 2), fontsize=10, fontname="tiro")
        y += 12
    for s in secs:
        page = doc.new_page()
        w = pymupdf.get_text_length(s, fontsize=10, fontname="tiro")
        page.insert_text(((595 - w) / 2, 72), s, fontsize=10, fontname="tiro")
        _prose(page, 100, 6, f"Body text of {s.lower()} with several sentences of detail.")
    assert _tree(tmp_path, doc) == [(1, s) for s in secs]


@pytest.mark.parametrize(("title", "says"), [
    ("1 2 3", False), ("B4", False), ("C2 1 2", False),  # a diagram's labels
    ("x", True), ("2003", True), ("[2004/07/18 v0.5]", True), ("Examples", True)])
def test_a_toc_title_says_something(title: str, says: bool) -> None:
    from hiqa.formats.pdf.toc import _worded
    assert _worded(title) is says


def test_a_toc_with_dot_operator_leaders_is_read(tmp_path: Path) -> None:
    """A Chinese thesis template's guide (shtthesis, texlive seed 47) draws its leaders with the
    dot operator "⋅" (U+22C5) in the same piece as the title: "第2 章模板使用⋅⋅⋅⋅ 2".  Only
    full stops, middle dots and ellipses counted as leaders, so no row ended in a page reference
    and the contents went unread (F1 0.214; 0.722 read)."""
    sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"  # fonts-dejavu-core
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="dv", fontfile=sans)
    page.insert_text((72, 60), "Contents", fontname="dv", fontsize=14)
    titles = ["Installing the template", "Compiling the thesis", "Loading the class",
              "Front matter", "Body and appendices"]
    for k, t in enumerate(titles):
        dots = "\u22c5" * int((420 - pymupdf.Font(fontfile=sans).text_length(t, 10)) / 3.4)
        page.insert_text((72, 90 + 14 * k), t + dots, fontname="dv", fontsize=10)
        page.insert_text((500, 90 + 14 * k), str(k + 2), fontname="dv", fontsize=10)
    _chapters(doc, titles)
    assert _tree(tmp_path, doc) == [(1, t) for t in titles]


def _chinese_thesis(rows: list[tuple[str, str]], chapters: list[tuple[str, str]]
                    ) -> pymupdf.Document:
    """A contents page of ``rows`` (title, page; a dotted number is a section, indented) and
    one page per chapter of ``chapters`` (as its page prints it, its first section), in
    PyMuPDF's built-in Chinese font."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "目录", fontname="china-s", fontsize=14)
    for k, (title, num) in enumerate(rows):
        page.insert_text((72 if "." not in title else 90, 90 + 16 * k), title + " " + "." * 60,
                         fontname="china-s", fontsize=10)
        page.insert_text((500, 90 + 16 * k), num, fontname="china-s", fontsize=10)
    for chapter, section in chapters:
        page = doc.new_page()
        page.insert_text((200, 80), chapter, fontname="china-s", fontsize=16)
        page.insert_text((72, 120), section, fontname="china-s", fontsize=12)
        for k in range(6):
            page.insert_text((72, 150 + 16 * k), "正文" * 20, fontname="china-s", fontsize=10)
    return doc


def test_a_cjk_contents_row_without_the_pages_space_finds_its_chapter(tmp_path: Path) -> None:
    """Chinese thesis templates (texlive: sample_masters, pkuthss, hitszthesis) print a chapter
    as "第一章 绪论", its label and title a space apart, while the contents row reads
    "第一章绪论": the rows of the chapters went unfound and their sections had no parent (path
    0.24-0.26).  Chinese is written without spaces, so a space beside a CJK character is no
    part of the form a title is found by."""
    doc = _chinese_thesis(
        [("第一章绪论", "2"), ("1.1 研究背景", "2"), ("第二章方法", "3"), ("2.1 数据", "3")],
        [("第一章 绪论", "1.1 研究背景"), ("第二章 方法", "2.1 数据")])
    assert _tree(tmp_path, doc) == [(1, "第一章绪论"), (2, "1.1 研究背景"),
                                    (1, "第二章方法"), (2, "2.1 数据")]


def test_a_chapter_numbered_in_chinese_numerals_on_its_page_is_found(tmp_path: Path) -> None:
    """hustthesis (texlive seed 53) numbers its chapters "1 基本格式测试" in the contents and
    prints "一 基本格式测试" over the chapter: the chapter rows went unfound (path 0.294)."""
    doc = _chinese_thesis(
        [("1 基本格式测试", "2"), ("1.1 第一层", "2"), ("2 其他格式测试", "3"), ("2.1 代码环境", "3")],
        [("一 基本格式测试", "1.1 第一层"), ("二 其他格式测试", "2.1 代码环境")])
    assert _tree(tmp_path, doc) == [(1, "1 基本格式测试"), (2, "1.1 第一层"),
                                    (1, "2 其他格式测试"), (2, "2.1 代码环境")]


@pytest.mark.parametrize("byline", [False, True])
def test_a_two_column_toc_between_an_abstract_and_the_text_gives_its_tree(
        tmp_path: Path, byline: bool) -> None:
    """A package manual's first page: a one-column abstract, the contents in two columns, then
    the first section's text across the page again (ltxnew).  The lines across the page
    above and below cross the gutter, so the page as a whole is no two-column page; the band
    between them is, and its left column is read before its right.  The body prints its
    section numbers glued to their titles ("1.1Motivation": a kern, no space), as the
    ltxnew manual's text layer does.  A byline set in two columns above the contents too
    (handout: the author's name beside "Version 1.6.0" over "21/04/2017") is no entry: the
    band starts at its first entry."""
    sections = {1: ("Introduction", ["Motivation", "Usage"]),
                2: ("Implementation", ["Identification", "Requirements of the drains",
                                       "Helper macros"]),
                3: ("History", ["Version one", "Version two"])}
    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((200, 60), "The pumpdoc package", fontsize=18)
    _prose(first, 100, 4, "This package documents pumps, their drains and vents across a page.")
    if byline:
        first.insert_text((120, 148), "Ada Pumpwright", fontsize=11)
        first.insert_text((120, 161), "ada <at> pumps <dot> org", fontsize=11)
        first.insert_text((330, 148), "Version 1.6.0", fontsize=11)
        first.insert_text((330, 161), "21/04/2017", fontsize=11)
    first.insert_text((72, 175), "Contents", fontsize=13)
    rows = []
    for k, (title, subs) in sections.items():
        rows.append((0, f"{k} {title}", k + 1))
        rows += [(12, f"{k}.{j} {s}", k + 1) for j, s in enumerate(subs, 1)]
    for c, part in ((0, rows[:5]), (1, rows[5:])):
        left, right = (72.0, 280.0) if c == 0 else (310.0, 520.0)
        for r, (indent, text, page_no) in enumerate(part):
            y = 200.0 + 14 * r + (14 if c and r else 0)
            if c and not r:  # the right column opens with a title wrapped over two rows
                first.insert_text((left + indent, y), text.rsplit(" ", 2)[0], fontsize=10)
                text, y, indent = text.rsplit(" ", 2)[1] + " " + text.rsplit(" ", 1)[1], y + 14, 24
            first.insert_text((left + indent, y), f"{text} . . . . . .", fontsize=10)
            num = str(page_no)
            first.insert_text((right - pymupdf.get_text_length(num, fontsize=10), y), num,
                              fontsize=10)
    first.insert_text((72, 290), "1.Introduction", fontsize=14)  # glued, as the page prints it
    _prose(first, 320, 3, "The first section starts on the first page and runs across it.")
    for k, (title, subs) in sections.items():
        page = doc.new_page()
        y = 72.0
        if k > 1:
            page.insert_text((72, y), f"{k}.{title}", fontsize=14)
            y += 24
        for j, sub in enumerate(subs, 1):
            page.insert_text((72, y), f"{k}.{j}{sub}", fontsize=11)
            y = _prose(page, y + 20, 3, f"Body text of {sub.lower()} with some detail.") + 10
    assert _tree(tmp_path, doc) == [
        (lv, t) for k, (title, subs) in sections.items()
        for lv, t in [(1, f"{k} {title}"), *((2, f"{k}.{j} {s}") for j, s in enumerate(subs, 1))]]


def test_a_wrapped_title_is_joined_when_glyph_boxes_are_only_x_high() -> None:
    """exsheets' fonts give glyph boxes as high as the lower-case letters: a title's two rows
    are 14 pt apart but their boxes 9 pt, more than a line's gap under a full box.  The gap
    counts from where the first row's type ends at its size; rows a paragraph apart are still
    no one title, nor is a bold label over rows in the text type."""
    from hiqa.formats.pdf.toc_rows import Row, wrapped_rows

    def row(y: float, text: str, ref: tuple[str, str] | None = None, size: float = 10.9,
            x: float = 319, bold: bool = False) -> Row:
        return Row([0], x, 506, y, y + 5, text, size, bold, 0, ref)

    rows = [row(573, "7.2. Options to the question En-", size=10.36),
            row(587, "vironment . . . . . . 9", ("vironment", "9"), x=344)]
    assert wrapped_rows(rows, 1) == [0]
    apart = [row(573, "7.2. Options to the question En-"),
             row(610, "vironment . . . . . . 9", ("vironment", "9"), x=344)]
    assert wrapped_rows(apart, 1) == []
    label = [row(573, "Contents", bold=True), row(587, "1 Pumps . . . 3", ("1 Pumps", "3"))]
    assert wrapped_rows(label, 1) == []


def test_a_mark_hung_in_the_margin_keeps_an_entry_at_its_siblings_level() -> None:
    """exsheets lists its solutions in the contents, one starred: "⋆Solution 29" starts a star's
    width left of "Solution 28", an indent no other entry takes.  Read as a level of its own
    it pushed every deeper entry down one (path accuracy 0.16).  Parts whose right-aligned
    numbers put "II" left of "I" (eqpin2corrman) stay one level, above their chapters."""
    from hiqa.formats.pdf.toc import TocEntry, _assign_levels

    def entry(title: str, x0: float, size: float = 10.9, bold: bool = False) -> TocEntry:
        return TocEntry(title, 3, False, x0, size, bold, 0, 1)

    entries = [entry("A. Solutions used in this manual", 89, bold=True)]
    entries += [entry(f"Solution {n}.", 106) for n in (9, 10, 11, 18, 19, 20, 27, 28)]
    entries += [entry("⋆Solution 29.", 93), entry("Solution 30.", 106),
                entry("B. Bibliography", 89, bold=True)]
    _assign_levels(entries)
    assert [e.level for e in entries] == [1, *[2] * 10, 1]

    parts = [entry("I Version 1.0", 124, 11.1, True),
             *(entry(f"{n} Chapter {n}", 134, 9.5, True) for n in range(1, 6)),
             entry("II Version 2.0", 120, 11.1, True),
             *(entry(f"{n} Chapter {n}", 134, 9.5, True) for n in range(6, 12))]
    _assign_levels(parts)
    assert [e.level for e in parts] == [1, *[2] * 5, 1, *[2] * 6]


def test_contents_under_an_abstract_with_a_title_wrapped_over_three_rows() -> None:
    """filemod's first page: the abstract's last line, the "Contents" label, then entries, one
    title wrapped over three rows ("3.1 Minimal set of ex-" / "pandable Macros:" /
    "filemod-expmin . . . 8").  The entries after it are still the contents', and the
    abstract's last line, two rows above the first entry, does not hide the label."""
    from hiqa.formats.pdf.toc import _reference_run
    from hiqa.formats.pdf.toc_rows import Row

    def row(y: float, text: str, ref: tuple[str, str] | None = None, x: float = 140,
            size: float = 10.0, bold: bool = False) -> Row:
        return Row([0], x, 470, y, y + 10, text, size, bold, 0, ref)

    rows = [row(386, "This package will work with LaTeX as long as pdfTeX (in", x=163, size=8.9),
            row(408, "does not provide \\pdffilemoddate.", x=150, size=8.9),
            row(428, "Contents", x=125, size=14.3, bold=True),
            row(455, "3 Implementation 8", ("3 Implementation", "8"), x=125, bold=True),
            row(468, "3.1 Minimal set of ex-"), row(480, "pandable Macros:", x=162),
            row(492, "filemod-expmin . . . . . 8", ("filemod-expmin", "8"), x=162),
            row(505, "3.2 Header of filemod . . . . 11", ("3.2 Header of filemod", "11")),
            row(518, "3.3 Parser . . . . . . . . . . 11", ("3.3 Parser", "11")),
            row(626, "1 Introduction", x=125, size=14.3, bold=True),
            row(651, "This package provides several macros to read and compare", x=125)]
    run = _reference_run(rows)
    assert [r.text for r in run] == [r.text for r in rows[3:9]]


def test_a_short_contents_title_finds_its_heading_by_number(tmp_path: Path) -> None:
    """LaTeX's \\section[short]{long}: the contents print "4.2 Binder", the page "4.2 Putting
    the application binder together".  No line of the page reads like the entry; the heading
    that opens with its number on that page is where it stands.  The contents' title is the
    heading (as the producer's own outline has it), the page's words the section's first text,
    and the sections under it keep their parent.  A plain body line opening with the number
    ("4.2 litres a minute ...") is not it."""
    entries = [("4 Usage", 2, 0), ("4.1 Configuration", 2, 15), ("4.2 Binder", 3, 15),
               ("4.2.1 Title page", 3, 30), ("4.2.2 Covering letter", 4, 30),
               ("5 Implementation", 5, 0)]
    long = "4.2 Putting the application binder together"
    doc = pymupdf.open()
    toc = doc.new_page()
    toc.insert_text((72, 60), "Contents", fontsize=16)
    for r, (title, page_no, indent) in enumerate(entries):
        y = 100 + 14 * r
        toc.insert_text((72 + indent, y), f"{title} . . . . . . . .", fontsize=10)
        toc.insert_text((500, y), str(page_no), fontsize=10)
    for page_no in range(2, 6):
        page = doc.new_page()
        y = 72.0
        if page_no == 3:
            page.insert_text((72, y), "4.2 litres a minute flow through the binder's pump.",
                             fontsize=10)
            y += 20
        for title, at, _ in entries:
            if at == page_no:
                page.insert_text((72, y), long if title == "4.2 Binder" else title, fontsize=12,
                                 fontname="hebo")
                y = _prose(page, y + 20, 3, f"Body text of {title.lower()} with detail.") + 10
    assert _tree(tmp_path, doc) == [(1, "4 Usage"), (2, "4.1 Configuration"), (2, "4.2 Binder"),
                                    (3, "4.2.1 Title page"), (3, "4.2.2 Covering letter"),
                                    (1, "5 Implementation")]
    parsed = parse_pdf(tmp_path / "tree.pdf", "tree.pdf")
    binder = next(s for s in parsed.sections if s.title == "4.2 Binder")
    text = parsed.markdown[binder.body_span[0]:binder.body_span[1]]
    assert text.lstrip().startswith(long)
    assert "4.2 litres a minute" not in text
