"""The structure an SEC form defines: Parts and Items as the top of a filing's tree (issue #46,
item 2).

A 10-K or 10-Q numbers its sections itself — "PART II", "Item 7. Management's Discussion and
Analysis", "Item 1A. Risk Factors" — in an order the form fixes, whatever the producer made of
them: a bookmark, a bold line, a line in body type, a table cell of the printed contents.  So the
parsers' levels for them vary from filing to filing (Items at level 1, 2 or 3, some Items a
definition term, some plain text, the cover's "SECURITIES AND EXCHANGE COMMISSION" above them
all), and a question about "Item 7" of one filing met a different tree than of the next.

``form_structure`` reads the numbering from the document's own lines: every heading or short
paragraph that starts "Item N[A-C]" or "Part I-IV", on a page that is not the printed contents
(a page listing eight Items or more), and keeps the longest run of them in the form's order
(Part, then Item number, then letter).  With four Items or more the document is a filing of that
form: Parts become level 1, Items the level below (level 1 without Parts), every other heading
keeps its depth relative to the shallowest heading of its Item; headings of the front pages (the
cover, up to the printed contents, before any Part or Item) become their text.  Anything else
is left as the parser made it.  ``note_headings`` then makes the numbered notes to the financial
statements ("Note 1. Basis of Presentation") the headings of their notes.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from hiqa.formats.statements import family
from hiqa.model import Block, Heading

Event = Heading | Block

_ITEM = re.compile(r"^item\s+(\d{1,2})(?:\.(\d{2}))?([abc])?(?=[\s.:—–-]|$)[\s.:—–-]*(.*)$",
                   re.IGNORECASE)
_PART = re.compile(r"^part\s+(iv|i{1,3})(?=[\s.:—–-]|$)[\s.:—–-]*(.*)$", re.IGNORECASE)
_NOTE = re.compile(r"^(?i:note)\s+(\d{1,2})(?=[\s.:—–-])[\s.:—–-]*([A-Z(].*)$")
_ITEM_MENTION = re.compile(r"\bitem\s+(\d{1,2}[abc]?)\b", re.IGNORECASE)
_PART_MENTION = re.compile(r"\bpart\s+(iv|i{1,3})\b", re.IGNORECASE)
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4}
MIN_ITEMS = 4
"""Items in the form's order a document shows before it is read as a filing."""
CONTENTS_ITEMS = 8
"""Distinct Items on one page that make it the printed contents, not the body (a 10-K's body
holds at most five on a page: Items 10-14, each a line referring to the proxy statement)."""
CONTENTS_PARTS = 3
"""Distinct Parts on one page that make it the printed contents (a body page holds two at most:
the end of Part III and the start of Part IV)."""
_MAX_WORDS = 25


Key = tuple[int, int, int, int]


class Mark(NamedTuple):
    """A Part or Item line: the event it is in, its place in the form's order, its title."""

    at: int
    key: Key
    title: str


def label(text: str) -> tuple[Key, ...]:
    """The form's order of a Part or Item line, ``(part, item, sub-item, letter)`` with item
    ``-1`` for a Part ("PART II" → ``(2, -1, 0, 0)``; "Item 1A. Risk Factors" → ``(0, 1, 0,
    1)`` before its Part is known; "Item 2.02" → ``(0, 2, 2, 0)``); two for a Part and its first
    Item set as one line ("PART II Item 5. Market …"); none for any other text.

    A line that goes on with a lower-case word is a reference ("Item 7 of this report"), one
    that ends in a number an entry of the printed contents, "PART I Page" its column head."""
    return tuple(key for key, _ in _labels(text))


def _labels(text: str) -> list[tuple[Key, str]]:
    line = " ".join(text.split())
    if not line or len(line.split()) > _MAX_WORDS:
        return []
    part = _PART.match(line)
    if part is not None:
        key: Key = (_ROMAN[part[1].casefold()], -1, 0, 0)
        head, rest = line[:part.start(2)].strip(" .:—–-"), part[2].strip()
        after = _labels(rest) if _ITEM.match(rest) else []
        if after:
            return [(key, head), *after]
    else:
        found = _ITEM.match(line)
        if found is None:
            return []
        rest = found[4].strip()
        key = (0, int(found[1]), int(found[2] or 0),
               " abc".index(found[3].casefold()) if found[3] else 0)
    if rest and (rest[0].islower() or rest[-1].isdigit() or rest.casefold() == "page"):
        return []
    return [(key, line)]


def _text(ev: Event) -> str:
    if isinstance(ev, Heading):
        return ev.title
    return ev.text if ev.kind == "text" else ""


