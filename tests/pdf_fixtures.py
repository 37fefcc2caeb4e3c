"""Small real PDFs written with PyMuPDF for the PDF parser tests.

Each builder writes one file under the given folder and returns its path.  Pages are A4
(595 x 842 pt); body text is Helvetica 10 pt, headings Helvetica-Bold at larger sizes, so
every fixture exercises the same layout rules a real report would.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf

WIDTH, HEIGHT = 595, 842
LEFT = 72
BODY_SIZE = 10
HEADING_SIZES = {1: 18, 2: 14, 3: 12, 4: 11}

LOREM = (
    "The committee reviewed the quarterly figures and the maintenance schedule of the plant. "
    "Most measurements stayed within the expected range, and the few outliers were traced to "
    "a miscalibrated sensor that has since been replaced by the vendor."
)


class Writer:
    """Places headings and paragraphs top-down, starting new pages as needed."""

    def __init__(self, doc: pymupdf.Document, top: float = 100, bottom: float = 760):
        self.doc = doc
        self.top = top
        self.bottom = bottom
        self.page: pymupdf.Page | None = None
        self.y = bottom
        self.page_hooks: list = []

    def new_page(self) -> pymupdf.Page:
        self.page = self.doc.new_page(width=WIDTH, height=HEIGHT)
        self.y = self.top
        for hook in self.page_hooks:
            hook(self.page, self.doc.page_count)
        return self.page

    def _room(self, needed: float) -> pymupdf.Page:
        if self.page is None or self.y + needed > self.bottom:
            self.new_page()
        assert self.page is not None
        return self.page

    def heading(self, text: str, level: int = 1, bold: bool = True) -> int:
        size = HEADING_SIZES[level]
        page = self._room(size * 3 + 40)
        self.y += size * 1.2
        page.insert_text((LEFT, self.y), text, fontsize=size, fontname="hebo" if bold else "helv")
        self.y += size * 0.8
        return page.number + 1

    def paragraph(self, text: str = LOREM, size: float = BODY_SIZE, font: str = "helv") -> int:
        words = text.split()
        lines, cur = [], ""
        for w in words:
            if len(cur) + len(w) + 1 > 90:
                lines.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}".strip()
        if cur:
            lines.append(cur)
        page = self._room(size * 1.3 * len(lines) + size)
        self.y += size * 0.8
        for ln in lines:
            self.y += size * 1.3
            page.insert_text((LEFT, self.y), ln, fontsize=size, fontname=font)
        self.y += size * 0.8
        return page.number + 1

    def table(
        self, rows: Sequence[Sequence[str]], caption: str = "", col_width: float = 120
    ) -> int:
        row_h = 18.0
        page = self._room(row_h * len(rows) + 60)
        if caption:
            self.y += 16
            page.insert_text((LEFT, self.y), caption, fontsize=BODY_SIZE, fontname="helv")
            self.y += 8
        top = self.y
        ncols = max(len(r) for r in rows)
        for r_i, row in enumerate(rows):
            for c_i, cell in enumerate(row):
                x = LEFT + c_i * col_width
                y = top + r_i * row_h
                page.insert_text((x + 4, y + 13), cell, fontsize=BODY_SIZE, fontname="helv")
        right = LEFT + ncols * col_width
        bottom = top + len(rows) * row_h
        for r_i in range(len(rows) + 1):
            y = top + r_i * row_h
            page.draw_line((LEFT, y), (right, y), width=0.8)
        for c_i in range(ncols + 1):
            x = LEFT + c_i * col_width
            page.draw_line((x, top), (x, bottom), width=0.8)
        self.y = bottom + 8
        return page.number + 1


def _save(doc: pymupdf.Document, path: Path, **kwargs) -> Path:
    doc.save(path, **kwargs)
    doc.close()
    return path


def outline_pdf(folder: Path) -> Path:
    """Numbered headings on the page, bookmarks without numbers, one bookmark whose title is
    not printed anywhere (it must land at the top of its page)."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 Introduction", 1)
    w.paragraph("Alpha intro text about the purpose of this report.")
    w.heading("1.1 Background", 2)
    w.paragraph("Bravo background text about earlier work.")
    w.new_page()
    w.heading("2 Methods", 1)
    w.paragraph("Charlie methods text about the sampling procedure.")
    w.heading("2.1 Data Collection", 2)
    w.paragraph("Delta data text about the sensors.")
    w.new_page()
    w.paragraph("Echo text that opens the third page without any printed heading.")
    w.heading("3 Results", 1)
    w.paragraph("Foxtrot results text with the main numbers.")
    doc.set_toc(
        [
            [1, "Introduction", 1],
            [2, "Background", 1],
            [1, "Methods", 2],
            [2, "Data Collection", 2],
            [2, "Unprinted Appendix Note", 3],
            [1, "Results", 3],
        ]
    )
    doc.set_metadata({"title": "Plant Report"})
    return _save(doc, folder / "outline.pdf")


