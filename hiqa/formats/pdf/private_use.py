"""Old-style figures and small capitals that a font maps into Unicode's private use area, read
back as the digits and letters they are.

Adobe's glyph list gives the old-style figures and small capitals of an expert or OpenType
font code points U+F730–U+F739 ("zerooldstyle" … "nineoldstyle"), U+F761–U+F77A ("Asmall" …
"Zsmall") and U+F7E0–U+F7FE (the small accented letters, "Agravesmall" …), and a PDF's
ToUnicode map often passes them on: TeX Gyre Pagella's small-capital chapter titles in
gitinfo's manual (texlive, seed 101) read "\\uf769\\uf76e\\uf774…" for "introduction", its
dates "\\uf732\\uf739th August".  No outline entry matches such a title and no search finds
its words.  The code points themselves are the evidence: the same mapping for any producer."""

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
_ANY = re.compile("[\uf721-\uf7ff]")


def read_private_use(page_dict: dict[str, Any]) -> int:
    """Rewrite, in ``page_dict`` (``page.get_text("dict")``), every span's old-style figures
    and small capitals as plain digits and letters, one character for one (span widths and
    character counts are unchanged).  Returns the characters rewritten."""
    changed = 0
    for block in page_dict.get("blocks", ()):
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                text = span.get("text", "")
                if not _ANY.search(text):
                    continue
                new = text.translate(_TABLE)
                changed += sum(a != b for a, b in zip(text, new, strict=True))
                span["text"] = new
    return changed
