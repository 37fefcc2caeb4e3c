"""Figures with their row and column: what an extractive answer quotes from a statement (#46).

A financial statement is a grid of labelled figures: a row label ("Total current assets"), a
header of periods ("2019  2018", "May 31, 2019") and numbers with their signs ("(1,577)" is
negative).  The extractive answer never quotes a table as prose, so without this module a
question about a line item got the sentences around the statement and never the figure.

Rows are read from the segment text in either form a statement takes after formatting: a
Markdown table row (``| Total current assets | 16,525 |  | 15,134 |``) or a line of a label and
its numbers (``Revenues $ 39,117 $ 36,397 $ 34,350``), below a column header: the nearest line
above with two or more years, which names each column's figure.  A line of numbers under no
such header (an option's default, a version list) is not a statement row.  A row is chosen
by the question's words it holds (weighted by their rarity among the rows, as the sentence
picker weighs them) and the share of the label they cover, the column by the year the question names, else the first (the latest
period, as statements print them).  Nothing is computed: a ratio is answered with the labelled
cells it needs, never with a value this module made up.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hiqa.index.terms import terms
from hiqa.model import Segment, segment_pages_label

_NUMBER = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?%?|—|–")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_LEADING_YEARS = re.compile(r"^\s*((?:(?:19|20)\d\d\s+){2,})(?=[A-Za-z(])")
_QUESTION_YEAR = re.compile(r"(?<![\d.])(?:FY\s?'?)?((?:19|20)\d\d|(?<=FY)\d\d)(?![\d.])",
                            re.IGNORECASE)
MAX_FIGURES = 3
MAX_ONE_WORD_ROWS = 2
"""A one-word label is a line item ("Inventories", "Goodwill") when at most this many rows of
the context are labelled by that word alone or hold it; "Total" holds many."""
MIN_COVER = 0.67
"""A row is quoted only when the question holds at least this share of its label's words (after
stemming): "Total current assets" asked as "total current assets" or "current assets", never
for "total" alone."""


@dataclass(frozen=True)
class Row:
    """A labelled row of figures, with the years heading its columns (when printed)."""

    label: str
    values: tuple[str, ...]
    years: tuple[str, ...]
    block: int
    heading: str
    pages: str
    group: str = ""
    """The label of the rows' group above it ("Earnings per common share" over "Diluted")."""


@dataclass(frozen=True)
class Figure:
    """One cell: its row label, its column's year, its value, where it stands."""

    row: Row
    column: int

    def text(self) -> str:
        year = self.row.years[self.column] if self.column < len(self.row.years) else ""
        where = ", ".join(x for x in (self.row.heading, self.row.pages) if x)
        label = f"{self.row.group}: {self.row.label}" if self.row.group else self.row.label
        said = f"{label}, {year}: " if year else f"{label}: "
        return f"{said}{self.row.values[self.column]}" + (f" — {where}" if where else "")


def _cells(line: str) -> list[str]:
    if line.lstrip().startswith("|"):
        return [c.strip() for c in line.strip().strip("|").split("|")]
    return []


def _split(line: str) -> tuple[str, list[str]] | None:
    """``(label, values)`` of a statement row, None for any other line."""
    cells = _cells(line)
    text = " ".join(c for c in cells if c) if cells else line.strip()
    if re.fullmatch(r"[-:| ]*", text):
        return None
    values: list[str] = []
    rest = text
    while (m := re.search(r"(?:\$\s*)?(" + _NUMBER.pattern + r")\s*$", rest)):
        values.insert(0, m.group(1).strip())
        rest = rest[: m.start()].rstrip(" $")
    label = rest.strip(" :|$")
    if not values or not re.search(r"[A-Za-z]{3}", label) or _YEAR.fullmatch(values[0]):
        return None
    return label, values


def _years(line: str) -> tuple[str, ...]:
    """The years a header line prints for its columns (two or more), else ()."""
    years = tuple(_YEAR.findall(line))
    label_free = _YEAR.sub("", line)
    return years if len(years) >= 2 and len(re.findall(r"\d", label_free)) <= 4 else ()


def _caption(path: Sequence[str]) -> str:
    """The statement a segment's rows belong to: the deepest heading of its path that is not a
    units note ("(in millions, except per share data)") or a row group ("Current assets:")."""
    named = [p for p in path if not p.startswith("(") and not p.rstrip().endswith(":")]
    return named[-1] if named else ""


