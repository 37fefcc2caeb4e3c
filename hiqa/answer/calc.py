"""A measure computed from the statement cells it needs, its formula shown (#46 item 4).

Analysts ask for measures, not cells: "What is Amazon's FY2017 days payable outstanding? DPO is
defined as: 365 * (average accounts payable between FY2016 and FY2017) / (FY2017 COGS + change
in inventory between FY2016 and FY2017)."  The figures module finds the cells; this module does
the arithmetic the question asks for, and only that:

* a formula the question states ("X is defined as: …", "Define X as …"), with its words for
  operators ("divided by", "less", "plus"), "average X between FY_a and FY_b", "change in X
  between …", a year before a line item ("FY2017 COGS"), and other measures it defines (CCC =
  DIO + DSO − DPO, each defined after it);
* a few measures analysts name without defining, by their textbook formula: a change or
  growth rate from one year to another, a CAGR, a margin or a share of revenue (averaged over
  the years asked).

Every operand is a cell of a statement row in the context blocks (``figures.rows``), chosen
by the names analysts give line items (``figures._LINE_ITEMS``); when one is missing nothing is
computed (the cells found are still quoted by the figures).  The answer shows the formula with
each cell's label, year and block, so the number can be checked, never taken on trust.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hiqa.answer.figures import (
    Figure,
    asked_years,
    holds_rows,
    names_row,
    number,
    pick_figures,
    printed_words,
    rows,
    with_headers,
)
from hiqa.formats.statements import families_of, innermost
from hiqa.index.parts import Parts
from hiqa.model import Segment
from hiqa.retrieve import routes

_DEFINED = re.compile(
    r"(?:^|(?<=[.?!:]\s))(?:define\s+(?P<a>[^.?!]{1,60}?)\s+as:?|(?P<b>[A-Za-z][^.?!]{0,60}?)"
    r"\s+(?:here\s+)?(?:is|are)\s+defined\s+as:?)\s*(?P<expr>.+?)(?=\.\s|\.?$|\?\s)",
    re.IGNORECASE | re.DOTALL)
_WORD_OPS = ((r"\bdivided\s+by\b", " / "), (r"\b(?:less|minus)\b", " - "),
             (r"\bplus\b", " + "), (r"\b(?:times|multiplied\s+by)\b", " * "))
_FY = r"(?:FY\s?'?)?((?:19|20)\d\d)"
_AVERAGE = re.compile(rf"^average\s+(?:of\s+)?(.+?)\s+between\s+{_FY}\s+and\s+{_FY}$", re.IGNORECASE)
_CHANGE = re.compile(rf"^change\s+in\s+(.+?)\s+between\s+{_FY}\s+and\s+{_FY}$", re.IGNORECASE)
_YEAR_BEFORE = re.compile(rf"^{_FY}\s+(.+)$", re.IGNORECASE)
_YEAR_AFTER = re.compile(rf"^(.+?)\s+(?:in|for|of)\s+{_FY}$", re.IGNORECASE)
_GROWTH = re.compile(
    rf"(?:change|growth)(?:\s+rate)?\s+in\s+(?:unadjusted\s+)?(?P<item>[a-z][a-z &,-]+?)\s+from\s+"
    rf"{_FY}\s+to\s+{_FY}|{_FY}\s*[-–]\s*{_FY}\s+(?:total\s+)?(?P<item2>[a-z][a-z &,-]+?)\s+"
    r"growth(?:\s+rate)?", re.IGNORECASE)
_CAGR = re.compile(rf"(?P<item>[a-z][a-z &,-]+?)\s+CAGR\s+from\s+{_FY}\s+to\s+{_FY}", re.IGNORECASE)
_SHARE = re.compile(
    r"(?:(?P<avg>\w+)[\s-]year\s+average\s+(?:of\s+)?)?(?:unadjusted\s+)?"
    r"(?P<item>[a-z][a-z &,-]+?)\s+(?:%\s*margin|as\s+a\s+%\s+of\s+(?P<base>[a-z][a-z ]+?))\b",
    re.IGNORECASE)
_EBITDA = re.compile(r"\bEBITDA\b")
_DECIMALS = re.compile(r"round\w*\s+(?:your\s+answer\s+)?to\s+(\w+)\s+decimal", re.IGNORECASE)
_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}


class Missing(LookupError):
    """An operand with no cell in the context: nothing is computed."""

    def __init__(self, item: str, year: str = "", balance: bool = False) -> None:
        super().__init__(f"{item} {year}".strip())
        self.item, self.year, self.balance = item, year, balance


@dataclass(frozen=True)
class Operand:
    """One cell a computation read: what the formula calls it, the row and year, the value."""

    asked: str
    figure: Figure
    year: str
    value: float

    def text(self) -> str:
        row = self.figure.row
        label = f"{row.group}: {row.label}" if row.group else row.label
        return f"{label} {self.year}: {row.values[row.years.index(self.year)]} [{row.block}]"


@dataclass(frozen=True)
class Computation:
    """A measure's value, how it was computed and from which cells."""

    name: str
    value: float
    percent: bool
    decimals: int
    formula: str
    operands: tuple[Operand, ...]

    def shown(self) -> str:
        """The value as the question asks it rounded, with its thousands separated."""
        return f"{self.value:,.{self.decimals}f}" + ("%" if self.percent else "")

    def text(self) -> str:
        cells = "; ".join(dict.fromkeys(o.text() for o in self.operands))
        return (f"{self.name}: {self.shown()} — computed as {self.formula}, from {cells}")


