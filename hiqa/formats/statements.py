"""Financial statements by their names: the captions a filing prints over its statements, and
the names analysts ask for them by (issue #46, items 2 and 3).

A filing sets each primary statement under a caption of a fixed grammar — "Consolidated
Statements of Operations", "CONSOLIDATED BALANCE SHEETS", "The Boeing Company and Subsidiaries
Consolidated Statements of Financial Position", "Condensed Consolidated Statements of Cash
Flows (Unaudited)" — usually as a line of its own in body type, so nothing typographic marks it
as a heading, and the statement's rows lost its name from their path.  The names are the
document kind's convention (US GAAP and IFRS statement titles), not a producer's: a company
picks among "operations", "income", "earnings" for the same statement, and the questions name
it another way again ("the income statement", "the P&L", "the statement of financial
position").  So a caption is read by its grammar, and each statement's family carries the other
names it goes by (``aliases``), which the augmented text adds to its path (``hiqa.augment``).
"""
from __future__ import annotations

import functools
import re

_FAMILIES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("income", re.compile(r"\b(?:statements? of (?:consolidated )?(?:operations|income|earnings)"
                          r"(?: and comprehensive (?:income|loss|earnings))?"
                          r"|(?<!comprehensive )income statements?|profit and loss)\b"),
     ("income statement", "statement of operations", "statement of income",
      "profit and loss")),
    ("comprehensive income", re.compile(r"\bcomprehensive (?:income|loss|earnings)"
                                        r"(?: statements?)?\b"), ()),
    ("balance sheet", re.compile(r"\b(?:balance sheets?|statements? of (?:consolidated )?"
                                 r"financial (?:position|condition))\b"),
     ("balance sheet", "statement of financial position")),
    ("cash flows", re.compile(r"\b(?:statements? of (?:consolidated )?cash flows?|cash flows? statements?)\b"),
     ("cash flow statement", "statement of cash flows")),
    ("equity", re.compile(r"\bstatements? of (?:changes in )?(?:\w+(?:['’]s?)? )?(?:equity|deficit)\b"
                          r"|\b(?:stock|share)holders['’]? equity statements?\b"),
     ("statement of shareholders' equity", "statement of stockholders' equity")),
    ("notes", re.compile(r"\bnotes to (?:the )?(?:condensed )?(?:consolidated )?financial statements\b"),
     ()),
)

NAMES = {"income": "income statement", "balance sheet": "balance sheet",
         "cash flows": "cash flow statement", "comprehensive income":
         "statement of comprehensive income", "equity": "statement of equity",
         "notes": "notes to the financial statements"}
"""Each family as the app names it."""

_LEAD = re.compile(r"^(?:(?P<owner>[\w&.,'’-]+(?:\s+[\w&.,'’-]+){0,9}?)\s+)??"
                   r"(?:(?:(?:condensed|consolidated|combined)\s+){1,2}"
                   r"(?:statements?\b|balance sheets?\b)|statements? of\b|notes to\b"
                   # a statement's name with "statements" after it, as some filers title them
                   # ("INCOME STATEMENTS", "CASH FLOWS STATEMENTS"), or "BALANCE SHEETS" alone
                   r"|(?:(?:comprehensive\s+)?income|cash\s+flows?|(?:stock|share)holders['’]?"
                   r"\s+equity)\s+statements?$|balance\s+sheets?$)")
# what a caption's owner (the company printed before it) never ends with: "Analysis of the
# Consolidated Statements of Income" is a discussion of the statement, "Cash Equivalents and
# Statement of Cash Flows" a note's heading
_NOT_OWNER = frozenset(["of", "the", "to", "in", "on", "for", "from", "and", "or", "with", "see", "analysis"])
# what may follow a caption's name: "(continued)", "(Unaudited)", its unit ("(in millions)",
# "(Amounts in millions, except per share data)", "(Dollars in thousands)")
_TAIL = re.compile(r"\s*(?:\((?:continued|unaudited|loss|deficit|in [^)]*|[^)]*\b(?:millions|"
                   r"thousands|billions)\b[^)]*)\)|[-–—]\s*continued|continued)\s*$",
                   re.IGNORECASE)
# the company printed after a caption on its line, in the conventional owner phrase
# ("Consolidated Balance Sheets Corning Incorporated and Subsidiary Companies")
_OWNER_AFTER = re.compile(r"(?:[\w&.,'’-]+\s+){1,7}and\s+(?:its\s+)?(?:consolidated\s+)?"
                          r"subsidiar(?:y\s+companies|ies)", re.IGNORECASE)
_MAX_WORDS = 16


@functools.lru_cache(maxsize=4096)
def family(text: str) -> str | None:
    """The statement family a caption names ("income", "balance sheet", "cash flows",
    "comprehensive income", "equity", "notes"), or ``None`` when ``text`` is not a caption.

    A caption is short, ends with the statement's name (after "(continued)", "(Unaudited)",
    "(in millions)" are set aside), and holds nothing after it: an index line ending in its
    page number, a sentence ("See Notes to the Consolidated Financial Statements on pages 59 -
    114.") and a paragraph that mentions a statement are not captions.
    """
    line = " ".join(text.split())
    if not line or len(line.split()) > _MAX_WORDS or line[-1] in ".,;:":
        return None
    low = caption_key(line)
    if not low or low[-1].isdigit():
        return None
    lead = _LEAD.match(low)
    if lead is None or (lead["owner"] and lead["owner"].split()[-1] in _NOT_OWNER):
        return None
    for name, pattern, _ in _FAMILIES:
        found = None
        for found in pattern.finditer(low):
            pass
        if found is not None and found.end() >= len(low.rstrip(" )")) - 1:
            return name
    return None


