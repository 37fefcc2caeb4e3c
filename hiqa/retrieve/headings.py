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
descriptions with a regex" is not about the DESCRIPTION section.  ``fusion.fuse`` adds the
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
above are set aside): "EXIT STATUS" asked as "exit status", a term "-r, --regex" as "regex"."""


def own_heading_weights(question: str, segments: Sequence[Segment | None],
                        kind_share: Callable[[str], float]) -> np.ndarray:
    """Each candidate's own-heading weight for ``question`` (0 where its heading is not what the
    question asks about); ``kind_share(term)``: the share of the collection's documents whose
    heads hold the term (``LexicalIndex.head_share``)."""
    asked = set(terms(question))
    memo: dict[str, set[str]] = {}  # candidates share titles and headings: stem each once

    def words(text: str) -> set[str]:
        found = memo.get(text)
        if found is None:
            found = memo[text] = set(terms(text))
        return found

    owns = [words(s.section_path[-1]) - words(s.doc_title) if s and s.section_path
            else set() for s in segments]  # None: a payload not read
    df: dict[str, int] = {}
    for own in owns:
        for t in own:
            df[t] = df.get(t, 0) + 1
    n = len(segments)
    out = np.zeros(n)
    kind: dict[str, bool] = {}
    for i, own in enumerate(owns):
        shared = {t for t in own & asked
                  if not kind.setdefault(t, kind_share(t) > KIND_SHARE)}
        if shared and len(shared) / len(own) >= MIN_COVER:
            out[i] = sum(math.log(1 + n / df[t]) for t in shared)
    return out
