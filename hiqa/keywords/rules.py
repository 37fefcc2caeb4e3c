"""Document keywords for the keyword bonus (paper §3.3 Eq. 2, A.12).

Near-identical documents differ in the entities that name them: a part number, a man page's
name, a company and a year.  Each document gets a compact set of such keywords; a question's
``m`` in Eq. 2 is the number of a candidate document's keywords it mentions.  Keywords come from
rules over the title, file name and first page (:func:`extract_keywords`) or from an expert
lexicon CSV (:func:`load_lexicon`).

Matching is on normalised text: case and punctuation are ignored, so ``CA-IS3722HS``,
``ca is3722hs`` and ``CAIS3722HS`` are one keyword, but a keyword must cover whole query tokens,
so ``ls`` does not match inside ``else``.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hiqa.errors import HiqaError
from hiqa.tokenize import CJK as _CJK

MAX_KEYWORDS = 20

GENERIC_WORDS = frozenset(
    """
    a an and are as at be by for from in is it of on or the this to with about all also any
    appendix application applications back book chapter contents copy data datasheet
    description document documentation draft edition english features figure file final full
    general guide handbook help index information introduction manual notes overview page
    pages preface preliminary product production readme reference release report revision rev
    sample section sheet specification specifications summary table text title untitled user
    users version annual interim quarterly financial statement statements company group new
    old main default scan
    """.split()  # noqa: SIM905
)
"""Words that describe a document's kind rather than name it: never a keyword on their own."""

_FILE_SUFFIXES = {".md", ".pdf", ".txt", ".docx", ".html", ".htm", ".gz", ".csv", ".json"}

_MAN_NAME = re.compile(r"(?<![\w.-])([A-Za-z_][\w.+-]*?)\((\d[a-z]{0,4})\)")
_MAN_STEM = re.compile(r"^([A-Za-z_][\w.+-]*?)\.(\d[a-z]{0,4})$")
_IDENTIFIER = re.compile(r"(?<![\w])[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*")
_QUANTITY = re.compile(r"^[\d.,]+-?[a-zµ°Ω%]{1,6}\d?$", re.IGNORECASE)
_COMPANY = re.compile(
    r"\b((?:[A-Z][\w&'-]*\s+){0,4}[A-Z][\w&'-]*),?\s+"
    r"(Inc|Ltd|Corp|Corporation|GmbH|Co|LLC|PLC|AG|S\.A|Limited|Incorporated|Holdings)\b\.?"
)
_COMPANY_ZH = re.compile(f"[{_CJK}]{{2,24}}?(?:股份)?有限公司")
_REPORT = re.compile(
    r"\b((?:[A-Z][\w&'-]*\s+){0,4}?)"
    r"((?i:annual|interim|quarterly|half-year|sustainability|esg|financial)\s+(?i:report))"
    r"(?i:\s+(?:for\s+)?(?:the\s+)?(?:year\s+)?)?((?:19|20)\d\d)?"
)
_REPORT_ZH = re.compile(r"((?:19|20)\d\d)\s*年(?:年度|半年度|第[一二三四]季度)?报告")
_YEAR_FIRST = re.compile(
    r"\b((?:19|20)\d\d)\s+(?:Annual|Interim|Sustainability|ESG)\s+Report", re.IGNORECASE
)


_PIECE = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]*\\d(?:\\.\\d+)+|[^\\W_{_CJK}]+")
"""A token: a CJK character, a dotted number (``3.3``, ``v5.30.0``, ``python3.11``: one
token, never ``3`` and ``3``), or a run of letters and digits (``free.1`` is two)."""
_VERSION = re.compile(r"v?(\d+(?:\.\d+)+)")


def _piece_key(piece: str) -> str:
    """A token's match form: a version without its ``v`` and its trailing ``.0`` parts beyond
    the second (``v5.30.0`` is ``5.30``, ``3.0`` stays ``3.0``); other tokens as they are."""
    version = _VERSION.fullmatch(piece)
    if not version:
        return piece
    parts = version.group(1).split(".")
    while len(parts) > 2 and parts[-1].strip("0") == "":
        parts.pop()
    return ".".join(parts)


