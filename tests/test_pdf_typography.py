"""The typographic heading model (issue #44, item 1): headings of PDFs with neither outline nor
printed contents, decided from the document's own typography.

Every PDF is written here with PyMuPDF, line by line: Helvetica 10 pt text, headings bold or
larger, listings in Courier.  Each test builds a document where a rule of
``hiqa.formats.pdf.typography`` decides, and asserts the heading tree that comes out.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pymupdf
import pytest

from hiqa.formats.pdf.lines import word_count
from hiqa.formats.pdf.reader import parse_pdf

WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 595, 842, 72, 72, 780
PROSE = ("The pump draws water from the lower basin and lifts it to the tank on the hill, "
         "where it settles before it flows to the houses of the village below.")


class Row(NamedTuple):
    text: str
    font: str = "helv"
    size: float = 10
    space: float = 0.0  # extra space above the row, in points
    indent: float = 0.0
    new_page: bool = False
    centred: bool = False


def write(path: Path, rows: Sequence[Row]) -> Path:
    """One row per line, top-down, a new page when the page is full or a row asks for one."""
    doc = pymupdf.open()
    page, y = doc.new_page(width=WIDTH, height=HEIGHT), float(TOP)
    for row in rows:
        if row.new_page or y + row.space + row.size * 1.4 > BOTTOM:
            page, y = doc.new_page(width=WIDTH, height=HEIGHT), float(TOP)
        y += row.space + row.size * 1.25
        x = LEFT + row.indent
        if row.centred:
            x = (WIDTH - pymupdf.get_text_length(row.text, fontname=row.font,
                                                 fontsize=row.size)) / 2
        page.insert_text((x, y), row.text, fontname=row.font, fontsize=row.size)
    doc.save(path)
    doc.close()
    return path


def prose(lines: int = 4, space: float = 6.0) -> list[Row]:
    """A paragraph of ``lines`` rows of text set like a justified paragraph."""
    words = (PROSE + " ") * lines
    out, cur = [], ""
    for word in words.split():
        if len(cur) + len(word) + 1 > 88:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    return [Row(text, space=space if k == 0 else 0.0) for k, text in enumerate(out[:lines])]


def heading(text: str, size: float = 14, space: float = 14.0, **kw: object) -> Row:
    return Row(text, font="hebo", size=size, space=space, **kw)  # type: ignore[arg-type]


def tree(path: Path) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in parse_pdf(path, path.name).headings]


def test_bold_and_larger_headings_give_a_two_level_tree(tmp_path: Path) -> None:
    rows = [heading("Installation", 16), *prose(), heading("Unpacking the pump", 12), *prose(),
            heading("Mounting the pump", 12), *prose(), heading("Operation", 16), *prose(),
            heading("Starting the pump", 12), *prose(6)]
    assert tree(write(tmp_path / "two.pdf", rows)) == [
        (1, "Installation"), (2, "Unpacking the pump"), (2, "Mounting the pump"),
        (1, "Operation"), (2, "Starting the pump")]


def test_a_numbered_code_listing_is_not_headings(tmp_path: Path) -> None:
    """Program lines that carry their line number, some in bold (a listing's keywords), run
    1, 2, 3 … line after line: a listing, however much "28 \\expandafter" reads like a
    numbered section."""
    code = ["\\def\\pump@start#1{%", "\\expandafter\\ifx\\csname #1\\endcsname\\relax",
            "\\pump@init{#1}%", "\\else", "\\pump@restart{#1}%", "\\fi", "}"]
    listing = [Row(f"{n} {line}", font="cobo" if n % 2 else "cour", size=10,
                   space=4.0 if n == 1 else 0.0, indent=20) for n, line in enumerate(code, 1)]
    rows = [heading("1 Introduction"), *prose(), heading("2 Implementation"), *prose(2),
            *listing, *prose(3), heading("3 Usage"), *prose(6)]
    assert tree(write(tmp_path / "listing.pdf", rows)) == [
        (1, "1 Introduction"), (1, "2 Implementation"), (1, "3 Usage")]


def test_a_numbered_list_and_unread_contents_rows_are_not_headings(tmp_path: Path) -> None:
    contents = []
    for n, title, page in ((1, "Introduction", 1), (2, "Usage", 1), (3, "Options", 2)):
        contents += [Row(f"{n} {title} {page}", font="hebo", space=6.0),
                     Row(f"{n}.1 Overview {page}", indent=12), Row(f"{n}.2 Details {page}", indent=12)]
    steps = [Row(f"{n}. {t}", font="hebo", indent=12) for n, t in
             enumerate(("Close the valve", "Open the vent", "Start the motor"), 1)]
    rows = [heading("Contents"), *contents, heading("1 Introduction"), *prose(), *steps,
            *prose(2), heading("2 Usage"), *prose(), heading("3 Options"), *prose(5)]
    titles = [t for _, t in tree(write(tmp_path / "lists.pdf", rows))]
    assert titles == ["Contents", "1 Introduction", "2 Usage", "3 Options"]


def test_a_bibliography_set_apart_is_not_headings(tmp_path: Path) -> None:
    """Reference entries set a point larger than the text, each on lines of its own with a
    hanging indent, carry a good share of the document: a second text style, not headings."""
    entries = [
        ("Ashbrook, James B., and Carol Rausch Albright. The Frontal Lobes, Intending, and a",
         "Purposeful God. Chap. 7 in The Humanizing Brain. Cleveland: Pilgrim Press, 1997."),
        ("Clark, Hazel V. Mesopotamia: Between Two Rivers. Mesopotamia, OH: End of the Commons",
         "General Store, 1957. A standard booklet, though it could be presented otherwise."),
        ("Frede, Dorothea. Nicomachean Ethics VII. 11-12: Pleasure. In Aristotle: Nicomachean",
         "Ethics, Book VII, edited by Carlo Natali, 183-207. Oxford University Press, 2009."),
        ("Garaud, Marcel. Recherches sur les defrichements dans la Gatine poitevine aux XIe et",
         "XIIe siecles. Bulletin de la Societe des antiquaires de l'Ouest, 4th ser., 9 (1967)."),
    ]
    bibliography = []
    for first, second in entries * 2:
        bibliography += [Row(first, size=11, space=8.0), Row(second, size=11, indent=18)]
    rows = [heading("Sources", 16), *prose(8), heading("Bibliography", 16), *bibliography,
            heading("Notes", 16), *prose(8), *prose(8)]
    assert tree(write(tmp_path / "bib.pdf", rows)) == [
        (1, "Sources"), (1, "Bibliography"), (1, "Notes")]


def test_prose_among_listings_keeps_its_own_size(tmp_path: Path) -> None:
    """A manual that is mostly code in 9 pt: the text size is its prose's (10 pt), so a line of
    prose is not "larger than the body" and does not become a heading."""
    listing = [Row(f"@book{{key{n}, author = {{Author {n}}}, title = {{Title number {n}}},}}",
                   font="cour", size=9) for n in range(6)]
    def notes(kind: str) -> list[Row]:
        return [Row(f"{text} for {kind}", space=14) for text in (
            "Entries as the style prints them", "Each field in the order it reads",
            "Dates as the source gives them", "Names as written, family first")]

    rows = [heading("Books", 14), *notes("books"), *listing, *notes("volumes"), *listing,
            heading("Articles", 14), *notes("articles"), *listing, *notes("journals"), *listing]
    assert tree(write(tmp_path / "mostly-code.pdf", rows)) == [(1, "Books"), (1, "Articles")]


def test_bold_code_type_heads_prose_but_not_a_listing(tmp_path: Path) -> None:
    """A module's name in bold code type, set apart over prose, is a heading (release notes);
    a macro's name in the same type over its implementation is not (a package's manual)."""
    notes = [heading("Minor features", 13)]
    for module in ("django.contrib.admin", "django.contrib.auth", "django.contrib.gis"):
        notes += [Row(module, font="cobo", space=10), *prose(3)]
    assert tree(write(tmp_path / "notes.pdf", notes)) == [
        (1, "Minor features"), (2, "django.contrib.admin"), (2, "django.contrib.auth"),
        (2, "django.contrib.gis")]
    macros = [heading("Implementation", 13), *prose(2)]
    for name in ("\\pump@start", "\\pump@stop", "\\pump@reset"):
        macros += [Row(name, font="cobo", space=12), *prose(1, space=8),
                   *[Row(f"\\def{name}#1{{\\relax step {k}}}", font="cour") for k in range(5)]]
    assert tree(write(tmp_path / "macros.pdf", [*macros, *prose(3)])) == [(1, "Implementation")]


def test_index_letters_head_the_index_groups(tmp_path: Path) -> None:
    """Capitals alone in bold, in alphabetical order, entries between: the index's groups,
    under the index, which closes the book at the chapters' level (nothing numbered follows
    it, so it is no part above them)."""
    index = []
    for letter, words in (("A", ("aeration", "anchor bolt")), ("B", ("basin", "bearing")),
                          ("D", ("diaphragm", "discharge")), ("F", ("filter", "flange"))):
        index += [Row(letter, font="hebo", space=10, indent=60),
                  *[Row(f"{w}, 3, 7", indent=0) for w in words]]
    rows = [Row("Pump manual", size=20, centred=True), *prose(), heading("1 Installation"),
            *prose(), heading("2 Operation"), *prose(), heading("Index", 16, new_page=True),
            *index]
    assert tree(write(tmp_path / "index.pdf", rows)) == [
        (1, "Pump manual"), (2, "1 Installation"), (2, "2 Operation"), (2, "Index"),
        (3, "A"), (3, "B"), (3, "D"), (3, "F")]


def test_a_glyph_mapped_to_no_character_leaves_the_heading_title(tmp_path: Path) -> None:
    """A dingbat between a section's number and its words, from a font that maps it to no
    character (read as U+FFFD), is not part of the title: "2 Operation", as printed."""
    path = write(tmp_path / "dingbat.pdf", [heading("1 Installation"), *prose()])
    doc = pymupdf.open(path)
    page = doc[0]
    glyph = doc.get_new_xref()
    doc.update_object(glyph, "<<>>")
    doc.update_stream(glyph, b"700 0 0 0 700 700 d1 0 0 700 700 re f")
    font = doc.get_new_xref()
    doc.update_object(font, (
        "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 700 700] /FontMatrix [0.001 0 0 0.001 "
        f"0 0] /CharProcs << /orn {glyph} 0 R >> /Encoding << /Type /Encoding /Differences "
        "[1 /orn] >> /FirstChar 1 /LastChar 1 /Widths [700] /Resources << >> >>"))
    _, fonts = doc.xref_get_key(page.xref, "Resources/Font")
    doc.xref_set_key(page.xref, "Resources/Font", f"{fonts[:-2]}/orn {font} 0 R>>")
    page.clean_contents()
    y = HEIGHT - 260
    text = [(f"BT /hebo 14 Tf {LEFT} {y} Td (2 ) Tj /orn 14 Tf (\\001) Tj /hebo 14 Tf "
             "( Operation) Tj ET")]
    text += [f"BT /helv 10 Tf {LEFT} {y - 24 - 12.5 * k} Td ({row.text}) Tj ET"
             for k, row in enumerate(prose())]
    stream = page.get_contents()[0]
    doc.update_stream(stream, doc.xref_stream(stream) + "\n".join(["", *text, ""]).encode())
    doc.saveIncr()
    doc.close()
    assert tree(path) == [(1, "1 Installation"), (1, "2 Operation")]


def test_an_index_opens_with_a_group_in_its_letters_type(tmp_path: Path) -> None:
    """An index's first group, "Symbols", set like its letters with entries under it, is a
    group head beside them; a word in that type over no page references is not."""
    def index(lead: str, entries: tuple[str, ...]) -> list[Row]:
        rows = [Row(lead, font="hebo", space=10, indent=60), *[Row(e) for e in entries]]
        for letter, words in (("A", ("aeration", "anchor bolt")), ("B", ("basin", "bearing")),
                              ("D", ("diaphragm", "discharge"))):
            rows += [Row(letter, font="hebo", space=10, indent=60),
                     *[Row(f"{w}, 3, 7") for w in words]]
        return [Row("Pump manual", size=20, centred=True), *prose(), heading("1 Installation"),
                *prose(), heading("Index", 16, new_page=True), *index_note(), *rows]

    def index_note() -> list[Row]:
        return [Row("Numbers in italic refer to the page of the description.")]

    symbols = write(tmp_path / "symbols.pdf", index("Symbols", ("\\@pump, 12", "\\@vent, 4")))
    assert tree(symbols) == [(1, "Pump manual"), (2, "1 Installation"), (2, "Index"),
                             (3, "Symbols"), (3, "A"), (3, "B"), (3, "D")]
    note = write(tmp_path / "note.pdf", index("Note", ("see the pump's plate", "and its seal")))
    assert (3, "Note") not in tree(note)


def test_panel_letters_are_not_index_letters(tmp_path: Path) -> None:
    """Bold capitals in alphabetical order over captions (a figure's panels) have no page
    references between them: no index."""
    panels = []
    for letter, caption in (("A", "Flow through the basin at rest"), ("B", "Flow at full load"),
                            ("C", "Flow with the vent open")):
        panels += [Row(letter, font="hebo", space=10, indent=60), Row(caption, indent=20)]
    rows = [heading("1 Measurements"), *prose(), *panels, *prose(), heading("2 Results"),
            *prose(4)]
    assert tree(write(tmp_path / "panels.pdf", rows)) == [(1, "1 Measurements"), (1, "2 Results")]


def test_roman_numbered_small_capitals_are_sections(tmp_path: Path) -> None:
    """Sections numbered I., II., III. in capitals no larger than the text, centred: the
    sequence of their numbers makes them headings, not their size."""
    rows = [Row("Testing a journal class", font="helv", size=17, centred=True), *prose()]
    for title in ("I. MANUSCRIPT FORMATTING", "II. CITATIONS", "III. EQUATIONS",
                  "IV. QUOTATION MARKS"):
        rows += [Row(title, size=9.5, space=14, centred=True), *prose(3)]
    titles = [t for _, t in tree(write(tmp_path / "roman.pdf", rows))]
    assert titles[1:] == ["I. MANUSCRIPT FORMATTING", "II. CITATIONS", "III. EQUATIONS",
                          "IV. QUOTATION MARKS"]


def test_a_slide_title_over_continuation_slides_is_one_heading(tmp_path: Path) -> None:
    rows = [heading("New features", 20), heading("1. Unicode strings", 14), *prose(3),
            heading("New features", 20, new_page=True), heading("2. Font handling", 14),
            *prose(3), heading("Outlook", 20, new_page=True), *prose(3)]
    assert tree(write(tmp_path / "slides.pdf", rows)) == [
        (1, "New features"), (2, "1. Unicode strings"), (2, "2. Font handling"),
        (1, "Outlook")]


def test_labels_and_figure_marks_are_not_headings(tmp_path: Path) -> None:
    """A bold label printed over every example ("Note Style" five times) and a figure's panel
    letters ("a b") are set apart like headings; neither is one."""
    rows = [heading("Entry types", 16), *prose(2)]
    for kind in ("Article", "Book", "Booklet", "Manual", "Thesis"):
        rows += [heading(f"{kind} entries", 14), *prose(2), heading("Note Style", 12), *prose(1),
                 heading("Bibliography Style", 12), *prose(1)]
    rows += [heading("a b", 14), *prose(2)]
    titles = [t for _, t in tree(write(tmp_path / "labels.pdf", rows))]
    assert titles == ["Entry types", "Article entries", "Book entries", "Booklet entries",
                      "Manual entries", "Thesis entries"]


def test_authors_under_a_centred_title_are_not_headings(tmp_path: Path) -> None:
    rows = [Row("Pattern Recognition 40 (2007) 2730-2741", size=8, centred=True),
            Row("Cubic approximation of a digitized curve", size=17, space=20, centred=True),
            Row("Sarbajit Pal, Pankaj Ganguly, P.K. Biswas", size=12.5, centred=True),
            *prose(3), heading("1. Introduction", 11), *prose(4),
            heading("2. Method", 11), *prose(4), heading("3. Results", 11), *prose(4)]
    assert tree(write(tmp_path / "paper.pdf", rows)) == [
        (1, "Cubic approximation of a digitized curve"), (2, "1. Introduction"),
        (2, "2. Method"), (2, "3. Results")]


def test_numbered_headings_one_line_apart_are_headings_not_a_list(tmp_path: Path) -> None:
    """Sub-sections of one line of text each ("1.1.1 Meaning" / a line / "1.1.2 Example") step
    by two lines, as a list whose items wrap once does: their lines, bold, alone and with
    space above, are headings.  A list whose bold items wrap in their block, stepping by two
    lines too, is still a list."""
    rows = [heading("1 Entry types"), *prose(2), heading("1.1 Articles", 12), *prose(1)]
    for n, title in enumerate(("Meaning", "Example", "Fields", "Output"), 1):
        rows += [heading(f"1.1.{n} {title}", 10, space=10), *prose(1, space=4)]
    rows += [heading("1.2 Books", 12), *prose(2)]
    steps = (("Close the valve on the lower basin and wait until", "the pressure falls"),
             ("Open the vent on the tank on the hill and let", "the air out"),
             ("Start the motor and check that the pump draws", "water again"))
    for n, (first, wrapped) in enumerate(steps, 1):
        rows += [Row(f"{n}. {first}", font="hebo", space=3, indent=12),
                 Row(wrapped, font="hebo", indent=24)]
    rows += [*prose(3), heading("2 Fields"), *prose(4)]
    assert tree(write(tmp_path / "one-line-sections.pdf", rows)) == [
        (1, "1 Entry types"), (2, "1.1 Articles"), (3, "1.1.1 Meaning"), (3, "1.1.2 Example"),
        (3, "1.1.3 Fields"), (3, "1.1.4 Output"), (2, "1.2 Books"), (1, "2 Fields")]


def test_contents_rows_stepping_by_two_lines_are_not_headings(tmp_path: Path) -> None:
    """A contents page whose chapter rows are bold, alone and with space above, one section
    row between them, steps by two lines as one-line sections do: its rows end in their
    page numbers, so it is still contents, not headings."""
    chapters = (("Entry types", "Articles"), ("Fields", "Names"), ("Options", "Dates"))
    rows = [heading("Contents")]
    for n, (title, section) in enumerate(chapters, 1):
        rows += [Row(f"{n} {title} {n + 1}", font="hebo", space=10.0),
                 Row(f"{n}.1 {section} {n + 1}", indent=12, space=6.0)]
    for n, (title, section) in enumerate(chapters, 1):
        rows += [heading(f"{n} {title}", new_page=True), *prose(3), heading(f"{n}.1 {section}", 12),
                 *prose(4)]
    assert tree(write(tmp_path / "contents.pdf", rows)) == [
        (1, "Contents"), (1, "1 Entry types"), (2, "1.1 Articles"), (1, "2 Fields"),
        (2, "2.1 Names"), (1, "3 Options"), (2, "3.1 Dates")]


def number_lines(path: Path, every: int = 1) -> Path:
    """Print every ``every``-th row's number in the left margin, 7 pt, right-aligned, counting
    through the document as a critical edition or a pleading does."""
    doc = pymupdf.open(path)
    n = 0
    for page in doc:
        rows = sorted({round(line["bbox"][3], 1) for block in page.get_text("dict")["blocks"]
                       for line in block.get("lines", ())})
        for baseline in rows:
            n += 1
            if n % every == 0:
                label = str(n)
                width = pymupdf.get_text_length(label, fontname="helv", fontsize=7)
                page.insert_text((LEFT - 10 - width, baseline - 2.5), label, fontname="helv",
                                 fontsize=7)
    doc.saveIncr()
    doc.close()
    return path


def test_line_numbers_in_the_margin_are_not_part_of_the_lines(tmp_path: Path) -> None:
    """A page whose every line is numbered in its margin: joined to their rows, the numbers
    made every line open with a number, "5 1.1 Scope" among them, a numbered listing to the
    rules that keep listings from being headings, and no heading was found."""
    rows = [heading("1 Introduction"), *prose(6), heading("1.1 Scope", 12), *prose(6),
            heading("1.2 Terms", 12), *prose(6), heading("2 Operation"), *prose(6),
            heading("2.1 Starting the pump", 12), *prose(6)]
    expected = [(1, "1 Introduction"), (2, "1.1 Scope"), (2, "1.2 Terms"), (1, "2 Operation"),
                (2, "2.1 Starting the pump")]
    for every in (1, 5):  # every line, or every fifth (a page then holds 7 numbers)
        path = number_lines(write(tmp_path / f"numbered-{every}.pdf", rows), every)
        doc = parse_pdf(path, path.name)
        assert [(h.level, h.title) for h in doc.headings] == expected
        assert "The pump draws water" in doc.markdown
        assert not any(ln.split(" ", 1)[0].isdigit() for ln in doc.markdown.splitlines()
                       if "pump draws" in ln)


def test_a_few_numbered_footnotes_keep_their_numbers(tmp_path: Path) -> None:
    notes = [Row(f"{n} See the maintenance log of the pump.", size=8, space=4.0 if n == 1 else 0)
             for n in (1, 2, 3)]
    rows = [heading("Installation"), *prose(6), *notes]
    doc = parse_pdf(write(tmp_path / "notes.pdf", rows), "notes.pdf")
    assert "1 See the maintenance log" in doc.markdown


def test_running_heads_that_name_the_section_are_furniture() -> None:
    """A header naming the current section ("4. The Database" over that section's pages)
    repeats on too few pages to be furniture by repetition, and each was read as the
    section's heading again (substances' manual, a texlive check draw: path 0.182).  It is
    furniture when its text is a heading's, set less prominently, at the top of two pages or
    more; a top line that names no heading stays text, and so does one printed once."""
    from hiqa.formats.pdf.furniture import mark_furniture
    from hiqa.formats.pdf.lines import BODY, FURNITURE, Line

    def line(page: int, y: float, text: str, size: float = 10.9, bold: bool = False) -> Line:
        return Line(page, page * 10 + int(y), 90, y, 400, y + size, text, size, bold, False,
                    False, True)

    starts = {2: "1. Introduction", 6: "2. Usage", 10: "3. Options", 14: "4. The Database",
              18: "5. Styles", 23: "6. Index"}

    def roles(heads: dict[int, str]) -> dict[int, int]:
        lines = []
        for page in range(1, 25):
            if page in heads:
                lines.append(line(page, 52, heads[page]))
            if page in starts:  # the sections' headings themselves
                lines.append(line(page, 132, starts[page], 14.3, bold=True))
            lines.append(line(page, 300, f"Text of page {page}, which goes on a while.", 7.0))
        mark_furniture(lines, [842.0] * 24, 7.0)
        return {ln.page: ln.role for ln in lines if ln.y0 == 52}

    current, heads = "", {}
    for page in range(2, 24):  # each page headed by its section, the last one's once
        current = starts.get(page, current)
        heads[page] = current
    heads[20] = "Printed on 20 March"
    found = roles(heads)
    assert all(found[p] == FURNITURE for p in range(2, 23) if p != 20)
    # a heading's text at the top of one page only may be that heading opening its page
    assert found[20] == BODY and found[23] == BODY
    assert roles({14: "4. The Database"}) == {14: BODY}


def test_a_books_running_heads_with_chapter_labels_and_folios_are_furniture() -> None:
    """A book's running heads: "18 CHAPTER 2. DOWNLOAD AND INSTALLATION" on the left pages,
    "2.5. PACKAGE DEPENDENCIES 19" on the right, over headings "2 Download and
    Installation" and "2.5/ Package Dependencies" (upmethodology's manual, texlive seed 107:
    every head read as a chapter, path 0.143).  Each names a heading in the same words, beside
    the page's number: furniture, the one head of a one-page section too; a first line that
    names no heading stays text."""
    from hiqa.formats.pdf.furniture import mark_furniture
    from hiqa.formats.pdf.lines import BODY, FURNITURE, Line

    def line(page: int, y: float, text: str, size: float = 10.9) -> Line:
        return Line(page, page * 10 + int(y), 90, y, 400, y + size, text, size, False, False,
                    False, True)

    chapters = {3: "1 Introduction", 9: "2 Download and Installation",
                17: "3 Class Documentation", 25: "4 Version Tracking"}
    sections = {4: "1.1/ Purpose of the Package", 6: "1.2/ Reading This Manual",
                10: "2.1/ Manual Installation", 14: "2.2/ Package Dependencies",
                15: "2.3/ Debian Packages", 18: "3.1/ Front Pages", 22: "3.2/ Back Pages",
                26: "4.1/ Version Histories"}
    lines, chapter, section = [], "", ""
    for page in range(1, 31):
        if page in chapters:
            chapter = chapters[page]
            lines.append(line(page, 132, chapter, 20.7))
        elif page > 3:
            number, words = chapter.split(" ", 1)
            head = (f"{page} CHAPTER {number}. {words.upper()}" if page % 2 == 0 else
                    f"{section.split('/')[0]}. {section.split(' ', 1)[1].upper()} {page}")
            lines.append(line(page, 52, head))
        if page in sections:
            section = sections[page]
            lines.append(line(page, 160, section, 14.3))
        lines.append(line(page, 300, f"Text of page {page}, which goes on a while.", 10.0))
    lines.append(line(30, 52, "Appendix notes continue on this page"))
    # a table's header at the top of two pages, its years no page's number: text
    lines.append(line(27, 200, "At December 31, 2022", 14.3))
    lines += [line(page, 60, "At December 31, 2022 2021") for page in (28, 29)]
    mark_furniture(lines, [842.0] * 30, 10.0)
    assert all(ln.role == BODY for ln in lines if ln.y0 == 60)
    tops = [ln for ln in lines if ln.y0 == 52]
    assert [ln.text for ln in tops if ln.role != FURNITURE] == [
        "Appendix notes continue on this page"]
    assert "2.2. PACKAGE DEPENDENCIES 15" in [ln.text for ln in tops]  # a one-page head
    assert all(ln.role == BODY for ln in lines if ln.y0 in (132, 160, 300))


def test_a_section_number_follows_its_sections_not_a_listing_that_reached_it_first(
        tmp_path: Path) -> None:
    """chemnum's manual: a listing numbered 1-8 ends between sections 8 and 9, and section
    8's heading averages 14.2 pt (small capitals in it) beside section 9's 14.3.  Matched by
    exact size, "9 Changing the Input Markers" continued the listing, the latest chain at 8,
    and sections 9-12 were read as program lines."""
    code = ["\\documentclass{standalone}", "\\usepackage{graphicx}", "\\begin{document}",
            "\\setchemnum{replace-style=\\itshape}", "\\replacecmpd[tag=a]{main}",
            "\\replacecmpd[tag=b]{main.sub}", "\\includegraphics{scheme.ps}", "\\end{document}"]
    listing = [Row(f"{n} {line}", font="cour", size=8, space=4.0 if n == 1 else 0.0)
               for n, line in enumerate(code, 1)]
    titles = ["Licence", "Overview", "Numbering", "Details", "Options", "Counters",
              "Formats", "Replacing tags", "Input markers", "Languages"]
    rows = []
    for n, title in enumerate(titles, 1):
        rows += [heading(f"{n} {title}", 13.6 if n == 8 else 14), *prose(4)]
        if n == 8:
            rows += [*listing, *prose(3)]
    found = [t for _, t in tree(write(tmp_path / "sections.pdf", rows))]
    assert found == [f"{n} {t}" for n, t in enumerate(titles, 1)]


def test_running_heads_of_two_titles_are_furniture_however_varied() -> None:
    """mdframed's manual (texlive, seed 67) heads each page with its sub-section's title at the
    left and its section's at the right ("6.2. Restoring the settings … 6. Options"), a new
    text on nearly every page: a band that varied is where a body's first lines stand, so the
    rule for heads that name the section left them, and each read as a heading.  A top line
    made of two headings' titles is furniture on two pages or more; a table's first row of a
    caption and its years ("At December 31, 2021 2020", both bold in the body) is not."""
    from hiqa.formats.pdf.furniture import mark_furniture
    from hiqa.formats.pdf.lines import BODY, FURNITURE, Line

    def line(page: int, y: float, text: str, size: float = 10.9, bold: bool = False) -> Line:
        return Line(page, page * 10 + int(y), 90, y, 500, y + size, text, size, bold, False,
                    False, True)

    sections = {2: ("6. Options", "6.1. Global options"), 3: ("6. Options", "6.2. Lengths"),
                4: ("6. Options", "6.3. Colours"), 5: ("7. Hooks", "7.1. Global hooks"),
                6: ("7. Hooks", "7.2. Local hooks"), 7: ("8. Examples", "8.1. Simple"),
                8: ("8. Examples", "8.2. Nested")}
    lines = []
    for page, (section, sub) in sections.items():
        lines.append(line(page, 52, f"{sub} {section}"))
        if section not in {ln.text for ln in lines}:
            lines.append(line(page, 120, section, 14.3, bold=True))
        lines.append(line(page, 140, sub, 12.0, bold=True))
        lines.append(line(page, 300, f"Text of page {page}, which goes on a while.", 10.9))
    for page in (9, 10):  # a table heading two pages, its caption and years bold in the body
        lines += [line(page, 52, "At December 31, 2021 2020"),
                  line(page, 200, "At December 31,", bold=True),
                  line(page, 220, "2021 2020", bold=True)]
    mark_furniture(lines, [842.0] * 10, 10.9)
    tops = {ln.page: ln.role for ln in lines if ln.y0 == 52}
    assert all(tops[p] == FURNITURE for p in sections)
    assert tops[9] == tops[10] == BODY


def test_a_title_wrapped_is_one_though_a_logo_moves_its_first_lines_mean_size(
        tmp_path: Path) -> None:
    """mpgraphics' manual (texlive, seed 13): "5 Your LaTeX packages and macros used within" /
    "MetaPost graphics", 14.3 pt bold, the logo's small "A" pulling the first line's mean size
    to 14.23 pt, the second's 14.35: either side of a half-point bucket's edge, so the title
    was cut in two, "MetaPost graphics" a heading of its own."""
    doc = pymupdf.open()
    for n, (first, second) in enumerate([("Your L", "packages and macros used within"),
                                         ("Controlling the L", "graphics of the package")], 5):
        page, y = doc.new_page(width=WIDTH, height=HEIGHT), float(TOP) + 20
        x = LEFT
        for text, size in ((f"{n} {first}", 14.35), ("A", 10.0), (f"TeX {second}", 14.35)):
            page.insert_text((x, y), text, fontname="hebo", fontsize=size)
            x += pymupdf.get_text_length(text, fontname="hebo", fontsize=size) + (1 if size < 14 else 0)
        y += 18
        page.insert_text((LEFT + 20, y), "MetaPost graphics", fontname="hebo", fontsize=14.35)
        for row in prose(6):
            y += 14
            page.insert_text((LEFT, y), row.text, fontname="helv", fontsize=10)
    path = tmp_path / "wrapped.pdf"
    doc.save(path)
    doc.close()
    assert [t for _, t in tree(path)] == [
        "5 Your LATeX packages and macros used within MetaPost graphics",
        "6 Controlling the LATeX graphics of the package MetaPost graphics"]


def test_a_listing_whose_line_number_reaches_a_section_number_does_not_take_the_sections(
        tmp_path: Path) -> None:
    """documentmetadata-support-code (texlive, seed 67): sections 1-3 in 14 pt bold, then the
    implementation's listing numbered from 1 in 8 pt Courier, its line 3 blank (the number
    alone, no code after it).  "4 \\RequirePackage" found the sections' chain waiting at 3
    and went on with it, and the chain, dense from there on, took the three sections as
    program lines: none was a heading."""
    code = ["<@@=pdfmanagement>", "<*code>", "", "\\RequirePackage{pdfmanagement-testphase}",
            "\\ExplSyntaxOn\\makeatletter", "\\cs_set_protected:Npn \\DocumentMetadata",
            "{", "\\cs_if_eq:NNTF \\documentclass \\@twoclasseserror", "{ \\msg_error:nn }"]
    listing = [Row(f"{n} {line}".strip(), font="cour", size=8, space=4.0 if n == 1 else 0.0)
               for n, line in enumerate(code, 1)]
    rows = [heading("1 Introduction"), *prose(4), heading("2 Supported keys"), *prose(6),
            heading("3 The Implementation"), *listing, *prose(3), heading("3.1 Messages", 12),
            *prose(6)]
    assert tree(write(tmp_path / "code.pdf", rows)) == [
        (1, "1 Introduction"), (1, "2 Supported keys"), (1, "3 The Implementation"),
        (2, "3.1 Messages")]


def test_parts_numbered_in_roman_above_sections_numbered_on_across_them(tmp_path: Path) -> None:
    """thalie's and substances' manuals (texlive, seeds 31 and 23): "Part I. Introduction" in
    20 pt bold, the sections "1. About thalie" … in 14 pt, numbered on across the parts.  Both
    numbers read depth one, and the sections stood beside the parts that hold them."""
    rows = [heading("Part I. Introduction", 20, new_page=True), heading("1. About the class"),
            *prose(6), heading("1.1. Why this class?", 12), *prose(6),
            heading("2. About this manual"), *prose(6),
            heading("Part II. Usage", 20, new_page=True), heading("3. Options"), *prose(6),
            heading("4. Commands"), *prose(6), heading("4.1. Page styles", 12), *prose(6)]
    assert tree(write(tmp_path / "parts.pdf", rows)) == [
        (1, "Part I. Introduction"), (2, "1. About the class"), (3, "1.1. Why this class?"),
        (2, "2. About this manual"), (1, "Part II. Usage"), (2, "3. Options"),
        (2, "4. Commands"), (3, "4.1. Page styles")]


@pytest.mark.parametrize("part", ["Teil", "Partie", "Parte", "Deel", "Часть"])
def test_a_part_label_over_its_title_is_one_heading_in_other_languages(
    tmp_path: Path, part: str
) -> None:
    """A part page prints its label in one size over its title in a larger one ("Teil I"
    over "Fernsehserien", dcexample, texlive seed 89): one heading, above the chapters,
    whichever language the label is in.  The label alone used to read as a second heading
    and the part's title fell below the chapters' level."""
    font = "china-s" if part == "Часть" else "hebo"  # a font with Cyrillic letters
    rows: list[Row] = []
    for number, title, chapters in (("I", "Series", ("1 Pilots", "2 Seasons")),
                                    ("II", "Documentaries", ("3 Railways", "4 Harbours"))):
        rows += [Row(f"{part} {number}", font=font, size=20, new_page=True, centred=True),
                 Row(title, font="hebo", size=24, space=20, centred=True)]
        for chapter in chapters:
            rows += [heading(chapter, 18, new_page=True), *prose(6)]
    got = tree(write(tmp_path / "parts.pdf", rows))
    assert got == [(1, f"{part} I Series"), (2, "1 Pilots"), (2, "2 Seasons"),
                   (1, f"{part} II Documentaries"), (2, "3 Railways"), (2, "4 Harbours")]


def test_chinese_prose_among_latin_text_is_text_not_headings(tmp_path: Path) -> None:
    """caspervector's manual (texlive, seed 11): Chinese prose in 10.5 pt beside English
    bibliography examples in 9 pt that hold more characters, its lines spaced apart (mixed
    scripts set with extra leading).  A line of running text holds
    some 45 characters (``TEXT_LINE``); a line of Chinese prose holds 40, each an em wide, so
    counted by characters the prose was no text style but a rarer, larger one, and every one
    of its lines a heading (101 headings for 25)."""
    han = "本文介绍参考文献样式的使用方法和各个字段的含义以及常见问题的解决办法供用户参考"  # 40
    titles = ["引言部分", "使用简介", "字段介绍", "条目类型"]
    rows = [Row("Reference styles for biblatex", size=18)]
    for title in titles:
        rows += [Row(title, font="china-s", size=15, space=16),
                 *(Row(han, font="china-s", size=10.5, space=8) for _ in range(4)),
                 *(r._replace(size=9) for r in prose(6))]
    assert tree(write(tmp_path / "zh.pdf", rows)) == [
        (1, "Reference styles for biblatex"), *((2, t) for t in titles)]


def _serif(lines: int, indent: float = 0.0, space: float = 0.0) -> list[Row]:
    """Times 10 pt text, its first row ``space`` under the row before it."""
    return [r._replace(font="tiro", indent=indent, space=space if k == 0 else 0.0)
            for k, r in enumerate(prose(lines))]


def test_sections_in_a_smaller_type_inside_their_paragraphs_block(tmp_path: Path) -> None:
    """asmeconf (texlive, seed 41): "1. INTRODUCTION" in 9 pt bold sans over 10 pt serif text,
    so close that the text layer puts it into its paragraph's block; a title wraps onto a
    second line; "ABSTRACT", "REFERENCES" and a sub-section with no sibling are set the same
    way.  Read only from blocks of their own and from a bold type at least the text's size,
    no heading was found but the document's title (F1 0 against pymupdf4llm's 0.818).  A
    figure's label in the same type, away from where the headings stand, stays text."""
    def sans(text: str, **kw: object) -> Row:
        return Row(text, font="hebo", size=9, **kw)  # type: ignore[arg-type]
    rows = [Row("Pumps of the Upper Valley", font="hebo", size=10, centred=True),
            sans("ABSTRACT", space=14), *_serif(3),
            sans("1. INTRODUCTION", space=10), *_serif(6),
            sans("2. THE PUMP HOUSE AND ITS BASIN, WITH THE TANK ON THE", space=10),
            sans("HILL ABOVE THE VILLAGE", indent=12), *_serif(5),
            sans("2.1 Pipes", space=10), *_serif(5),
            sans("Valve", space=10, indent=200), *_serif(3),
            sans("3. RESULTS", space=10), *_serif(5),
            sans("REFERENCES", space=10), *_serif(3)]
    path = write(tmp_path / "paper.pdf", rows)
    doc = pymupdf.open(path)
    first_lines = [b["lines"][0]["spans"][0]["text"] for b in doc[0].get_text("dict")["blocks"]]
    doc.close()
    assert "1. INTRODUCTION" in first_lines  # the heading opens its paragraph's block
    assert tree(path) == [
        (1, "Pumps of the Upper Valley"), (2, "ABSTRACT"), (2, "1. INTRODUCTION"),
        (2, "2. THE PUMP HOUSE AND ITS BASIN, WITH THE TANK ON THE HILL ABOVE THE VILLAGE"),
        (3, "2.1 Pipes"), (2, "3. RESULTS"), (2, "REFERENCES")]