def numbered_pdf(folder: Path) -> Path:
    """No outline; numbering 1 / 1.1 / 1.1.1 / 1.1.1.1 over several pages, an unnumbered
    preface in the chapter style, and level 3 and 4 set in the same font."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("Preface", 1)
    w.paragraph("Preface text that explains who should read this guide.")
    w.heading("1 Getting Started", 1)
    w.paragraph("Text of chapter one about installing the tool.")
    w.heading("1.1 Requirements", 2)
    w.paragraph("Text about requirements such as memory and disk space.")
    w.heading("1.1.1 Hardware", 3)
    w.paragraph("Text about hardware requirements in detail.")
    w.heading("1.1.1.1 Disk Layout", 3)
    w.paragraph("Text about the disk layout of the data folder.")
    w.new_page()
    w.heading("1.2 Installation", 2)
    w.paragraph("Text about installation steps for every platform.")
    w.new_page()
    w.heading("2 Usage", 1)
    w.paragraph("Text of chapter two about daily use.")
    w.heading("2.1 Commands", 2)
    w.paragraph("Text about commands and their options.")
    w.heading("2.1.1 Query Command", 3)
    w.paragraph("Text about the query command and its output.")
    return _save(doc, folder / "numbered.pdf")


def skipped_levels_pdf(folder: Path) -> Path:
    """A chapter followed directly by a level-3 section (no 1.1 in between)."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 Overview", 1)
    w.paragraph("Overview text.")
    w.heading("1.0.1 Deep Detail", 3)
    w.paragraph("Deep detail text under the overview.")
    w.heading("2 Next Chapter", 1)
    w.paragraph("Next chapter text.")
    w.heading("2.1 Normal Section", 2)
    w.paragraph("Normal section text.")
    return _save(doc, folder / "skipped.pdf")


def unnumbered_pdf(folder: Path, pages: int = 6) -> Path:
    """Unnumbered headings whose level only the font tells: 18 / 14 / 12 pt bold, the same
    styles on every page."""
    doc = pymupdf.open()
    w = Writer(doc)
    for p in range(pages):
        w.new_page()
        w.heading(
            f"Part Title {p + 1}" if p % 3 == 0 else f"Topic Number {p + 1}", 1 if p % 3 == 0 else 2
        )
        w.paragraph(f"Paragraph on page {p + 1}. " + LOREM)
        w.heading(f"Detail Item {p + 1}", 3)
        w.paragraph(LOREM)
    return _save(doc, folder / "unnumbered.pdf")


TABLE_ROWS = [
    ["Model", "Accuracy", "Latency"],
    ["Alpha", "0.91", "12 ms"],
    ["Beta", "0.87", "8 ms"],
]


def table_pdf(folder: Path) -> Path:
    """A ruled 3 x 3 table with a "Table 1: ..." caption above it."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 Evaluation", 1)
    w.paragraph("We compare two models on the held-out set.")
    w.table(TABLE_ROWS, caption="Table 1: Accuracy and latency per model")
    w.paragraph("Alpha is more accurate while Beta is faster.")
    w.heading("2 Discussion", 1)
    w.paragraph("Discussion text after the table.")
    return _save(doc, folder / "table.pdf")


HEADER_TEXT = "ACME Corp Quarterly Report"


def running_header_pdf(folder: Path, pages: int = 6) -> Path:
    """A running header, a footer with the page number and a bare page number on every page."""
    doc = pymupdf.open()
    w = Writer(doc)

    def furniture(page: pymupdf.Page, number: int) -> None:
        page.insert_text((LEFT, 40), HEADER_TEXT, fontsize=14, fontname="hebo")
        page.insert_text((LEFT, 810), f"Page {number} of {pages}", fontsize=9, fontname="helv")
        page.insert_text((WIDTH - 90, 40), str(number), fontsize=9, fontname="helv")

    w.page_hooks.append(furniture)
    for p in range(pages):
        w.new_page()
        w.heading(f"{p + 1} Chapter Heading {p + 1}", 1)
        w.paragraph(f"Body text of chapter {p + 1}. " + LOREM)
        w.heading(f"{p + 1}.1 Section Heading {p + 1}", 2)
        w.paragraph(LOREM)
    return _save(doc, folder / "header.pdf")


def encrypted_pdf(folder: Path) -> Path:
    doc = pymupdf.open()
    Writer(doc).paragraph("Secret text.")
    return _save(
        doc,
        folder / "encrypted.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="user-secret",
        owner_pw="owner-secret",
    )


def corrupt_pdf(folder: Path) -> Path:
    """The first 300 bytes of a valid PDF: a header, then nothing usable."""
    good = numbered_pdf(folder)
    path = folder / "corrupt.pdf"
    path.write_bytes(good.read_bytes()[:300])
    return path


def garbage_pdf(folder: Path) -> Path:
    path = folder / "garbage.pdf"
    path.write_bytes(b"this is not a PDF at all\n" * 20)
    return path


def _grey_image(page: pymupdf.Page) -> None:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(180)
    page.insert_image(pymupdf.Rect(72, 72, 523, 770), pixmap=pix)


def scanned_pdf(folder: Path, pages: int = 2) -> Path:
    """Image-only pages, as a scanner without OCR produces them."""
    doc = pymupdf.open()
    for _ in range(pages):
        _grey_image(doc.new_page(width=WIDTH, height=HEIGHT))
    return _save(doc, folder / "scanned.pdf")


def mixed_pdf(folder: Path) -> Path:
    """Three pages; page 2 is a scanned image without text."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 First", 1)
    w.paragraph("Text on the first page.")
    _grey_image(doc.new_page(width=WIDTH, height=HEIGHT))
    w.new_page()
    w.heading("2 Third", 1)
    w.paragraph("Text on the third page.")
    return _save(doc, folder / "mixed.pdf")


