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
picker weighs them, a line item's conventional names reaching its printed label: "COGS" the row
"Cost of sales") and the share of the label they cover; the columns by the years the question
names (a range with the years inside it), else the first (the latest period, as statements
print them).  Nothing is computed here: the cells are quoted as printed, and a measure the
question asks for is computed from them, its formula shown, by ``hiqa.answer.calc``.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hiqa.formats.statements import families_of, family, header_only
from hiqa.index.terms import terms
from hiqa.model import Segment, segment_pages_label

_NUMBER = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?%?|—|–")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
# years heading a line's columns before its first row: "2017 2018 2019 Net income …", as
# dates ("December 28, 2019 December 29, 2018 Net sales $ 24,977 …"), after header words
# ("(In Millions, Except per Share Data) Fiscal Year 2019 2018 2017 Net sales $ 16,865.2 …")
_LEADING_YEARS = re.compile(
    r"((?:(?:[A-Z][a-z]{2,8}\.?\s+\d{1,2},\s+)?(?:19|20)\d\d\s+){2,})(?=[A-Za-z(])")
_QUESTION_YEAR = re.compile(r"(?<![\d.])(?:FY\s?'?)?((?:19|20)\d\d|(?<=FY)\d\d)(?![\d.])",
                            re.IGNORECASE)
MAX_FIGURES = 4
"""Rows quoted: a ratio's terms (DPO: accounts payable, cost of sales, inventories) fit."""
_RANGE = re.compile(r"\b(?:from|between)\s+(?:FY\s?'?)?((?:19|20)\d\d)\s+(?:to|and|through)\s+"
                    r"(?:FY\s?'?)?((?:19|20)\d\d)\b|\b(?:FY\s?'?)?((?:19|20)\d\d)\s*[-–]\s*"
                    r"(?:FY\s?'?)?((?:19|20)\d\d)\b", re.IGNORECASE)
_LINE_ITEMS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(asked), re.compile(printed, re.IGNORECASE)) for asked, printed in (
        (r"\b(?:revenues?|net sales)\b",
         r"^(?:total )?(?:net )?(?:revenues?|sales)(?:,? net)?$"),
        (r"\b(?:cogs|cost of (?:goods sold|sales|revenues?|products sold))\b",
         r"^(?:total )?cost of (?:goods sold|sales|revenues?|products sold)\b"),
        (r"\binventor(?:y|ies)\b", r"^(?:merchandise )?inventor(?:y|ies)\b"),
        (r"\b(?:pp\s?&\s?e|ppne|fixed assets?|property,? plant,? and equipment)\b",
         r"^(?:property,? (?:plant,? )?and equipment|premises and equipment),? net\b"),
        (r"\b(?:capex|capital expenditures?)\b",
         (r"^(?:purchases? of|payments for|additions to|expenditures for) property\b"
          r"|^capital expenditures\b")),
        ((r"\b(?:cash (?:flows? )?(?:from|provided by) (?:operations|operating activities)"
         r"|operating cash flows?)\b"),
         (r"^net cash (?:provided by|from|\(used in\)|provided by \(used in\)) operating "
          r"activities\b")),
        (r"\b(?:payables?|dpo)\b", r"^(?:accounts|trade) payables?\b"),
        (r"\b(?:receivables?|dso)\b", r"^(?:(?:accounts|trade) )?receivables?\b"),
        (r"\b(?:d\s?&\s?a|depreciation(?:,| and) (?:depletion and )?amortization)\b",
         r"^depreciation(?:,| and) (?:depletion and )?amortization\b"),
    ))
"""The names a question gives a line item and the labels statements print for it, by
accounting convention ("COGS" is printed "Cost of sales", "revenue" "Net sales", "PP&E"
"Property, plant and equipment, net"): a question's words reach the row that holds them."""
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
    scale: float = 0.0
    """What one unit of its figures is worth, as its statement says ("(In thousands)": 1,000;
    "(in millions)": 1,000,000), 0 when it says nothing."""