def test_numbered_sections_centred_in_an_offset_text_column(tmp_path: Path) -> None:
    """active-conf (texlive, seed 41): numbered sections in the text's size and weight, centred
    over a text column that is not centred on the page (a wide left margin).  Centred on the
    page was asked of them, and they are off it by more than the 4 % that allows: no heading
    was found."""
    column = 100.0  # the text column starts this far right of the page's left margin
    width = 345.0  # the prose rows' width at 10 pt, near enough for centring

    def centred(title: str) -> Row:
        w = pymupdf.get_text_length(title, fontname="tiro", fontsize=10)
        return Row(title, font="tiro", size=10, space=14, indent=column + (width - w) / 2)
    titles = ["1 About this document", "2 Description and usage", "3 Implementation"]
    rows = [Row("The pump class", font="tiro", size=12, centred=True)]
    for title in titles:
        rows += [centred(title), *_serif(5, indent=column, space=8)]
    assert [t for _, t in tree(write(tmp_path / "column.pdf", rows))] == [
        "The pump class", *titles]


MONO_TTF = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")  # fonts-dejavu-core


def _unflagged_typewriter() -> bytes:
    """DejaVu Sans Mono with its fixed-pitch flag cleared (the ``post`` table's isFixedPitch):
    every glyph still one width, but nothing in the font says so."""
    data = bytearray(MONO_TTF.read_bytes())
    for k in range(struct.unpack(">H", data[4:6])[0]):
        tag, _, offset, _ = struct.unpack(">4sIII", data[12 + 16 * k: 28 + 16 * k])
        if tag == b"post":
            data[offset + 12: offset + 16] = bytes(4)
    return bytes(data)


