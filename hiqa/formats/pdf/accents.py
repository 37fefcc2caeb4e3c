"""Accents set as glyphs of their own read back as accented letters: "art´ıculos" ->
"artículos".

TeX's ``\\accent`` (and any typesetter building an accented letter from two glyphs, as OT1
fonts require) places a spacing accent over a letter: the text layer then holds the accent
and the bare letter side by side ("´ı", "¨u", "c¸"), a word that neither matches its outline
entry nor any search for it.  The page's own geometry decides (character boxes of the text
page's ``rawdict``), never a font name or producer: a spacing accent whose box is centred over
a neighbouring letter's box is that letter's; "´" between two words, a backtick before code
("`name`"), a caret in "x^2" sit beside their neighbours, not over them, and stay.  A
dotless "ı" or "ȷ" under an accent is the accent's "i" or "j".  Only pairs with a Unicode
precomposed letter are composed: "ˆx" stays, a hat in mathematics over a letter that has one
composes as an accent would ("ˆu" → "û").  A line set turned (a rotated listing, a date
stamp up the margin) is measured along its own axis; one set at a slant is left as it is."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from hiqa.formats.pdf.letterspacing import raw_lines

_ABOVE = {
    "\u00b4": "\u0301",  # ´ acute
    "`": "\u0300",  # grave
    "\u02cb": "\u0300",  # ˋ grave (modifier)
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u02c6": "\u0302",  # ˆ circumflex
    "^": "\u0302",  # a typewriter face's (texinfo's "r^ole")
    "\u02dc": "\u0303",  # ˜ tilde
    "~": "\u0303",  # a typewriter face's ("Tama~no" in a listing)
    "\u02c7": "\u030c",  # ˇ caron
    "\u02d8": "\u0306",  # ˘ breve
    "\u02da": "\u030a",  # ˚ ring
    "\u02dd": "\u030b",  # ˝ double acute
    "\u00af": "\u0304",  # ¯ macron
    "\u02c9": "\u0304",  # ˉ macron (modifier)
    "\u02d9": "\u0307",  # ˙ dot above
}
_BELOW = {
    "\u00b8": "\u0327",  # ¸ cedilla
    "\u02db": "\u0328",  # ˛ ogonek
}
_MARKS = {**_ABOVE, **_BELOW}
_DOTLESS = {"\u0131": "i", "\u0237": "j"}
_CLASS = "".join(re.escape(ch) for ch in _MARKS)
_PAIR = re.compile(rf"[{_CLASS}][^\W\d_]|[^\W\d_][{_CLASS}]")
_CENTRE_SLACK = 0.1  # em: an accent's centre may sit this far outside its letter's box


def compose_accents(page_dict: dict[str, Any], raw: Callable[[], dict[str, Any]]) -> int:
    """Rewrite, in ``page_dict`` (``page.get_text("dict")``), every spacing accent set over a
    letter as the accented letter; ``raw`` gives the same text page's ``"rawdict"``, asked for
    only when some line's text shows an accent beside a letter.  Lines whose spans an earlier
    rewrite changed (``rejoin_letter_spaced``) are left as they are.  Returns the letters
    composed."""
    composed = 0
    for line, raw_spans in raw_lines(page_dict, raw, _PAIR):
        dx, dy = line.get("dir", (1.0, 0.0))
        if min(abs(dx), abs(dy)) > 0.05:  # set at a slant: neither axis runs along it
            continue
        axis = 0 if abs(dx) >= abs(dy) else 1  # a line set turned runs along y
        chars = [(s_idx, c, float(rs.get("size", 0.0)) or 1.0)
                 for s_idx, rs in enumerate(raw_spans) for c in rs["chars"]]
        texts = [c["c"] for _, c, _ in chars]
        gone: set[int] = set()
        for k, (_, c, size) in enumerate(chars):
            mark = _MARKS.get(c["c"])
            if mark is None or k in gone:
                continue
            order = (k + 1, k - 1) if c["c"] in _ABOVE else (k - 1, k + 1)
            for j in order:
                if 0 <= j < len(chars) and j not in gone and _over(c, chars[j][1], size, axis):
                    letter = _compose(texts[j], mark, c["c"] in _ABOVE)
                    if letter is not None:
                        texts[j] = letter
                        gone.add(k)
                        composed += 1
                    break
        if not gone:
            continue
        out = [""] * len(raw_spans)
        for k, (s_idx, _, _) in enumerate(chars):
            if k not in gone:
                out[s_idx] += texts[k]
        for span, text in zip(line["spans"], out, strict=True):
            span["text"] = text
    return composed


def _over(accent: dict[str, Any], letter: dict[str, Any], size: float, axis: int) -> bool:
    """The accent's box is centred over the letter's (within a tenth of an em), along the
    line's ``axis`` (0: x, 1: y)."""
    lx0, lx1 = sorted((letter["bbox"][axis], letter["bbox"][axis + 2]))
    centre = (accent["bbox"][axis] + accent["bbox"][axis + 2]) / 2
    slack = _CENTRE_SLACK * size
    return lx1 > lx0 and lx0 - slack <= centre <= lx1 + slack


def _compose(letter: str, mark: str, above: bool) -> str | None:
    """The precomposed letter, or None where Unicode has none or ``letter`` is no letter."""
    if not letter.isalpha() or len(letter) != 1:
        return None
    base = _DOTLESS.get(letter, letter) if above else letter
    out = unicodedata.normalize("NFC", base + mark)
    return out if len(out) == 1 else None