def cover_pdf(folder: Path) -> Path:
    """A cover page (title, authors, publisher in large fonts) before three content pages."""
    doc = pymupdf.open()
    cover = doc.new_page(width=WIDTH, height=HEIGHT)
    cover.insert_text((LEFT, 250), "Field Guide to Pumps", fontsize=26, fontname="hebo")
    cover.insert_text((LEFT, 400), "Jane Example", fontsize=14, fontname="hebo")
    cover.insert_text((LEFT, 700), "Example Press", fontsize=14, fontname="hebo")
    cover.insert_text((LEFT, 720), "Second edition", fontsize=BODY_SIZE, fontname="helv")
    w = Writer(doc)
    for n in range(1, 4):
        w.new_page()
        w.heading(f"{n} Pump Type {n}", 1)
        w.paragraph(LOREM)
        w.heading(f"{n}.1 Maintenance {n}", 2)
        w.paragraph(LOREM)
    return _save(doc, folder / "cover.pdf")


# --- structure and title rules (issue #10) ---------------------------------------------------


def title_block_pdf(folder: Path) -> Path:
    """Empty metadata title; page 1 opens with a 24 pt title block, then "Introduction"."""
    doc = pymupdf.open()
    w = Writer(doc)
    page = w.new_page()
    page.insert_text((LEFT, 110), "Pump Station Audit 2024", fontsize=24, fontname="hebo")
    w.y = 130
    w.heading("Introduction", 1)
    w.paragraph(LOREM)
    w.heading("Findings", 1)
    w.paragraph(LOREM)
    doc.set_metadata({"title": ""})
    return _save(doc, folder / "audit_2024.pdf")


MAN_NAME = "FROB(8)"


def man_page_pdf(folder: Path, pages: int = 2) -> Path:
    """A man page as groff renders it: no metadata title, the name at both ends of a running
    header, body-size bold section names at the margin, "NAME" first, and .TP option lists
    (a bold option line, its description indented below it)."""
    doc = pymupdf.open()
    w = Writer(doc, top=80)

    def header(page: pymupdf.Page, number: int) -> None:
        page.insert_text((LEFT, 40), MAN_NAME, fontsize=BODY_SIZE, fontname="tiro")
        page.insert_text((250, 40), "System Manager's Manual", fontsize=BODY_SIZE, fontname="tiro")
        page.insert_text((480, 40), MAN_NAME, fontsize=BODY_SIZE, fontname="tiro")
        page.insert_text((LEFT, 815), f"frobtools 1.0    {number}", fontsize=BODY_SIZE)

    w.page_hooks.append(header)

    def section(title: str) -> None:
        page = w._room(40)
        w.y += 16
        page.insert_text((LEFT, w.y), title, fontsize=BODY_SIZE + 1, fontname="tibo")

    def text(body: str, x: float = LEFT + 36) -> None:
        page = w._room(20)
        for chunk in _wrap(body, 80):
            w.y += 12
            page.insert_text((x, w.y), chunk, fontsize=BODY_SIZE, fontname="tiro")

    def option(tag: str, body: str) -> None:
        page = w._room(40)
        w.y += 16
        page.insert_text((LEFT + 36, w.y), tag, fontsize=BODY_SIZE, fontname="tibo")
        text(body, x=LEFT + 72)

    w.new_page()
    section("NAME")
    text("frob - adjust the frobnication level of a block device")
    section("SYNOPSIS")
    text("frob [ -f ] [ -l level ] device")
    section("DESCRIPTION")
    text("frob changes how strongly a block device is frobnicated. " + LOREM)
    section("OPTIONS")
    for n in range(pages * 4):
        option(f"-{'flmnqrstuvwxyz'[n]} value{n}", f"Option number {n} sets knob {n}. " + LOREM)
    section("ENVIRONMENT")
    option("FROBPATH", "Where frob looks for its level tables.")
    option("FROBDEBUG", "Print every adjustment frob makes.")
    section("SEE ALSO")
    text("unfrob(8), frobstat(1)")
    return _save(doc, folder / "frob.8.pdf")


def _wrap(text: str, width: int) -> list[str]:
    out, cur = [], ""
    for word in text.split():
        if cur and len(cur) + len(word) + 1 > width:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    return [*out, cur] if cur else out


def toc_pdf(folder: Path) -> Path:
    """A contents page with dot leaders and page numbers, then the chapters it lists."""
    doc = pymupdf.open()
    w = Writer(doc)
    page = w.new_page()
    page.insert_text((LEFT, 100), "Contents", fontsize=18, fontname="hebo")
    entries = [("1 Scope", 2), ("1.1 Terms", 2), ("2 Operation", 3), ("2.1 Start-up", 3)]
    for k, (title, number) in enumerate(entries):
        y = 140 + 18 * k
        x = LEFT + (16 if "." in title.split()[0] else 0)
        page.insert_text((x, y), f"{title} " + ". " * 30 + str(number), fontsize=BODY_SIZE)
    for chapter, section in (("1 Scope", "1.1 Terms"), ("2 Operation", "2.1 Start-up")):
        w.new_page()
        w.heading(chapter, 1)
        w.paragraph(LOREM)
        w.heading(section, 2)
        w.paragraph(LOREM)
    return _save(doc, folder / "toc.pdf")