def _save_renamed(doc: pymupdf.Document, path: Path, name: str) -> list[dict]:
    """Save ``doc`` with its embedded DejaVu Sans Mono named ``name``, as a producer that
    embeds a typewriter face under its own name does; the first page's spans in that face."""
    for xref in range(1, doc.xref_length()):
        for key in ("BaseFont", "FontName"):
            kind, value = doc.xref_get_key(xref, key)
            if kind == "name" and "Mono" in value:
                doc.xref_set_key(xref, key, f"/{name}")
    doc.save(path)
    doc.close()
    return [s for b in pymupdf.open(path)[0].get_text("dict")["blocks"] for ln in b["lines"]
            for s in ln["spans"] if s["font"] == name]


LISTING = ["\\documentclass{article}", "\\usepackage[sort&compress]{gbt7714}",
           "\\bibliographystyle{gbt7714-numerical}", "\\begin{document}",
           "\\cite{knuth84} wrote a famous book on typesetting with TeX.",
           "\\bibliography{bibfile}", "\\end{document}", "% a comment line with words"] * 2


def _manual_with_listings(font: bytes) -> pymupdf.Document:
    """Three sections, each two short paragraphs over ``LISTING`` set 9 pt in ``font``
    (inserted as "Menlo")."""
    doc = pymupdf.open()
    for n, title in enumerate(["Usage", "Options", "Styles"], 1):
        page, y = doc.new_page(width=WIDTH, height=HEIGHT), float(TOP)
        page.insert_font(fontname="Menlo", fontbuffer=font)
        y += 30
        page.insert_text((LEFT, y), f"{n} {title}", fontname="hebo", fontsize=14)
        for k, row in enumerate(prose(2) * 2):  # two short paragraphs
            y += 15 + (8 if k == 2 else 0)
            page.insert_text((LEFT, y), row.text, fontname="helv", fontsize=10.5)
        y += 6
        for line in LISTING:
            y += 11
            page.insert_text((LEFT + 10, y), line, fontname="Menlo", fontsize=9)
    return doc


