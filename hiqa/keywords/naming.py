"""Whether a question uses a document keyword as the document's *name* (issue #45).

A keyword matched in a question is Eq. 2's ``m``: a soft bonus for its document.  Issue #29 went
further and ranks the documents a question names before all others (``fusion.named_first``),
which is right for "Django 3.2: what changed in the ORM?" and wrong for "wait for an I/O event
on a file descriptor", asked of a collection where ``wait`` is a man page: there the word is an
ordinary verb.  This module decides which it is, per keyword and question, from evidence only:

* **the keyword's shape** — a number (``3.2``, ``FY2018``, ``b2sum``), several words
  (``Best Buy``), a code shape (``add-apt-repository``, ``wait(2)``): nobody writes these by
  accident, so they name;
* **the question's form** — a man-page section mark after it (``wait(2)``), quotes or back
  ticks around it, a label before a colon at the start (``wait: …``), a word for a kind of
  document right after it (``the wait page``, ``the kill command``), a capital where the
  sentence does not ask for one (``How did Corning's margin change``, in a question not set
  in capitals): the asker points at it;
* **the collection's own usage** — a plain word that the bodies of many *other* documents use
  (documents that do not carry the keyword themselves) is an ordinary word of this collection,
  so the question's use of it is weak evidence.  ``wait`` stands in the text of many man pages,
  ``wc`` in few.

Strong evidence keeps named-first; weak evidence keeps only Eq. 2's soft bonus.  Measured side by
side in docs/reports.md ("Naming on evidence").
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hiqa.keywords.rules import _pieces, normalize_keyword, phrase_spans

ORDINARY_SPREAD = 0.1
"""A plain-word keyword is an ordinary word of the collection when the bodies of more than this
share of the documents that do not carry it use it.  A name is written mostly by its own
document (a man page's name in a few SEE ALSO lines of others, a company's in its own filings);
a verb or noun of the language is spread across the collection.  Measured in docs/reports.md:
on the man-page sets the names questions use as names sit at 0.05 or below, the ordinary words
questions used as words at 0.10 and above (``bind`` 0.10, ``mount`` 0.19, ``free`` 0.29)."""

KIND_WORDS = frozenset(
    ["page", "manpage", "man", "manual", "command", "utility", "program", "tool", "function", "syscall", "document", "report", "filing", "datasheet", "guide", "release", "library", "module", "package"]
)
"""Words for a kind of document: ``KEYWORD KIND`` ("the kill command", "the wait page") points at
a document by its name."""

_QUOTES = {"'": "'", '"': '"', "`": "`", "“": "”", "‘": "’", "«": "»", "「": "」"}
_SECTION_MARK = re.compile(r"\(\d[a-z]{0,4}\)")


@dataclass(frozen=True)
class Naming:
    """How a question uses one of a document's keywords: as its name (``strong``) or not."""

    keyword: str
    strong: bool
    why: str
    by_usage: bool = False
    """Named on the collection's usage alone (a plain word few other documents use), not by
    its shape or the question's form: the weakest name, ``fusion.named_first`` lets a segment
    that uses it and outranks the named document keep its place."""

    def message(self) -> str:
        """What the app and the CLI say of a keyword not taken as a name."""
        return f"'{self.keyword}' is also an ordinary word here: not taken as a name ({self.why})"


def named_by_shape(keyword: str) -> bool:
    """A number, several words or a code shape: a keyword that names wherever it stands."""
    key = normalize_keyword(keyword)
    return len(_pieces(keyword)) > 1 or not key.isalpha()


def named_by_form(question: str, keyword: str) -> str:
    """How the question points at ``keyword`` as a name (empty when it does not): a section
    mark, quotes, a leading label, a kind word after it."""
    for start, end in phrase_spans(question, {normalize_keyword(keyword)}):
        after = question[end:]
        if _SECTION_MARK.match(after):
            return "a section mark"
        before = question[start - 1] if start else ""
        if before in _QUOTES and after[:1] == _QUOTES[before]:
            return "quoted"
        if not question[:start].strip() and after.lstrip()[:1] == ":":
            return "a label"
        following = _pieces(after)
        if following and following[0] in KIND_WORDS:
            return f"'{keyword} {after.split()[0]}'"
        if question[start].isupper() and not _sentence_start(question[:start]) \
                and not _set_in_capitals(question):
            return "capitalised mid-sentence"
    return ""


def _sentence_start(before: str) -> bool:
    """Whether a word after ``before`` opens a sentence, where a capital says nothing."""
    before = before.rstrip(" \t\n\"'“‘(«「")
    return not before or before[-1] in ".!?:;"


def _set_in_capitals(question: str) -> bool:
    """A question in title case or capitals, where a capital says nothing either."""
    words = [w for w in re.findall(r"[^\W\d_]+", question) if len(w) > 3]
    return not words or sum(w[0].isupper() for w in words) * 2 > len(words)


def naming(question: str, keyword: str, spread: Callable[[str], float | None]) -> Naming:
    """Whether ``question`` uses ``keyword`` (one of a document's, found in it) as a name.

    ``spread(keyword)`` is the share of the collection's documents that do not carry the keyword
    whose bodies use it (None for a function word, which the lexical index does not keep); it is
    asked only of plain words the question does not point at.
    """
    if named_by_shape(keyword):
        return Naming(keyword, True, "its shape names")
    form = named_by_form(question, keyword)
    if form:
        return Naming(keyword, True, f"the question names it: {form}")
    share = spread(keyword)
    if share is None:
        return Naming(keyword, False, "a function word")
    if share > ORDINARY_SPREAD:
        return Naming(keyword, False, f"used in {share:.0%} of the other documents")
    return Naming(keyword, True, f"used in {share:.0%} of the other documents", by_usage=True)