def _pieces(text: str) -> list[str]:
    """Case-folded match forms of ``text``'s tokens (:data:`_PIECE`), in order: a keyword's
    and a question's alike; each CJK character is its own token (no spaces to split on)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [_piece_key(p) for p in _PIECE.findall(folded)]


def normalize_keyword(text: str) -> str:
    """The match key: case-folded tokens joined, punctuation dropped but the dots of a number.

    ``CA-IS3722HS``, ``ca is3722hs`` and ``CAIS3722HS`` give ``cais3722hs``; ``Python 3.3``
    gives ``python3.3`` and ``v5.30.0`` gives ``5.30``, so a number keeps its boundaries:
    ``3.3`` is not a part of ``13.3``, ``3.30`` or ``33``.
    """
    return "".join(_pieces(text))


def query_phrases(query: str, max_chars: int = 64) -> frozenset[str]:
    """Every run of consecutive normalised query tokens, joined (up to ``max_chars``).

    A keyword is "in the query" when its normalised form is one of these; computing them once
    per query lets the retriever score m for every candidate document by a set intersection.
    """
    pieces = _pieces(query)
    found: set[str] = set()
    for start in range(len(pieces)):
        joined = ""
        for piece in pieces[start:]:
            joined += piece
            if len(joined) > max_chars:
                break
            found.add(joined)
    return frozenset(found)


def phrase_spans(query: str, phrases: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of the runs of ``query``'s tokens that spell one of ``phrases``
    (normalised forms, as :func:`query_phrases` makes them), left to right, the longest run
    at each place, runs not overlapping."""
    wanted = frozenset(phrases)
    if not wanted:
        return []
    longest = max(map(len, wanted))
    tokens = [(m.start(), m.end(), normalize_keyword(m.group())) for m in _PIECE.finditer(query)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        joined, end = "", None
        for j in range(i, len(tokens)):
            joined += tokens[j][2]
            if len(joined) > longest:
                break
            if joined in wanted:
                end = j  # keep going: a longer phrase may start here too
        if end is None:
            i += 1
            continue
        spans.append((tokens[i][0], tokens[end][1]))
        i = end + 1
    return spans


_LEADING_UP = re.compile(r"(?i)(?:\s+(?:in|of|for|from|at|on|by|to|during|about|as\s+of"
                         r"|the|a|an|its|their))+\s*$")
_POSSESSIVE = re.compile(r"['’]s\b")
_LIST_GAP = re.compile(r"(?i)[\s,&/–—-]*(?:(?:and|or|vs\.?|versus|to|through)[\s,&/–—-]*)?")


def without_phrases(query: str, phrases: Iterable[str]) -> str:
    """``query`` with every run of its tokens that spells one of ``phrases`` (normalised forms,
    as :func:`query_phrases` makes them) cut out, the rest of its wording kept as written.

    ``"xxd: Display help"`` without ``{"xxd"}`` is ``"Display help"``: what the question asks
    of the document it names.  Longest runs first; spaces collapsed and punctuation left at
    either end trimmed.  Empty when nothing but the phrases was asked."""
    cuts: list[tuple[int, int]] = []
    for start, stop in phrase_spans(query, phrases):  # "FY2022 and FY2023" is one run
        if cuts and _LIST_GAP.fullmatch(query[cuts[-1][1]:start]):
            start = cuts.pop()[0]
        cuts.append((start, stop))
    if not cuts:
        return query
    kept, last = [], 0
    for k, (start, stop) in enumerate(cuts):
        upto = cuts[k + 1][0] if k + 1 < len(cuts) else len(query)
        # a name that ends its clause takes the words leading up to it ("… in FY2018?")
        ends = not any(ch.isalnum() for ch in query[stop:upto])
        kept.append(_LEADING_UP.sub("", query[last:start]) if ends else query[last:start])
        possessive = _POSSESSIVE.match(query, stop)  # "Boeing's revenue" → "revenue"
        last = possessive.end() if possessive else stop
    kept.append(query[last:])
    rest = " ".join("".join(kept).split())
    return rest.strip(" \t:;,.-–—|/") if any(ch.isalnum() for ch in rest) else ""


def normalized_keywords(keywords: Iterable[str]) -> frozenset[str]:
    return frozenset(k for k in map(normalize_keyword, keywords) if k)


def count_matches(query: str, keywords: Iterable[str]) -> int:
    """Eq. 2's ``m``: how many of a document's keywords the query mentions.

    A keyword matches when its normalised form equals the concatenation of one or more
    consecutive normalised query tokens; keywords with the same normalised form count once.
    """
    wanted = normalized_keywords(keywords)
    if not wanted:
        return 0
    return len(wanted & query_phrases(query, max(map(len, wanted))))


def _is_part_number(token: str, uppercase_only: bool) -> bool:
    """Letters and digits mixed, at least 4 characters, and not a quantity like ``2.5V``."""
    if token.isascii() and (token.isalpha() or token.isdigit()):
        return False  # the common case, a plain word or number, without normalising
    bare = normalize_keyword(token).replace(".", "")  # "30.5" is a number, not a part
    if len(bare) < 4 or bare.isdigit() or bare.isalpha():
        return False
    if _QUANTITY.match(token):
        return False
    letters = [ch for ch in token if ch.isalpha()]
    return not uppercase_only or all(ch.isupper() for ch in letters)


def _part_numbers(text: str, uppercase_only: bool) -> list[str]:
    tokens = [t.strip("./-_") for t in _IDENTIFIER.findall(text)]
    return [t for t in tokens if _is_part_number(t, uppercase_only)]


def _first_page_parts(first_page: str, named: list[str]) -> list[str]:
    """Upper-case part numbers the first page repeats, except variants of the title's part.

    A part number mentioned once is usually another product (a companion chip, a standard such
    as JESD204C); a sibling variant (``-SEP`` in the ``-SP`` datasheet) is exactly what the bonus
    must tell apart, so neither may become this document's keyword.
    """
    prefixes = {normalize_keyword(k)[:6] for k in named if len(normalize_keyword(k)) >= 6}
    counts = Counter(_part_numbers(first_page, uppercase_only=True))
    return [
        part
        for part, count in counts.most_common()
        if count >= 2 and normalize_keyword(part)[:6] not in prefixes
    ]


def _man_names(text: str) -> list[str]:
    found: list[str] = []
    for name, section in _MAN_NAME.findall(text):
        found += [f"{name}({section})", name]
    return found


def _stem(filename: str) -> str:
    """The file name without its document suffixes (``notes.md.gz`` is ``notes``)."""
    stem = Path(filename).name
    for _ in range(2):
        if Path(stem).suffix.lower() in _FILE_SUFFIXES:
            stem = Path(stem).stem
    return stem


def _file_keywords(filename: str) -> list[str]:
    stem = _stem(filename)
    man = _MAN_STEM.match(stem)
    if man:
        return [f"{man.group(1)}({man.group(2)})", man.group(1)]
    found = _part_numbers(stem.replace("_", " "), uppercase_only=False)
    pieces = [w for w in re.split(r"[\s_.-]+", stem) if w]
    words = [
        w
        for w in pieces
        if w.casefold() not in GENERIC_WORDS and not w.isdigit() and not _is_part_number(w, False)
    ]
    rest = " ".join(words)
    if len(normalize_keyword(rest)) >= 3:
        found.append(rest)
    return found


def _without_leading_generic(name: str) -> str:
    words = name.split()
    while words and words[0].casefold() in GENERIC_WORDS:
        words = words[1:]
    return " ".join(words)


def _company_names(text: str) -> list[str]:
    found: list[str] = []
    for name, suffix in _COMPANY.findall(text):
        name = _without_leading_generic(name)
        if name:
            found += [f"{name} {suffix}", name]
    found += _COMPANY_ZH.findall(text)
    return found


def _report_names(title: str) -> list[str]:
    found: list[str] = []
    for company, kind, year in _REPORT.findall(title):
        year = year or next(iter(_YEAR_FIRST.findall(title)), "")
        company = _without_leading_generic(company)
        if company:
            found.append(company)
        if year:
            found += [f"{kind} {year}", year]
    for year in _REPORT_ZH.findall(title):
        found += [f"{year}年", year]
    return found


def _acceptable(keyword: str) -> bool:
    bare = normalize_keyword(keyword)
    if len(bare) < 2 or (bare.isdigit() and len(bare) != 4):
        return False
    words = keyword.casefold().split()
    return not all(w.strip(".,;:()") in GENERIC_WORDS for w in words)


def extract_keywords(title: str, filename: str, first_page: str) -> tuple[str, ...]:
    """Rule-based identifiers that name a document (paper A.12), most specific first.

    In order: man-page names ``name(section)`` and the bare name, part and model numbers (tokens
    mixing letters and digits), company names (``... Inc/Ltd/Corp/GmbH/Co.``, ``...有限公司``),
    report titles with their year (``Annual Report 2023``), the file's stem without generic words;
    then from the first page its header line's man-page name, the upper-case part numbers it
    repeats (not variants of the title's part), and company names.  Deduplicated by
    :func:`normalize_keyword`; generic words (``datasheet``, ``manual``) and quantities
    (``2.5V``) are dropped; at most ``MAX_KEYWORDS``.
    """
    named = [
        *_man_names(title),
        *_part_numbers(title, uppercase_only=False),
        *_company_names(title),
        *_report_names(title),
        *_file_keywords(filename),
    ]
    header = next((line for line in first_page.splitlines() if line.strip()), "")
    candidates = [
        *named,
        *_man_names(header),
        *_first_page_parts(first_page, named),
        *_company_names(first_page),
    ]
    keywords: dict[str, str] = {}
    for keyword in candidates:
        keyword = " ".join(keyword.split())
        key = normalize_keyword(keyword)
        if key not in keywords and _acceptable(keyword):
            keywords[key] = keyword
        if len(keywords) == MAX_KEYWORDS:
            break
    return tuple(keywords.values())


def load_lexicon(path: str | Path) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """Read an expert lexicon CSV with rows ``doc,keyword`` (paper A.12: expert keywords).

    A header row ``doc,keyword`` is optional and a UTF-8 byte-order mark is tolerated.  Rows with
    the wrong number of columns or an empty value are skipped with a warning naming the line, so
    one typo never blocks indexing; a file that cannot be read as CSV text raises
    :class:`HiqaError`.  Returns ``doc -> keywords`` (deduplicated by normalised form) and the
    warnings.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise HiqaError(f"cannot read expert lexicon {path}: {error.strerror or error}") from error
    if b"\x00" in raw:
        raise HiqaError(f"expert lexicon {path} is not a CSV text file (it contains binary data)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise HiqaError(
            f"expert lexicon {path} is not UTF-8 text (byte {error.start}); save it as UTF-8 CSV"
        ) from error

    lexicon: dict[str, dict[str, str]] = {}
    warnings: list[str] = []
    rows_seen = 0
    line = 0
    try:
        # strict: an unterminated quote is an error, not the rest of the file as one keyword
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        for row in reader:
            first_line, line = line + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            is_first = not rows_seen and not lexicon and not warnings
            if is_first and [c.strip().casefold() for c in row] == ["doc", "keyword"]:
                continue
            rows_seen += 1
            if len(row) != 2:
                warnings.append(
                    f"{path.name} line {line}: expected 2 columns (doc,keyword), got {len(row)}; "
                    "row skipped"
                )
                continue
            doc, keyword = (cell.strip() for cell in row)
            if "\n" in doc or "\n" in keyword or "\r" in doc or "\r" in keyword:
                warnings.append(
                    f"{path.name} lines {first_line}-{line}: a quoted value spans several lines; "
                    "row skipped (check the quotes)"
                )
                continue
            if not doc or not keyword or not normalize_keyword(keyword):
                empty = "doc" if not doc else "keyword"
                warnings.append(f"{path.name} line {line}: empty {empty}; row skipped")
                continue
            lexicon.setdefault(doc, {}).setdefault(normalize_keyword(keyword), keyword)
    except csv.Error as error:
        start = line + 1
        if "end of data" in str(error):
            raise HiqaError(
                f"expert lexicon {path} line {start}: a quote (\") is opened and never closed, so "
                "the rest of the file would become one value; close the quote or remove it. "
                "Nothing was installed."
            ) from error
        raise HiqaError(
            f"expert lexicon {path} line {start}: not valid CSV ({error}); a value with a comma "
            "or quote must be wrapped in quotes, with inner quotes doubled (\"\"). Nothing was "
            "installed."
        ) from error
    if rows_seen and not lexicon and len(warnings) == rows_seen:
        raise HiqaError(
            f"expert lexicon {path} has no row of the form doc,keyword; "
            f"first problem: {warnings[0]}"
        )
    return {doc: tuple(words.values()) for doc, words in lexicon.items()}, warnings


KEYWORD_SOURCES = ("rule", "lexicon", "llm")
_EDGE = "\"'`“”‘’«»,.;:!?*_"
_OPEN, _CLOSE = "([{<", ")]}>"


@dataclass(frozen=True)
class Keyword:
    """A keyword as first written, its normal form (the match key) and its sources.

    ``sources`` is a subset of ``KEYWORD_SOURCES`` in that order.
    """

    text: str
    key: str
    sources: tuple[str, ...]


def clean_keyword(text: str) -> str:
    """NFKC, single-spaced, without surrounding quotes, punctuation or unpaired brackets.

    Case and inner punctuation are kept for display ("v2.1", "C++", "CA-IS3722HS"), and so is
    a bracket that closes one inside the keyword ("open(2)").
    """
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    while True:
        before = text
        text = text.strip(_EDGE + " ")
        if text[:1] in _OPEN and not any(c in text for c in _CLOSE):
            text = text[1:]
        if text[-1:] in _CLOSE and not any(c in text for c in _OPEN):
            text = text[:-1]
        if _encloses(text):
            text = text[1:-1]
        if text == before:
            return text


def _encloses(text: str) -> bool:
    """``text`` is one bracketed group, e.g. "(CA-IS3722HS)" but not "(a) or (b)"."""
    if len(text) < 2 or text[0] not in _OPEN or text[-1] != _CLOSE[_OPEN.index(text[0])]:
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == text[0]) - (ch == text[-1])
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def merge_keywords(
    rule: Iterable[str] = (), lexicon: Iterable[str] = (), llm: Iterable[str] = ()
) -> tuple[Keyword, ...]:
    """One list from the three sources, deduplicated by ``normalize_keyword``.

    Each keyword keeps the spelling it was first seen with and is tagged with every source
    that produced it.  Order: first appearance, reading rule, then lexicon, then LLM keywords.
    """
    merged: dict[str, tuple[str, list[str]]] = {}
    for name, words in zip(KEYWORD_SOURCES, (rule, lexicon, llm)):
        for word in words:
            text = clean_keyword(word)
            key = normalize_keyword(text)
            if not key:
                continue
            tags = merged.setdefault(key, (text, []))[1]
            if name not in tags:
                tags.append(name)
    return tuple(Keyword(text, key, tuple(tags)) for key, (text, tags) in merged.items())


# --- collection-relative identity (issue #29) ----------------------------------------------

_WORD = re.compile(r"[^\W_]*\d(?:\.\d+)+|[^\W_]+")
_STOP = frozenset("a an and as at by for from in into of on or the to with".split())  # noqa: SIM905
_LETTERED = re.compile(
    r"\b((?:rev(?:ision)?|edition|issue|vol(?:ume)?|release|version)\.?\s+(?:[A-Z]|[IVX]{1,5}))\b",
    re.IGNORECASE)


def identity_candidates(*texts: str) -> list[str]:
    """Terms of a document's identity texts (its title, file name, top heading) that may tell
    it apart from the rest of its collection, most specific first.

    Every token with a digit — a version, year, quarter or model (``3.3``, ``v5.30.0``,
    ``2023``, ``Q3``, ``FY2023``) — with the word before it (``Python 3.3``, ``Q3 2024``,
    ``Release 15.5``), and alone where it can stand alone (not a bare number of 1–3 digits,
    which names nothing); lettered revisions and editions (``Rev. C``, ``Volume II``).  Names
    come from the rules of :func:`extract_keywords` (a company with its suffix, the company
    before "Annual Report"): a capitalised title word alone is a common word as often as a
    name ("Evil Login here manual" does not make every question about a login name it).  Which
    of them do tell the document apart is for :func:`distinctive_keywords` to decide, over the
    collection.
    """
    found: list[str] = []
    for text in texts:
        # a man-page name's section, "free(1)", is the man rule's (extract_keywords)
        words = _WORD.findall(_MAN_NAME.sub(" ", unicodedata.normalize("NFKC", text or "")))
        for i, word in enumerate(words):
            if not any(ch.isdigit() for ch in word):
                continue
            before = words[i - 1] if i else ""
            if any(ch.isalpha() for ch in before) and before.casefold() not in _STOP:
                found.append(f"{before} {word}")
            found.append(word)
        found += _LETTERED.findall(text or "")
    return [k for k in dict.fromkeys(" ".join(k.split()) for k in found) if _acceptable(k)]


def document_candidates(title: str, filename: str, first_page: str,
                        top_heading: str = "") -> tuple[str, ...]:
    """Every keyword a document might be told apart by: the rules of :func:`extract_keywords`
    (man-page names, part numbers, companies, report titles, the file name's words) and the
    identity terms of its title, file name and top heading (:func:`identity_candidates`)."""
    stem = _stem(filename)
    stem = "" if _MAN_STEM.match(stem) else stem  # "free.1": the man rule's
    terms = identity_candidates(title, top_heading if top_heading != title else "", stem)
    return tuple(_first_spellings([*extract_keywords(title, filename, first_page), *terms])
                 .values())[: 2 * MAX_KEYWORDS]


def _first_spellings(words: Iterable[str]) -> dict[str, str]:
    """Match key -> the first spelling of it, in order of first appearance (no empty key)."""
    out: dict[str, str] = {}
    for word in words:
        key = normalize_keyword(word)
        if key:
            out.setdefault(key, word)
    return out


@dataclass(frozen=True)
class Distinct:
    """A keyword that tells its document apart: ``documents`` of the collection's ``among``
    have it (1: this document only)."""

    text: str
    documents: int
    among: int

    def why(self) -> str:
        if self.documents == 1:
            return f"in this document only, among {self.among}"
        return f"in {self.documents} of {self.among} documents"


class Identities:
    """How many of a collection's documents have each keyword candidate, kept up to date as
    documents are written (an ingest adds them one by one: counting once per document keeps a
    2,000-document ingest linear)."""

    def __init__(self, candidates: Mapping[str, Sequence[str]] | None = None) -> None:
        self._words: dict[str, dict[str, str]] = {}
        self._counts: Counter[str] = Counter()
        for doc, words in (candidates or {}).items():
            self.put(doc, words)

    def put(self, doc: str, words: Sequence[str]) -> None:
        """``doc``'s candidates (replacing any it had)."""
        self._counts.subtract(self._words.pop(doc, {}).keys())
        self._words[doc] = _first_spellings(words)
        self._counts.update(self._words[doc].keys())

    def distinct(self, doc: str) -> tuple[Distinct, ...]:
        """``doc``'s candidates that at most half of the documents have, most specific first."""
        among = len(self._words)
        if among < 2:
            return ()
        return tuple(Distinct(text, self._counts[k], among)
                     for k, text in self._words.get(doc, {}).items()
                     if 2 * self._counts[k] <= among)[:MAX_KEYWORDS]


def distinctive_keywords(candidates: Mapping[str, Sequence[str]]
                         ) -> dict[str, tuple[Distinct, ...]]:
    """Each document's candidates that name at most half of its collection (paper A.12's
    keywords, made relative to the collection).

    A term every release note shares ("Python", "Release notes") names the collection, not a
    document; a term in at most half of the documents ("3.3", "Acme" in two of nine reports)
    tells those apart from the rest, and several such terms in one question pick out the one
    document that has them all (Eq. 2 counts them).  A collection of one document has nothing
    to tell apart.  Candidates are compared by :func:`normalize_keyword`, so ``v5.30.0`` in
    one title and ``5.30`` in another are one term.
    """
    pool = Identities(candidates)
    return {doc: pool.distinct(doc) for doc in candidates}