def form_structure(events: Sequence[Event]) -> tuple[list[Event], dict[int, int]]:
    """``events`` with a filing's Parts and Items as the top levels (module docstring), and the
    level of the Item open at each event position that is inside one (for the statement
    captions, ``structure._statement_captions``).  A document that is not a filing comes back
    as it was, with no Items."""
    found: list[Mark] = []
    part = 0
    for i, ev in enumerate(events):
        for key, title in _labels(_text(ev)):
            if key[1] < 0:
                part = key[0]
            found.append(Mark(i, key if key[1] < 0 else (part, *key[1:]), title))
    contents = _contents_pages(events, found)
    found = [m for m in found if events[m.at].page not in contents]
    if any(m.key[1] < 0 for m in found):  # an Item before the first Part is a mention
        found = [m for m in found if m.key[0] > 0]
    chain = _longest_run(found)
    if sum(1 for m in chain if m.key[1] >= 0) < MIN_ITEMS:
        return list(events), {}
    chain = [*chain, *_statements_after_items(events, chain)]
    first = chain[0].at
    titled = {ev.page for ev in events[:first]
              if _text(ev).casefold().strip() in ("contents", "table of contents")
              or isinstance(ev, Heading) and "contents" in ev.title.casefold()}
    front = max((p for p in contents | titled if p < events[first].page),
                default=min(ev.page for ev in events))
    return _relevel(events, chain, front)


_STATEMENTS_FRONT = ("report of independent registered public accounting firm",
                     "index to financial statements", "index to consolidated financial statements")
"""How the financial-statement pages open: the auditor's report, whose title the PCAOB's
standard fixes (AS 3101), or their own index."""


def _statements_after_items(events: Sequence[Event], chain: list[Mark]) -> list[Mark]:
    """Marks that put back under Item 8 financial statements printed after the form's last
    Item: a 10-K may answer Item 8 with a reference ("contained in Part IV, Item 15") and set
    its statements and notes on pages of their own at the end.  They are Item 8's answer, so
    they go under it (its Part and its title again, where they start: their index or the
    auditor's report, else the first statement's caption) instead of under Item 15 or 16.
    Nothing when Item 8 holds a statement's caption itself or none follows the last Item."""
    eight = next((m for m in chain if m.key[1] == 8 and m.key[2:] == (0, 0)), None)
    if eight is None or eight is chain[-1]:
        return []
    after = chain[chain.index(eight) + 1].at
    if any(_primary(events[i]) for i in range(eight.at, after)):
        return []
    last = chain[-1].at
    first = next((i for i in range(last + 1, len(events)) if _primary(events[i])), None)
    if first is None:
        return []
    start = next((i for i in range(last + 1, first)
                  if any(f in _text(events[i]).casefold() for f in _STATEMENTS_FRONT)), first)
    part = next((m for m in chain if m.key == (eight.key[0], -1, 0, 0)), None)
    return [*([Mark(start, part.key, part.title)] if part else []),
            Mark(start, eight.key, eight.title)]


def _primary(ev: Event) -> bool:
    """A primary statement's caption (the notes' is not one: it is also named in passing)."""
    name = family(_text(ev))
    return name is not None and name != "notes"


def _contents_pages(events: Sequence[Event], found: list[Mark]) -> set[int]:
    """Pages of the printed contents: those with lines of eight Items or more, or of three
    Parts; a contents set as a table counts the Items and Parts its cells name."""
    items: dict[int, set[object]] = {}
    parts: dict[int, set[object]] = {}
    for m in found:
        (parts if m.key[1] < 0 else items).setdefault(events[m.at].page, set()).add(m.key)
    for ev in events:
        if isinstance(ev, Block) and ev.kind == "table":
            items.setdefault(ev.page, set()).update(
                m.casefold() for m in _ITEM_MENTION.findall(ev.text))
            parts.setdefault(ev.page, set()).update(
                m.casefold() for m in _PART_MENTION.findall(ev.text))
    return ({p for p, keys in items.items() if len(keys) >= CONTENTS_ITEMS}
            | {p for p, keys in parts.items() if len(keys) >= CONTENTS_PARTS})


def _longest_run(found: list[Mark]) -> list[Mark]:
    """The longest run of ``found`` whose keys rise strictly: it starts as late as it can (a
    list of the Items the contents page missing, say) and goes on each time with the earliest
    line that keeps it longest (an Item's heading, not a later mention of it)."""
    n = len(found)
    if not n:
        return []
    longest = [1] * n
    for a in range(n - 1, -1, -1):
        for b in range(a + 1, n):
            if found[b].key > found[a].key and longest[b] + 1 > longest[a]:
                longest[a] = longest[b] + 1
    best = max(longest)
    at = max(a for a in range(n) if longest[a] == best)
    chain = [found[at]]
    while longest[at] > 1:
        at = next(b for b in range(at + 1, n)
                  if found[b].key > found[at].key and longest[b] == longest[at] - 1)
        chain.append(found[at])
    return chain