def test_listings_in_a_typewriter_face_nothing_names_are_code(tmp_path: Path) -> None:
    """gbt7714's manual (texlive, seed 17) sets its listings in Menlo, which XeTeX embeds with
    neither the fixed-pitch flag nor a name the typewriter test knows.  Its listings then
    read as prose (113 headings for 37: they carried most of the text and made the prose
    "larger than the text"), their lines run together into paragraphs.  The face is measured
    instead: spans of different make-up, narrow letters or wide, all take one advance per
    character; the listings are code blocks, line by line."""
    doc = _manual_with_listings(_unflagged_typewriter())
    path = tmp_path / "menlo.pdf"
    spans = _save_renamed(doc, path, "Menlo")
    assert spans and not any(s["flags"] & 8 for s in spans)  # nothing says typewriter
    document = parse_pdf(path, path.name)
    assert [h.title for h in document.headings] == ["1 Usage", "2 Options", "3 Styles"]
    fenced = document.markdown.split("```")[1::2]  # the code blocks' insides
    assert len(fenced) == 3 and all(block.strip().splitlines() == LISTING for block in fenced)


def test_a_space_across_a_gap_does_not_hide_a_typewriter_face(tmp_path: Path) -> None:
    """emisa's manual (texlive seed 51) sets 80,000 characters of listings in newtxtt, which
    nothing names nor flags fixed-pitch.  Many of its spans open with a space MuPDF puts
    across the gap before them, as wide as the gap: measured with it, the face's advance
    spread 0.476-0.532 em and it never read as fixed-pitch; the listings were prose.  Spans
    with a space at either end are not measured.  (Every other listing line here opens with
    a space glyph kerned wider; the face is known once five clean spans holding a narrow and
    a wide letter agree, on the second page.)"""
    doc = _manual_with_listings(_unflagged_typewriter())
    spaced: list[bool] = []
    for page in doc:
        for xref in page.get_contents():  # a space glyph (id 3), kerned 0.7 em wider
            parts = re.split(rb"(/Menlo [\d.]+ Tf \[)", doc.xref_stream(xref))
            out = parts[0]
            for k in range(1, len(parts), 2):
                spaced.append(not spaced or not spaced[-1])
                out += parts[k] + (b"<0003> -700 " if spaced[-1] else b"") + parts[k + 1]
            doc.update_stream(xref, out)
    path = tmp_path / "spaced.pdf"
    spans = _save_renamed(doc, path, "Menlo")
    assert sum(s["text"].startswith(" ") for s in spans) == len(LISTING) // 2  # half of page 1's
    document = parse_pdf(path, path.name)
    assert [h.title for h in document.headings] == ["1 Usage", "2 Options", "3 Styles"]
    fenced = document.markdown.split("```")[1::2]  # the code blocks' insides
    assert [[ln.strip() for ln in block.strip().splitlines()] for block in fenced] == [LISTING] * 2


