"""A filing's identity from its own cover page: company, form and the period it reports (#46).

Near-identical filings (one company's 10-Ks of five years, its 10-Qs) are told apart by what
their cover pages print, not by their metadata: EDGAR's generators put the accession number in
the metadata title ("0000320187-19-000051"), others the filing date ("10-K - 02/07/2019 - 3M
Company") or the cover's first line ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION").  The
form prescribes the cover (SEC Forms 10-K, 10-Q, 8-K, General Instructions): the form's name,
"For the fiscal year ended <date>" or "For the quarterly period ended <date>" or "Date of
Report (Date of earliest event reported): <date>", and the registrant's name printed above
"(Exact name of registrant as specified in its charter)".  Those are the document's own
evidence, read here; nothing else of the cover (addresses, exchanges, ticker rows of notes,
commission file numbers) becomes a keyword.

The period is named the way analysts write it: a fiscal year by the calendar year it ends in
(a fiscal year ended May 31, 2023 is FY2023) unless the filing itself calls it by the year
before (retailers whose year ends in January: "fiscal 2022" ended January 28, 2023), a quarter
by the filing's own "second quarter of fiscal 2024" where it says so, else by the calendar
quarter its end date closes.  The filing date is never the period.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"), start=1)}
_DATE = r"([A-Za-z]{3,9})\.?\s+(\d{1,2})\s*,?\s*((?:19|20)\d\d)"
_FORM = re.compile(r"\bFORM\s+(10-K|10-Q|8-K|20-F|40-F|6-K)(?:/A)?\b", re.IGNORECASE)
_ANNUAL = re.compile(r"for\s+the\s+fiscal\s+year\s+ended:?\s+" + _DATE, re.IGNORECASE)
_QUARTER = re.compile(r"for\s+the\s+quarterly\s+period\s+ended:?\s+" + _DATE, re.IGNORECASE)
_EVENT = re.compile(r"date\s+of\s+report\s*\(date\s+of\s+earliest\s+event\s+reported\)\s*:?\s*"
                    + _DATE, re.IGNORECASE)
_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+registrant", re.IGNORECASE)
_FILE_NUMBER_AT = re.compile(r"commission\s+file\s+(?:number|no\.?)\s*:?\s*[\d-]+", re.IGNORECASE)
_FILE_NUMBER = re.compile(r"^.*?" + _FILE_NUMBER_AT.pattern + r"\s*", re.IGNORECASE)
"""A line's text up to and with its commission file number (a paragraph joined to a name)."""
_NTH = ("first", "second", "third", "fourth")
_ORDINALS = {name: n for n, name in enumerate(_NTH, start=1)}
_QUARTER_OF = re.compile(r"\b(first|second|third|fourth)\s+quarter\s+of\s+fiscal\s+(?:year\s+)?"
                         r"((?:19|20)\d\d)\b", re.IGNORECASE)
_FISCAL_YEAR = re.compile(r"\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b", re.IGNORECASE)
_SUFFIX = re.compile(r"[\s,]+(?:inc|incorporated|corp|corporation|company|co|ltd|limited|plc|llc|"
                     r"n\.?v|s\.?a|ag|se|holdings?)\.?$", re.IGNORECASE)
_KINDS = {"10-K": "Form 10-K", "10-Q": "Form 10-Q", "8-K": "Form 8-K", "20-F": "Form 20-F",
          "40-F": "Form 40-F", "6-K": "Form 6-K"}
COVER_CHARS = 12_000
"""How much of a filing's text the cover is looked for in: the cover comes first, sometimes
after a wrapper page (a proxy's or a printer's)."""


@dataclass(frozen=True)
class Period:
    """The fiscal year (and quarter) a filing reports, or the date of an 8-K's event."""

    year: int
    quarter: int | None = None
    ended: date | None = None
    event: date | None = None