def _relevel(events: Sequence[Event], chain: list[Mark], front: int
             ) -> tuple[list[Event], dict[int, int]]:
    """Parts and Items of ``chain`` at the top, other headings below them by their depth, and
    before the first of them the headings of the front pages (the cover, up to the printed
    contents: ``front``) turned into text, but the contents' own heading."""
    item_level = 2 if any(m.key[1] < 0 for m in chain) else 1
    marks: dict[int, list[tuple[int, str]]] = {}
    for m in chain:
        marks.setdefault(m.at, []).append((1 if m.key[1] < 0 else item_level, m.title))
    first = chain[0].at

    def cover(i: int, ev: Event) -> bool:
        return (i < first and ev.page <= front and isinstance(ev, Heading)
                and "contents" not in ev.title.casefold())

    def ranked(i: int, ev: Event) -> bool:  # a heading that keeps its depth below its mark
        return (i not in marks and isinstance(ev, Heading) and ev.kind == "heading"
                and not cover(i, ev) and family(ev.title) is None)

    levels = [ev.level if isinstance(ev, Heading) and ranked(j, ev) else None
              for j, ev in enumerate(events)]
    starts = [0, *sorted(marks)]
    base = {lo: min((lv for lv in levels[lo:hi] if lv is not None), default=1)
            for lo, hi in zip(starts, [*starts[1:], len(events)], strict=True)}
    out: list[Event] = []
    items: dict[int, int] = {}
    mark_level, stretch, item_open = 0, 0, 0
    for i, ev in enumerate(events):
        if i in marks:
            for mark_level, title in marks[i]:
                out.append(Heading(mark_level, title, ev.page, "heading"))
            stretch = i
            item_open = mark_level if mark_level == item_level else 0
            if not label(_text(ev)):  # a mark set before an event (the statements' Item 8)
                out.append(ev if not isinstance(ev, Heading) or ev.kind != "heading" else
                           Heading(mark_level + 1, ev.title, ev.page, "heading", ev.raw))
        elif cover(i, ev):
            assert isinstance(ev, Heading)
            out.append(Block("text", ev.raw.strip() or ev.title, ev.page))
        elif isinstance(ev, Heading) and ev.kind == "heading":
            level = (mark_level + 1 if not ranked(i, ev) else
                     mark_level + 1 + ev.level - base[stretch])
            out.append(Heading(level, ev.title, ev.page, "heading", ev.raw))
        else:
            out.append(ev)
        if item_open:
            items[len(out) - 1] = item_open
    return out, items


MIN_NOTES = 3
"""Notes numbered in order inside an Item before their lines are read as the notes' headings."""


def note_headings(events: list[Event], items: dict[int, int]) -> list[Event]:
    """Inside a filing's Items (``items``, from ``form_structure``), the numbered notes to the
    financial statements ("Note 1. Basis of Presentation …", in order, three or more) head
    their notes: one level below the notes' caption when the Item has one ("Notes to
    Consolidated Financial Statements"), else one below the Item.  Some producers set them in
    body type: the notes then ran on under the last statement's caption."""
    found: list[Mark] = []
    for i, ev in enumerate(events):
        text = " ".join(_text(ev).split())
        note = _NOTE.match(text) if i in items and len(text.split()) <= _MAX_WORDS else None
        if note is not None and not note[2].rstrip()[-1:].isdigit():
            found.append(Mark(i, (0, int(note[1]), 0, 0), text))
    chain = _longest_run(found)
    if len(chain) < MIN_NOTES:
        return events
    out = list(events)
    marks = {m.at for m in chain}
    below, level = 1, 0
    for i, ev in enumerate(events):
        if isinstance(ev, Heading) and ev.kind == "heading" and i in items and i not in marks:
            if family(ev.title) == "notes":
                below = 2
            elif ev.level <= items[i]:
                below, level = 1, 0
            elif level and chain[0].at < i < chain[-1].at and ev.level <= level:
                # between two notes nothing but a note is a note's peer (a table's column
                # head read as a heading stays inside the note it is in)
                out[i] = Heading(level + 1, ev.title, ev.page, "heading", ev.raw)
        if i in marks:
            level = items[i] + below
            out[i] = Heading(level, " ".join(_text(ev).split()), ev.page, "heading")
    return out