class _Cells:
    """The operands' cells, looked up in the context blocks by the names a formula uses."""

    def __init__(self, segments: Sequence[Segment], doc_id: str, strict: bool = True) -> None:
        self.segments, self.doc_id, self.strict = segments, doc_id, strict
        self.used: list[Operand] = []
        self.missing: Missing | None = None

    def value(self, item: str, year: str, balance: bool = False) -> float:
        """The cell of ``item``'s row for ``year``, in this document's blocks only: a measure
        is never computed from two filings' figures; with ``strict``, from a financial
        statement's rows only.  ``balance``: the item's balance at the year's end (an average
        or a change between two years), read off the balance sheet (with ``strict``, only
        there), never off the cash-flow statement ("Inventories" there is a change)."""
        item = re.sub(r"^the\s+", "", item.strip(), flags=re.IGNORECASE)
        if (formula := TEXTBOOK.get(item.casefold())) is not None:
            return _Formula(_tokens(formula), lambda p: self.value(p, year, balance)).parse()
        figures = [f for f in _cells_of(item, year, self.segments)
                   if self.segments[f.row.block - 1].doc_id == self.doc_id
                   and (not self.strict or _in_statement(self.segments[f.row.block - 1]))]
        if balance:  # a cash-flow "Inventories" line is a change, never a balance
            def statement(f: Figure) -> str | None:
                return innermost(self.segments[f.row.block - 1].path)

            figures = [f for f in figures if statement(f) != "cash flows"
                       and (not self.strict or statement(f) == "balance sheet")]
            figures.sort(key=lambda f: statement(f) != "balance sheet")
        for figure in figures:
            column = figure.row.years.index(year) if year in figure.row.years else len(
                figure.row.values)
            if column < len(figure.row.values):
                value = number(figure.row.values[column])
                self.used.append(Operand(item, figure, year, value))
                return value
        self.missing = Missing(item, year, balance)
        raise self.missing


TEXTBOOK = {"ebitda": "operating income + depreciation and amortization",
            "working capital": "total current assets - total current liabilities",
            "current ratio": "total current assets / total current liabilities",
            "working capital ratio": "total current assets / total current liabilities"}
"""Measures analysts name without defining, by the formula of the statements' own lines
(unadjusted EBITDA: operating income plus the cash-flow statement's D&A; working capital:
current assets less current liabilities).  A question's own definition always wins.  Not
here: measures of cash-flow lines (a payout or retention ratio), which filers print as outflows
in parentheses, signed as no textbook writes them."""
_TEXTBOOK_NAME = re.compile(r"\b(?:" + "|".join(sorted(
    (re.escape(n) for n in TEXTBOOK if n != "ebitda"), key=len, reverse=True)) + r")\b",
    re.IGNORECASE)


def _in_statement(block: Segment) -> bool:
    """Whether ``block`` is inside a financial statement (not a note, not the discussion)."""
    return innermost(block.path) not in (None, "notes")


def _cells_of(item: str, year: str, segments: Sequence[Segment]) -> list[Figure]:
    """The rows of ``segments`` that are ``item`` (``figures.names_row``), best first."""
    return [f for f in pick_figures(f"{item} {year}", segments, limit=CANDIDATE_ROWS)
            if names_row(item, f.row)]


CANDIDATE_ROWS = 24
"""Rows ranked for one operand before those that are not its line item are set aside."""