def printed_toc_pdf(folder: Path) -> Path:
    """A report whose fonts do not tell its levels apart: a cover, a printed table of contents
    (levels only by indentation, printed page numbers that start at 1 on the first chapter
    page, i.e. PDF page 3), every heading bold at body size, page numbers in the footers, and
    a back-of-book index (alphabetical terms with page numbers)."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.page_hooks.append(
        lambda page, n: n > 2 and page.insert_text(
            (WIDTH / 2, HEIGHT - 40), str(n - 2), fontsize=9, fontname="helv"))
    cover = w.new_page()
    cover.insert_text((LEFT, 300), "Pump Station Annual Review", fontsize=24, fontname="hebo")
    toc = w.new_page()
    toc.insert_text((LEFT, 100), "Contents", fontsize=BODY_SIZE, fontname="hebo")
    chapters = [("Overview", ["Scope of the review", "Sites visited"]),
                ("Maintenance", ["Valve replacements", "Sensor calibration"]),
                ("Outlook", ["Budget for next year"])]
    y = 130
    for k, (chapter, sections) in enumerate(chapters):
        for indent, title in [(0, chapter), *((18, s) for s in sections)]:
            page = str(k + 1)
            toc.insert_text((LEFT + indent, y), title, fontsize=BODY_SIZE, fontname="helv")
            width = pymupdf.get_text_length(page, fontname="helv", fontsize=BODY_SIZE)
            toc.insert_text((WIDTH - LEFT - width, y), page, fontsize=BODY_SIZE, fontname="helv")
            start, stop = LEFT + indent + 140, WIDTH - LEFT - width - 8
            dots = ". " * int((stop - start) / pymupdf.get_text_length(". ", "helv", BODY_SIZE))
            toc.insert_text((start, y), dots, fontsize=BODY_SIZE, fontname="helv")
            y += 16
    for chapter, sections in chapters:
        w.new_page()
        w.paragraph(chapter, font="hebo")
        w.paragraph(LOREM)
        for section in sections:
            w.paragraph(section, font="hebo")
            w.paragraph(LOREM)
    index = w.new_page()
    index.insert_text((LEFT, 100), "Index", fontsize=BODY_SIZE, fontname="hebo")
    for k, (term, page) in enumerate([("budget", 3), ("calibration", 2), ("gaskets", 2),
                                      ("sensors", 2), ("sites", 1), ("valves", 2)]):
        index.insert_text((LEFT, 130 + 16 * k), f"{term} " + ". " * 30 + f" {page}",
                          fontsize=BODY_SIZE, fontname="helv")
    return _save(doc, folder / "printed-toc.pdf")


def book_pdf(folder: Path) -> Path:
    """A set of two books, each with a centred title page and chapters numbered from 1, the
    chapters set in the same font as the book titles (DocBook set -> FOP)."""
    doc = pymupdf.open()
    w = Writer(doc)
    for book in ("Operator Guide", "Service Manual"):
        page = w.new_page()
        width = pymupdf.get_text_length(book, fontname="hebo", fontsize=24)
        page.insert_text(((WIDTH - width) / 2, 100), book, fontsize=24, fontname="hebo")
        sub = "Release 2.1  4 May 2024"
        sw = pymupdf.get_text_length(sub, fontname="hebo", fontsize=12)
        page.insert_text(((WIDTH - sw) / 2, 140), sub, fontsize=12, fontname="hebo")
        for n in (1, 2):
            w.new_page()
            page = w.page
            assert page is not None
            page.insert_text((LEFT, w.y), f"{n}. {book} Chapter {n}", fontsize=24, fontname="hebo")
            w.y += 20
            w.paragraph(LOREM)
            w.heading(f"{n}.1. {book} Section {n}", 2)
            w.paragraph(LOREM)
    return _save(doc, folder / "book.pdf")


def bold_body_headings_pdf(folder: Path) -> Path:
    """Headings only in body-size bold (groff -ms, DocBook refentry), plus one larger title."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("Widget Reference", 1)
    for name in ("Installation", "Configuration", "Troubleshooting"):
        page = w._room(60)
        w.y += 18
        page.insert_text((LEFT, w.y), name, fontsize=BODY_SIZE, fontname="hebo")
        w.paragraph(f"{name} text. " + LOREM)
    return _save(doc, folder / "bold.pdf")


CODE_LINES = [
    "#include <stdio.h>",
    "",
    "int main(void)",
    "{",
    '    printf("hello\\n");',
    "    return 0;",
    "}",
]


def code_pdf(folder: Path) -> Path:
    """A short program in Courier between two paragraphs; its blank line splits it into two
    text blocks, as in most producers' output."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 Example", 1)
    w.paragraph("Compile the following program:")
    page = w.page
    assert page is not None
    for line in CODE_LINES:
        w.y += 12
        if line:
            page.insert_text((LEFT + 20, w.y), line, fontsize=BODY_SIZE, fontname="cour")
    w.paragraph("It prints a greeting and exits.")
    return _save(doc, folder / "code.pdf")


BORDERLESS_ROWS = [
    ["Pump", "Flow (l/s)", "Head (m)", "Power (kW)"],
    ["P-101", "12.5", "40", "7.5"],
    ["P-102", "18.0", "35", "11.0"],
    ["P-103", "25.0", "28", "15.0"],
    ["P-104", "31.5", "22", "18.5"],
]


def borderless_table_pdf(folder: Path) -> Path:
    """A table without any rules: aligned columns, a caption above it."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 Pumps", 1)
    w.paragraph("The station runs four pumps; their ratings are listed below.")
    page = w.page
    assert page is not None
    w.y += 20
    page.insert_text((LEFT, w.y), "Table 3: Pump ratings", fontsize=BODY_SIZE, fontname="helv")
    w.y += 8
    for r, row in enumerate(BORDERLESS_ROWS):
        w.y += 16
        for c, cell in enumerate(row):
            font = "hebo" if r == 0 else "helv"
            page.insert_text((LEFT + 110 * c, w.y), cell, fontsize=BODY_SIZE, fontname=font)
    w.y += 10
    w.paragraph("Pump P-104 is the stand-by unit and runs only during peak demand.")
    return _save(doc, folder / "borderless.pdf")


