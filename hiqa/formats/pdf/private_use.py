"""Old-style figures and small capitals that a font maps into Unicode's private use area, read
back as the digits and letters they are.

Adobe's glyph list gives the old-style figures and small capitals of an expert or OpenType
font code points U+F730–U+F739 ("zerooldstyle" … "nineoldstyle"), U+F761–U+F77A ("Asmall" …
"Zsmall") and U+F7E0–U+F7FE (the small accented letters, "Agravesmall" …), and a PDF's
ToUnicode map often passes them on: TeX Gyre Pagella's small-capital chapter titles in
gitinfo's manual (texlive, seed 101) read "\\uf769\\uf76e\\uf774…" for "introduction", its
dates "\\uf732\\uf739th August".  No outline entry matches such a title and no search finds
its words.  Icon fonts use the same code points for pictures (Font Awesome's U+F773 is a
water drop), each a span of its own: old-style figures are always read (a page number "2/6",
a listing's line number stand alone too), but a font's letters only once the document shows
it setting one inside a word or a number, beside another character of its span
("\uf769\uf76e…", "\uf732\uf739th"), on this page or an earlier one."""

from __future__ import annotations

import re
from typing import Any

_TABLE = {
    **{0xF730 + d: chr(0x30 + d) for d in range(10)},  # old-style figures
    **{0xF761 + k: chr(0x61 + k) for k in range(26)},  # small capitals: the lower-case letter
    **{c: chr(c - 0xF700) for c in range(0xF7E0, 0xF7FF) if c != 0xF7F7},  # à … þ small
    0xF7FF: "\u00ff",  # ÿ small
    0xF721: "!", 0xF724: "$", 0xF726: "&", 0xF73F: "?",
    0xF7A1: "\u00a1", 0xF7A2: "\u00a2", 0xF7BF: "\u00bf",  # ¡ ¢ ¿
}
_FIGURES = {c: t for c, t in _TABLE.items() if 0xF730 <= c <= 0xF739}
_ANY = re.compile("[\uf721-\uf7ff]")
_KNOWN = {c: c if c in _TABLE else " " for c in range(0xF721, 0xF800)}  # the others apart
_IN_A_WORD = re.compile("\\S[\uf721-\uf7ff]|[\uf721-\uf7ff]\\S")


def read_private_use(page_dict: dict[str, Any], proven: set[str] | None = None) -> int:
    """Rewrite, in ``page_dict`` (``page.get_text("dict")``), the old-style figures, and the
    small capitals of every font proven to set them, as plain digits and letters, one
    character for one (span widths and character counts are unchanged).  ``proven``: the
    fonts proven on earlier pages, with this page's added.  Returns the characters
    rewritten."""
    proven = set() if proven is None else proven
    spans = [span for block in page_dict.get("blocks", ()) for line in block.get("lines", ())
             for span in line.get("spans", ()) if _ANY.search(span.get("text", ""))]
    proven.update(span.get("font", "") for span in spans
                  if _IN_A_WORD.search(span.get("text", "").translate(_KNOWN)))
    changed = 0
    for span in spans:
        text = span["text"]
        new = text.translate(_TABLE if span.get("font", "") in proven else _FIGURES)
        changed += sum(a != b for a, b in zip(text, new, strict=True))
        span["text"] = new
    return changed
