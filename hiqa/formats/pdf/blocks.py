"""Blocks that never hold a heading: program listings, numbered lists and contents rows.

A package manual numbers the lines of its implementation ("28 \\expandafter…", "29 …"), a
report lists steps ("1. Open …", "2. Close …"), a contents page the sections it did not let
the reader recognise as one.  Each such line starts with a number that, read alone, looks
like a section number.  What tells them apart is how the numbers *sequence*: the lines of a
listing or a list count up by one every line or two, while section headings count up
sparsely, with paragraphs between them.  Sections of one line of text each count up every
two lines too; what sets them apart is how their lines look: set apart as headings, where a
listing's numbered lines and a list's items are not.

``numbered_runs`` follows every number to its successor (``n`` → ``n + 1`` under the same
prefix, ``3.4`` → ``3.5``, roman numbers apart) and keeps the chains whose steps are dense;
``numbered_sequences`` gives the others, the numbers of sections.  Everything here is the
document's own evidence: no producer, font or file name is consulted.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from hiqa.formats.pdf.lines import BODY, Line

_NUMBER = re.compile(r"^\(?((?:\d{1,4}\.)*)(\d{1,5})[.)]?\s+\S")
_ROMAN_NUMBER = re.compile(r"^([IVXLC]{1,6})\.\s+\S")
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}

LIST_STEP = 1.0
"""Lines from one number to the next (median) of a chain that is a listing, a list or contents
rows however its lines look: a number on every line."""

DENSE_STEP = 2.0
"""Lines from one number of a listing or list to the next (median): a program line, or an
item that wraps once.  Sections mostly have a paragraph between their numbers; sections of a
single line of text each step by two as well ("4.3.1 Meaning" / a line / "4.3.2 Example"), and
their chain is told from a list's by its lines: every one set apart as a heading."""

MIN_RUN = 3
"""Numbers in a row before a chain counts as a listing, a list or a sequence of sections."""


@dataclass(slots=True)
class _Chain:
    members: list[int] = field(default_factory=list)  # line indices

    def dense(self, heading: Callable[[int], bool]) -> bool:
        """Numbered every line, or every line or two and not every member a ``heading``."""
        steps = [b - a for a, b in pairwise(self.members)]
        if not steps:
            return False
        step = statistics.median(steps)
        return step <= LIST_STEP or (
            step <= DENSE_STEP and not all(heading(i) for i in self.members))


def numbered_runs(lines: Sequence[Line], heading: Callable[[int], bool]) -> set[int]:
    """Indices of lines that belong to a dense run of consecutively numbered lines (a listing's
    line numbers, a numbered list, contents rows): never headings.  ``heading`` tells whether
    a line is set apart as a heading over text.  A listing's line that wraps, or an item's,
    goes on in the lines before the next number, in its face and size whatever their weight
    (listings' "↙" continuations: a wrapped "immediate\\write 18 }" set in a keyword's bold):
    those belong to the run too.  A section heading between two lines of a listing whose
    numbers run on through the sections is set in another face or size."""
    out: set[int] = set()
    for chain in _chains(lines):
        if chain.dense(heading):
            out.update(chain.members)
            out.update(i for a, b in pairwise(chain.members) if b - a <= WRAPPED + 1
                       for i in range(a + 1, b) if _wraps(lines[a], lines[i]))
    return out


def _wraps(line: Line, after: Line) -> bool:
    return after.mono == line.mono and abs(after.size - line.size) <= 1.0


WRAPPED = 2
"""Lines a numbered program line or list item may wrap onto before the next number."""


def numbered_sequences(lines: Sequence[Line], heading: Callable[[int], bool]) -> list[list[int]]:
    """Runs of consecutive numbers that are not dense ("I." … "II." … "III.", text between
    them; sections of one line each): the numbers a document gives its sections, whatever
    their type."""
    return [chain.members for chain in _chains(lines) if not chain.dense(heading)]


def _chains(lines: Sequence[Line]) -> list[_Chain]:
    """Chains of ``MIN_RUN`` or more lines numbered one after the other (``n`` → ``n + 1``
    under the same prefix, ``3.4`` → ``3.5``; roman numbers apart).

    A number continues the chain that reached its predecessor; where several did (a list's
    "2" and the section "2" before it), the one whose last line is set in the same style,
    then the latest: a section's number follows its section, an item's its item."""
    chains: list[_Chain] = []
    waiting: dict[tuple[str, int], list[_Chain]] = defaultdict(list)
    for i, ln in enumerate(lines):
        if ln.role != BODY:
            continue
        number = _number(ln.text)
        if number is None:
            continue
        prefix, n = number
        chain = _successor(waiting[(prefix, n - 1)], lines, ln)
        if chain is None:
            chain = _Chain()
            chains.append(chain)
        chain.members.append(i)
        waiting[(prefix, n)].append(chain)
    return [chain for chain in chains if len(chain.members) >= MIN_RUN]


def _number(text: str) -> tuple[str, int] | None:
    """A line's leading number as (prefix, last component); roman numbers under "R"."""
    m = _NUMBER.match(text)
    if m:
        return m.group(1), int(m.group(2))
    m = _ROMAN_NUMBER.match(text)
    if m:
        value = _roman(m.group(1))
        return ("R", value) if value else None
    return None


def _roman(numeral: str) -> int:
    """The value of a roman numeral; 0 for a malformed one ("IIV")."""
    total = 0
    for a, b in pairwise([*numeral, ""]):
        v = _ROMAN[a]
        total += -v if b and _ROMAN[b] > v else v
    return total if total > 0 and _to_roman(total) == numeral else 0


def _to_roman(n: int) -> str:
    out = ""
    for value, sym in ((100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"),
                       (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out += sym
            n -= value
    return out


def _successor(candidates: list[_Chain], lines: Sequence[Line], ln: Line) -> _Chain | None:
    """The chain ``ln`` continues, taken off ``candidates``; None to start a new one.  A line
    in another style may go on with a chain when it keeps the weight (a listing's "7 {", its
    small number pulling the mean size down) or the size (a listing's line that opens with a
    bold keyword), not when it changes both: "4 \\RequirePackage…", the first numbered line of
    a listing whose "3" is blank, is no sequel to the bold, larger "3 The Implementation"."""
    near = [c for c in candidates if _related(lines[c.members[-1]], ln)]
    if not near:
        return None
    same = [c for c in near if _alike(lines[c.members[-1]], ln)]
    chain = max(same or near, key=lambda c: c.members[-1])
    candidates.remove(chain)
    return chain


def _alike(a: Line, b: Line) -> bool:
    """Set in one style: the same weight and face, sizes within a point (a line's mean size
    moves with the small capitals or symbols it holds: "8 Replacing Tags in EPS or PS Files"
    averages 14.2 pt beside its sibling's 14.3)."""
    return a.bold == b.bold and a.mono == b.mono and abs(a.size - b.size) <= 1.0


def _related(a: Line, b: Line) -> bool:
    return a.bold == b.bold or abs(a.size - b.size) <= 1.0