def _defined(question: str) -> dict[str, tuple[str, str]]:
    """The measures a question defines, by name (case-folded): (the name as written, the
    formula text), the first definition of a name kept, in the question's order; then those it
    names without defining that have a textbook formula (``TEXTBOOK``)."""
    out: dict[str, tuple[str, str]] = {}
    for m in _DEFINED.finditer(question):
        name = (m.group("a") or m.group("b") or "").strip(" :")
        name = re.sub(r"^(?:the|and|then|also)\s+", "", name, flags=re.IGNORECASE)
        out.setdefault(name.casefold(), (name, m.group("expr").strip()))
    for m in _TEXTBOOK_NAME.finditer(question):  # named, not defined: the textbook's formula
        out.setdefault(m.group(0).casefold(), (m.group(0), TEXTBOOK[m.group(0).casefold()]))
    return out


def _tokens(formula: str) -> list[str]:
    text = formula
    for pattern, op in _WORD_OPS:
        text = re.sub(pattern, op, text, flags=re.IGNORECASE)
    parts = re.split(r"(\(|\)|\*|/|\+|\s-\s|×)", f" {text} ")
    return [{"×": "*"}.get(t.strip(), t.strip()) for t in parts if t.strip()]


_APPLY: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b,
    "*": lambda a, b: a * b, "/": lambda a, b: a / b}


class _Formula:
    """A recursive-descent reading of a stated formula: + - * / and parentheses over numbers,
    line-item phrases and the names of other defined measures."""

    def __init__(self, tokens: list[str], term: Callable[[str], float]) -> None:
        self.tokens, self.i, self.term = tokens, 0, term

    def parse(self) -> float:
        value = self.sum()
        if self.i != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.i]!r}")
        return value

    def peek(self) -> str:
        return self.tokens[self.i] if self.i < len(self.tokens) else ""

    def sum(self) -> float:
        return self._chain("+-", self.product)

    def product(self) -> float:
        return self._chain("*/", self.factor)

    def _chain(self, ops: str, operand: Callable[[], float]) -> float:
        """``operand (op operand)*`` for the operators ``ops`` of one precedence, left to right."""
        value = operand()
        while (op := self.peek()) and op in ops:
            self.i += 1
            right = operand()
            if op == "/" and right == 0:
                raise Missing("a division by zero")
            value = _APPLY[op](value, right)
        return value

    def factor(self) -> float:
        token = self.peek()
        if not token:
            raise ValueError("the formula ends early")
        self.i += 1
        if token == "(":
            value = self.sum()
            if self.peek() != ")":
                raise ValueError("unbalanced parentheses")
            self.i += 1
            return value
        if token in {")", "*", "/", "+", "-"}:
            raise ValueError(f"unexpected {token!r}")
        if re.fullmatch(r"\d+(?:\.\d+)?", token):
            return float(token)
        return self.term(token)


def _decimals(question: str, default: int) -> int:
    m = _DECIMALS.search(question)
    if not m:
        return default
    word = m.group(1).casefold()
    return int(word) if word.isdigit() else _WORDS.get(word, default)


def _main_year(question: str, definitions: dict[str, tuple[str, str]]) -> str:
    """The year a measure is asked for: the last year the question names outside its
    definitions ("what is the FY2017 DPO? DPO is defined as …" asks for 2017)."""
    text = question
    for _, formula in definitions.values():
        text = text.replace(formula, " ")
    years = re.findall(r"(?:19|20)\d\d", text)
    return years[-1] if years else ""


def _stated(question: str, cells: _Cells) -> Computation | None:
    definitions = _defined(question)
    if not definitions:
        return None
    year = _main_year(question, definitions)

    def term(phrase: str, depth: int = 0) -> float:
        phrase = phrase.strip()
        key = phrase.casefold()
        if key in definitions and depth < 4:
            return _Formula(_tokens(definitions[key][1]), lambda p: term(p, depth + 1)).parse()
        if m := _AVERAGE.match(phrase):
            item, a, b = m.groups()
            return (cells.value(item, a, True) + cells.value(item, b, True)) / 2
        if m := _CHANGE.match(phrase):
            item, a, b = m.groups()
            return cells.value(item, b, True) - cells.value(item, a, True)
        if m := _YEAR_BEFORE.match(phrase):
            return cells.value(m.group(2), m.group(1))
        if m := _YEAR_AFTER.match(phrase):
            return cells.value(m.group(1), m.group(2))
        if not year:
            raise Missing(phrase)
        return cells.value(phrase, year)

    name, formula = next(iter(definitions.values()))
    tokens = _tokens(formula)
    try:
        value = _Formula(tokens, term).parse()
    except (Missing, ValueError, ZeroDivisionError):
        return None
    percent = bool(re.search(r"\bpercent|%", question, re.IGNORECASE)) and abs(value) < 10
    if percent:
        value *= 100
    return Computation(_title(name, year), value, percent, _decimals(question, 2),
                       " ".join(tokens) + (" × 100" if percent else ""), tuple(cells.used))


