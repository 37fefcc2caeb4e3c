"""Extractive answers: the sentences of the retrieved segments that best answer the question.

Used when no LLM endpoint is configured.  A segment is read as prose, not as a string: code
(fenced, indented or symbol-dense lines such as a command synopsis), tables and headings are
never quoted; a short line without final punctuation that introduces the paragraphs below it
(a definition-list term such as ``CONCURRENTLY``) is not quoted either, but it is kept as the
*context* of those paragraphs, because the question usually names the term and the sentence
under it does not repeat it.  Sentences are split at ``. ! ?`` but not after an abbreviation
(``i.e.``, ``e.g.``), an ellipsis (``DROP DATABASE ... WITH``) or inside inline code, and a
sentence cut off at a segment's end is dropped, so every quote is whole.

Each candidate sentence is scored by its own similarity to the question:

* term overlap: the share of the question's content words found in the sentence or its
  context, each word weighted by its rarity among the candidates (an IDF over sentences, so
  "index" counts little in a set of index pages and "_ccnew" a lot);
* when an embedder is given (the collection's), the cosine between the question and the
  sentence embedded as a passage with its topic (document title, heading or term); this is
  the main signal, the shared words settle near-ties;
* a tiny prior for the segment's retrieval rank, which breaks exact ties toward the evidence
  the ranking trusted most, and a small bonus for the first sentence under a heading or term
  that the question names (its definition).

The best sentences are returned best first, at most three, each with the number of the context
block it was quoted from so the answer can cite it.  A sentence that opens by leaning on the
previous one ("That is, …", "Thus, …") is quoted together with it.  The weights were set on the
demo's gold phrases (``bench/bench_answers.py``): 27 of 34 answers contain theirs (the
demo's retrieval moves this by a question or two as it changes).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hiqa.model import Segment
from hiqa.tokenize import STOP_WORDS

MAX_SENTENCES = 3
EMBED_POOL = 24
"""At most this many candidates (the best by shared words and retrieval rank) are embedded.
Five context blocks hold 20-80 sentences, and each costs the embedder ~40 ms on one core, so
this bounds an answer's cost (~1 s) when four analysts ask at once (issue #34).  Against
embedding up to 80, the picks were identical on 144 of 144 questions (34 demo, 60 Django
release notes, 50 man pages); at 16 on 142."""
EMBED_CHARS = 256
"""A pooled sentence is embedded from its first this many characters (at a word's end), its
topic before them: the embedder's cost grows with the tokens, and a long sentence's opening
says what it is about.  On 3,000 segments of one long sentence each an answer cost 2.6 CPU-s,
95 % of it these embeddings (``bench_app.py --protocol``, #43 item 9)."""
OVERLAP_WEIGHT = 0.1
"""Cosines of e5 lie in a narrow band (0.8-0.95), so a small weight already lets shared rare
words decide near-ties; a larger one picks sentences that merely repeat the question's words
(measured with ``bench/bench_answers.py``)."""
RANK_PRIOR = 0.002
DEFINITION_BONUS = 0.02
"""For the first sentence under a heading or term that the question names ("In CREATE INDEX,
what does CONCURRENTLY do?"): reference text defines a term first and adds caveats after."""
KEEP_WITHIN = 0.08
"""A further sentence is kept only if its score is within this of the best one's."""
LEANS_BACK = re.compile(
    r"^\(?(?:that is|as a result|thus|therefore|hence|however|also|so|this|these|those|such|"
    r"it|they|in this case|in that case|in addition|otherwise|then|instead|note,? however|"
    r"for example|consequently|furthermore|moreover|similarly|likewise|but|to do this)\b",
    re.IGNORECASE)
"""A sentence opening like this leans on the one before it ("That is, no attempt is made..."):
quoted alone it misses the point the previous sentence makes, so the two are quoted together."""

ABBREVIATIONS = frozenset([
    "i.e", "e.g", "etc", "vs", "cf", "approx", "fig", "figs", "sec", "eq", "eqs", "no", "nos",
    "ch", "vol", "pp", "p", "al", "resp", "incl", "esp", "dept", "mr", "mrs", "ms", "dr", "st",
    "jr", "sr", "inc", "ltd", "co", "corp",
])
_STOPWORDS = STOP_WORDS | {"could", "did", "into", "me", "my", "should", "so", "than", "then",
                          "these", "those", "were", "whom", "would", "you", "your"}
"""BM25's question words plus a few more: a question's other words are what it asks about."""
_WORD = re.compile(r"[^\W_]+(?:[_.'-][^\W_]+)*|_[^\W_]\w*", re.UNICODE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[`]?[A-Z0-9_])")
_TERMINAL = re.compile(r"[.!?][\"'”’)\]]*$")
_CODE_CHARS = set("[]{}|<>=;")


@dataclass(frozen=True)
class Sentence:
    """A quotable sentence of context block ``block`` (1-based) and what it is scored with."""

    block: int
    position: int
    text: str
    context: str = ""
    paragraph: int = 0
    term: str = ""
    """The definition-list term the sentence describes (an option, a clause), if any."""


@dataclass(frozen=True)
class Pick:
    """What the answer quotes: ``sentences`` (one, or two that belong together), best first."""

    sentences: tuple[Sentence, ...]
    score: float

    @property
    def block(self) -> int:
        return self.sentences[0].block

    @property
    def text(self) -> str:
        """The quote, led by the term it describes when the sentence does not name it: asked how
        to reset a table's sequences, "Automatically restart sequences ..." is no answer
        without the ``RESTART IDENTITY`` it is the description of."""
        body = " ".join(s.text for s in self.sentences)
        term = self.sentences[0].term
        if term and " ".join(words(term)) not in " ".join(words(body)):
            return f"{term}: {body}"
        return body


def words(text: str) -> list[str]:
    """Lower-cased words; identifiers such as ``_ccnew``, ``pg_temp``, ``v2.3`` stay whole."""
    return [w.casefold() for w in _WORD.findall(text)]


def content_terms(text: str) -> set[str]:
    return {w for w in words(text) if w not in _STOPWORDS}


# --------------------------------------------------------------------------- reading a segment

def _is_code_line(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if line.startswith(("    ", "\t")):
        return True
    symbols = sum(ch in _CODE_CHARS for ch in stripped)
    return symbols >= 2 and symbols / len(stripped) > 0.04


def _looks_like_code(lines: Sequence[str]) -> bool:
    body = [ln for ln in lines if ln.strip()]
    return bool(body) and sum(map(_is_code_line, body)) * 2 >= len(body)


def _fenced(lines: list[str]) -> list[bool]:
    """Per line: inside (or on) a code fence.  A segment cut out of a longer document can start
    or end inside a fence; with an odd number of fences, the side that looks more like code is
    taken to be the open one."""
    fences = [i for i, ln in enumerate(lines) if _FENCE.match(ln)]
    inside = False
    if len(fences) % 2:
        before, after = lines[: fences[0]], lines[fences[-1] + 1:]
        inside = _looks_like_code(before) and not _looks_like_code(after)
    out = []
    for ln in lines:
        if _FENCE.match(ln):
            out.append(True)
            inside = not inside
            continue
        out.append(inside)
    return out


def _paragraphs(text: str) -> list[tuple[str, list[str]]]:
    """``(kind, lines)`` per paragraph: kind is code, table, heading, list or prose."""
    lines = text.splitlines()
    code = _fenced(lines)
    out: list[tuple[str, list[str]]] = []
    current: list[str] = []
    current_code = False

    def flush() -> None:
        if current:
            out.append(("code" if current_code else _kind(current), list(current)))
            current.clear()

    for line, in_code in zip(lines, code):
        if not line.strip() or in_code != current_code:
            flush()
            current_code = in_code
            if not line.strip():
                continue
        current.append(line)
    flush()
    return out


def _kind(lines: list[str]) -> str:
    first = lines[0].lstrip()
    if first.startswith("|"):
        return "table"
    if first.startswith("#"):
        return "heading"
    if _looks_like_code(lines):
        return "code"
    if _LIST_ITEM.match(lines[0]):
        return "list"
    return "prose"


def _is_term(lines: list[str]) -> bool:
    """A definition-list term: one to three short lines without final punctuation."""
    return len(lines) <= 3 and all(
        len(ln.split()) <= 12 and not _TERMINAL.search(ln.strip()) and not ln.strip().endswith(":")
        for ln in lines)


def split_sentences(text: str) -> list[str]:
    """Sentences of one prose paragraph (whitespace collapsed).

    No split after an abbreviation (``i.e.``, ``e.g.``, ``etc.``, single initials), after an
    ellipsis, or inside inline code (`` `a. B` ``).
    """
    flat = " ".join(text.split())
    protected = _protect_code(flat)
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(protected):
        end = m.start()
        before = protected[start:end + 1]
        if _no_split(before, protected, m):
            continue
        out.append(flat[start:m.end()].strip())
        start = m.end()
    tail = flat[start:].strip()
    if tail:
        out.append(tail)
    return out


def _protect_code(text: str) -> str:
    """The same text with the inside of inline code spans blanked (same length)."""
    return re.sub(r"`[^`]*`", lambda m: "`" + "x" * (len(m.group(0)) - 2) + "`", text)


def _no_split(before: str, text: str, match: re.Match[str]) -> bool:
    mark = text[match.start():match.end()].rstrip()
    if mark.startswith(".."):  # ellipsis
        return True
    if not mark.startswith("."):
        return False
    last = re.search(r"([\w.]+)\.$", before.rstrip())
    token = last.group(1).casefold() if last else ""
    return token in ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def sentences(segment_text: str, block: int, title: str = "", term: str = "") -> list[Sentence]:
    """The quotable sentences of one segment, with the term each sits under as context (a term
    line in the text, else ``term``: the term a term segment is the item of)."""
    out: list[Sentence] = []
    line_term = ""  # a term line read in the text: part of the context its sentences score with
    paragraphs = _paragraphs(segment_text)
    for i, (kind, lines) in enumerate(paragraphs):
        if kind in ("code", "table", "heading"):
            continue
        if kind == "prose" and _is_term(lines):
            following = paragraphs[i + 1][0] if i + 1 < len(paragraphs) else None
            if following is None or following in ("prose", "list"):
                line_term = " ".join(" ".join(ln.split()) for ln in lines)
                continue
        if kind == "list":
            parts = _list_items(lines)
        else:
            parts = split_sentences("\n".join(lines))
        context = " ".join(x for x in (title, line_term) if x)
        for part in parts:
            if _quotable(part, kind):
                out.append(Sentence(block, len(out), part, context, i, line_term or term))
    return out


def _list_items(lines: list[str]) -> list[str]:
    items: list[str] = []
    for ln in lines:
        if _LIST_ITEM.match(ln) or not items:
            items.append(" ".join(ln.split()))
        else:
            items[-1] += " " + " ".join(ln.split())
    return items


def _quotable(text: str, kind: str) -> bool:
    if len(words(text)) < 3:
        return False
    if kind == "list":
        return True
    return bool(_TERMINAL.search(text))


# --------------------------------------------------------------------------- choosing

def _topic(segment: Segment) -> str:
    """What every sentence of a segment is about: its document and its own heading (for a
    definition term, the term)."""
    return " ".join(dict.fromkeys([segment.doc_title, *segment.section_path[-1:]]))


def _opening(text: str) -> str:
    """``text`` cut to ``EMBED_CHARS`` at a word's end (whole when shorter)."""
    if len(text) <= EMBED_CHARS:
        return text
    cut = text.rfind(" ", 0, EMBED_CHARS + 1)
    return text[:cut if cut > EMBED_CHARS // 2 else EMBED_CHARS]


def pick_sentences(question: str, segments: Sequence[Segment], embedder: Any | None = None,
                   limit: int = MAX_SENTENCES) -> list[Pick]:
    """The best answer sentences across ``segments`` (context block ``i + 1``), best first."""
    candidates = [s for i, seg in enumerate(segments, 1)
                  for s in sentences(seg.text, i, _topic(seg),
                                     seg.section_path[-1] if seg.kind == "term" else "")]
    if not candidates:
        return []
    terms = content_terms(question)
    bags = [content_terms(f"{c.context} {c.text}") for c in candidates]
    idf = {t: math.log(1 + len(bags) / (1 + sum(t in b for b in bags))) for t in terms}
    total = sum(idf.values()) or 1.0
    lexical = np.array([sum(idf[t] for t in terms & bag) / total for bag in bags])
    named = {i for i, seg in enumerate(segments, 1)
             if seg.piece == 0 and seg.section_path
             and (head := content_terms(seg.section_path[-1])) and head <= terms}
    prior = np.array([-RANK_PRIOR * (c.block - 1)
                      + (DEFINITION_BONUS if c.block in named and c.position == 0 else 0.0)
                      for c in candidates])
    if embedder is None:
        scores = lexical + prior
        if not lexical.any():  # nothing in common with the question: the top passage's start
            limit = 1
    else:
        scores = OVERLAP_WEIGHT * lexical + prior
        pool = [int(i) for i in np.argsort(-scores, kind="stable")[:EMBED_POOL]]
        q = np.asarray(embedder.embed_query(question), dtype=np.float32)
        vecs = np.asarray(embedder.embed_passages(
            [": ".join(x for x in (candidates[i].context, _opening(candidates[i].text)) if x)
             for i in pool]), dtype=np.float32)
        dense = np.full(len(candidates), -np.inf)
        dense[pool] = vecs @ q
        scores = scores + dense
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    picks: list[Pick] = []
    used: set[int] = set()
    quoted: set[str] = set()
    for i in order:
        if not np.isfinite(scores[i]) or len(picks) >= limit:
            break
        if picks and scores[i] < picks[0].score - KEEP_WITHIN:
            break
        span = _with_neighbours(candidates, i)
        keys = {" ".join(words(candidates[j].text)) for j in span}
        if used & set(span) or quoted & keys:  # overlapping quote, or the same words again
            continue
        used.update(span)
        quoted.update(keys)
        picks.append(Pick(tuple(candidates[j] for j in span), float(scores[i])))
    return picks


def _with_neighbours(candidates: Sequence[Sentence], i: int, back: int = 2) -> list[int]:
    """``i`` plus the sentences before it that it leans back on (a chain of at most ``back``:
    "Also, …" after "(Thus, …)" after the point itself), and the one after it if that one leans
    back on ``i``; same block and paragraph only."""
    def together(a: int, b: int) -> bool:
        return (0 <= a and b < len(candidates) and candidates[a].block == candidates[b].block
                and candidates[a].paragraph == candidates[b].paragraph
                and bool(LEANS_BACK.match(candidates[b].text)))

    span = [i]
    while len(span) <= back and together(span[0] - 1, span[0]):
        span.insert(0, span[0] - 1)
    if together(i, i + 1):
        span.append(i + 1)
    return span