def _without_owner(line: str) -> str:
    """``line`` without the owner phrase after a statement's name, when it has one."""
    if "subsidiar" not in line.casefold():  # every owner phrase ends so: most lines stop here
        return line
    words = line.split()
    for k in range(len(words) - 2, 0, -1):
        head = _TAIL.sub("", " ".join(words[:k]))
        if (_OWNER_AFTER.fullmatch(" ".join(words[k:]))
                and any(m.end() == len(head) for _, pattern, _ in _FAMILIES
                        for m in pattern.finditer(head.casefold()))):
            return head
    return line


def caption_key(text: str) -> str:
    """A caption as compared with the captions before it: "(continued)" and the like and an
    owner printed after it ("… Corning Incorporated and Subsidiary Companies") set aside, case
    and spacing folded."""
    core, previous = " ".join(text.split()), ""
    while core != previous:
        core, previous = _without_owner(_TAIL.sub("", core)), core
    return core.casefold().replace("’", "'")


def aliases(text: str) -> tuple[str, ...]:
    """The other names the statement a caption heads goes by, those it does not print itself:
    ``("income statement", "statement of income", "profit and loss")`` for "Consolidated
    Statements of Operations"; ``()`` for a text that is not a caption."""
    name = family(text)
    if name is None:
        return ()
    low = caption_key(text)
    names = next(a for n, _, a in _FAMILIES if n == name)
    return tuple(a for a in names if a.removeprefix("statement of ") not in low
                 and a not in low)


_ASKED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("comprehensive income", re.compile(r"\bstatements? of comprehensive (?:income|loss)\b")),
    ("income", re.compile(r"\b(?:income statements?|statements? of (?:consolidated )?"
                          r"(?:operations|income|earnings)|p\s?&\s?l|profit and loss)\b")),
    ("balance sheet", re.compile(r"(?<!off-)(?<!off )\bbalance sheets?\b|\bstatements? of "
                                 r"(?:consolidated )?financial (?:position|condition)\b")),
    ("cash flows", re.compile(r"\b(?:cash flows? statements?|statements? of (?:consolidated )?"
                              r"cash flows?)\b")),
    ("equity", re.compile(r"\b(?:statements? of (?:changes in )?(?:\w+(?:'s?)? )?equity|"
                          r"equity statements?)\b")),
)

_MEASURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("income", re.compile(r"\b(?:gross (?:margin|profit)s?|operating margins?|cost of goods sold|"
                          r"cogs|ebitda?|earnings per share|eps)\b")),
    ("balance sheet", re.compile(r"\b(?:quick ratio|current ratio|working capital|"
                                 r"total (?:current )?(?:assets|liabilities)|"
                                 r"current (?:assets|liabilities)|debt[- ]to[- ]equity)\b"
                                 # PP&E, but not its purchases (a cash-flow line)
                                 r"|(?<!purchases of )(?<!additions to )(?<!payments for )"
                                 r"\b(?:pp\s?&\s?e|ppne|property,? plant,? and equipment)\b")),
    ("cash flows", re.compile(r"\b(?:capital expenditures?|capex|free cash flows?|"
                              r"cash flows? from (?:operating|investing|financing)|"
                              r"(?:operating|investing|financing) cash flows?)\b")),
)
"""Measures an analyst reads off one statement by convention: a ratio or line item named in a
question ("net PP&E", "the quick ratio", "gross margin", "capex") asks for that statement as
much as its name would.  Only measures with one home: revenue, debt or tax are discussed in
MD&A and the notes as much as shown in a statement, so they ask for none."""


def asked(question: str) -> frozenset[str]:
    """The statement families a question asks for: by any of their names ("the P&L", "the
    statement of financial position", "the cash flow statement"; "off-balance sheet" names
    none) or by a measure read off one of them (``_MEASURES``: "net PP&E", "gross margin")."""
    low = question.casefold().replace("’", "'")
    return frozenset(name for name, pattern in (*_ASKED, *_MEASURES) if pattern.search(low))


def innermost(path: tuple[str, ...] | list[str]) -> str | None:
    """The family of the deepest caption in a segment's path (its document title aside): the
    statement its rows are in, when a reader nested one statement's caption under another's
    ("Consolidated Balance Sheets > Consolidated Statements of Cash Flows")."""
    return next((f for f in map(family, reversed(path[1:])) if f is not None), None)


def families_of(path: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The statement families a segment's path is inside (its document title aside): the rows
    of "… > Consolidated Balance Sheets > Current assets:" are in the balance sheet."""
    return frozenset(f for f in map(family, path[1:]) if f is not None)


_HEADER_WORD = re.compile(
    r"\b(?:(?:19|20)\d\d|\d{1,2}|fiscal|years?|ended|ending|as|of|at|in|for|the|and|quarters?|"
    r"months|weeks|three|six|nine|twelve|fifty-two|fifty-three|period|thousands|millions|"
    r"billions|dollars|amounts|except|per|share|data|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|"
    r"apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|"
    r"dec(?:ember)?)\b|[\s,.()$:]", re.IGNORECASE)
_FIGURES_AT_END = re.compile(r"[A-Za-z].*?(?:\s+\(?\$?\s?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?){2,}$")


def header_only(text: str) -> bool:
    """Whether ``text`` holds nothing but a statement's column-header words: dates, years,
    periods and units ("August 29,", "2021", "52 Weeks Ended", "(amounts in millions)")."""
    return bool(text.strip()) and not _HEADER_WORD.sub("", text)


def figure_row(text: str) -> bool:
    """Whether ``text`` is a statement row printed as a line: a label and two figures or more
    ("INCOME BEFORE INCOME TAXES 6,680 5,367 4,765")."""
    return bool(_FIGURES_AT_END.fullmatch(text.strip()))

