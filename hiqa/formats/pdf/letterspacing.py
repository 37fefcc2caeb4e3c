"""Letter-spaced text read back as words: "I n t r o d u c t i o n" -> "Introduction".

A title set with tracking has a gap after every letter; where that gap is wider than the text
extractor's word-space threshold, MuPDF writes a space after every letter, so the heading
never matches its outline entry and no search finds its words (issue #44: every title of
exteps; a 10-K's "D I R E C TO R S"). The line's own geometry decides (character boxes of
the text page's ``rawdict``), never a font name, producer or file:

* a run of four or more one-letter words is the signature, and the gaps inside such runs give
  the tracking ``t`` (their median, in ems of the letters' size);
* the line is letter-spaced when ``t`` is at most a third of an em, no gap between two words
  of several characters is as narrow as ``t`` + 0.06 em (ordinary text whose single letters
  are spaced as its words are: "such as A m g H", "a b c d" in a justified line), and either
  ``t`` is narrower than any word space (≤ 0.22 em) or the same line shows word breaks
  clearly wider than ``t`` (``t`` + 0.2 em to 1.5 em: "U s i n g  e x t e r n a l  E P S",
  "1.  C h a n g e s");
* a line that proves nothing by itself (a one-word title, "C o n t e n t s") is letter-spaced
  when a line of its page or of an earlier page proved the same tracking in the same type;
* then every gap of the line no wider than ``t`` + 0.06 em is dropped and every wider one
  kept as a word break.

A character table ("A B C … Z" in fixed columns, 0.5 em apart), monospace code ("x y z", a
column apart), initials ("J. R. R.": not one-letter words) and CJK text (each character its
own word: never joined) stay as extracted.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

_SINGLES = re.compile(r"(?<!\S)(?:[^\W\d_]\s+){3,}[^\W\d_](?!\S)")  # four one-letter words
_MIN_RUN = 4
_MAX_TRACKING = 0.34  # em: wider gaps between one-letter words are a table's columns
_NARROW_TRACKING = 0.22  # em: narrower than any word space, even a tightly justified one
_SAME_GAP = 0.06  # em: a gap within this of the tracking is a letter gap
_WORD_BREAK = 0.2  # em: a word break is at least this much wider than the tracking
_MAX_WORD_BREAK = 1.5  # em: wider still is a column gap, not a word break
_SAME_TRACKING = 0.02  # em: a one-word line tracked as a proved line is letter-spaced too


@dataclass(frozen=True, slots=True)
class _Spacing:
    """One line's reading: its tracking, whether the line proves it by itself, the fonts of
    its one-letter words, and the white space to drop if it is letter-spaced."""

    tracking: float
    proven: bool
    fonts: frozenset[str]
    drop: frozenset[tuple[int, int]]


def rejoin_letter_spaced(page_dict: dict[str, Any], raw: Callable[[], dict[str, Any]],
                         known: tuple[tuple[str, float], ...] = (),
                         ) -> tuple[tuple[str, float], ...]:
    """Rewrite, in ``page_dict`` (``page.get_text("dict")``), the spans of every letter-spaced
    line without the spaces between its letters; ``raw`` gives the same text page's
    ``"rawdict"`` (character boxes), asked for only when some line's text shows the signature.

    A one-word line ("C o n t e n t s", "O p e r a t i o n") shows no word break to prove its
    tracking: it is letter-spaced when a line of this page or of a page before proved the
    same tracking (within 0.02 em) in the same type, the document's own style of spaced
    titles.  ``known`` are the (font, tracking) pairs proved before; returned with this
    page's added."""
    read: list[tuple[dict[str, Any], list[dict[str, Any]], _Spacing]] = []
    for line, raw_spans in raw_lines(page_dict, raw, _SINGLES):
        dx, dy = line.get("dir", (1.0, 0.0))
        if abs(dy) > 0.05 or dx <= 0:
            continue
        spacing = _spacing(raw_spans)
        if spacing is not None:
            read.append((line, raw_spans, spacing))
    proved = set(known) | {(f, round(sp.tracking, 2)) for _, _, sp in read if sp.proven
                           for f in sp.fonts}
    for line, raw_spans, sp in read:
        if not sp.proven and not all(
            any(f == g and abs(sp.tracking - t) <= _SAME_TRACKING for g, t in proved)
            for f in sp.fonts
        ):
            continue
        for s_idx, (rs, span) in enumerate(zip(raw_spans, line["spans"], strict=True)):
            span["text"] = "".join(
                c["c"] for c_idx, c in enumerate(rs["chars"]) if (s_idx, c_idx) not in sp.drop
            )
    return tuple(sorted(proved))