@dataclass(frozen=True)
class Figure:
    """A row's cells for the columns asked (each year the question names, else the latest):
    its label, the columns' years, the values, where it stands."""

    row: Row
    columns: tuple[int, ...]

    def text(self) -> str:
        where = ", ".join(x for x in (self.row.heading, self.row.pages) if x)
        label = f"{self.row.group}: {self.row.label}" if self.row.group else self.row.label
        cells = []
        for c in self.columns:
            year = self.row.years[c] if c < len(self.row.years) else ""
            cells.append(f"{year}: {self.row.values[c]}" if year else self.row.values[c])
        said = f"{label}, {'; '.join(cells)}" if self.row.years else f"{label}: {cells[0]}"
        return said + (f" — {where}" if where else "")

    def in_unit(self, unit: str) -> str:
        """The cells in the unit a question asks for ("in USD millions") when the statement
        prints them in another ("(In thousands)"): "= $381.6 million", else ""."""
        factor = UNITS.get(unit, 0.0)
        if not factor or not self.row.scale or factor == self.row.scale:
            return ""
        out = []
        for c in self.columns:
            try:
                value = number(self.row.values[c]) * self.row.scale / factor
            except ValueError:
                return ""
            digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
            out.append(f"${value:,.{digits}f} {unit[:-1]}")
        return "= " + "; ".join(out)


def number(cell: str) -> float:
    """A statement cell's value: "(1,577)" is -1577, a dash is 0."""
    text = cell.strip().replace("$", "").replace(",", "").replace(" ", "").rstrip("%")
    if text in {"—", "–", "-", ""}:
        return 0.0
    negative = text.startswith("(") and text.endswith(")")
    return -float(text.strip("()")) if negative else float(text.strip("()"))


UNITS = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_SCALE = re.compile(r"\b(?:in|dollars\s+in|amounts\s+in)\s+(thousands|millions|billions)\b",
                    re.IGNORECASE)
_ASKED_UNIT = re.compile(r"\bin\s+(?:usd|us\$|\$|dollars)\s*(thousands|millions|billions)\b"
                         r"|\b(?:usd|us\$)\s*(thousands|millions|billions)\b", re.IGNORECASE)


def asked_unit(question: str) -> str:
    """The unit a question asks its figure in ("Answer in USD millions" -> "millions")."""
    m = _ASKED_UNIT.search(question)
    return (m.group(1) or m.group(2)).casefold() if m else ""


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
    label = re.sub(r"(?:\s*(?:…|\.{2,}))+$", "", rest).strip(" :|$")  # dot leaders go
    if not values or not re.search(r"[A-Za-z]{3}", label) or _YEAR.fullmatch(values[0]):
        return None
    return label, values


def _years(line: str) -> tuple[str, ...]:
    """The years a header line prints for its columns (two or more), else ()."""
    years = tuple(_YEAR.findall(line))
    label_free = _YEAR.sub("", line)
    return years if len(years) >= 2 and len(re.findall(r"\d", label_free)) <= 4 else ()


def _stacked(text: str) -> list[str]:
    """``text``'s lines with a column header printed a line per date joined into one line of
    its years: "August 29," / "2021" / "August 30," / "2020" (or "Fiscal" / "2015 Fiscal" /
    "2014") read as "2021 2020".  A run of lines that hold nothing but dates and header words
    ("52 Weeks Ended", "(amounts in millions)"), with two years or more, is joined wherever it
    ends: at the rows, at a table, or at the end of a piece whose table is the next piece; a
    year that begins the line after the run is the header's last ("2015 Cash flows from …")."""
    out: list[str] = []
    run: list[int] = []  # positions in ``out`` of the header-like lines since the last other

    def join() -> None:
        years = [y for i in run for y in _YEAR.findall(out[i])]
        if len(years) >= 2 and len(set(years)) == len(years):
            out[run[0]] = " ".join(years)
            for i in run[1:]:
                out[i] = ""
        run.clear()

    for line in text.splitlines():
        if header_only(line) and not _years(line):
            run.append(len(out))
        elif line.strip():
            last = _LAST_YEAR.match(line) if run else None
            if last:  # the header's last year begins the first row's line ("2015 Cash flows …")
                out.append(last.group(1))
                run.append(len(out) - 1)
                line = line[last.end():]
            join()
        out.append(line)
    join()
    return out