def plain_subsections_pdf(folder: Path) -> Path:
    """Chapters in bold; their sub-sections ("1.1. ...") set in the body's weight, a little
    larger (groff mom); a numbered list item inside a paragraph block stays text."""
    doc = pymupdf.open()
    w = Writer(doc)
    for n in (1, 2):
        w.heading(f"{n}. Chapter {n}", 1)
        w.paragraph(LOREM)
        for k in (1, 2):
            page = w._room(60)
            w.y += 16
            page.insert_text((LEFT, w.y), f"{n}.{k}. Topic {n}.{k}", fontsize=BODY_SIZE + 0.5)
            w.paragraph(LOREM)
    w.paragraph("Steps: 2.3. Check the seals before the next start.")
    return _save(doc, folder / "plain.pdf")


def scanned_text_pdf(folder: Path) -> Path:
    """Two pages: a digital one, then a scan (an image of a rendered page, no text layer)
    holding a numbered heading and a sentence."""
    src = pymupdf.open()
    page = src.new_page(width=WIDTH, height=HEIGHT)
    page.insert_text((LEFT, 120), "2 Pump Maintenance", fontsize=20, fontname="hebo")
    page.insert_text((LEFT, 160), "Check the seals of pump P-101 every month.", fontsize=12)
    pix = page.get_pixmap(dpi=200)
    doc = pymupdf.open()
    w = Writer(doc)
    w.heading("1 Pump Overview", 1)
    w.paragraph("The station runs four pumps.")
    scan = doc.new_page(width=WIDTH, height=HEIGHT)
    scan.insert_image(scan.rect, pixmap=pix)
    src.close()
    return _save(doc, folder / "scanned_text.pdf")


Row = list[tuple[float, str]]  # the pieces of one printed row: (x, text); [] for a blank row


def _roman_page(folder: Path, name: str, rows: Sequence[Row]) -> Path:
    """One page of rows 12 pt apart set in Times roman, the first row (a man page section
    name) in bold."""
    doc = pymupdf.open()
    page = doc.new_page(width=WIDTH, height=HEIGHT)
    for n, row in enumerate(rows):
        for x, text in row:
            font = "tibo" if n == 0 else "tiro"
            page.insert_text((x, 100 + 12 * n), text, fontsize=BODY_SIZE, fontname=font)
    return _save(doc, folder / name)


def _hanging(tag: str, body: str, same_row: bool = False) -> list[Row]:
    """A .TP item in roman type: the tag at LEFT + 36, its description wrapped at LEFT + 72,
    starting on the tag's row (``same_row``, a short tag) or on the row below it."""
    tag_x, text_x = LEFT + 36, LEFT + 72
    chunks = [[(text_x, chunk)] for chunk in _wrap(body, 80)]
    if same_row:
        return [[], [(tag_x, tag), *chunks[0]], *chunks[1:]]
    return [[], [(tag_x, tag)], *chunks]


def roman_options_pdf(folder: Path) -> Path:
    """An OPTIONS section whose tags are roman, like xxd(1): "-a | -autoskip" alone on its row,
    "-e" sharing its row with the description's first line."""
    return _roman_page(
        folder,
        "xxd.1.pdf",
        [
            [(LEFT, "OPTIONS")],
            [(LEFT + 36, "If no infile is given, standard input is read.")],
            *_hanging("-a | -autoskip", "Toggle autoskip: a star replaces nul-lines. " + LOREM),
            *_hanging("-c cols | -cols cols", "Format that many octets per line. " + LOREM),
            *_hanging("-e", "Switch to little-endian hexdump. " + LOREM, same_row=True),
        ],
    )


def indented_prose_pdf(folder: Path) -> Path:
    """Roman paragraphs with a first-line indent, each ending in a short line without a full
    stop ("see frob.conf(5) and frob-0(8):"), so that line and the next paragraph's indented
    first line look like a tag and its description.  Long paragraphs come first, then
    paragraphs of two lines."""
    rows: list[Row] = [[(LEFT, "DESCRIPTION")]]
    for n in range(5):
        first, *rest = _wrap(f"Paragraph {n} of the report. " + LOREM + " " + LOREM, 80)
        rows.append([(LEFT + 54, first)])
        if n < 2:
            rows.extend([(LEFT + 36, chunk)] for chunk in rest)
        rows.append([(LEFT + 36, f"see frob.conf(5) and frob-{n}(8):")])
    return _roman_page(folder, "prose.pdf", rows)


def single_hanging_item_pdf(folder: Path) -> Path:
    """An ENVIRONMENT section with one roman hanging item: a one-item list is a paragraph."""
    return _roman_page(
        folder,
        "one.1.pdf",
        [
            [(LEFT, "ENVIRONMENT")],
            *_hanging("FROBPATH", "Where frob looks for its level tables. " + LOREM),
        ],
    )


