"""Heading levels as the markup nests them, and which heading is the page's title."""
from __future__ import annotations

import itertools
import re
from collections import Counter

import lxml.html

from ...model import Block, Heading
from ...structure import Event

_BOOK_SUFFIX = re.compile(r"\s+\([^()]+\)$")
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*|[a-z](?:\.\d+)+)\.?\s+")
_TITLE_SEPARATORS = re.compile(r"\s+(?:[—–|·«»:]{1,2}|-)\s+|:\s+")


def _nested(events: list[Event], elements: dict[int, lxml.html.HtmlElement]) -> list[Event]:
    """Heading levels the markup nests beyond its tags.

    * Containment: a heading inside the block an earlier heading heads (its parent element,
      when that is an ancestor of the later heading's parent) is below it, whatever its tag —
      Javadoc 11 sets "Methods inherited from class Object" as an ``h3`` inside the list item
      its ``h3`` "Method Summary" heads.
    * Styles: at one tag, headings of a second class that come in runs, each run right after
      a heading of the first class with no text between (a group header introducing its
      members), and that head nothing below them, are one level below that class (Doxygen's
      member titles, ``h2.memtitle``, after its ``h2.groupheader``).
    """
    order = sorted(elements)
    levels = {i: events[i].level for i in order}  # type: ignore[union-attr]
    scopes: list[tuple[lxml.html.HtmlElement, int]] = []  # (the block a heading heads, level)
    for i in order:
        parent = elements[i].getparent()
        outer = set(parent.iterancestors()) if parent is not None else set()
        while scopes and scopes[-1][0] not in outer:
            scopes.pop()
        if scopes and levels[i] <= scopes[-1][1]:
            levels[i] = scopes[-1][1] + 1
        if parent is not None:
            scopes.append((parent, levels[i]))
    for sub in _subordinate_styles(order, events, elements):
        levels[sub] += 1
    out = list(events)
    for i in order:
        ev = events[i]
        assert isinstance(ev, Heading)
        if levels[i] != ev.level:
            out[i] = Heading(levels[i], ev.title, page=ev.page)
    return out


def _subordinate_styles(order: list[int], events: list[Event],
                        elements: dict[int, lxml.html.HtmlElement]) -> list[int]:
    """Event indices of headings set one level below their tag by the styles rule."""
    tag = {i: events[i].level for i in order}  # type: ignore[union-attr]
    style = {i: elements[i].get("class") or "" for i in order}
    nxt = dict(itertools.pairwise(order))
    out: list[int] = []
    for level in sorted(set(tag.values())):
        same = [i for i in order if tag[i] == level]
        counts = Counter(style[i] for i in same)
        for sub, n in counts.items():
            subs = [i for i in same if style[i] == sub]
            heads = {style[i] for i in same if style[i] != sub and nxt.get(i) in subs
                     and not any(isinstance(events[k], Block) for k in range(i + 1, nxt[i]))}
            if n < 2 or len(heads) != 1:
                continue
            (head,) = heads
            first_head = next(i for i in same if style[i] == head)
            leaves = all(i not in nxt or tag[nxt[i]] <= level for i in subs)
            runs = all(style[p] in (head, sub) for p in same[same.index(subs[0]):])
            if counts[head] >= 2 and subs[0] > first_head and leaves and runs:
                out += subs
                break
    return out


def _rebased(events: list[Event], title: str | None) -> list[Event]:
    """Levels as the page means them: its title heading at level 1 and the top content level
    one below it, whatever tags the generator chose (DocBook sets a reference page's title and
    its sections all as ``h2``; Sphinx starts at ``h1``, Javadoc at ``h2``).  A title that no
    heading spells (it came from ``<title>``) becomes the page's first heading."""
    heads = [i for i, ev in enumerate(events) if isinstance(ev, Heading) and ev.kind == "heading"]
    first_title = events[heads[0]].title if heads else None  # type: ignore[union-attr]
    if events and title is not None and not (
            first_title is not None and _plain(first_title) == _plain(title)):
        # the title comes from <title> alone (pod2html opens with "NAME"): it heads the page
        # as it heads every other page, so each document's Markdown starts with its title
        return _rebased([Heading(1, title), *events], title)
    if not heads:
        return events
    first = events[heads[0]]
    assert isinstance(first, Heading)
    if title is not None:
        titled = True
    else:  # no <title>: the first heading is the title when nothing stands above it
        titled = all(events[i].level >= first.level for i in heads)  # type: ignore[union-attr]
    rest = heads[1:] if titled else heads
    out = list(events)
    if titled:
        out[heads[0]] = Heading(1, first.title, page=first.page)
    # each content heading's level is its depth in the tree its levels build, one below the
    # title: an mdBook chapter (h2) of h3 sections closing with an h2 "Summary" has all of
    # them at level 2; odoc opens with an h4 before its h3 sections, and the h4s under an h3
    # are one below it
    base = 2 if titled else 1
    open_levels: list[int] = []
    for i in rest:
        ev = events[i]
        assert isinstance(ev, Heading)
        while open_levels and open_levels[-1] >= ev.level:
            open_levels.pop()
        out[i] = Heading(base + len(open_levels), ev.title, page=ev.page)
        open_levels.append(ev.level)
    return out