_LAST_YEAR = re.compile(r"^\s*((?:19|20)\d\d)\s+(?=[A-Za-z(])")


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
        scale = next((UNITS[m.group(1).casefold()] for p in reversed(seg.section_path)
                      if (m := _SCALE.search(p))), 0.0)
        for line in _stacked(seg.text):
            if (unit := _SCALE.search(line)) and not _split(line):
                scale = UNITS[unit.group(1).casefold()]
            found = _years(line)
            if found:
                years = found
                continue
            lead = _leading_years(line)
            if lead:  # "2017 2018 2019 Net income $ 3,033 …": the header joined to a row
                years = tuple(_YEAR.findall(lead.group(1)))
                if unit := _SCALE.search(line[:lead.start()]):
                    scale = UNITS[unit.group(1).casefold()]
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
                           segment_pages_label(seg), group, scale))
    return out


def column_header(text: str) -> str:
    """The first line of ``text`` that heads a statement's columns with their years ("December
    31, 2016 2017", or a date per line: ``_stacked``), "" when none does."""
    for line in _stacked(text):
        if _years(line):
            return line.strip()
        lead = _leading_years(line)
        if lead:
            return lead.group(1).strip()
    return ""


def _leading_years(line: str) -> re.Match[str] | None:
    """The years heading ``line``'s columns before its first row (``_LEADING_YEARS``), only
    header words before them."""
    m = _LEADING_YEARS.search(line)
    if m is None or (line[:m.start()].strip() and not header_only(line[:m.start()])):
        return None
    return m


HEADER_LOOKBACK = 8
"""Sections before a statement's rows searched for its column header (its row groups)."""


def with_headers(blocks: Sequence[Segment],
                 earlier: Callable[[Segment, int], Sequence[Segment]]) -> list[Segment]:
    """``blocks`` with ``headed`` applied to those whose statement rows have no column header;
    ``earlier(block, n)`` gives the ``n`` sections before a block, nearest first."""
    return [headed(b, earlier(b, HEADER_LOOKBACK)) if _headless(b) else b for b in blocks]


def holds_rows(block: Segment) -> bool:
    """Whether some line of ``block`` reads as a statement row (a label and its figures)."""
    return any(_split(line) for line in block.text.splitlines())


def _headless(block: Segment) -> bool:
    return not column_header(block.text) and any(_split(line) for line in block.text.splitlines())


def _only_rows(text: str) -> bool:
    """Whether every line of ``text`` is a statement row, a row group's label ("Current
    liabilities:", "LIABILITIES AND EQUITY") or a table rule: a section that continues a
    statement, as a section per row group does."""
    for line in filter(str.strip, text.splitlines()):
        cells = " ".join(c for c in _cells(line) if c) if _cells(line) else line.strip()
        if not cells or re.fullmatch(r"[-:| ]*", cells) or _split(line):
            continue
        if len(cells.split()) <= 8 and (cells.endswith(":") or cells.isupper()
                                         or cells[:1].isupper() and not cells.endswith(".")):
            continue
        return False
    return True


def headed(block: Segment, earlier: Sequence[Segment]) -> Segment:
    """``block`` with its statement's column header above it when its rows have none: a
    statement set as lines becomes a section per row group ("Current liabilities:"), and only
    the first holds the years; ``earlier`` are the sections before it (nearest first).  Inside
    a statement's path, those inside the same statement are searched for the header; outside
    (a row group the reader made a sibling of the statement's caption: "Liabilities and
    Stockholders' Equity" beside "Consolidated Balance Sheets"), only through a run of sections
    that are all rows, up to one inside a statement.  A header the reader set as the rows' own
    heading is taken from their path.  Without it the rows name no year and no figure is quoted
    from them."""
    if not _headless(block):
        return block
    own = next((h for h in map(column_header, reversed(block.path[1:])) if h), "")
    if own:  # a header row the reader took for the rows' heading ("In millions 2018 2017")
        return replace(block, text=f"{own}\n\n{block.text}")
    inside = next((k for k, p in enumerate(block.path) if family(p) not in (None, "notes")), None)
    for seg in earlier:
        if inside is not None and tuple(seg.path[:inside + 1]) != tuple(block.path[:inside + 1]):
            break
        header = column_header(seg.text)
        if header and (inside is not None or families_of(seg.path)):
            return replace(block, text=f"{header}\n\n{block.text}")
        if inside is None and not _only_rows(seg.text):
            break
    return block


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