def filing_pdf(folder: Path, company: str, form: str, period: str, filed: str,
               year: int, name: str | None = None) -> Path:
    """A small SEC filing as EDGAR's generators lay it out: a cover page (form, period,
    registrant above "(Exact name of registrant …)", a New York Stock Exchange row), Items with
    their own text, a balance sheet table under Item 8, the accession number as the metadata
    title and the filing date in the text.  ``period`` is the cover's line ("For the fiscal
    year ended May 31, 2019")."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.new_page()
    for line in ("UNITED STATES", "SECURITIES AND EXCHANGE COMMISSION", "Washington, D.C. 20549",
                 f"FORM {form}", "(Mark One)", (f"{'ANNUAL' if form == '10-K' else 'QUARTERLY'} "
                 "REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934"),
                 period, "Commission File No. 1-10635", company.upper(),
                 "(Exact name of registrant as specified in its charter)",
                 "Common Stock New York Stock Exchange", f"Filed {filed}"):
        w.paragraph(line)
    w.new_page()
    w.heading("Item 1. Business", 1)
    w.paragraph(f"{company} designs and sells widgets in {year}. Our business is seasonal.")
    w.paragraph("Forward-looking statements involve risks and uncertainties that may cause "
                "actual results to differ materially from those projected.")
    w.heading("Item 7. Management's Discussion and Analysis", 1)
    w.paragraph(f"Revenue grew in fiscal {year} on higher widget volumes and pricing.")
    w.new_page()
    w.heading("Item 8. Financial Statements", 1)
    w.table([["", str(year), str(year - 1)], ["Total current assets", f"{year - 1000},5",
                                              f"{year - 1001},0"],
             ["Accounts payable", "(1,577)", "(1,420)"]], caption="Consolidated Balance Sheets")
    w.paragraph("Forward-looking statements involve risks and uncertainties that may cause "
                "actual results to differ materially from those projected.")
    doc.set_metadata({"title": f"0000320187-{year % 100 + 1:02d}-000051"})
    return _save(doc, folder / (name or f"filing-{year}-{form}.pdf"))


def flowing_footer_pdf(folder: Path, pages: int = 6) -> Path:
    """Pages of uneven length, each closed by its footer right after its last paragraph, as
    HTML printed to PDF sets it ("2019 FORM 10-K 7" on odd pages, "8 ACME, INC." on even
    ones), never in the bottom margin; page 2 also ends a paragraph with a cross-reference
    ("see page 4.") that no other page ends with."""
    doc = pymupdf.open()
    for n in range(1, pages + 1):
        w = Writer(doc)
        w.new_page()
        w.heading(f"Topic {n}", 2)
        for _ in range(1 + n % 3):
            w.paragraph()
        if n == 2:
            w.paragraph("The schedule of the plant is described in detail, see page 4.")
        w.paragraph(f"2019 FORM 10-K {n}" if n % 2 else f"{n} ACME, INC.", size=7)
    return _save(doc, folder / "flowing-footer.pdf")


def statements_filing_pdf(folder: Path) -> Path:
    """A 10-K's statements as EDGAR sets them: each caption a line in body type ("Acme Widgets,
    Inc. Consolidated Statements of Income"), an index listing the captions before them, the
    cash-flow statement running onto a "(continued)" page, the notes' caption repeated at the
    head of the notes' second page, and an MD&A heading that discusses a statement ("Analysis
    of the Consolidated Statements of Income").  Pages: 1 cover, 2 MD&A, 3 Item 8 and the
    index, 4 income, 5 balance sheet, 6-7 cash flows, 8-9 notes."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.new_page()
    for line in ("UNITED STATES", "SECURITIES AND EXCHANGE COMMISSION", "FORM 10-K",
                 "For the fiscal year ended December 31, 2019", "ACME WIDGETS, INC.",
                 "(Exact name of registrant as specified in its charter)"):
        w.paragraph(line)
    w.new_page()
    w.heading("Item 7. Management's Discussion and Analysis", 1)
    w.paragraph("Widget demand rose in every region during the year.")
    w.heading("Analysis of the Consolidated Statements of Income", 2)
    w.paragraph("Net income rose on higher widget volumes, and selling costs fell as a share "
                "of revenues.")
    w.new_page()
    w.heading("Item 8. Financial Statements and Supplementary Data", 1)
    w.paragraph("Index to Consolidated Financial Statements")
    for caption in ("Consolidated Statements of Income", "Consolidated Balance Sheets",
                    "Consolidated Statements of Cash Flows"):
        w.paragraph(caption)
    statements = [
        ("Acme Widgets, Inc. Consolidated Statements of Income",
         [["", "2019", "2018"], ["Revenues", "9,120", "8,450"], ["Cost of sales", "(5,300)",
          "(4,980)"], ["Net income", "1,210", "1,045"]]),
        ("Consolidated Balance Sheets",
         [["", "2019", "2018"], ["Inventories", "2,410", "2,200"],
          ["Total current assets", "6,530", "6,010"]]),
        ("Consolidated Statements of Cash Flows",
         [["", "2019", "2018"], ["Depreciation", "410", "395"],
          ["Cash provided by operations", "1,880", "1,720"]]),
        ("Consolidated Statements of Cash Flows (continued)",
         [["", "2019", "2018"], ["Purchases of property, plant and equipment", "(1,577)",
          "(1,420)"], ["Cash used by investing activities", "(1,650)", "(1,500)"]]),
    ]
    for caption, rows in statements:
        w.new_page()
        w.paragraph(caption)
        w.table(rows)
    w.new_page()
    w.paragraph("Notes to Consolidated Financial Statements")
    w.heading("Note 1. Inventories", 2)
    w.paragraph("Inventories are stated at the lower of cost and net realizable value.")
    w.new_page()
    w.paragraph("Notes to Consolidated Financial Statements")
    w.paragraph("Finished widgets make up most inventories at the end of each year.")
    return _save(doc, folder / "acme-2019-10-K.pdf")


