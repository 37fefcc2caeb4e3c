"""Hierarchical Contextual Augmentor (paper §3.2, Alg. 1): documents become segments.

Every section becomes one or more segments that carry the section's cascaded path
``(document title, chapter, ..., section)``.  The text that is embedded and BM25-indexed
(``Segment.augmented_text``) depends on the chunking strategy (paper Table 8 ablation):

* ``hca`` (default): the path rendered on the first line, the document's lead (its first
  sentence, see ``document_lead``) on the second, then a blank line, then the body::

      wc(1) > OPTIONS
      wc - print newline, word, and byte counts for each file
      <blank line>
      -L, --max-line-length  print the maximum display width

  The lead says what the document is about.  A title alone often does not (``wc(1)``, a part
  number, a file name), and a question that names no document can only find its document by
  what the document is about; a question that names it still finds it by the title.  The
  segment whose own text opens with the lead does not repeat it (``_augmented``).

* ``title``: only the nearest heading on the first line, then the body.
* ``section``: the body alone (sections, no path).
* ``fixed``: fixed-size token windows over the canonical Markdown, no structure at all.

Rules for awkward sections:

* A long section is split on paragraph boundaries, then sentences, then words, so that every
  piece's augmented text fits the embedder's limit (``max_tokens``); each piece keeps the full
  path, so a split never loses context.
* A heading-only section with sub-sections yields no segment: its title already lives in every
  child's path.  A heading-only *leaf* yields one segment whose body is its title, so it can still
  be found and cited.  Tiny sections are kept as they are: in reference documents the tiny ones
  (NAME, Synopsis, a one-line definition) are often exactly what is asked for, and merging them
  into a sibling would give them the wrong path.
* A definition term (an option, an error code: ``Section.kind == "term"``) is a sub-section like
  any other, so its segment's path ends with the term (``wc(1) > OPTIONS > -L``) and carries
  ``kind="term"``; the lexical route scores it together with its parent section
  (``hiqa.index.lexical``).
* A table becomes a segment of its own (``is_table``).  Its ``text`` is caption + the full table
  (for generation); what is embedded is caption + header row + first column (paper A.4/A.6), or
  the full table with ``table_text="full"``.
* A figure (paper A.3/A.5) becomes a segment of its own (``is_image``, ``image`` naming its
  picture).  Its ``text`` is the caption and the sentences that refer to it; that is what is
  embedded, under the path, so a figure is found like any text.
"""
from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import Enum

from hiqa.formats.statements import aliases
from hiqa.model import Block, Document, Section, Segment, normalize_title, page_labels_of
from hiqa.tokenize import count_tokens

DEFAULT_MAX_TOKENS = 480  # e5's limit is 512 incl. the "passage: " prefix and special tokens
DEFAULT_FIXED_TOKENS = 256
PATH_SEPARATOR = " > "

SEGMENT_FORMAT = 3
"""What ``hca`` augmented text holds: 1, the path; 2, the path and the document's lead; 3, as 2
with a financial statement's other names beside its caption in the path (``_path_line``).  Each
document's registry record keeps the format it was segmented with (none: 1), so a collection
can say which of its documents an older HiQA segmented (``Collection.older_format``), and the
evaluator's cached index is rebuilt when it changes."""

LEAD_CHARS = 200
"""The longest lead kept (about 50 tokens); a longer first sentence is cut at a word."""

_LEAD_END = re.compile(r"[.!?](?=\s|$)|[。！？]")
_LEGAL = re.compile(r"©|\(c\)\s*\d{4}|\bcopyright\b|\ball rights reserved\b|\bpermission is granted\b",
                    re.IGNORECASE)
"""A copyright or licence notice on a title page is never what a document is about."""
_LEAD_LOOKAHEAD = 8


TABLE_TEXTS = ("summary", "full")
"""What a table segment's embedded text holds: its caption and header with a few rows, or all."""


class Strategy(str, Enum):
    FIXED = "fixed"
    SECTION = "section"
    TITLE = "title"
    HCA = "hca"

    @classmethod
    def from_str(cls, value: str | Strategy) -> Strategy:
        if isinstance(value, Strategy):
            return value
        try:
            return cls(value.lower())
        except ValueError:
            valid = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown chunking strategy {value!r}; choose one of: {valid}") from None


def render_path(path: tuple[str, ...] | list[str]) -> str:
    """The cascaded path as it appears in augmented text (display only; paths stay lists)."""
    return PATH_SEPARATOR.join(path)