def test_a_face_named_typewriter_is_code_where_its_glyphs_cannot_tell(tmp_path: Path) -> None:
    """magicwatermark's manual (texlive, seed 67) sets its commands and its implementation in
    CMU Typewriter Text, embedded by XeTeX without the fixed-pitch flag, and its descriptions
    in short lines a size larger.  Its listing lines are alike in make-up (a command and its
    arguments), so the glyphs' widths cannot tell the face fixed-pitch; read as prose, the
    code set the text size and every description, larger, was a heading (54 for 13).  A face
    named Typewriter (or Cursor, TeX Gyre's Courier) is a typewriter face, as one named Mono
    or Courier is.  (Lines without both a narrow letter and a wide one are not measured.)"""
    font = _unflagged_typewriter()
    commands = ["\\PageSetup[opts]{text}", "\\EvenPageSetup[opts]{text}",  # no "i" nor "l":
                "\\OddPageSetup[opts]{text}", "\\NewPageSetup[opts]{name}"]  # nothing to measure
    doc = pymupdf.open()
    for n, title in enumerate(["Usage", "Commands", "Implementation"], 1):
        page, y = doc.new_page(width=WIDTH, height=HEIGHT), float(TOP)
        page.insert_font(fontname="Typo", fontbuffer=font)
        y += 30
        page.insert_text((LEFT, y), f"{n} {title}", fontname="hebo", fontsize=14)
        for command in commands * 2:
            y += 20
            page.insert_text((LEFT, y), command, fontname="Typo", fontsize=9)
            y += 16
            page.insert_text((LEFT + 20, y), "Sets the watermark of the pages it names",
                             fontname="helv", fontsize=10.5)
            for line in ("{ \\__wm_set:nn {#1} {#2} }", "\\__wm_show:n {page}"):
                y += 11
                page.insert_text((LEFT + 20, y), line, fontname="Typo", fontsize=9)
    path = tmp_path / "typewriter.pdf"
    spans = _save_renamed(doc, path, "CMUTypewriter-Light")
    assert spans and not any(s["flags"] & 8 for s in spans)  # nothing but the name says so
    assert [t for _, t in tree(path)] == ["1 Usage", "2 Commands", "3 Implementation"]


