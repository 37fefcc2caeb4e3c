"""Old-style figures and small capitals a font maps into Unicode's private use area (Adobe's
glyph list: U+F730… "zerooldstyle", U+F761… "Asmall") read as digits and letters
(``hiqa.formats.pdf.private_use``).

The PDF is written here with PyMuPDF; one font's ToUnicode map sends its digits and lower-case
letters to those code points, as TeX Gyre Pagella's old-style figures and small capitals do in
gitinfo's manual (texlive)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from hiqa.formats.pdf.private_use import read_private_use
from hiqa.formats.pdf.reader import parse_pdf

CMAP = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<00> <FF>
endcodespacerange
3 beginbfrange
<20> <20> <0020>
<30> <39> <F730>
<61> <7A> <F761>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end"""


def _small_capitals_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 100), "introduction", fontname="Times-Roman", fontsize=17)
    page.insert_text((72, 130), "The pump was first built in 1911 and it still runs.",
                     fontname="helv", fontsize=10)
    page.insert_text((72, 150), "dated 29", fontname="Times-Roman", fontsize=10)
    for xref, _, _, base, _, _ in page.get_fonts():
        if base == "Times-Roman":
            cmap = doc.get_new_xref()
            doc.update_object(cmap, "<<>>")
            doc.update_stream(cmap, CMAP)
            doc.xref_set_key(xref, "ToUnicode", f"{cmap} 0 R")
    doc.save(path)
    doc.close()
    return path


def test_small_capitals_and_old_style_figures_read_as_letters_and_digits(tmp_path: Path) -> None:
    path = _small_capitals_pdf(tmp_path / "pua.pdf")
    assert "\uf769" in pymupdf.open(path)[0].get_text()  # the text layer holds the PUA letters
    doc = parse_pdf(path, path.name)
    assert [h.title for h in doc.headings] == ["introduction"]
    assert "dated 29" in doc.markdown
    assert not any("\ue000" <= ch <= "\uf8ff" for ch in doc.markdown)


def test_only_those_code_points_change_one_for_one() -> None:
    """A span keeps its length (its width per character is measured elsewhere), and other
    private-use characters (a symbol font's) stay."""
    page = {"blocks": [{"lines": [{"spans": [
        {"font": "Pagella",
         "text": "\uf731\uf739\uf731\uf731 \uf761\uf762 \uf7e9t\uf7e9 \uf0b7 plain"}]}]}]}
    assert read_private_use(page) == 8
    assert page["blocks"][0]["lines"][0]["spans"][0]["text"] == "1911 ab été \uf0b7 plain"


def test_a_font_setting_them_one_at_a_time_is_an_icon_font() -> None:
    """Font Awesome puts pictures on the same code points (U+F773 a water drop, U+F76F a
    tornado), each a span of its own: left alone.  A font seen setting one inside a word
    ("\uf769\uf76e…") is read, on later pages too, where a letter stands alone; old-style
    figures always are (a page number "2/6")."""
    icons = {"blocks": [{"lines": [{"spans": [
        {"font": "FontAwesome", "text": "\uf773"}, {"font": "Lato", "text": " Water "},
        {"font": "FontAwesome", "text": "\uf76f"}, {"font": "Lato", "text": " Wind"}]}]}]}
    proven: set[str] = set()
    assert read_private_use(icons, proven) == 0 and not proven
    first = {"blocks": [{"lines": [{"spans": [
        {"font": "Pagella", "text": "\uf769\uf76e \uf732/\uf736"}]}]}]}
    later = {"blocks": [{"lines": [{"spans": [{"font": "Pagella", "text": "\uf761"}]}]}]}
    assert read_private_use(first, proven) == 4 and proven == {"Pagella"}
    assert first["blocks"][0]["lines"][0]["spans"][0]["text"] == "in 2/6"
    assert read_private_use(later, proven) == 1
    assert later["blocks"][0]["lines"][0]["spans"][0]["text"] == "a"