_IRREGULAR = {"paid": "pay", "sold": "sell", "held": "hold", "bought": "buy", "spent": "spend",
              "lent": "lend", "made": "make", "won": "win", "lost": "lose"}
"""Past forms the stemmer leaves apart from their verb: a statement prints "Dividends paid",
the question asks what the company "paid out" or "pays" in dividends."""


def _stems(text: str) -> set[str]:
    return {_IRREGULAR.get(t, t) for t in terms(text) if t.isalpha() and len(t) > 1}


def _named_items(question: str) -> list[re.Pattern[str]]:
    """The printed-label patterns of the line items a question names by another name
    (``_LINE_ITEMS``)."""
    low = question.casefold()
    return [printed for asked, printed in _LINE_ITEMS if asked.search(low)]


def printed_words(item: str) -> str:
    """``item`` with the words statements print for it (``_LINE_ITEMS``), for a search of
    the rows that hold it: "PP&E" shares no word with "Property and equipment, net"."""
    words = [w for p in _named_items(item) for w in re.findall(r"[a-z]{3,}", p.pattern)]
    return " ".join([item, *dict.fromkeys(words)])


def names_row(item: str, row: Row) -> bool:
    """Whether a line item as a formula names it ("total current assets") is ``row``: its
    label printed by accounting convention (``_LINE_ITEMS``: "PP&E" is "Property and
    equipment, net") or every word of it in the row's label and group.  "Total assets" is no
    "total current assets": an operand is that row or none, never the nearest row."""
    if any(p.search(row.label) for p in _named_items(item)):
        return True
    words = _stems(item)
    return bool(words) and words <= _stems(row.label) | _stems(row.group)


def asked_years(question: str) -> list[str]:
    """The years a question names, in its order, a range ("from FY2016 to FY2018", "FY2019 -
    FY2021") with the years inside it: the columns a ratio or an average needs."""
    wanted = [y if len(y) == 4 else f"20{y}" for y in _QUESTION_YEAR.findall(question)]
    for m in _RANGE.finditer(question):
        first, last = sorted(int(y) for y in m.groups() if y)
        if last - first <= 10:
            wanted += [str(y) for y in range(first, last + 1)]
    return list(dict.fromkeys(wanted))


def pick_figures(question: str, segments: Sequence[Segment],
                 limit: int = MAX_FIGURES) -> list[Figure]:
    """The cells that answer ``question``: the rows whose label the question spells most of
    (by the rarity of the shared words among the rows), their figure for the year it names
    (or their first column), best first."""
    asked = _stems(question)
    named = _named_items(question)
    found = rows(segments)
    if not asked or not found:
        return []
    bags = [_stems(r.label) for r in found]
    groups = [_stems(r.group) for r in found]
    idf = {t: math.log(1 + len(bags) / (1 + sum(t in b for b in bags))) for t in asked}
    wanted = asked_years(question)
    scored: list[tuple[float, float, int]] = []  # (cover, weight, row), earlier rows first
    for i, bag in enumerate(bags):
        if any(p.search(found[i].label) for p in named):  # "COGS" names "Cost of sales"
            scored.append((1.0, sum(idf[t] for t in asked & bag) + 1.0, i))
            continue
        shared = asked & bag
        if len(bag) == 1 and sum(bag <= other for other in bags) > MAX_ONE_WORD_ROWS:
            continue  # "Total", "Net": a word that labels rows everywhere names no line item
        if bag and len(shared) / len(bag) >= MIN_COVER:
            context = sum(idf[t] for t in asked & groups[i] - bag)
            scored.append((len(shared) / len(bag), sum(idf[t] for t in shared) + context, i))
    figures: list[Figure] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for *_, i in sorted(scored, key=lambda s: (-s[0], -s[1], s[2])):
        row = found[i]
        columns = tuple(c for c in sorted(row.years.index(y) for y in wanted if y in row.years)
                        if c < len(row.values)) or (0,)
        # the same row twice (overlapping blocks) once; two filings' equal rows are two rows
        key = (segments[row.block - 1].doc_id, row.label.casefold(),
               tuple(row.values[c] for c in columns))
        if key in seen:
            continue
        seen.add(key)
        figures.append(Figure(row, columns))
        if len(figures) >= limit:
            break
    return figures