def test_a_bold_code_type_title_wrapped_over_two_lines_is_a_heading(tmp_path: Path) -> None:
    """fontconfig's user guide heads its element sections with the element, in bold code type
    over prose; a long one wraps ("<test qual="any" name="property" target="default"" /
    "compare="eq">").  A code-type line with another right under it is a listing's row, but
    not when the two are one title wrapped: the upper line ends where the lower one's first
    word would not have fitted.  Two short tags stacked (tmux's "main-pane-height height"
    over "main-pane-width width") stay rows."""
    def bold_code(text: str, space: float = 0.0) -> Row:
        return Row(text, font="cobo", size=10, space=space)
    title = '<test qual="any" name="property" target="default" units="pt"'
    rows = [heading("Elements", 16), *prose(3),
            bold_code('<match target="pattern">', 12), *prose(3),
            bold_code(title, 12), bold_code('compare="eq">'), *prose(3),
            bold_code('<edit name="property">', 12), *prose(3),
            bold_code("main-pane-height height", 12), bold_code("main-pane-width width"),
            *prose(2)]
    path = write(tmp_path / "elements.pdf", rows)
    text_width = max(pymupdf.get_text_length(r.text, "helv", 10) for r in prose(3))
    assert pymupdf.get_text_length(title + " compare", "cobo", 10) > text_width  # had to wrap
    assert [t for _, t in tree(path)] == [
        "Elements", 'match target="pattern"', f'{title[1:]} compare="eq"',
        'edit name="property"']  # element names lose their angle brackets (layout)