def head_and_body(strategy: str, path: Sequence[str], augmented_text: str) -> tuple[str, str]:
    """Split augmented text into the head the strategy put on its first line and the body.

    The lexical route scores the two as separate fields (``hiqa.index.lexical``); ``section`` and
    ``fixed`` segments have no head.  The document's lead (the second line of an ``hca``
    segment) belongs to the head: like the title, it is the same for every segment of the
    document, and says which document a question without its name may be about.
    """
    prefix, lead, body = _split_augmented(strategy, path, augmented_text)
    return (prefix + " " + lead if lead else prefix), body


def augmented_lead(strategy: str, path: Sequence[str], augmented_text: str) -> str:
    """The document lead an ``hca`` segment's augmented text carries (``""`` when none)."""
    return _split_augmented(strategy, path, augmented_text)[1]


def _split_augmented(strategy: str, path: Sequence[str], augmented_text: str) -> tuple[str, str, str]:
    """(path line, lead line, body); segments written before the lead have no lead line."""
    try:
        prefix = _prefix(Strategy.from_str(strategy), tuple(path)) if path else ""
    except ValueError:
        prefix = ""
    if prefix and augmented_text.startswith(prefix + "\n\n"):
        return prefix, "", augmented_text[len(prefix) + 2:]
    if prefix and augmented_text.startswith(prefix + "\n"):
        lead, sep, body = augmented_text[len(prefix) + 1:].partition("\n\n")
        if sep and lead and "\n" not in lead:
            return prefix, lead, body
    return "", "", augmented_text


def document_lead(doc: Document) -> str:
    """The document's first sentence: its first paragraph that is not a copyright or licence
    notice (among the first eight), up to the first sentence end, on one line, at most
    ``LEAD_CHARS`` characters.

    It is what most documents open with to say what they are (a man page's NAME line, a
    datasheet's or a report's opening line).  Empty when the document has no text, or when its
    first sentence only repeats the title.
    """
    texts = (b.text for section in doc.sections for b in section.blocks
             if b.kind == "text" and b.text.strip())
    text = next((t for t in itertools.islice(texts, _LEAD_LOOKAHEAD)
                 if not _LEGAL.search(t[:LEAD_CHARS])), "")
    if not text:
        return ""
    end = _LEAD_END.search(text)
    lead = " ".join((text[:end.end()] if end else text).split())
    if len(lead) > LEAD_CHARS:
        cut = lead.rfind(" ", 0, LEAD_CHARS)
        lead = lead[:cut if cut > 0 else LEAD_CHARS].rstrip() + " …"
    if normalize_title(lead.rstrip(".!?。！？")) == normalize_title(doc.title):
        return ""
    return lead


def segment_id(doc_id: str, strategy: str, order: int, piece: int, version: str = "") -> str:
    """Deterministic id (a UUID, as Qdrant point ids must be).

    ``version`` (the source file's hash) is part of it, so a changed document's new segments
    never overwrite the old ones: the index swaps versions instead (``hiqa.collection``).  Its
    first 16 characters count, as in the points' ``version`` and ``index.payload.version_key``, so the
    registry's full hash and the short one give the same id.
    """
    key = f"hiqa\x1f{doc_id}\x1f{strategy}\x1f{order}\x1f{piece}\x1f{version[:16]}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))


def table_embed_text(block: Block) -> str:
    """Caption + header row + first column (paper A.4/A.6): what identifies a table."""
    if not block.rows:
        return (block.caption + "\n" + block.text).strip()
    header = " | ".join(c for c in block.rows[0] if c)
    first_col = ", ".join(r[0] for r in block.rows[1:] if r and r[0])
    return "\n".join(p for p in (block.caption, header, first_col) if p)


def _labelled(segments: list[Segment], labels: tuple[str, ...]) -> list[Segment]:
    """The segments with their document's printed page labels (shared, not copied)."""
    return [replace(s, page_labels=labels) for s in segments] if labels else segments