def form_filing_pdf(folder: Path) -> Path:
    """A 10-K whose producer set its Parts and Items every which way: the cover's lines bold
    (headings to a font rule), a printed contents listing the Parts and Items with their pages,
    "PART I" and "Item 1A" in body type, Item 2 larger than Item 1, "Item 7" and its own
    sub-heading the same size, a body line that refers to an Item ("Item 7 of this report ..."),
    and Item 8's auditor's report a heading above the balance sheet's caption in body type.
    Pages: 1 cover, 2 contents, 3 Part I, 4 Part II."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.new_page()
    w.heading("SECURITIES AND EXCHANGE COMMISSION", 1)
    w.heading("FORM 10-K", 2)
    for line in ("For the fiscal year ended December 31, 2019", "ACME WIDGETS, INC.",
                 "(Exact name of registrant as specified in its charter)"):
        w.paragraph(line)
    w.new_page()
    w.heading("Table of Contents", 2)
    for line in ("PART I", "Item 1. Business 3", "Item 1A. Risk Factors 3", "Item 2. Properties 3",
                 "Item 3. Legal Proceedings 3", "PART II", "Item 5. Market for Common Equity 4",
                 "Item 7. Management's Discussion and Analysis 4",
                 "Item 7A. Market Risk 4", "Item 8. Financial Statements 4", "PART III",
                 "Item 10. Directors 4"):
        w.paragraph(line)
    w.new_page()
    w.paragraph("PART I")
    w.heading("Item 1. Business", 2)
    w.paragraph("Acme designs and sells widgets to hardware stores.")
    w.heading("Our Widgets", 3)
    w.paragraph("Widgets come in three sizes and two colours.")
    w.paragraph("Item 1A. Risk Factors")
    w.paragraph("Demand for widgets may fall in a recession.")
    w.heading("Item 2. Properties", 1)
    w.paragraph("We lease a plant in Ohio.")
    w.heading("Item 3. Legal Proceedings", 2)
    w.paragraph("None.")
    w.new_page()
    w.heading("PART II", 1)
    w.heading("Item 7. Management's Discussion and Analysis", 3)
    w.paragraph("Item 7 of this report discusses our results, as the risk factors explain.")
    w.heading("Results of Operations", 3)
    w.paragraph("Revenue grew on higher widget volumes.")
    w.heading("Item 8. Financial Statements and Supplementary Data", 2)
    w.heading("Report of Independent Registered Public Accounting Firm", 3)
    w.paragraph("We have audited the balance sheets of Acme Widgets, Inc.")
    w.paragraph("Consolidated Balance Sheets")
    w.table([["", "2019", "2018"], ["Total current assets", "6,530", "6,010"]])
    return _save(doc, folder / "acme-form-10-K.pdf")


def statements_after_items_pdf(folder: Path) -> Path:
    """A 10-K that answers Item 8 with a reference and prints its statements after Part IV, as
    Corning, Netflix and Activision Blizzard do: Item 8 says where they are, Items 9 to 16
    follow, then the signatures, then the statements' own index, the auditor's report and the
    statements, each caption with its owner after it on its line ("Consolidated Balance Sheets
    Acme Widgets, Inc. and Subsidiary Companies"), and the notes.  Pages: 1 Part II, 2 Part IV
    and the signatures, 3 the index and the report, 4 income, 5 balance sheet, 6 notes."""
    doc = pymupdf.open()
    w = Writer(doc)
    w.new_page()
    w.heading("PART I", 1)
    for item in ("Item 1. Business", "Item 1A. Risk Factors", "Item 2. Properties"):
        w.heading(item, 2)
        w.paragraph("Acme designs and sells widgets to hardware stores.")
    w.heading("PART II", 1)
    w.heading("Item 7. Management's Discussion and Analysis", 2)
    w.paragraph("Revenue grew on higher widget volumes.")
    w.heading("Item 8. Financial Statements and Supplementary Data", 2)
    w.paragraph("The response to this Item 8 is included in our audited consolidated financial "
                "statements, which are contained in Part IV, Item 15 of this report.")
    w.heading("Item 9. Changes in and Disagreements with Accountants", 2)
    w.paragraph("None.")
    w.new_page()
    w.heading("PART IV", 1)
    w.heading("Item 15. Exhibits", 2)
    w.paragraph("The exhibits are listed in the exhibit index.")
    w.heading("Item 16. Form 10-K Summary", 2)
    w.paragraph("None.")
    w.heading("Signatures", 3)
    w.paragraph("Pursuant to the requirements of the Securities Exchange Act of 1934, the "
                "registrant has duly caused this report to be signed.")
    w.new_page()
    w.heading("Index to Financial Statements", 3)
    w.paragraph("Report of Independent Registered Public Accounting Firm 3")
    w.paragraph("Consolidated Statements of Income 4")
    w.heading("Report of Independent Registered Public Accounting Firm", 3)
    w.paragraph("We have audited the accompanying balance sheets of Acme Widgets, Inc.")
    owner = "Acme Widgets, Inc. and Subsidiary Companies"
    for caption, rows in (
            ("Consolidated Statements of Income", [["", "2022", "2021"],
                                                   ["Net sales", "9,120", "8,450"]]),
            ("Consolidated Balance Sheets", [["", "2022", "2021"],
                                             ["Total current assets", "6,530", "6,010"]])):
        w.new_page()
        w.paragraph(f"{caption} {owner}")
        w.table(rows)
    w.new_page()
    w.paragraph("Notes to Consolidated Financial Statements")
    w.paragraph("1. Summary of Significant Accounting Policies: widgets are valued at cost.")
    return _save(doc, folder / "acme-after-10-K.pdf")


def contents_filing_pdf(folder: Path) -> Path:
    """A 10-K whose printed contents (dot leaders, page numbers) lists its Parts and Items and
    nothing inside them, and whose Items hold sub-headings set only in bold at body size, as
    EDGAR's producers set MD&A's "Results of Operations".  Pages: 1 cover, 2 contents, 3 Part
    I, 4 Part II."""
    doc = pymupdf.open()
    w = Writer(doc)
    cover = w.new_page()
    cover.insert_text((LEFT, 100), "FORM 10-K", fontsize=BODY_SIZE, fontname="hebo")
    cover.insert_text((LEFT, 130), "GLOBEX CORPORATION", fontsize=BODY_SIZE, fontname="hebo")
    cover.insert_text((LEFT, 160), "For the fiscal year ended December 31, 2021",
                      fontsize=BODY_SIZE, fontname="helv")
    toc = w.new_page()
    toc.insert_text((LEFT, 100), "Table of Contents", fontsize=BODY_SIZE, fontname="hebo")
    entries = [("PART I", 3), ("Item 1. Business", 3), ("Item 1A. Risk Factors", 3),
               ("Item 2. Properties", 3), ("PART II", 4),
               ("Item 7. Management's Discussion and Analysis", 4), ("Item 7A. Market Risk", 4),
               ("Item 8. Financial Statements", 4)]
    for k, (title, number) in enumerate(entries):
        toc.insert_text((LEFT, 130 + 16 * k), f"{title} " + ". " * 20 + str(number),
                        fontsize=BODY_SIZE, fontname="helv")
    w.new_page()
    for line, bold in (("PART I", True), ("Item 1. Business", True),
                       ("Globex makes gears for the auto industry.", False),
                       ("Our Products", True), ("Gears come in steel and brass.", False),
                       ("Item 1A. Risk Factors", True), ("Steel prices may rise.", False),
                       ("Item 2. Properties", True), ("We own a plant in Ohio.", False)):
        w.paragraph(line, font="hebo" if bold else "helv")
    w.new_page()
    for line, bold in (("PART II", True),
                       ("Item 7. Management's Discussion and Analysis", True),
                       ("This discussion covers our results for the year.", False),
                       ("Results of Operations", True),
                       ("Revenue grew on higher gear volumes.", False),
                       ("Liquidity and Capital Resources", True),
                       ("Cash from operations funded the new plant.", False),
                       ("Item 7A. Market Risk", True), ("We hedge steel prices.", False),
                       ("Item 8. Financial Statements", True),
                       ("The statements follow.", False)):
        w.paragraph(line, font="hebo" if bold else "helv")
    return _save(doc, folder / "globex-contents-10-K.pdf")


def ruled_statement_pdf(folder: Path) -> Path:
    """A balance sheet ruled as EDGAR's producers rule one: column rules, a rule above the
    table and under each total only, so a ruled cell holds several printed rows (a label row
    with no figures, "Current assets:", makes the label cell one line longer than the figure
    cells beside it), and a label that wraps onto its figures' line ("Property, plant and
    equipment," / "net")."""
    doc = pymupdf.open()
    page = doc.new_page(width=WIDTH, height=HEIGHT)
    x = [72, 330, 430, 530]
    page.insert_text((72, 90), "CONSOLIDATED BALANCE SHEETS", fontsize=11, fontname="hebo")
    page.insert_text((340, 110), "2021", fontsize=BODY_SIZE)
    page.insert_text((440, 110), "2020", fontsize=BODY_SIZE)
    rows = [("Current assets:", "", ""), ("Cash and equivalents", "9,889", "8,348"),
            ("Inventories", "6,854", "7,367"), ("Total current assets", "26,291", "20,556"),
            ("Property, plant and equipment,", "", ""), ("net", "4,904", "4,866"),
            ("TOTAL ASSETS", "37,740", "31,342")]
    y = top = 130
    for i, (label, *values) in enumerate(rows):
        page.insert_text((x[0] + 2, y), label, fontsize=BODY_SIZE)
        for col, value in enumerate(values, start=2):
            if value:
                width = pymupdf.get_text_length(value, fontsize=BODY_SIZE)
                page.insert_text((x[col] - 6 - width, y), value, fontsize=BODY_SIZE)
        y += 16
        if label.startswith("Total") or i == len(rows) - 1:
            page.draw_line((x[0], y - 12), (x[-1], y - 12))
    page.draw_line((x[0], top - 12), (x[-1], top - 12))
    for edge in x:
        page.draw_line((edge, top - 12), (edge, y - 12))
    return _save(doc, folder / "ruled-statement.pdf")


def exhibit_numbers_pdf(folder: Path) -> Path:
    """A 20-page report with an exhibit bound after it that numbers its own pages right under
    its text: pages 17-19 end "1", "2", "3" (too few pages for a flowing footer's quarter);
    page 1 ends with a table's last figure, a bare "7" in step with nothing."""
    doc = pymupdf.open()
    for n in range(1, 21):
        w = Writer(doc)
        w.new_page()
        w.heading("Exhibit 10.1 Deferred Compensation Plan" if n >= 17 else f"Report part {n}", 2)
        for _ in range(1 + n % 2):
            w.paragraph()
        w.paragraph(f"Clause {n} applies to every participant of the plan.")
        if n == 1:
            w.paragraph("7")
        elif 17 <= n <= 19:
            w.paragraph(str(n - 16))
    return _save(doc, folder / "exhibit-numbers.pdf")