def test_authors_in_columns_under_a_bold_title_are_not_headings(tmp_path: Path) -> None:
    """A conference paper (DAFx's template, texlive seed 43): under the bold title, three
    authors side by side, each name and affiliation centred in its own column and in the
    title's size, an e-mail address in code type under each.  Not centred on the page and
    parted by the addresses, they were nine headings above the abstract."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)

    def centred_at(x: float, y: float, text: str, font: str, size: float) -> None:
        page.insert_text((x - pymupdf.get_text_length(text, font, size) / 2, y), text,
                         fontname=font, fontsize=size)
    centred_at(306, 100, "TEMPLATES FOR THREE AUTHORS", "tibo", 12)
    for x, (name, place) in zip((190, 420, 306), (("Ann Auer", "Pump Research Group"),
                                                  ("Ben Brook", "Basin Laboratory"),
                                                  ("Cleo Cole", "Tank Institute"))):
        y = 128 if x != 306 else 200
        centred_at(x, y, name, "tiit", 12)
        centred_at(x, y + 16, place, "tiro", 12)
        centred_at(x, y + 30, "pumps@example.org", "cour", 12)
    y = 270.0
    for title in ("ABSTRACT", "1. INTRODUCTION", "2. METHOD", "3. RESULTS"):
        centred_at(306, y, title, "tibo", 9)
        for row in prose(4):
            y += 11
            page.insert_text((72, y + 6), row.text, fontname="tiro", fontsize=9)
        y += 30
    path = tmp_path / "paper.pdf"
    doc.save(path)
    doc.close()
    assert [t for _, t in tree(path)] == [
        "TEMPLATES FOR THREE AUTHORS", "ABSTRACT", "1. INTRODUCTION", "2. METHOD", "3. RESULTS"]


def test_bold_leads_of_numbered_paragraphs_are_not_headings(tmp_path: Path) -> None:
    """biblatex-unified's manual (texlive, seed 17) numbers its guidelines as paragraphs whose
    first sentence is bold: "1. Superfluous font-styles should be omitted. Do not use small"
    and the paragraph goes on in its block, or the bold sentence wraps onto the next line.
    Numbered and mostly bold, each line was a heading (24 for 17)."""
    leads = ["1. Superfluous font styles should be omitted. Do not use small",
             "2. Differing capitalisation styles should be used to make"]
    rows = [heading("1 Introduction"), *prose(3), heading("2 Implementation notes"), *prose(2)]
    for lead in leads:
        rows += [Row(lead, font="hebo", space=8),
                 Row("caps for author names, since they do not help to tell the works apart and"),
                 *prose(2)[1:]]
    rows += [heading("3 Departures from the style sheet"), *prose(3)]
    path = write(tmp_path / "leads.pdf", rows)
    blocks = [[ln["spans"][0]["text"] for ln in b["lines"]]
              for b in pymupdf.open(path)[0].get_text("dict")["blocks"]]
    assert any(b[0] == leads[0] and len(b) > 1 for b in blocks)  # the lead opens its paragraph
    assert [t for _, t in tree(path)] == [
        "1 Introduction", "2 Implementation notes", "3 Departures from the style sheet"]


def _double_spaced(lines: int) -> list[Row]:
    """A paragraph of a double-spaced paper: ragged right, its first line indented half an
    inch, its last line short."""
    words, out, cur = ((PROSE + " ") * lines).split(), [], ""
    for word in words:
        if len(cur) + len(word) + 1 > (72 if not out else 80):
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    out = out[:lines - 1] + ["the village below."]
    return [Row(text, font="tiro", size=12, space=12, indent=36 if k == 0 else 0)
            for k, text in enumerate(out)]


def test_numbered_sections_in_the_texts_own_type_between_paragraphs(tmp_path: Path) -> None:
    """An MLA paper (texlive's mla-example, seed 53) sets "1. Professors who prefer sections"
    in the text's own type, double-spaced like it: no size, weight or space tells it from the
    text, only its number, its line of its own at the left edge and the indented paragraph
    after it.  Before, no heading at all; a line in that place without a number (the author's
    name over the title) is not one."""
    rows = [Row("Jane Roe", font="tiro", size=12, space=12),
            Row("Pumps and Their Keeping", font="tiro", size=12, space=12)]
    for title in ("1. Why pumps fail", "1.1. Seals", "2. Repairs", "3. What it costs"):
        rows += [Row(title, font="tiro", size=12, space=12), *_double_spaced(4)]
    assert tree(write(tmp_path / "paper.pdf", rows)) == [
        (1, "1. Why pumps fail"), (2, "1.1. Seals"), (1, "2. Repairs"), (1, "3. What it costs")]


def test_the_rest_of_a_word_a_table_cell_broke_is_not_a_heading(tmp_path: Path) -> None:
    """ucbthesis (texlive seed 59) sets its option table a size above the text; a cell's text
    wraps "Uses single-spacing throughout the docu-" / "ment", and the short rest of the word,
    alone on its line in the heading-sized type, was a heading (as were "fault)", "losophy)")."""
    cells = [("draft", "Uses single-spacing throughout the docu-", "ment"),
             ("12pt", "Sets the default font size to twelve points (de-", "fault)")]
    table = []
    for option, text, rest in cells:
        table += [Row(f"{option}   {text}", size=11, indent=20), Row(rest, size=11, indent=60)]
    rows = [heading("1 Options"), *prose(3), *table, *prose(3), heading("2 Usage"), *prose(6)]
    titles = [t for _, t in tree(write(tmp_path / "cells.pdf", rows))]
    assert "1 Options" in titles and "2 Usage" in titles
    assert not {"ment", "fault)"} & set(titles)


def test_a_centred_heading_over_a_justified_paragraph_is_not_a_title_block(tmp_path: Path) -> None:
    """dccpaper (texlive seed 51) centres its section headings; one that opens a page stands
    over a justified paragraph whose lines, on a symmetric page, read as centred, so it was
    taken for a title block's title (a part) and its sibling further down the page went one
    level under it.  A line that fills the column with the next line of its block at its left
    edge is a paragraph's, not a centred one."""
    listing = [Row(f"{n:3} \\def\\pump@{n}{{\\relax}}", font="cour", indent=-20)
               for n in range(1, 70)]  # a long listing further left: the commonest left edge
    rows = [heading("Introduction", 16, centred=True), *prose(4),
            heading("Dependencies", 16, centred=True), *prose(4),
            heading("Implementation", 16, centred=True, new_page=True), *prose(2), *listing,
            heading("Licence", 16, centred=True, new_page=True), *prose(4)]
    assert tree(write(tmp_path / "centred.pdf", rows)) == [
        (1, "Introduction"), (1, "Dependencies"), (1, "Implementation"), (1, "Licence")]


def test_headings_in_a_smaller_face_of_their_own(tmp_path: Path) -> None:
    """iscram (texlive seed 59) sets its sections in 9 pt bold sans capitals, its sub-sections
    in the same type in mixed case, below them the sans' italic, over 9.96 pt serif text:
    neither larger than the text nor bold at its size, so nothing was found (F1 0 against
    pymupdf4llm's 0.775).  The bold face is used for nothing else, and names the family whose
    italic is the third level; a caption in the text's own bold, as small, stays a caption."""
    def sans(text: str, font: str = "hebo") -> Row:
        return Row(text, font=font, size=9, space=12)
    rows = [sans("ABSTRACT"), *_serif(3, space=4), sans("DOCUMENTATION"), *_serif(3, space=4),
            sans("Loading the class"), *_serif(4, space=4), sans("Older editions", "heit"),
            *_serif(3, space=4), sans("Newer editions", "heit"), *_serif(3, space=4),
            Row("Figure 1. The pump house", font="tibo", size=9, space=12, centred=True),
            *_serif(3, space=12), sans("Options"), *_serif(5, space=4),
            sans("TIPS AND TRICKS"), *_serif(3, space=4), sans("Compatibility"),
            *_serif(4, space=4), sans("Mail addresses", "heit"), *_serif(3, space=4),
            sans("REFERENCES"), *_serif(3, space=4)]
    assert tree(write(tmp_path / "conference.pdf", rows)) == [
        (1, "ABSTRACT"), (1, "DOCUMENTATION"), (2, "Loading the class"), (3, "Older editions"),
        (3, "Newer editions"), (2, "Options"), (1, "TIPS AND TRICKS"), (2, "Compatibility"),
        (3, "Mail addresses"), (1, "REFERENCES")]


def test_one_section_in_capitals_among_mixed_case_is_their_sibling(tmp_path: Path) -> None:
    """fontconfig-user (dev PDFs) titles one section of many in capitals ("EXAMPLE
    CONFIGURATION FILE" after "Name" and "Synopsis", the same type): capitals are a level
    above mixed case only where the style opens in capitals (as iscram's sections do)."""
    rows = [heading("Name", 12), *prose(3), heading("Synopsis", 12), *prose(3),
            heading("EXAMPLE CONFIGURATION FILE", 12), *prose(4), heading("Files", 12),
            *prose(3)]
    assert tree(write(tmp_path / "mixed.pdf", rows)) == [
        (1, "Name"), (1, "Synopsis"), (1, "EXAMPLE CONFIGURATION FILE"), (1, "Files")]


def test_numbered_lines_out_of_the_sections_order_are_not_sections(tmp_path: Path) -> None:
    """ucsmonograph (texlive seed 59) prints its implementation with line numbers, and two
    of its code lines, set like its headings, stood as chapters 6 and 7 between sections 5.1
    and 5.2.  Section numbers increase through a document; the two that break the order are
    dropped, and a collection that starts again from 1 keeps both its articles."""
    rows = [heading("1 Introduction"), *prose(3), heading("2 Usage"), *prose(3),
            heading("2.1 Options", 12), *prose(3), heading("3 Implementation"), *prose(3),
            heading("3.1 Initialisation", 12), *prose(3),
            heading("4 \\newboolean{@draft}", 12), *prose(2),
            heading("5 \\setboolean{@draft}{false}", 12), *prose(2),
            heading("3.2 Constants", 12), *prose(3), heading("3.3 Commands", 12), *prose(3),
            heading("3.4 Hooks", 12), *prose(3), heading("3.5 Licence", 12), *prose(3),
            heading("1 Second article", new_page=True), *prose(3), heading("2 Results"),
            *prose(3)]
    titles = [t for _, t in tree(write(tmp_path / "stray.pdf", rows))]
    assert titles == ["1 Introduction", "2 Usage", "2.1 Options", "3 Implementation",
                      "3.1 Initialisation", "3.2 Constants", "3.3 Commands", "3.4 Hooks",
                      "3.5 Licence", "1 Second article", "2 Results"]


def test_authors_and_affiliations_under_a_title_centred_in_an_offset_column(
        tmp_path: Path) -> None:
    """cjeguide (texlive seed 61): a one-sided layout sets the text column off the page's
    middle; the title, nearly as wide as the column, is centred in it, and so are the authors,
    each over an affiliation at the text's size.  The title was not read as centred and the
    affiliations ended the title block, so every author was a heading."""
    shift = 70.0  # the prose rows' column starts at LEFT + shift
    width = max(pymupdf.get_text_length(r.text, fontname="helv", fontsize=10) for r in prose(3))

    def centred(text: str, size: float, space: float = 0.0) -> Row:
        length = pymupdf.get_text_length(text, fontname="helv", fontsize=size)
        return Row(text, size=size, space=space, indent=shift + (width - length) / 2)
    title = "Guide to the pump engineering journal's class"
    size = 18.0
    while pymupdf.get_text_length(title, fontname="helv", fontsize=size) < width - 20:
        size += 0.5
    people = [("Author One", "Pump Works of the Upper Valley"),
              ("Author Two", "Department of Hydraulics, Lower Valley University")]
    block = [row for name, place in people for row in (centred(name, 12, 6), centred(place, 10))]
    body = [r._replace(indent=shift) for r in prose(3)]
    rows = [centred(title, size), *block,
            *[r._replace(indent=shift) for r in (heading("1. Introduction", 11), *body,
                                                 heading("2. Method", 11), *body)]]
    assert tree(write(tmp_path / "offset.pdf", rows)) == [
        (1, title), (2, "1. Introduction"), (2, "2. Method")]


def test_sections_labelled_in_chinese_are_numbered_sections(tmp_path: Path) -> None:
    """xmuthesis (texlive seed 61) labels its sections "第2 节 使用示例" ("Section 2"), with
    "2.1 最小示例" under them, and prints a contents page the layout cannot read as one (its rows
    "第2 节使用示例 2", without the page's space).  Unnumbered, the labelled sections sat at
    the level of the document's title and their sub-sections two levels under them; the
    contents rows, no longer like a later heading, were headings too."""
    def cjk(text: str, size: float, space: float = 0.0, indent: float = 0.0) -> Row:
        return Row(text, font="china-s", size=size, space=space, indent=indent)
    body = [cjk("正文" * 24, 10) for _ in range(3)]
    sections = [("第1 节 介绍", ["1.1 历史", "1.2 问题"]), ("第2 节 使用示例", ["2.1 最小示例"]),
                ("第3 节 文档选项", [])]
    rows = [cjk("厦门大学论文模板使用说明", 20)]
    rows += [cjk(f"{title.replace(' 节 ', ' 节')} {k + 1}", 10, 4) for k, (title, _) in
             enumerate(sections)]
    for title, subs in sections:
        rows += [cjk(title, 14, 16), *body]
        for sub in subs:
            rows += [cjk(sub, 12, 10), *body]
    assert tree(write(tmp_path / "xmu.pdf", rows)) == [
        (1, "厦门大学论文模板使用说明"), (2, "第1 节 介绍"), (3, "1.1 历史"), (3, "1.2 问题"),
        (2, "第2 节 使用示例"), (3, "2.1 最小示例"), (2, "第3 节 文档选项")]


@pytest.mark.parametrize(("text", "words"), [
    ("Unpacking the pump", 3),
    ("« Il a dit » bonjour", 6),  # no ideograph: counted by spaces, as before
    ("基本用法", 2),  # "basic usage": two words of two characters
    ("第1 节 基本用法", 4),
    ("关于“双减”政策的通知", 5),  # quotes are no words
    ("设置绕排内容的宽度，初始值为0 pt，代表自然宽度。", 12),
])
def test_words_of_chinese_are_two_characters_long(text: str, words: int) -> None:
    assert word_count(text) == words


def test_chinese_paragraphs_in_a_larger_type_than_the_index_are_not_headings(
    tmp_path: Path,
) -> None:
    """wrapstuff (texlive seed 89) sets its Chinese prose in 10.5 pt over an index in 9 pt that
    holds more text: the prose is the larger type, and counted by spaces a Chinese sentence
    of 37 characters was one "word" and no sentence ("。" is a full stop too), so each
    paragraph became a heading.  Chinese sets no spaces: a word to two characters."""
    said = ["设置绕排内容的宽度，初始值为零，代表自然宽度，此时环境内的内容只能有一行。",
            "如果当前正文段落的行数不够，它的作用会延续到下一段，这可能导致意外结果。",
            "本宏包兼容多种浮动体宏包，并试图兼容显示数学公式和各种列表环境的绕排。"]
    titles = ["第1节 基本用法", "第2节 选项说明", "第3节 代码实现"]
    rows: list[Row] = []
    for title in titles:
        rows += [Row(title, font="china-s", size=14, space=14),
                 *(Row(t, font="china-s", size=10.5, space=6) for t in said)]
    rows += [heading("Index", new_page=True),
             *(Row(f"\\wrapstuff{n}  {n + 3}, {n + 7}, {n + 12}", size=9, indent=n % 2 * 240)
               for n in range(300))]
    assert tree(write(tmp_path / "zh.pdf", rows)) == [(1, t) for t in [*titles, "Index"]]


def test_first_lines_of_indented_paragraphs_in_a_larger_type_are_not_headings(
    tmp_path: Path,
) -> None:
    """wrapstuff (texlive seed 89) sets its prose a size above an index that holds more text.
    A paragraph's first line, indented, runs to the column's edge and the next starts an
    indent to its left: the two cannot be one title, and the first line stood alone as a
    heading, the index's letters under it rather than under "代码索引".  Such a line opens a
    paragraph; the paragraph is passed over whole."""
    said = {"Installation": [
                "Set the pump on a level base near the well and bolt its feet to the slab so it",
                "cannot walk when it runs, then join the suction pipe and the delivery pipe.",
                "Tighten every union by hand"],
            "Operation": [
                "Open the delivery valve a quarter turn, prime the casing with clean water and",
                "start the motor; the pressure rises within a minute and the valve may then",
                "open fully"],
            "Servicing": [
                "Drain the casing before frost, grease both bearings every season and replace",
                "the seal when water weeps from the shaft, which it does after some years of",
                "steady use"]}
    rows: list[Row] = []
    for title, text in said.items():
        rows += [heading(title), *(Row(line, size=10.5, space=0 if k else 4, indent=0 if k else 20)
                                   for k, line in enumerate(text))]
    rows += [heading("Index", new_page=True),
             *(Row(f"\\pump{n}  {n + 3}, {n + 7}, {n + 12}", size=9, indent=n % 2 * 240)
               for n in range(900))]
    assert tree(write(tmp_path / "indented.pdf", rows)) == [
        (1, "Installation"), (1, "Operation"), (1, "Servicing"), (1, "Index")]


def test_a_section_titled_in_one_chinese_character_is_a_heading(tmp_path: Path) -> None:
    """familytree-ja (texlive seed 89) ends each chapter with a section "例" (examples): one
    ideograph, which the two-letter floor for a title ("x", "A)") turned away, four sections
    lost.  An ideograph is a word or half of one, not a letter."""
    said = ["本宏包用于绘制家谱图，每个人物用一个盒子表示，盒子之间用线连接",
            "人物盒子可以设置姓名、生卒年和附加信息，线的样式也可以调整"]
    rows: list[Row] = []
    for n, title in enumerate(["人物", "兄弟姉妹", "婚姻"], 1):
        rows += [Row(f"{n} {title}", font="china-s", size=14, space=14),
                 *(Row(t, font="china-s", size=10, space=4) for t in said),
                 Row(f"{n}.1 例", font="china-s", size=12, space=10),
                 *(Row(t, font="china-s", size=10, space=4) for t in said)]
    assert tree(write(tmp_path / "ja.pdf", rows)) == [
        (lv, t) for n, title in enumerate(["人物", "兄弟姉妹", "婚姻"], 1)
        for lv, t in ((1, f"{n} {title}"), (2, f"{n}.1 例"))]


def test_numbered_run_in_titles_and_a_starred_section_keep_the_numbering_s_tree(
        tmp_path: Path) -> None:
    """currency (texlive, seed 97) sets "4.4.1 Punctuation." in italic body type, a run-in
    title's full stop kept, and an unnumbered "Using a prefix" in the type of "4.4" between
    4.4.1 and 4.4.2.  Before, the full stop made the first a sentence and the second took
    4.4.2 … as its own.  A numbered line of four words or more ending in a full stop is
    still a sentence, and so is a short one in the text's own face (a procedure's step)."""
    italic = {"font": "heit"}
    rows = [heading("1 Pumps", 16), *prose(), heading("1.1 Parts", 13), *prose(),
            Row("1.1.1 Seals.", space=10, **italic), *prose(),  # type: ignore[arg-type]
            heading("Using a spare", 13), *prose(),
            Row("1.1.2 Valves", space=10, **italic), *prose(),  # type: ignore[arg-type]
            Row("1.1.3 Pipes", space=10, **italic), *prose(),  # type: ignore[arg-type]
            Row("1.1.4 Turn the valve slowly.", space=10, **italic), *prose(),  # type: ignore[arg-type]
            heading("2 Care", 16), *prose(), heading("2.1 Steps", 13), *prose(),
            Row("2.1.1 Open the valve.", space=10), *prose(),
            Row("2.1.2 Check the seal.", space=10), *prose(6)]
    assert tree(write(tmp_path / "run-in.pdf", rows)) == [
        (1, "1 Pumps"), (2, "1.1 Parts"), (3, "1.1.1 Seals."), (3, "Using a spare"),
        (3, "1.1.2 Valves"), (3, "1.1.3 Pipes"), (1, "2 Care"), (2, "2.1 Steps")]


def test_a_contents_list_without_page_numbers_is_not_headings(tmp_path: Path) -> None:
    """linegoal (texlive, seed 97) boxes a "Contents of linegoal" on its first page: the
    sections' numbered titles in their own bold type, one under the other, no page numbers.
    Before, the rows stood as headings and the sections matched them, under the box's title.
    A collection's articles that both number "1 Introduction", "2 Methods" keep them: text
    stands between."""
    rows = [heading("Contents of the manual", 12, space=20),
            *[heading(t, 11, space=0) for t in ("1.1 Seals", "1.2 Valves", "2.1 Oiling")],
            *prose(), heading("1 Pumps", 14), *prose(), heading("1.1 Seals", 11), *prose(),
            heading("1.2 Valves", 11), *prose(), heading("2 Care", 14), *prose(),
            heading("2.1 Oiling", 11), *prose(6)]
    assert tree(write(tmp_path / "box.pdf", rows)) == [
        (1, "Contents of the manual"), (1, "1 Pumps"), (2, "1.1 Seals"), (2, "1.2 Valves"),
        (1, "2 Care"), (2, "2.1 Oiling")]
    papers = []
    for _ in range(2):
        papers += [heading("1 Pumps", 14), *prose(), heading("1.1 Seals", 11), *prose(),
                   heading("1.2 Valves", 11), *prose(), heading("2 Care", 14), *prose()]
    assert [t for _, t in tree(write(tmp_path / "two.pdf", papers))] == [
        "1 Pumps", "1.1 Seals", "1.2 Valves", "2 Care"] * 2


def test_an_index_group_already_read_as_a_heading_is_a_sibling_of_the_letters() -> None:
    """copyedit's "Symbols" is set apart enough to be a heading of its own, at the level of the
    "Index" above it; it is the index's first group, one level below "Index" like the letters
    that follow, not a parent of them."""
    from hiqa.formats.pdf.layout import HeadingCandidate
    from hiqa.formats.pdf.lines import Line
    from hiqa.formats.pdf.typography import _with_index_letters

    def line(y: float, text: str, size: float = 9.0, bold: bool = False) -> Line:
        return Line(12, int(y), 90, y, 300, y + size, text, size, bold, False, False, True)

    texts = [("Index", 20.7, True), ("Symbols", 9.0, True), ("\\@auxout, 24", 7.2, False),
             ("\\@ctext, 207, 208", 7.2, False), ("A", 9.0, True), ("anchor, 3, 7", 7.2, False),
             ("B", 9.0, True), ("basin, 12", 7.2, False), ("C", 9.0, True), ("cell, 4", 7.2, False)]
    lines = [line(100 + 12 * k, t, s, b) for k, (t, s, b) in enumerate(texts)]
    kept = [(HeadingCandidate(0, 0, "Index", (20.5, True), None, True), 2),
            (HeadingCandidate(1, 1, "Symbols", (9.0, True), None, False), 2)]
    out = [(lv, lines[c.first].text) for c, lv in _with_index_letters(kept, lines, 10.0)]
    assert out == [(2, "Index"), (3, "Symbols"), (3, "A"), (3, "B"), (3, "C")]


def test_a_listing_line_that_wraps_belongs_to_the_listing() -> None:
    """A numbered listing's line that wraps goes on, unnumbered, in the next line (listings'
    "↙"); set all in a keyword's bold ("immediate\\write 18 }", graphicscache), it is still the
    listing's, not a heading.  A section heading between two lines of a listing whose numbers
    run on through the sections is set in another face and size: not the listing's."""
    from hiqa.formats.pdf.blocks import numbered_runs
    from hiqa.formats.pdf.lines import Line

    def line(y: float, text: str, size: float = 10.5, bold: bool = False, mono: bool = True
             ) -> Line:
        return Line(6, int(y), 100, y, 470, y + size, text, size, bold, mono, mono, True)

    lines = [line(100, "Releasing the manuscript.", 10.0, mono=False)]
    for n in range(95, 103):
        lines.append(line(110 + 14 * len(lines), f"{n} \\protected\\def\\graphicscache@x {{\\↙"))
        if n == 97:
            lines.append(line(110 + 14 * len(lines), "immediate\\write 18 }", 10.9, bold=True))
        if n == 99:
            lines.append(line(110 + 14 * len(lines), "2.3 Macros", 12.0, bold=True, mono=False))
    listing = numbered_runs(lines, lambda i: lines[i].bold and not lines[i].mono)
    texts = {lines[i].text for i in listing}
    assert "immediate\\write 18 }" in texts
    assert "2.3 Macros" not in texts and "Releasing the manuscript." not in texts
    assert len(listing) == 9


def test_a_running_head_set_below_the_margin_band_is_furniture(tmp_path: Path) -> None:
    """pdfx prints its authors at the top of every page, 80-91 pt down an 842 pt page: just
    below the top 10 % where running heads are looked for, and larger than the text, so on
    pages without a heading above it they read as a heading of their own.  The same words
    at the same place on every page are a running head wherever they stand near an edge."""
    authors = "A. Pumpwright, B. Valve and C. Seal"
    rows: list[Row] = []
    for n, title in enumerate(("Introduction", "Usage", "Installing", "Limitations",
                               "Further developments"), 1):
        rows += [Row(authors, size=11.8, new_page=n > 1), heading(f"{n}. {title}"), *prose(6)]
        if n % 2:
            rows += [Row(authors, size=11.8, new_page=True), *prose(8)]
    path = write(tmp_path / "authors.pdf", rows)
    assert [t for _, t in tree(path)] == ["1. Introduction", "2. Usage", "3. Installing",
                                          "4. Limitations", "5. Further developments"]
    assert authors not in parse_pdf(path, path.name).markdown