def segment_document(
    doc: Document,
    strategy: str | Strategy = Strategy.HCA,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    fixed_tokens: int = DEFAULT_FIXED_TOKENS,
    table_text: str = "summary",
    token_counter: Callable[[str], int] = count_tokens,
    version: str = "",
) -> list[Segment]:
    """Split ``doc`` into segments for ``strategy`` (see the module docstring)."""
    strategy = Strategy.from_str(strategy)
    if table_text not in TABLE_TEXTS:
        raise ValueError("table_text must be 'summary' or 'full'")
    labels = page_labels_of(doc)
    if strategy is Strategy.FIXED:
        return _labelled(_fixed_windows(doc, fixed_tokens, token_counter, version), labels)
    has_children = {s.parent for s in doc.sections if s.parent is not None}
    lead = document_lead(doc) if strategy is Strategy.HCA else ""
    out: list[Segment] = []
    for section in doc.sections:
        path = doc.path_of(section)
        prefix = _prefix(strategy, path)
        # the budget counts the lead line even for the one piece that leaves it out
        budget = max(32, max_tokens - token_counter(_with_lead(prefix, lead)) - 2)
        block_spans = _block_spans(doc, section)
        text_blocks = [(b, sp) for b, sp in zip(section.blocks, block_spans) if b.kind == "text"]
        tables = [(b, sp) for b, sp in zip(section.blocks, block_spans) if b.kind == "table"]
        figures = [(b, sp) for b, sp in zip(section.blocks, block_spans) if b.kind == "image"]
        # (text, span, pages, is_table, embedded text, image)
        pieces: list[tuple[str, tuple[int, int], tuple[int, ...], bool, str, str]] = []
        for text, span, pages in _pack(text_blocks, budget, token_counter):
            pieces.append((text, span, pages, False, text, ""))
        for block, span in tables:
            full = (block.caption + "\n\n" + block.text).strip() if block.caption else block.text
            embed = full if table_text == "full" else table_embed_text(block)
            if token_counter(embed) > budget:
                embed = _truncate(embed, budget, token_counter)
            pieces.append((full, span, (block.page,), True, embed, ""))
        for block, span in figures:
            text = block.text.strip()
            embed = _truncate(text, budget, token_counter) if token_counter(text) > budget else text
            pieces.append((text, span, (block.page,), False, embed, block.image))
        if not pieces and section.level > 0 and section.order not in has_children:
            pieces.append(
                (section.title, section.span, section.pages or (1,), False, section.title, "")
            )
        for piece, (text, span, pages, is_table, embed, image) in enumerate(pieces):
            out.append(
                Segment(
                    segment_id=segment_id(doc.doc_id, strategy.value, section.order, piece, version),
                    doc_id=doc.doc_id,
                    doc_title=doc.title,
                    source=doc.source,
                    path=path,
                    level=section.level,
                    order=section.order,
                    piece=piece,
                    pages=pages,
                    text=text,
                    augmented_text=_augmented(prefix, lead, embed),
                    is_table=is_table,
                    strategy=strategy.value,
                    kind=section.kind,
                    span=span,
                    image=image,
                )
            )
    return _labelled(out, labels)


def _with_lead(prefix: str, lead: str) -> str:
    return prefix + "\n" + lead if prefix and lead else prefix


def _augmented(prefix: str, lead: str, embed: str) -> str:
    """``prefix`` (the path line), the lead line when there is a lead, then the embedded text.

    A segment whose own text opens with the lead (the document's opening lines: a man page's
    NAME) does not repeat it: twice over, it made that short segment outrank the one that
    answers, for any question about what the document is for.
    """
    if not prefix:
        return embed
    if lead and " ".join(embed[:len(lead) * 2].split()).startswith(lead.removesuffix(" …")):
        lead = ""
    return _with_lead(prefix, lead) + "\n\n" + embed


def _prefix(strategy: Strategy, path: tuple[str, ...]) -> str:
    if strategy is Strategy.HCA:
        return _path_line(path)
    if strategy is Strategy.TITLE:
        return path[-1]
    return ""


def _path_line(path: tuple[str, ...]) -> str:
    """The path as the first line of ``hca`` text: a financial statement's caption followed by
    the names it goes by that it does not print ("Consolidated Statements of Operations (income
    statement; statement of income; profit and loss)", ``hiqa.formats.statements``).  Filers
    choose among several names for one statement and questions use yet others ("the income
    statement", "the statement of financial position"): without them a question naming the
    statement meets its rows by neither route.  The path itself (payload, display) is as
    printed."""
    shown = []
    for title in path:
        names = aliases(title)
        shown.append(f"{title} ({'; '.join(names)})" if names else title)
    return render_path(shown)


