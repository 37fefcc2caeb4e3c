"""The section a question asks about, inside the document it names (issue #45, item 2).

A question that names its document ("What security changes were made in Django 4.1?") has the
document chosen by its name (``fusion.named_first``); inside it, the section whose own heading
the question says ("Security") should come first.  Every sub-section carries the whole cascaded
path, so by both routes a long sub-section of another section that shares the question's other
words ("Selected bug fixes", "Updated modules") can outrank the short section whose heading is
the question's topic.

Each candidate's *own* heading (the last title of its path: a section's heading, a term's term)
is weighed against the question: the question's words that stand in it, each by its rarity among
the candidates' own headings (``log(1 + n / df)``), when they make up at least half of the
heading's words.  Two kinds of word do not count: the document's title words (the name already
chose the document) and the words of the headings nearly every document of the collection has
(``KIND_SHARE``): "DESCRIPTION", "NAME", "OPTIONS" are the document kind's, so "Search man page
descriptions with a regex" is not about the DESCRIPTION section.  The question's side too: the
heading's path must hold at least half of the question's telling words (besides those two kinds,
the words nearly every document's bodies use: "were", "changes" in release notes), so a short
heading that shares one word of a question saying much more ("Erase font cache files, then
generate new ones" and FILES) is not taken for its topic.  ``fusion.fuse`` adds the
weight, scaled over the named document's candidates, as a bonus to those candidates only.
Measured in docs/reports.md ("The section a question asks about").
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from hiqa.index.terms import terms
from hiqa.model import Segment

KIND_SHARE = 0.9
"""A heading word is the document kind's when the segment heads of more than this share of
the collection's documents hold it.  On the man pages "descript", "name", "synopsi", "option"
stand in 95-100 % of the pages' heads, a section's own words ("exit", "files", "security" in
release notes) in far fewer; measured 0.8-0.95 alike on the man pages (docs/reports.md)."""
MIN_COVER = 0.5
"""The question holds at least this share of an own heading's words (after the two kinds
above are set aside): "EXIT STATUS" asked as "exit status", a term "-font font" as "font"."""
MIN_ASKED = 0.5
"""And the heading's path holds at least this share of the question's telling words: "What
changed in Models in Django 1.10?" is about "Minor features > Models" ("changed" is every
release's word), "Exit `watch` if the visible output changes" is not about EXIT STATUS."""


def own_heading_weights(question: str, segments: Sequence[Segment | None],
                        kind_share: Callable[[str], float],
                        body_share: Callable[[str], float]) -> np.ndarray:
    """Each candidate's own-heading weight for ``question`` (0 where its heading is not what the
    question asks about); ``kind_share(term)`` / ``body_share(term)``: the share of the
    collection's documents whose heads / bodies hold the term (``LexicalIndex.head_share``,
    ``body_share``)."""
    asked = set(terms(question))
    memo: dict[str, set[str]] = {}  # candidates share titles and headings: stem each once

    def words(text: str) -> set[str]:
        found = memo.get(text)
        if found is None:
            found = memo[text] = set(terms(text))
        return found

    owns: list[set[str]] = []
    paths: list[set[str]] = []
    titles: list[set[str]] = []
    for s in segments:
        if s is None or not s.section_path:  # None: a payload not read
            titles.append(set())
            owns.append(set())
            paths.append(set())
            continue
        titles.append(words(s.doc_title))
        owns.append(words(s.section_path[-1]) - titles[-1])
        paths.append(set().union(*map(words, s.section_path)))
    kind: dict[str, bool] = {}
    common: dict[str, bool] = {}

    def kinds(t: str) -> bool:
        if t not in kind:
            kind[t] = kind_share(t) > KIND_SHARE
        return kind[t]

    def telling(t: str) -> bool:  # a word that says what the question asks
        if t not in common:
            common[t] = kinds(t) or body_share(t) > KIND_SHARE
        return not common[t]

    df: dict[str, int] = {}
    for own in owns:
        for t in own:
            df[t] = df.get(t, 0) + 1
    n = len(segments)
    out = np.zeros(n)
    for i, own in enumerate(owns):
        shared = {t for t in own & asked if not kinds(t)}
        if not shared or len(shared) / len(own) < MIN_COVER:
            continue
        rest = {t for t in asked - titles[i] if telling(t)}
        if not rest or len(rest & paths[i]) / len(rest) >= MIN_ASKED:
            out[i] = sum(math.log(1 + n / df[t]) for t in shared)
    return out