@dataclass(frozen=True)
class Filing:
    """What a filing's cover page says it is."""

    company: str
    form: str
    period: Period | None

    def title(self) -> str:
        """"Nike — Form 10-K, fiscal year 2019"; a quarter and an event date likewise."""
        kind = _KINDS.get(self.form, f"Form {self.form}")
        p = self.period
        if p is None:
            said = ""
        elif p.event is not None:
            said = f", {_day(p.event)}"
        elif p.quarter is not None:
            ended = f" (quarter ended {_day(p.ended)})" if p.ended else ""
            said = f", Q{p.quarter} fiscal {p.year}{ended}"
        else:
            said = f", fiscal year {p.year}"
        name = next(iter(company_names(self.company)), "")
        return f"{name} — {kind}{said}" if name else f"{kind}{said}"

    def record(self) -> dict[str, object]:
        """What the registry keeps of the filing for ranking (``retrieve.routes``): the
        company's names, the form, and the end of the period it reports (an 8-K: its event's
        date) as an ISO date, so filings of one company sort by period."""
        p = self.period
        end = None if p is None else (p.event or p.ended)
        ended = end.isoformat() if end else (f"{p.year}-12-31" if p else "")
        return {"company": list(company_names(self.company)), "form": self.form,
                "period_end": ended}

    def keywords(self) -> tuple[str, ...]:
        """The names analysts give this filing: the company, and the period in the forms
        questions write it ("FY2019", "FY19", "fiscal 2019", "2019 10-K", "Q2 2023")."""
        out = list(company_names(self.company))
        p = self.period
        if p is not None and p.event is None:
            y, yy = p.year, f"{p.year % 100:02d}"
            if p.quarter is None:
                out += [f"FY{y}", f"FY{yy}", f"fiscal {y}", f"fiscal year {y}",
                        f"{y} {self.form}", f"{self.form} {y}", f"{y} annual report", str(y)]
            else:
                q = p.quarter
                out += [f"Q{q} {y}", f"{y} Q{q}", f"Q{q} FY{y}", f"Q{q} FY{yy}",
                        f"{_nth(q)} quarter of {y}", f"{_nth(q)} quarter of fiscal {y}",
                        f"{_nth(q)} quarter {y}", f"Q{q} {self.form}", f"{self.form} Q{q} {y}"]
        elif p is not None and p.event is not None:
            out += [f"{self.form} {p.event:%B %Y}", f"{p.event:%B %Y}"]
        out.append(self.form)
        return tuple(dict.fromkeys(out))


def _day(d: date | None) -> str:
    return f"{d:%B} {d.day}, {d.year}" if d else ""


def _nth(q: int) -> str:
    return _NTH[q - 1]


def _date(month: str, day: str, year: str) -> date | None:
    m = MONTHS.get(month.casefold()) or next(
        (n for name, n in MONTHS.items() if name.startswith(month.casefold()[:3])), None)
    try:
        return date(int(year), m, int(day)) if m else None
    except ValueError:
        return None


def company_names(company: str) -> tuple[str, ...]:
    """A registrant's names as questions write them: the name without its legal suffix and a
    leading "The", and its first word where the name has several ("Verizon Communications" is
    asked about as "Verizon"); whether a first word that is also an ordinary word ("General")
    names is for the question's evidence to say (``keywords.naming``)."""
    name = " ".join(company.split())
    if not name:
        return ()
    short = name
    while (bare := _SUFFIX.sub("", short)) != short:  # "American Water Works Company, Inc."
        short = bare
    short = re.sub(r"^the\s+", "", short, flags=re.IGNORECASE).strip(" ,.")
    short = re.sub(r"\.com$", "", short, flags=re.IGNORECASE)
    out = [short]
    words = short.split()
    if len(words) > 1 and len(words[0]) > 2 and words[0].isalpha():
        out.append(words[0])
    return tuple(dict.fromkeys(w for w in out if w))


def _registrant(text: str) -> str:
    """The line printed above "(Exact name of registrant as specified in its charter)", or,
    on a cover that leaves that label out, the name the form prints after the commission file
    number when it ends in a legal form ("MICROSOFT CORPORATION")."""
    m = _REGISTRANT.search(text)
    if not m:
        return _after_file_number(text)
    lines = _text_lines(text[: m.start()])
    if not lines:
        return ""
    name = _FILE_NUMBER.sub("", " ".join(lines[-1].split()))  # a paragraph joined to it
    name = re.sub(r"\s+([.,])", r"\1", re.sub(r"_{2,}|-{3,}", " ", name)).strip()
    return _cased(" ".join(name.split())) if 1 < len(name) <= 80 else ""