def _block_spans(doc: Document, section: Section) -> list[tuple[int, int]]:
    """Character range of each block in the canonical Markdown (as ``build_document`` wrote it)."""
    spans = []
    pos = section.body_span[0]
    for b in section.blocks:
        rendered = b.markdown
        start = doc.markdown.find(rendered, pos)
        if start < 0:
            start = pos
        spans.append((start, start + len(rendered)))
        pos = start + len(rendered)
    return spans


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n")


def _pack(
    blocks: list[tuple[Block, tuple[int, int]]],
    budget: int,
    counter: Callable[[str], int],
) -> list[tuple[str, tuple[int, int], tuple[int, ...]]]:
    """Greedily pack paragraphs (split further where one alone is too long) into pieces."""
    units: list[tuple[str, tuple[int, int], int]] = []
    tokens: list[int] = []  # each unit's count, computed once
    for block, (start, end) in blocks:
        text = block.text.strip("\n")
        n = counter(text)
        if n <= budget:
            units.append((text, (start, end), block.page))
            tokens.append(n)
            continue
        for s, e in _split_long(text, budget, counter):
            units.append((text[s:e], (start + s, start + e), block.page))
            tokens.append(counter(text[s:e]))
    pieces: list[tuple[str, tuple[int, int], tuple[int, ...]]] = []
    cur: list[tuple[str, tuple[int, int], int]] = []
    cur_tokens = 0
    for unit, t in zip(units, tokens):
        if cur and cur_tokens + t > budget:
            pieces.append(_join(cur))
            cur, cur_tokens = [], 0
        cur.append(unit)
        cur_tokens += t + 1
    if cur:
        pieces.append(_join(cur))
    return pieces


def _join(units: list[tuple[str, tuple[int, int], int]]) -> tuple[str, tuple[int, int], tuple[int, ...]]:
    return (
        "\n\n".join(u[0] for u in units),
        (units[0][1][0], units[-1][1][1]),
        tuple(sorted({u[2] for u in units})),
    )


def _split_long(text: str, budget: int, counter: Callable[[str], int]) -> list[tuple[int, int]]:
    """Split one over-long paragraph: at sentence ends, and at word gaps inside huge sentences."""
    bounds: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE.finditer(text):
        if m.start() > pos:
            bounds.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        bounds.append((pos, len(text)))
    units: list[tuple[int, int]] = []
    for s, e in bounds:
        if counter(text[s:e]) <= budget:
            units.append((s, e))
            continue
        words = [(m.start() + s, m.end() + s) for m in re.finditer(r"\S+", text[s:e])]
        i = 0
        while i < len(words):
            j = _fit_words(text, words, i, budget, counter)
            units.append((words[i][0], words[j - 1][1]))
            i = j
    spans: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in units:
        if cur and counter(text[cur[0]:e]) <= budget:
            cur = (cur[0], e)
        else:
            if cur:
                spans.append(cur)
            cur = (s, e)
    if cur:
        spans.append(cur)
    return spans


def _fit_words(text: str, words: list[tuple[int, int]], i: int, budget: int,
               counter: Callable[[str], int]) -> int:
    """Largest j > i such that words[i:j] fit the budget (binary search; at least one word)."""
    lo, hi = i + 1, min(len(words), i + budget)  # every word is at least one token
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter(text[words[i][0]:words[mid - 1][1]]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _truncate(text: str, budget: int, counter: Callable[[str], int]) -> str:
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    if not words:
        return text
    j = _fit_words(text, words, 0, budget, counter)
    return text[: words[j - 1][1]]


def _fixed_windows(
    doc: Document, size: int, counter: Callable[[str], int], version: str = ""
) -> list[Segment]:
    """Fixed-size token windows over the canonical Markdown: the structure-free baseline."""
    text = doc.markdown
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    out: list[Segment] = []
    i = 0
    order = 0
    while i < len(words):
        j = _fit_words(text, words, i, size, counter)
        start, end = words[i][0], words[j - 1][1]
        pages = sorted(
            {p for s in doc.sections if s.span[0] < end and s.span[1] > start for p in s.pages}
        ) or [1]
        chunk = text[start:end]
        out.append(
            Segment(
                segment_id=segment_id(doc.doc_id, Strategy.FIXED.value, order, 0, version),
                doc_id=doc.doc_id,
                doc_title=doc.title,
                source=doc.source,
                path=(doc.title,),
                level=0,
                order=order,
                piece=0,
                pages=tuple(pages),
                text=chunk,
                augmented_text=chunk,
                is_table=False,
                strategy=Strategy.FIXED.value,
                span=(start, end),
            )
        )
        order += 1
        i = j
    return out
