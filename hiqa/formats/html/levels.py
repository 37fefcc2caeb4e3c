"""Heading levels as the markup nests them, and which heading is the page's title."""
from __future__ import annotations

import itertools
import re
from collections import Counter

import lxml.html

from hiqa.formats.structure import Event
from hiqa.model import Block, Heading

_BOOK_SUFFIX = re.compile(r"\s+\([^()]+\)$")
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*|[a-z](?:\.\d+)+)\.?\s+")
_TYPE_PARAMETERS = re.compile(r"<[^<>]*>")
_TITLE_SEPARATORS = re.compile(r"\s+(?:[—–|·«»:]{1,2}|-)\s+|:\s+")


def _heading_indices(events: list[Event]) -> list[int]:
    """Where the section headings are among the events (definition terms left out)."""
    return [i for i, ev in enumerate(events) if isinstance(ev, Heading) and ev.kind == "heading"]


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
    heads = _heading_indices(events)
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
    """Text for comparing titles: case, curly quotes, a leading section number and type
    parameters ("Pair<L,R>") ignored."""
    text = _TYPE_PARAMETERS.sub("", text.replace("\u2019", "'"))
    return _SECTION_NUMBER.sub("", " ".join(text.casefold().split()))


def _once(events: list[Event]) -> list[Event]:
    """Without a second heading that repeats the title (Texinfo sets "GNU Coding Standards"
    as the title block and again as its Top node's heading); its text stays."""
    heads = _heading_indices(events)
    if len(heads) > 1 and _plain(events[heads[1]].title) == _plain(events[heads[0]].title):  # type: ignore[union-attr]
        return events[:heads[1]] + events[heads[1] + 1:]
    return events


def _title_parts(page_title: str) -> tuple[set[str], str, set[str], set[str]]:
    """What a ``<title>`` may call the page: its leading parts joined (the first, the first two,
    ...: "optparse — Parser for command line options — Python 3.11 documentation" names its
    page by the first two), the first part alone (for "Class CharEncoding"), each later part
    ("SDL2: SDL_audio.h File Reference" heads its page with the second), and each part after
    its kind word ("Python: module queue" heads its page "queue").  Texinfo's book in brackets
    ("... (The Libgcrypt Reference Manual)") is left out."""
    whole = _BOOK_SUFFIX.sub("", page_title)
    cuts = [m.start() for m in _TITLE_SEPARATORS.finditer(whole)]
    leading = {_plain(whole[:c]) for c in cuts} | {_plain(whole), _plain(page_title)}
    parts = [p for p in _TITLE_SEPARATORS.split(whole) if p.strip()]
    first = _plain(parts[0]) if parts else _plain(whole)
    kinded = {_plain(p).split(" ", 1)[1] for p in parts if " " in _plain(p)}
    return leading - {""}, first, {_plain(p) for p in parts[1:]}, kinded


def _titled(events: list[Event], page_title: str | None) -> tuple[list[Event], str | None]:
    """The page's events without the banner headings before its title heading, and its
    document title.

    The title heading is one of the page's top-level headings (never a member or a section
    deeper down that happens to share a word with the ``<title>``): the one spelling the
    ``<title>``'s leading parts, or its first part after a kind word ("Class CharEncoding"),
    else the page's opening heading ending with that part ("Source code for django.db": only
    the site's name may stand before it), else one spelling a later part, else one spelling a
    part after its kind word ("queue" for "Python: module queue").  The headings before it are
    the site's banner ("Django 3.2.25 documentation" as an ``h1`` in the page header) and are
    dropped; text before it stays.  With no such heading the one heading that stands over all
    others and opens the page is the title (Texinfo heads "FIPS Mode" with "Appendix B
    Description of the FIPS Mode"); else the whole ``<title>`` is: a pod2html page opens with
    ``<h1>NAME</h1>`` and its ``<title>`` names the page, which a generic section must not
    replace.
    """
    if not page_title:
        return events, None
    heads = _heading_indices(events)
    if not heads:
        return events, " ".join(page_title.split())
    top = min(events[i].level for i in heads)  # type: ignore[union-attr]
    leading, first, later, kinded = _title_parts(page_title)
    best: tuple[int, int] | None = None  # (rank, position) of the title heading
    site_only = True  # no top-level heading but the site's name ("Django documentation") yet
    for i in heads:
        ev = events[i]
        assert isinstance(ev, Heading)
        if ev.level != top:
            continue
        text = _plain(ev.title)
        if text in leading or (text.endswith(" " + first) and
                               len(text.split()) == len(first.split()) + 1):
            rank = 0
        elif site_only and text.endswith(" " + first):
            rank = 1  # the page opens naming itself: "Source code for django.conf.urls"
        elif text in later:
            rank = 2
        elif text in kinded:
            rank = 3  # "queue" for "Python: module queue"
        else:
            rank = -1
        site_only = site_only and text in later
        if rank >= 0 and (best is None or (rank, i) < best):
            best = (rank, i)
    if best is not None:
        at = best[1]
        kept: list[Event] = [ev for ev in events[:at] if not isinstance(ev, Heading)]
        head = events[at]
        assert isinstance(head, Heading)
        return _once(kept + events[at:]), head.title
    opening = events[heads[0]]
    assert isinstance(opening, Heading)
    if sum(events[i].level <= opening.level for i in heads) == 1 and not any(  # type: ignore[union-attr]
            isinstance(ev, Block) for ev in events[:heads[0]]):
        return _once(events), opening.title
    return events, " ".join(page_title.split())
