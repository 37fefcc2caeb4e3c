"""Section numbers cross-checked against each other: a rule of the typographic heading model
(``hiqa.formats.pdf.typography``).

A document numbers its sections in increasing order ("5", "5.1", "5.2", "6"), starting again
from 1 only where a new book or article of a collection starts.  A numbered line that breaks
that order is no section of it: ucsmonograph (texlive) prints its implementation's code with
line numbers, and two lines of it ("6 \\newboolean{@siglasAtivo}", "7 \\setboolean…") stood as
chapters 6 and 7 between sections 5.1 and 5.2.  Within each run that does not start again,
the numbered headings kept are those on a longest sequence in increasing order; the others
are dropped when they are few (``STRAY_SHARE``), since many out of order say the document numbers
something else (exercises, steps) and the order is no evidence.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from hiqa.formats.pdf.layout import HeadingCandidate
from hiqa.formats.pdf.lines import section_number

STRAY_SHARE = 0.2
"""At most this share of a run's numbered headings may be dropped as out of order."""


def without_stray_numbers(cands: list[HeadingCandidate]) -> list[HeadingCandidate]:
    """``cands`` without the numbered ones out of their run's increasing order."""
    numbered = [(k, n) for k, c in enumerate(cands) if (n := section_number(c.title))]
    stray: set[int] = set()
    for run in _runs(numbered):
        kept = _on_a_longest_increasing([n for _, n in run])
        out = [k for pos, (k, _) in enumerate(run) if pos not in kept]
        if len(out) <= STRAY_SHARE * len(run):
            stray.update(out)
    return [c for k, c in enumerate(cands) if k not in stray] if stray else cands


def _runs(numbered: Sequence[tuple[int, tuple[int, ...]]]
          ) -> list[list[tuple[int, tuple[int, ...]]]]:
    """Numbered headings split where the numbering starts again from 1 after a larger top
    number."""
    runs: list[list[tuple[int, tuple[int, ...]]]] = []
    for k, n in numbered:
        if not runs or (n == (1,) and max(m[0] for _, m in runs[-1]) > 1):
            runs.append([])
        runs[-1].append((k, n))
    return runs


def _on_a_longest_increasing(numbers: Sequence[tuple[int, ...]]) -> set[int]:
    """Positions that lie on some longest strictly increasing subsequence of ``numbers``: where
    two orders are as long ("2.1", "3", "2.2": a stray "3" or a stray "2.2"), both stay."""
    order = {n: r for r, n in enumerate(sorted(set(numbers)))}
    ranks = [order[n] for n in numbers]
    ending = _longest_ending(ranks)  # the longest increasing subsequence ending at each position
    starting = _longest_ending([-r for r in reversed(ranks)])[::-1]  # ... and starting at it
    longest = max(ending, default=0)
    return {k for k in range(len(ranks)) if ending[k] + starting[k] - 1 == longest}


def _longest_ending(values: Sequence[int]) -> list[int]:
    """For each position, the length of the longest strictly increasing subsequence of
    ``values`` ending there (patience sorting: n log n, a long manual numbers thousands)."""
    tails: list[int] = []  # the least last value of an increasing subsequence of each length
    out = []
    for v in values:
        pos = bisect_left(tails, v)
        tails[pos:pos + 1] = [v]
        out.append(pos + 1)
    return out