def raw_lines(page_dict: dict[str, Any], raw: Callable[[], dict[str, Any]],
              pattern: re.Pattern[str]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The lines of ``page_dict`` whose text ``pattern`` finds, each with its spans from
    ``raw`` (the same text page's ``"rawdict"``, asked for only when some line matches).  A
    line whose spans an earlier rewrite changed, so that they no longer spell the raw
    characters, is left out."""
    where = [
        (b, n)
        for b, block in enumerate(page_dict.get("blocks", ()))
        for n, line in enumerate(block.get("lines", ()))
        if pattern.search("".join(s.get("text", "") for s in line.get("spans", ())))
    ]
    if not where:
        return []
    raw_blocks = raw().get("blocks", ())
    out = []
    for b, n in where:
        line = page_dict["blocks"][b]["lines"][n]
        try:
            raw_spans = raw_blocks[b]["lines"][n]["spans"]
        except (IndexError, KeyError):
            continue
        if len(raw_spans) == len(line["spans"]) and all(
            "".join(c["c"] for c in rs["chars"]) == s.get("text", "")
            for rs, s in zip(raw_spans, line["spans"], strict=True)
        ):
            out.append((line, raw_spans))
    return out


def _spacing(raw_spans: list[dict[str, Any]]) -> _Spacing | None:
    """How one line is spaced, or None when it cannot be letter-spaced: no run of four
    one-letter words, gaps between them a column wide, or ordinary words as close as they."""
    # words: [first char box x0, last char box x1, size, text, white space positions before
    #         it, font of its first character]
    words: list[list[Any]] = []
    pending: list[tuple[int, int]] = []
    for s_idx, span in enumerate(raw_spans):
        size = float(span.get("size", 0.0)) or 1.0
        for c_idx, c in enumerate(span["chars"]):
            ch = c["c"]
            if ch.isspace():
                pending.append((s_idx, c_idx))
                continue
            x0, x1 = c["bbox"][0], c["bbox"][2]
            if words and not pending:
                words[-1][1] = x1
                words[-1][2] = max(words[-1][2], size)
                words[-1][3] += ch
            else:
                words.append([x0, x1, size, ch, pending, span.get("font", "")])
                pending = []
    if len(words) < _MIN_RUN:
        return None
    gaps = [(nxt[0] - prev[1]) / max(prev[2], nxt[2]) for prev, nxt in pairwise(words)]
    single = [len(w[3]) == 1 and w[3].isalpha() and not _wide(w[3]) for w in words]
    inside: list[float] = []  # gaps between one-letter words of runs of four or more
    i = 0
    while i < len(words):
        j = i
        while single[i] and j + 1 < len(words) and single[j + 1]:
            j += 1
        if j - i + 1 >= _MIN_RUN:
            inside.extend(gaps[i:j])
        i = j + 1
    if not inside:
        return None
    t = statistics.median(inside)
    if t > _MAX_TRACKING:
        return None
    narrow = t + _SAME_GAP
    if any(g <= narrow and len(words[i][3]) > 1 and len(words[i + 1][3]) > 1
           for i, g in enumerate(gaps)):
        return None  # the line's ordinary words are spaced as its single letters
    proven = t <= _NARROW_TRACKING or any(t + _WORD_BREAK <= g <= _MAX_WORD_BREAK for g in gaps)
    drop: set[tuple[int, int]] = set()
    for i, g in enumerate(gaps):
        left, right = words[i][3], words[i + 1][3]
        if g <= narrow and not _wide(left[-1]) and not _wide(right[0]):
            drop.update(words[i + 1][4])
    fonts = frozenset(w[5] for w, one in zip(words, single, strict=True) if one)
    return _Spacing(t, proven, fonts, frozenset(drop))


def _wide(ch: str) -> bool:
    """CJK and other full-width characters: each is a word of its own already."""
    return unicodedata.east_asian_width(ch) in "WF"
