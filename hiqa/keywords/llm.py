"""LLM keyword extraction: salient identifiers and aliases of a document (paper §3.3).

Near-identical documents (manuals of sibling products, versions of one standard) differ in a
few identifiers: model numbers, product names, versions, command names, abbreviations.  The
rule-based extractor and the expert lexicon find most of them; ``llm_keywords`` asks the model
for those in the title (and optionally the first page).  The reply is parsed line by line,
cleaned, and only kept where it is grounded in the text it was made from, so a small model's
inventions do not become retrieval keys.  ``hiqa.keywords.rules.merge_keywords`` joins the three
sets and records where each keyword came from, for display as rule / lexicon / llm.
"""

from __future__ import annotations

import re
import unicodedata

from hiqa.keywords.rules import clean_keyword, normalize_keyword
from hiqa.llm import ChatModel

MAX_KEYWORDS = 15
MAX_WORDS = 5
MAX_CHARS = 60
FIRST_PAGE_CHARS = 2000

SYSTEM_PROMPT = (
    "You extract search keywords from the start of a technical document. List the salient "
    "identifiers that distinguish this document from similar ones: product or model names, "
    "model numbers, versions, standards, command names, abbreviations and their expansions. "
    f"Write one keyword per line, at most {MAX_KEYWORDS}, copied as written in the text. "
    "No numbering, no explanations."
)

_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|[a-z][.)])\s+", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:keywords?|identifiers?|aliases?)\s*:\s*", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W_]+")


def keyword_messages(title: str, first_page: str = "") -> list[dict[str, str]]:
    user = f"Title: {title.strip()}"
    if first_page.strip():
        user += f"\n\nFirst page:\n{first_page.strip()[:FIRST_PAGE_CHARS]}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_keywords(reply: str, source_text: str) -> tuple[str, ...]:
    """Keywords from the model's reply: one per line or comma-separated, cleaned.

    A candidate is kept when it has at most ``MAX_WORDS`` words and ``MAX_CHARS`` characters,
    at least two letters or digits, and every one of its words occurs in ``source_text`` (title
    plus first page): chatter ("Here are the keywords") and invented names fall out.  Order of
    first mention, deduplicated by ``normalize_keyword``.
    """
    known = set(_TOKEN.findall(unicodedata.normalize("NFKC", source_text).casefold()))
    found: dict[str, str] = {}
    for line in reply.splitlines():
        line = _LABEL.sub("", _BULLET.sub("", line))
        for part in re.split(r"[,;]", line):
            kw = clean_keyword(part)
            key = normalize_keyword(kw)
            words = _TOKEN.findall(kw.casefold())
            if (
                len(key) < 2
                or len(kw.split()) > MAX_WORDS
                or len(kw) > MAX_CHARS
                or any(w not in known for w in words)
                or key in found
            ):
                continue
            found[key] = kw
            if len(found) == MAX_KEYWORDS:
                return tuple(found.values())
    return tuple(found.values())


def llm_keywords(title: str, first_page: str, llm: ChatModel) -> tuple[str, ...]:
    """Salient identifiers and aliases of a document, as the model lists them (grounded).

    Pass a ``CachedLLM`` so that re-indexing the same documents makes no further calls.
    ``LLMError`` propagates; the caller keeps the rule-based and lexicon keywords.
    """
    if not title.strip() and not first_page.strip():
        return ()
    reply = llm.complete(keyword_messages(title, first_page), max_tokens=128)
    return parse_keywords(reply, f"{title}\n{first_page[:FIRST_PAGE_CHARS]}")