def _title(name: str, year: str) -> str:
    name = name if name.isupper() else name[:1].upper() + name[1:]
    return f"{name}, FY{year}" if year else name


def _named(question: str, cells: _Cells) -> Computation | None:
    """A measure named by its textbook formula: growth, CAGR, a margin or share of revenue."""
    decimals = _decimals(question, 1)
    try:
        if m := _CAGR.search(question):
            item, a, b = _item(m.group("item")), m.group(2), m.group(3)
            first, last = cells.value(item, a), cells.value(item, b)
            span = int(b) - int(a)
            if first <= 0 or last <= 0 or span <= 0:
                return None
            value = ((last / first) ** (1 / span) - 1) * 100
            return Computation(f"{item.strip().capitalize()} CAGR, FY{a}–FY{b}", value, True,
                               decimals, f"({item} {b} / {item} {a})^(1/{span}) − 1",
                               tuple(cells.used))
        if m := _GROWTH.search(question):
            if m.group("item"):
                item, a, b = _item(m.group("item")), m.group(2), m.group(3)
            else:
                item, a, b = _item(m.group("item2")), m.group(4), m.group(5)
            first, last = cells.value(item, a), cells.value(item, b)
            if first == 0:
                return None
            value = (last - first) / abs(first) * 100
            return Computation(f"Change in {item.strip()}, FY{a} to FY{b}", value, True,
                               decimals, f"({item} {b} − {item} {a}) / {item} {a}",
                               tuple(cells.used))
        if m := _SHARE.search(question):
            item = _item(m.group("item"))
            base = (m.group("base") or "revenue").strip()
            years = sorted(asked_years(question))
            if not years:
                return None
            shares = []
            for y in years:
                denominator = cells.value(base, y)
                if denominator == 0:
                    return None
                shares.append(cells.value(item, y) / denominator * 100)
            value = sum(shares) / len(shares)
            over = f"FY{years[0]}" if len(years) == 1 else f"FY{years[0]}–FY{years[-1]} average"
            return Computation(f"{item.capitalize()} as a % of {base}, {over}", value, True,
                               decimals, f"{item} / {base}" + (
                                   f", averaged over {len(years)} years" if len(years) > 1
                                   else ""), tuple(cells.used))
        if _EBITDA.search(question) and (years := asked_years(question)):
            value = cells.value("EBITDA", years[-1])
            return Computation(f"EBITDA, FY{years[-1]}", value, False, _decimals(question, 0),
                               TEXTBOOK["ebitda"], tuple(cells.used))
    except Missing:
        return None
    return None


_LEAD = re.compile(r"^.*\b(?:average\s+of|average|is|the|what|\w+'s)\s+", re.IGNORECASE)
_SPAN = re.compile(r"^(?:\w+[\s-])?year\s+", re.IGNORECASE)


def _item(phrase: str) -> str:
    """A line item's words out of the words before a measure ("Nike's three year average of
    cost of goods sold" -> "cost of goods sold", "2 year total revenue" -> "total revenue")."""
    words = phrase.strip()
    for prefix in (_LEAD, _SPAN):
        cut = prefix.sub("", words)
        words = cut or words
    return re.sub(r"^unadjusted\s+", "", words, flags=re.IGNORECASE).strip(" ,")


def compute(question: str, segments: Sequence[Segment]) -> Computation | None:
    """The measure ``question`` asks for, computed from the cells of ``segments``, or None
    when it asks for none this module knows or a cell it needs is not there."""
    # the statements' rows first, then any table's
    return _computed(question, segments, True) or _computed(question, segments, False)


def _computed(question: str, segments: Sequence[Segment], strict: bool) -> Computation | None:
    for doc_id in dict.fromkeys(s.doc_id for s in segments):  # the best block's filing first
        found, _ = _attempt(question, segments, doc_id, strict)
        if found is not None:
            return found
    return None


def _attempt(question: str, segments: Sequence[Segment], doc_id: str, strict: bool = True
             ) -> tuple[Computation | None, Missing | None]:
    """The measure computed from ``doc_id``'s cells in ``segments``, or the first operand
    it found no cell for.  ``strict``: from the rows of its financial statements only (an
    MD&A table's "Inventory" row may be a share or a change)."""
    missing = None
    for way in (_stated, _named):
        cells = _Cells(segments, doc_id, strict)
        found = way(question, cells)
        if found is not None and math.isfinite(found.value):
            return found, None
        missing = missing or cells.missing
    return None, missing


