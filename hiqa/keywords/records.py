"""A document's keywords as its registry record keeps them: one list per source.

A record holds ``keywords = {"rule": [...], "lexicon": [...], "llm": [...]}`` (the rule's
distinctive terms, the expert lexicon's, the LLM's) and ``identity_counts`` (how many of the
collection's documents share each rule keyword).  ``KeywordSources`` reads that part of a record
once; everything that shows or matches a document's keywords goes through it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hiqa.keywords.rules import Distinct, Keyword, merge_keywords

SOURCE_NAMES = {"lexicon": "expert lexicon", "llm": "named by the LLM"}


@dataclass(frozen=True)
class KeywordSources:
    """One document's keywords by source, and the rule keywords' collection counts."""

    rule: tuple[str, ...] = ()
    lexicon: tuple[str, ...] = ()
    llm: tuple[str, ...] = ()
    counts: Mapping[str, int] | None = None

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> KeywordSources:
        """The keyword part of a registry record (an empty one for an unknown document)."""
        sources: Mapping[str, Sequence[str]] = record.get("keywords", {})
        return cls(tuple(sources.get("rule", ())), tuple(sources.get("lexicon", ())),
                   tuple(sources.get("llm", ())), record.get("identity_counts"))

    def by_source(self) -> dict[str, tuple[str, ...]]:
        return {"rule": self.rule, "lexicon": self.lexicon, "llm": self.llm}

    def keywords(self) -> tuple[Keyword, ...]:
        """Merged across rule / lexicon / llm, each with the sources that named it."""
        return merge_keywords(self.rule, self.lexicon, self.llm)

    def texts(self) -> tuple[str, ...]:
        """The merged keywords as written: what a point's ``keywords`` payload holds."""
        return tuple(k.text for k in self.keywords())

    def rows(self, among: int) -> list[dict[str, Any]]:
        """``{"keyword", "sources", "why"}`` rows: a rule keyword says how many of the
        collection's ``among`` documents have it ("in this document only, among 9"); a lexicon
        or LLM keyword says where it came from."""
        counts = self.counts or {}
        rows = []
        for k in self.keywords():
            why = [Distinct(k.text, counts[k.text], among).why()] if k.text in counts else []
            why += [SOURCE_NAMES[s] for s in k.sources if s != "rule"]
            rows.append({"keyword": k.text, "sources": list(k.sources), "why": "; ".join(why)})
        return rows


def merged(sources: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """A record's ``keywords`` dict merged into one list (``KeywordSources.texts``)."""
    return KeywordSources.of({"keywords": sources}).texts()
