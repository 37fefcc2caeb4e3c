"""Which documents a question names (issue #29, #45, #46): the document keywords it holds,
whether it uses each as a name (``keywords.naming``), and, for filings, a conjunction of company
and period.  Read by ``routes.search`` once per question."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hiqa.index.derived import Derived
from hiqa.keywords.naming import Naming, naming
from hiqa.keywords.records import KeywordSources
from hiqa.keywords.rules import normalize_keyword, normalized_keywords, phrase_spans

_LATEST = "\x00latest"
"""What ``filing_names`` adds to the names of the latest filing: no keyword normalises to it."""


def filing_names(named: dict[str, frozenset[str]], documents: Mapping[str, dict[str, Any]]
                 ) -> tuple[dict[str, frozenset[str]], str | None]:
    """The names a question gives filings (``named``: each candidate document's keywords the
    question uses as names), read as a conjunction of company and period, and the latest
    filing when it names the company alone.

    * A question that names a company names none of another company's filings: "Pfizer's
      net income in 2019" names Pfizer's filings, not Amazon's fiscal-2019 10-K, which its
      "2019" names as well (each has one name, so all were named first alike).
    * A question that names a company and no period ("Is Boeing's business subject to
      cyclicality?") asks about it as it stands: its latest filing comes first (an extra
      name), and the app says so; the others stay named, after it.  A question that names a
      period, even one none of that company's filings is of ("Pfizer … in 2019", which the
      fiscal-2021 10-K reports among its three years), gets no latest.

    Documents without a filing record (``keywords.filing.Filing.record``) are left as they
    are."""
    companies = {doc: normalized_keywords([*rec["company"], rec.get("form", "")])
                 for doc in named
                 if isinstance(rec := documents.get(doc, {}).get("filing"), dict)}
    said = {doc for doc, names in companies.items() if named[doc] & names}
    periods = frozenset().union(*named.values()) - frozenset().union(*companies.values())
    if said:
        named = {doc: frozenset() if doc in companies and doc not in said else found
                 for doc, found in named.items()}
    most = max(map(len, named.values()), default=0)
    top = [doc for doc, found in named.items() if most and len(found) == most]
    if len(top) < 2 or periods or any(doc not in companies for doc in top):
        return named, None
    latest = max(top, key=lambda doc: (str(documents[doc]["filing"].get("period_end", "")), doc))
    return {**named, latest: named[latest] | {_LATEST}}, latest


def longest(matched: dict[str, frozenset[str]], query: str) -> dict[str, frozenset[str]]:
    """Each document's matched keywords without those the question writes only inside a longer
    keyword it matched: "American Water Works" names American Water Works' filings, and its
    first word is no name of American Express's ("American", the short name of both)."""
    keys = frozenset().union(*matched.values())
    if len(keys) < 2:
        return matched
    spelled = frozenset(normalize_keyword(query[a:b]) for a, b in phrase_spans(query, keys))
    return {doc: found & spelled for doc, found in matched.items()}


def namings_of(d: Derived, documents: dict[str, dict[str, Any]], query: str,
             matched: Mapping[str, frozenset[str]]) -> dict[str, Naming]:
    """How the question uses each document keyword it holds (``keywords.naming``), by its
    normalised form."""
    keys = frozenset().union(*matched.values())
    if not keys:
        return {}
    every = {doc: normalized(d, documents, doc) for doc in documents}
    written: dict[str, str] = {}
    for doc, found in matched.items():
        for k in keyword_names(documents[doc]):
            if normalize_keyword(k) in found:
                written.setdefault(normalize_keyword(k), k)

    def spread(keyword: str) -> float | None:
        used = d.lexical.body_documents(keyword)
        if used is None:
            return None
        key = normalize_keyword(keyword)
        carriers = {doc for doc, ks in every.items() if key in ks}
        others = len(every) - len(carriers)
        return len(used - carriers) / others if others else 0.0

    return {key: naming(query, written.get(key, key), spread) for key in sorted(keys)}


def normalized(d: Derived, documents: dict[str, dict[str, Any]], doc_id: str) -> frozenset[str]:
    """A document's keywords, normalised once per registry generation (the hot path)."""
    found = d.keywords.get(doc_id)
    if found is None:
        record = documents.get(doc_id, {})
        found = d.keywords[doc_id] = normalized_keywords(keyword_names(record))
    return found


def keyword_names(record: Mapping[str, Any]) -> tuple[str, ...]:
    """A document's keywords, and a filing's company names and form (``Filing.record``) even
    where the keywords leave them out: in a collection of one company's filings the company
    names more than half the documents, so it tells none apart (``distinctive_keywords``), but a
    question that says it still names that company's filings, and not another's; "this 10-K"
    names the 10-K of a company that also has 10-Qs."""
    filing = record.get("filing")
    own = [*filing.get("company", []), filing.get("form", "")] if isinstance(filing, dict) else []
    return tuple(dict.fromkeys([*KeywordSources.of(record).texts(), *map(str, filter(None, own))]))