def rows(segments: Sequence[Segment]) -> list[Row]:
    """Every statement row of the context blocks (``block`` 1-based), with its column years."""
    out = []
    for block, seg in enumerate(segments, start=1):
        years: tuple[str, ...] = ()
        heading = _caption(seg.section_path)
        group = ""
        for line in seg.text.splitlines():
            found = _years(line)
            if found:
                years = found
                continue
            lead = _LEADING_YEARS.match(line)
            if lead:  # "2017 2018 2019 Net income $ 3,033 …": the header joined to a row
                years = tuple(_YEAR.findall(lead.group(1)))
                line = line[lead.end():]
            split = _split(line)
            text = " ".join(c for c in _cells(line) if c) or line.strip()
            if split is None:
                if text.endswith(":") and len(text.split()) <= 8 and text[:1].isupper():
                    group = text.rstrip(":").strip()  # "Earnings per common share:"
                elif (text.isupper() and not _cells(line) and len(text.split()) <= 8
                      and not re.search(r"\d", text)):
                    heading, group = text.title(), ""  # a statement's own caption
                continue
            if not years:
                continue  # no period header above: a line with numbers, not a statement row
            label, values = split
            if len(values) > len(years) > 0:
                values = values[-len(years):]  # a note mark or a stray number before them
            if group and label.casefold().startswith("total"):
                group = ""
            out.append(Row(label, tuple(values), years, block, heading,
                           segment_pages_label(seg), group))
    return out


def rows_table(segment: Segment) -> str:
    """The statement rows of a block printed as lines of text ("Net income $ 596 $ 2,371 $
    3,033" under "2015 2016 2017"), as a Markdown table of label and one column per year; ""
    when it has none or they already stand in a table.  An LLM given the lines alone has to
    count columns to know which year a figure is for, and miscounts."""
    if any(_cells(line) for line in segment.text.splitlines()):
        return ""
    found = rows([segment])
    if not found:
        return ""
    years = max((r.years for r in found), key=len)
    lines = [f"| {' | '.join(('row', *years))} |", f"|{'---|' * (len(years) + 1)}"]
    for r in found:
        if r.years != years:
            continue  # under another header: its columns are other years
        values = ("",) * (len(years) - len(r.values)) + r.values[-len(years):]
        label = f"{r.group}: {r.label}" if r.group else r.label
        lines.append(f"| {' | '.join((label, *values))} |")
    return "\n".join(lines)


def _stems(text: str) -> set[str]:
    return {t for t in terms(text) if t.isalpha() and len(t) > 1}


def pick_figures(question: str, segments: Sequence[Segment],
                 limit: int = MAX_FIGURES) -> list[Figure]:
    """The cells that answer ``question``: the rows whose label the question spells most of
    (by the rarity of the shared words among the rows), their figure for the year it names
    (or their first column), best first."""
    asked = _stems(question)
    found = rows(segments)
    if not asked or not found:
        return []
    bags = [_stems(r.label) for r in found]
    groups = [_stems(r.group) for r in found]
    idf = {t: math.log(1 + len(bags) / (1 + sum(t in b for b in bags))) for t in asked}
    wanted = [y if len(y) == 4 else f"20{y}" for y in _QUESTION_YEAR.findall(question)]
    scored: list[tuple[float, float, int]] = []  # (cover, weight, row), earlier rows first
    for i, bag in enumerate(bags):
        shared = asked & bag
        if len(bag) == 1 and sum(bag <= other for other in bags) > MAX_ONE_WORD_ROWS:
            continue  # "Total", "Net": a word that labels rows everywhere names no line item
        if bag and len(shared) / len(bag) >= MIN_COVER:
            context = sum(idf[t] for t in asked & groups[i] - bag)
            scored.append((len(shared) / len(bag), sum(idf[t] for t in shared) + context, i))
    figures: list[Figure] = []
    seen: set[tuple[str, str]] = set()
    for *_, i in sorted(scored, key=lambda s: (-s[0], -s[1], s[2])):
        row = found[i]
        column = next((row.years.index(y) for y in wanted if y in row.years), 0)
        if column >= len(row.values):
            continue
        key = (row.label.casefold(), row.values[column])
        if key in seen:
            continue
        seen.add(key)
        figures.append(Figure(row, column))
        if len(figures) >= limit:
            break
    return figures
