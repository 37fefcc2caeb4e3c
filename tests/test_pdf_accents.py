"""Accents set as glyphs of their own over a letter (TeX's ``\\accent`` in OT1 fonts) read as
accented letters (``hiqa.formats.pdf.accents``).

Every PDF is written here with PyMuPDF: an accent is placed with its own ``insert_text``,
centred over the letter it belongs to, as a typesetter building the letter from two glyphs
places it; the same characters set one after the other are ordinary text and stay."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf
import pytest

from hiqa.formats.pdf.accents import _compose
from hiqa.formats.pdf.reader import parse_pdf

SIZE = 12


def _width(text: str) -> float:
    return pymupdf.get_text_length(text, fontname="helv", fontsize=SIZE)


def _set(page: pymupdf.Page, x: float, y: float, parts: Sequence[str | tuple[str, str]]) -> None:
    """Text left to right; a part ``(mark, "over")`` centres the mark over the next part's
    first letter, ``(mark, "under")`` under the previous part's last letter."""
    for k, part in enumerate(parts):
        if isinstance(part, tuple):
            mark, where = part
            letter = parts[k + 1][0] if where == "over" else parts[k - 1][-1]  # type: ignore[index]
            left = x if where == "over" else x - _width(letter)
            centre = left + _width(letter) / 2
            page.insert_text((centre - _width(mark) / 2, y), mark, fontname="helv",
                             fontsize=SIZE)
        else:
            page.insert_text((x, y), part, fontname="helv", fontsize=SIZE)
            x += _width(part)


def _read(tmp_path: Path, rows: Sequence[Sequence[str | tuple[str, str]]]) -> str:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for k, parts in enumerate(rows):
        _set(page, 72, 100 + 30 * k, parts)
    path = tmp_path / "accents.pdf"
    doc.save(path)
    doc.close()
    return parse_pdf(path, path.name).markdown


def test_accents_set_over_letters_are_read_as_accented_letters(tmp_path: Path) -> None:
    """jumplines' Spanish ("art´ıculos", "p´agina") and a cedilla set under its letter: the
    words read as written, so a search for "artículos" finds them."""
    text = _read(tmp_path, [
        ["Los art", ("\u00b4", "over"), "iculos de G", ("\u00a8", "over"), "odel"],
        ["la fa", "c", ("\u00b8", "under"), "ade"],
        ["Tama", ("~", "over"), "no y r", ("^", "over"), "ole"],  # a typewriter face's
    ])
    assert "Los artículos de Gödel" in text
    assert "la façade" in text
    assert "Tamaño y rôle" in text


def test_accent_characters_beside_letters_stay_as_they_are(tmp_path: Path) -> None:
    """The same characters set one after the other, not over a letter: an acute for an
    apostrophe, a backtick before code, a caret and a tilde in an expression."""
    line = "it\u00b4s a `name` for x^2 and ~n here"
    text = _read(tmp_path, [[line]])
    assert line in text


@pytest.mark.parametrize(("letter", "mark", "above", "out"), [
    ("\u0131", "\u0301", True, "í"),  # a dotless i under an acute: í
    ("\u0237", "\u030c", True, "ǰ"),  # a dotless j under a caron
    ("c", "\u0327", False, "ç"),
    ("x", "\u0302", True, None),  # no precomposed x with a circumflex: left as set
    ("2", "\u0301", True, None),  # not a letter
])
def test_composed_only_to_a_precomposed_letter(letter: str, mark: str, above: bool,
                                               out: str | None) -> None:
    assert _compose(letter, mark, above) == out


def test_a_turned_line_is_measured_along_its_own_axis(tmp_path: Path) -> None:
    """Along a line set at 90° every character's x range is the same: measured across it, an
    accent beside a letter would read as over it (regstats' rotated listing, "^^J" ->
    "^Ĵ")."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 100), "The pump is ready and the valves are closed for the night.",
                     fontname="helv", fontsize=SIZE)
    page.insert_text((300, 700), "it\u00b4s a `name` ~n ^^J", fontname="helv", fontsize=SIZE,
                     rotate=90)
    path = tmp_path / "turned.pdf"
    doc.save(path)
    doc.close()
    assert "it\u00b4s a `name` ~n ^^J" in parse_pdf(path, path.name).markdown


def test_a_repair_that_fails_costs_the_repair_not_the_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A repair of the text layer raising on some page it was not built for leaves that page's
    text as extracted, with a warning; before, the page was dropped as unreadable."""
    from hiqa.formats.pdf import textlayer

    def broken(page_dict: dict, raw: object) -> int:
        raise ValueError("a character box it did not expect")

    monkeypatch.setattr(textlayer, "compose_accents", broken)
    with caplog.at_level("WARNING", logger="hiqa.pdf"):
        text = _read(tmp_path, [["Los art", ("\u00b4", "over"), "iculos"]])
    assert "Los art\u00b4iculos" in text
    assert "left as extracted" in caplog.text