def asks_for_measure(question: str) -> bool:
    """Whether ``question`` asks for a measure this module computes (a stated formula, a
    growth, a CAGR, a margin or a share)."""
    return bool(_defined(question) or _CAGR.search(question) or _GROWTH.search(question)
                or _SHARE.search(question) or _EBITDA.search(question))


NEARBY = 12
"""Sections on either side of a statement's block searched for a measure's missing cells: a
statement set as lines is a section per row group, a balance sheet about ten."""
MAX_ADDED = 3
"""Blocks added to the context for a measure's cells."""
FOUND = 40
"""Segments of the filing searched for one missing cell (its line item and year): the
statement's rows rank below the discussion of the same line item (Activision's "Net revenues"
rows 29th for "revenue 2019"), and only those holding rows are read further."""


def statement_rows(question: str, blocks: Sequence[Segment],
                   sections: Callable[[Segment, Sequence[int]], Sequence[Segment]],
                   find: Callable[[Segment, str], Sequence[Segment]] | None = None
                   ) -> list[Segment]:
    """``blocks``, and when ``question`` asks for a measure whose cells they lack, the sections
    of the best block's filing that hold them (at most ``MAX_ADDED``, each a block of its own,
    so every cell is cited).  First the sections near its statement blocks (inside a statement,
    or rows the reader made a sibling of its caption; ``sections(block, orders)`` reads a
    block's document's sections at those positions); then, for an operand still missing, the
    filing's sections that ``find(block, "total current liabilities 2021")`` ranks for it whose
    rows hold that line item's cell for that year (a filing whose income statement is far from
    its balance sheet).  Only the best block's filing is searched."""
    blocks = list(blocks)
    if not blocks or not asks_for_measure(question) or _computed(question, blocks, True):
        return blocks
    doc = blocks[0].doc_id
    inside = [b for b in blocks if b.doc_id == doc and families_of(b.path)]
    seen = {_key(b) for b in blocks}
    orders = sorted({o for b in inside for o in range(b.order - NEARBY, b.order + NEARBY + 1)}
                    - {b.order for b in inside})
    pool = blocks + [s for s in (sections(inside[0], orders) if inside else [])
                     if _key(s) not in seen and (families_of(s.path) or rows([s]))]
    seen |= {_key(s) for s in pool}
    for _ in range(MAX_ADDED if find is not None else 0):
        holder = None
        for strict in (True, False):  # a cell missing from the statements, then from all rows
            found, missing = _attempt(question, pool, doc, strict)
            if found is not None and strict:
                break
            if missing is None or find is None:
                continue
            wanted = f"{printed_words(missing.item)} {missing.year}" + (
                " balance sheets statement of financial position" if missing.balance else "")
            holders = [s for s in find(blocks[0], wanted) if s.doc_id == doc
                       and _key(s) not in seen and _holds(s, missing)]
            holder = next((s for s in holders if _in_statement(s)),
                          holders[0] if holders else None)
            if holder is not None:
                break
        if holder is None:
            break
        pool.append(holder)
        seen.add(_key(holder))
    found = _attempt(question, pool, doc)[0] or _attempt(question, pool, doc, strict=False)[0]
    if found is None:
        return blocks
    used = sorted({o.figure.row.block for o in found.operands if o.figure.row.block > len(blocks)})
    return blocks + [pool[b - 1] for b in used[:MAX_ADDED]]


def _holds(block: Segment, missing: Missing) -> bool:
    """Whether ``block``'s rows hold the missing operand's line item for its year."""
    return any(missing.year in f.row.years for f in _cells_of(missing.item, missing.year, [block]))


def _key(s: Segment) -> tuple[str, int, int]:
    """A block's place: a piece is a block of its own (a table is often its section's second
    piece, after the lines that head its columns)."""
    return s.doc_id, s.order, s.piece


def answer_context(parts: Parts, segments: Sequence[Segment], question: str = "") -> list[Segment]:
    """The context blocks an answer is written from (``routes.answer_blocks``), a statement's
    rows with its column header (``figures.with_headers``), and, for a question that asks for a
    measure whose cells the blocks lack, the sections of the best block's statements that hold
    them (``statement_rows``)."""
    def earlier(b: Segment, n: int) -> list[Segment]:
        return routes.earlier_sections(parts, b, n)

    def find(b: Segment, text: str) -> list[Segment]:
        found = routes.search_document(parts, b, text, FOUND)
        return with_headers([s for s in found if holds_rows(s)], earlier)

    blocks = with_headers(routes.answer_blocks(parts, segments), earlier)
    if not question:
        return blocks
    return statement_rows(question, blocks, lambda b, orders: with_headers(
        routes.sections_at(parts, b, orders), earlier), find)