def _plain(text: str) -> str:
    """Text for comparing titles: case, curly quotes and a leading section number ignored."""
    return _SECTION_NUMBER.sub("", " ".join(text.replace("\u2019", "'").casefold().split()))


def _once(events: list[Event]) -> list[Event]:
    """Without a second heading that repeats the title (Texinfo sets "GNU Coding Standards"
    as the title block and again as its Top node's heading); its text stays."""
    heads = [i for i, ev in enumerate(events) if isinstance(ev, Heading) and ev.kind == "heading"]
    if len(heads) > 1 and _plain(events[heads[1]].title) == _plain(events[heads[0]].title):  # type: ignore[union-attr]
        return events[:heads[1]] + events[heads[1] + 1:]
    return events


def _title_parts(page_title: str) -> list[str]:
    """The ``<title>`` and its parts, most likely the page's own name first: "Quickstart —
    Requests 2.28.1 documentation" names the page first and the site after it; Texinfo's
    "Working with hash algorithms (The Libgcrypt Reference Manual)" puts the book in brackets."""
    parts = [p for p in _TITLE_SEPARATORS.split(_BOOK_SUFFIX.sub("", page_title)) if p.strip()]
    ordered = [_plain(p) for p in parts[:1]] + [_plain(page_title)] + [_plain(p) for p in parts[1:]]
    return list(dict.fromkeys(ordered))


def _titled(events: list[Event], page_title: str | None) -> tuple[list[Event], str | None]:
    """The page's events from its title heading on, and its document title.

    A page's ``<title>`` names the page first and the site after it ("Django 3.0 release notes
    — Django 3.2.25 documentation"); the heading that spells its first part naming the page
    (or the whole) is the document's title, and what comes before that heading is the site's
    banner ("Django 3.2.25 documentation" as an ``h1`` in the page header), not the document.
    With no such heading the whole ``<title>`` is the title: a pod2html page opens with
    ``<h1>NAME</h1>`` and its ``<title>`` names the release ("perl5300delta - what is new for
    perl v5.30.0"), which a generic first heading must not replace.
    """
    if not page_title:
        return events, None
    best: tuple[int, int, int] | None = None  # (rank, level, position) of the title heading
    first, *others = _title_parts(page_title)
    for i, ev in enumerate(events):
        if not isinstance(ev, Heading) or ev.kind != "heading":
            continue
        text = _plain(ev.title)
        if text in (first, _plain(page_title)) or text.endswith(" " + first):
            rank = 0  # the page's name, or it after a kind: "Class CharEncoding" over the
            # constructor "CharEncoding"; "Source code for django.db" (the smaller level wins)
        elif text in others:  # "SDL2: SDL_audio.h File Reference" heads "SDL_audio.h File ..."
            rank = 2
        else:
            continue
        if best is None or (rank, ev.level, i) < best:
            best = (rank, ev.level, i)
    if best is not None:
        head = events[best[2]]
        assert isinstance(head, Heading)
        return _once(events[best[2]:]), head.title
    heads = [ev for ev in events if isinstance(ev, Heading) and ev.kind == "heading"]
    if heads and sum(h.level <= heads[0].level for h in heads) == 1:
        # no heading spells the <title> (Texinfo names the node "FIPS Mode" and heads it
        # "Appendix B Description of the FIPS Mode"), but one heading stands over the rest
        return _once(events[events.index(heads[0]):]), heads[0].title
    return events, " ".join(page_title.split())