def _after_file_number(text: str) -> str:
    """The first line after "Commission File Number …" when it is a name with a legal form
    (``_SUFFIX``): the form's own place for the registrant's name, read only with that
    evidence, so a state or an address line is never taken for it."""
    m = _FILE_NUMBER_AT.search(text)
    if not m:
        return ""
    lines = _text_lines(text[m.end():])[:1]
    name = " ".join(lines[0].split()) if lines else ""
    return _cased(name) if 1 < len(name) <= 80 and _SUFFIX.search(name) else ""


def _text_lines(text: str) -> list[str]:
    """The cover's lines that hold text: table bars, Markdown marks and rules set aside."""
    lines = [ln.strip(" |*_#") for ln in text.splitlines()]
    return [ln for ln in lines if ln and not re.fullmatch(r"[-_=\s.]*", ln)]


_SMALL = frozenset({"THE", "AND", "OF", "INC", "CO", "LTD", "PLC", "LLC"})


def _cased(name: str) -> str:
    """A name the cover sets in capitals, written as a name: "THE BOEING COMPANY" -> "The
    Boeing Company", "AMAZON.COM, INC." -> "Amazon.com, Inc."; a word with a digit ("3M") and
    a short one that is not a small word ("AES") are kept.  In a mixed-case name ("NIKE,
    Inc.") only a word in capitals of more than three letters is typography ("Nike")."""
    letters = [c for c in name if c.isalpha()]
    every = bool(letters) and all(c.isupper() for c in letters)

    def word(w: str) -> str:
        core = w.strip(".,&")
        if any(c.isdigit() for c in core) or not core.isupper():
            return w
        if len(core) > 3 or core in _SMALL and every:
            return w.capitalize()
        return w

    return " ".join(map(word, name.split()))


def _fiscal_year(ended: date, text: str) -> int:
    """The fiscal year a period ending on ``ended`` belongs to: the calendar year it ends in,
    or the year before when it ends in the first weeks of a year and the filing itself calls
    its years so (more "fiscal 2022" than "fiscal 2023" in a year ended January 28, 2023)."""
    if ended.month > 2 or (ended.month == 2 and ended.day > 10):
        return ended.year
    said = [int(y) for y in _FISCAL_YEAR.findall(text)]
    return ended.year - 1 if said.count(ended.year - 1) > said.count(ended.year) else ended.year


def _quarter(ended: date, text: str) -> tuple[int, int]:
    """(quarter, fiscal year) of a 10-Q: as the filing says it ("second quarter of fiscal
    2024"), else the calendar quarter its period closes (a period ended July 2 closes Q2: a
    52/53-week quarter ends within a week of the month's end)."""
    said = _QUARTER_OF.search(text)
    if said:
        return _ORDINALS[said.group(1).casefold()], int(said.group(2))
    shifted = date.fromordinal(ended.toordinal() - 7)
    return (shifted.month - 1) // 3 + 1, shifted.year


def read_filing(text: str) -> Filing | None:
    """The identity a filing's cover prints, or None when ``text`` (the document's first
    pages) is not an SEC filing's cover."""
    text = unicodedata.normalize("NFKC", text[:COVER_CHARS]).replace("\u2011", "-")
    form = _FORM.search(text)
    if not form or not re.search(r"securities\s+and\s+exchange\s+commission", text, re.IGNORECASE):
        return None
    kind = form.group(1).upper()
    company = _registrant(text)
    period: Period | None = None
    if (m := _ANNUAL.search(text)) and kind in {"10-K", "20-F", "40-F"}:
        ended = _date(*m.groups())
        if ended:
            period = Period(_fiscal_year(ended, text), ended=ended)
    elif (m := _QUARTER.search(text)) and kind == "10-Q":
        ended = _date(*m.groups())
        if ended:
            q, y = _quarter(ended, text)
            period = Period(y, q, ended=ended)
    elif (m := _EVENT.search(text)) and kind in {"8-K", "6-K"}:
        event = _date(*m.groups())
        if event:
            period = Period(event.year, event=event)
    return Filing(company, kind, period)
