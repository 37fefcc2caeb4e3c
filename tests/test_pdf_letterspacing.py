"""Letter-spaced text (issue #44): titles set with tracking, where the extractor writes a space
after every letter ("I n t r o d u c t i o n"), are read as their words, and headings of them
match their outline entries; single letters of ordinary text stay as they are.

Every PDF is written here with PyMuPDF. A letter-spaced line is set one glyph at a time, each
advanced by its own width plus the tracking, a word break by the space's width plus the
tracking twice, as a typesetter's letter-spacing does.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from hiqa.formats.pdf.reader import parse_pdf

LEFT = 72
PROSE = ("The pump draws water from the lower basin and lifts it to the tank on the hill,",
         "where it settles before it flows to the houses of the village below, and the",
         "keeper reads the gauge each morning to see how much the village has used.")


def spaced(page: pymupdf.Page, y: float, text: str, *, font: str = "hebo", size: float = 14,
           tracking: float = 0.25, x: float = LEFT) -> float:
    """``text`` set on the baseline ``y`` with ``tracking`` ems after every glyph; the x where
    it ends."""
    face = pymupdf.Font(font)
    for ch in text:
        if not ch.isspace():
            page.insert_text((x, y), ch, fontname=font, fontsize=size)
        x += face.text_length(ch, fontsize=size) + tracking * size
    return x


def prose(page: pymupdf.Page, y: float) -> float:
    for row in PROSE:
        y += 13
        page.insert_text((LEFT, y), row, fontname="helv", fontsize=10)
    return y


def sections(path: Path, titles: list[str], *, per_page: int = 2,
             outline: bool = False) -> Path:
    """Letter-spaced bold titles, each over a paragraph, ``per_page`` of them a page."""
    doc = pymupdf.open()
    toc = []
    page, y = doc.new_page(), 60.0
    for k, title in enumerate(titles):
        if k and k % per_page == 0:
            page, y = doc.new_page(), 60.0
        y += 40
        spaced(page, y, title)
        toc.append([1, title.split(". ", 1)[-1], doc.page_count])
        y = prose(page, y + 6)
    if outline:
        doc.set_toc(toc)
    doc.save(path)
    doc.close()
    return path


def test_letter_spaced_headings_are_read_as_words(tmp_path: Path) -> None:
    titles = ["1. Installing the pump", "2. Operation", "3. Care of the pump", "4. Spare parts"]
    doc = parse_pdf(sections(tmp_path / "spaced.pdf", titles), "spaced.pdf")
    assert [(h.level, h.title) for h in doc.headings] == [(1, t) for t in titles]
    assert "I n s t" not in doc.markdown


def test_letter_spaced_headings_match_their_outline_entries(tmp_path: Path) -> None:
    """Unmatched, an outline entry is put at the top of its page and its line stays in the
    text: the second section would start above the first one's paragraph."""
    titles = ["Installing the pump", "Operation", "Care of the pump", "Spare parts"]
    doc = parse_pdf(sections(tmp_path / "outline.pdf", titles, outline=True), "outline.pdf")
    md = doc.markdown
    assert [h.title for h in doc.headings] == titles
    assert "O p e r" not in md and "I n s t" not in md
    assert all(md.count(title) == 1 for title in titles)  # the line is the heading, not text
    first, second = md.index("# Installing the pump"), md.index("# Operation")
    assert first < md.index("The pump draws") < second


def test_narrow_tracking_and_a_letter_spaced_phrase_in_a_line(tmp_path: Path) -> None:
    """Capitals tracked by 0.16 em, narrower than any word space, need no wider break to be
    told from words; in a line of ordinary words only the letter-spaced phrase is joined."""
    path = tmp_path / "narrow.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    spaced(page, 100, "DIRECTORS AND OFFICERS", font="helv", size=9, tracking=0.16)
    page.insert_text((LEFT, 130), "relation of image and code. Stop", fontname="helv",
                     fontsize=10)
    x = LEFT + pymupdf.get_text_length("relation of image and code. Stop ", "helv", 10)
    spaced(page, 130, "stealing sheep!", font="helv", size=10, tracking=0.17, x=x)
    doc.save(path)
    doc.close()
    md = parse_pdf(path, "narrow.pdf").markdown
    assert "DIRECTORS AND OFFICERS" in md
    assert "relation of image and code. Stop stealing sheep!" in md


def test_single_letters_of_ordinary_text_are_left_alone(tmp_path: Path) -> None:
    """Initials, letters spaced as the line's words (a sentence's wider space after them is no
    word break of tracking), monospace code, a character table in groups, CJK characters each a
    word, one-letter table cells a column apart: all as extracted, beside a letter-spaced
    heading whose tracking (0.25 em) equals a Times word space."""
    path = tmp_path / "ordinary.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    spaced(page, 60, "1. Installing the pump")
    rows = [("J. R. R. Tolkien wrote the book in Oxford", "helv"),
            ("Choose one of a b c d e as the answer", "helv"),
            ("Solve for a b c d e.  The rest follows from them", "tiro"),
            ("a b c d e f g h", "tiro"),
            ("x y z w", "cour"),
            ("A B C D  E F G H", "cour")]
    y = 100.0
    for text, font in rows:
        page.insert_text((LEFT, y), text, fontname=font, fontsize=10)
        y += 20
    for k, cell in enumerate("pqrs"):  # a table row of one-letter cells, a column apart
        page.insert_text((LEFT + 60 * k, y), cell, fontname="helv", fontsize=10)
    x = float(LEFT)  # Chinese, each character a word: spaces a Helvetica space wide
    for ch in "中 文 字 符   测 试":
        font = "helv" if ch == " " else "china-s"
        page.insert_text((x, y + 20), ch, fontname=font, fontsize=10)
        x += pymupdf.Font(font).text_length(ch, fontsize=10)
    doc.save(path)
    doc.close()
    md = parse_pdf(path, "ordinary.pdf").markdown
    assert "1. Installing the pump" in md
    assert "中 文 字 符 测 试" in md
    for text, _ in rows:
        assert text in md or " ".join(text.split()) in md  # code keeps its spaces
    assert "p q r s" in md
