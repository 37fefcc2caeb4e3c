"""Headings a page sets by styling instead of ``h1``-``h6`` (issue #44): what a reader takes for
a heading from how it is set — a table cell used as a banner, a bold line standing alone, a block
the page's own CSS sets bold or larger, the same short block opening each of a run of anchored
containers.

Every rule reads the page's own markup and ``<style>``: element kinds, nesting, the ``style``
attribute, CSS rules of the page; never a generator's name or class words.  Each rule has the
guard that tells the heading from the same styling used otherwise (a bold word in prose, a data
table's header row, a hanging tag over an indented paragraph, a button label).

* **Banner tables**: a table whose first row is one cell spanning the table's columns, with short
  text, over rows that each hold at most one cell with text (the content column beside
  decoration) — its cell heads the table's content; a banner table inside another banner's table
  is one level deeper.  A data table's title or header row is none: its rows hold several cells.
* **Opening bar**: on a page with no ``h1``-``h6``, the block that opens the content, its whole
  text bold and short, heads the page (it is its title); links beside it in its table row are
  the site's link bar.
* **Bold lines**: a paragraph that opens with a bold run which is its whole text or its whole
  first line (a line break right after), short, not ending as a sentence does, with content after
  it (in the paragraph, or a block after it indented no deeper: deeper is a hanging tag's body),
  outside lists and table cells, and two or more of the page's paragraphs set this way alike
  (same element, ``style`` and class).  "Bold" is ``b``/``strong``, or an element the page's own
  CSS (a ``<style>`` rule on its class, or its ``style`` attribute) sets bold or larger.
* **Anchored containers**: two or more sibling elements of one kind, each with an ``id`` (an
  anchor target), none holding an ``h1``-``h6``, each opening with a short block of one kind
  with content after it: those blocks head their containers.  A part of those blocks with the
  same text in every one of three or more ("click to toggle source") is a control, not the title.

The collector places a styled heading one level below the ``h1``-``h6`` heading before it (or at
the top when there is none), plus its banner nesting depth; ``levels._rebased`` then makes levels
depths, as for any heading.
"""
from __future__ import annotations

import re
from collections import defaultdict

import lxml.html

from hiqa.formats.html.frame import _HEADING_TAGS, _chars, _Frame, _tokens

_BOLD_TAGS = frozenset({"b", "strong"})
_CODE_TAGS = frozenset({"code", "tt", "kbd", "samp", "pre"})
_OBJECT_TAGS = frozenset({"table", "pre", "figure", "img", "svg", "object"})
_EMPHASIS_TAGS = _BOLD_TAGS | {"span", "font", "em", "a", "code", "tt", "big"}
_NOT_FLOW = frozenset({"li", "dd", "dt", "td", "th", "caption", "pre", "a", "table", "button"})
_SENTENCE_END = re.compile(r"[.,;:!?…]$")
_MAX_CHARS = 100  # a heading is a line, not a paragraph (characters other than white space)
_MAX_WORDS = 14
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CSS_CLASS = re.compile(r"^(?:[a-z][a-z0-9]*)?\.([\w-]+)$", re.IGNORECASE)
_BOLD_DECL = re.compile(r"font-weight\s*:\s*(?:bold(?:er)?|[6-9]00)\b", re.IGNORECASE)
_LARGE_DECL = re.compile(
    r"font-size\s*:\s*(?:larger|x{0,2}-?large|1\.[2-9]\d*em|[2-9](?:\.\d+)?em|1[2-9]\d%|[2-9]\d\d%)",
    re.IGNORECASE)
_MARGIN_LEFT = re.compile(r"margin-left\s*:\s*([\d.]+)", re.IGNORECASE)


class Styled:
    """The page's styled headings (element -> banner nesting depth) and the link bars beside
    them (frame), found once per page before the walk."""

    def __init__(self, body: lxml.html.HtmlElement, page: lxml.html.HtmlElement,
                 frame: _Frame) -> None:
        self.headings: dict[lxml.html.HtmlElement, int] = {}
        self.chrome: set[lxml.html.HtmlElement] = set()
        self._frame = frame
        self._emphasis = _css_emphasis(page)
        has_h = bool(frame._heads.get(body)) and any(
            el not in frame.chrome and not _in(el, frame.chrome) for el in body.iter(*_HEADING_TAGS))
        self._banners(body)
        if not has_h:
            self._opening_bar(body)
        self._bold_lines(body)
        self._anchored(body)

    @property
    def tables(self) -> set[lxml.html.HtmlElement]:
        """Tables laid out around a styled heading: read as blocks, not as data."""
        return {a for el in self.headings if el.tag in ("td", "th")
                for a in el.iterancestors("table")}

    # -- banner tables ------------------------------------------------------------------------
    def _banners(self, body: lxml.html.HtmlElement) -> None:
        banners: dict[lxml.html.HtmlElement, lxml.html.HtmlElement] = {}  # table -> its banner
        for table in body.iter("table"):
            if table in self._frame.chrome:
                continue
            cell = self._banner_cell(table)
            if cell is not None:
                banners[table] = cell
        for table, cell in banners.items():
            if _in(table, self._frame.chrome):
                continue
            self.headings[cell] = sum(1 for a in table.iterancestors("table") if a in banners)

    def _banner_cell(self, table: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
        rows = _rows(table)
        if len(rows) < 2:
            return None
        first = _cells(rows[0])
        if len(first) != 1 or self._frame._heads.get(first[0]):
            return None
        cell = first[0]
        width = max(sum(_span(c) for c in _cells(r)) for r in rows[1:])
        if width < 2 or _span(cell) < width or not self._short(cell):
            return None
        filled = [sum(1 for c in _cells(r) if self._frame._raw.get(c)) for r in rows[1:]]
        return cell if max(filled) == 1 else None

    # -- the opening bar ----------------------------------------------------------------------
    def _opening_bar(self, body: lxml.html.HtmlElement) -> None:
        stack: list[lxml.html.HtmlElement | str] = [body]
        while stack:
            el = stack.pop()
            if isinstance(el, str):  # the text after an element: it stands before the rest
                if _chars(el):
                    return
                continue
            if el in self._frame.chrome:
                continue
            if el.tag in ("td", "th", "p", "div") and self._frame._raw.get(el) \
                    and self._bold(el) and self._short(el) and el not in self.headings:
                self.headings[el] = 0
                row = el.getparent()
                if el.tag in ("td", "th") and row is not None:
                    self.chrome.update(c for c in _cells(row) if c is not el and self._links_only(c))
                return
            if el.text and _chars(el.text):
                return  # text stands before any bold block: nothing opens the page
            for child in reversed(el):
                if child.tail:
                    stack.append(child.tail)
                if isinstance(child.tag, str):
                    stack.append(child)

    # -- bold lines -----------------------------------------------------------------------------
    def _bold_lines(self, body: lxml.html.HtmlElement) -> None:
        found: dict[tuple[str, str, str, str], list[lxml.html.HtmlElement]] = defaultdict(list)
        for para in body.iter("p", "div"):
            run = self._lead_run(para)
            if run is not None:
                key = (para.tag, " ".join((para.get("style") or "").split()),
                       para.get("class") or "", run.tag)
                found[key].append(run)
        for runs in found.values():
            if len(runs) >= 2:
                self.headings.update((run, 0) for run in runs)

    def _lead_run(self, para: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
        """The bold run heading ``para``: its first child, with nothing before it, that is its
        whole text or its whole first line, with content after it."""
        if (para.text and para.text.strip()) or not len(para) or para in self._frame.chrome:
            return None
        run = para[0]
        if not isinstance(run.tag, str) or not self._bold(run) or not self._short(run):
            return None
        if any(a.tag in _NOT_FLOW or a in self._frame.chrome or a in self.headings
               for a in para.iterancestors()) or self._frame._heads.get(para):
            return None
        if _code(run) or self._continues(para) or _first_child(para.getparent(), self._frame._raw) is para:
            return None  # a container's title is the anchored rule's: its run of containers
        rest = self._frame._raw.get(para, 0) - self._frame._raw.get(run, 0)
        if rest == 0:
            return run if self._followed(para) and not self._caption(para) else None
        after = run.getnext()
        if (run.tail and run.tail.strip()) or after is None or after.tag != "br":
            return None  # bold words opening a sentence of the paragraph
        return run

    def _continues(self, para: lxml.html.HtmlElement) -> bool:
        """The text before ``para`` ends with a colon: ``para`` is the example its sentence
        announces ("... like this:" over a bold command line), not a heading."""
        prev = para.getprevious()
        while prev is not None and not isinstance(prev.tag, str):
            prev = prev.getprevious()
        before = (prev.tail if prev is not None else para.getparent().text) or ""
        if not before.strip() and prev is not None and self._frame._raw.get(prev):
            before = "".join(prev.itertext()) if self._frame._raw[prev] < 2000 else ""
        return before.rstrip().endswith(":")

    def _closes_early(self, block: lxml.html.HtmlElement) -> bool:
        """``block`` opens a container (its first element, nothing before it) that the page's
        flow goes on after with loose content: a title there would head that content too
        (DocBook titles each example so, inside a section that continues after it).  Sibling
        containers of the same kind (a run of members) and headings may follow."""
        box = block.getparent()
        if box is None or (box.text and box.text.strip()) or _first_child(box, self._frame._raw) is not block:
            return False
        kind = (box.tag, next(iter(_tokens(box)), ""))
        for after in box.itersiblings():
            if after.getprevious() is not None and (after.getprevious().tail or "").strip():
                return True
            if not isinstance(after.tag, str) or not self._frame._raw.get(after):
                continue
            if (after.tag, next(iter(_tokens(after)), "")) == kind or after.tag in _HEADING_TAGS \
                    or self._frame._heads.get(after):
                continue
            return True
        return bool((box.tail or "").strip()) and box.getnext() is None

    def _followed(self, para: lxml.html.HtmlElement) -> bool:
        """Content follows ``para`` before any heading, indented no deeper than it (a block
        set deeper under a bold line is the body of a hanging tag, a term)."""
        nxt = para.getnext()
        while nxt is not None and not isinstance(nxt.tag, str):
            nxt = nxt.getnext()
        if nxt is None or nxt.tag in _HEADING_TAGS or nxt.tag == "hr" \
                or not self._frame._raw.get(nxt) or self._frame._heads.get(nxt):
            return False
        return _indent(nxt) <= _indent(para) and not self._object(nxt)

    def _object(self, el: lxml.html.HtmlElement) -> bool:
        """``el`` is, or only wraps, a data table (two rows of text or more), a code block or a
        figure: a bold line over it is its caption."""
        while el.tag not in _OBJECT_TAGS:
            kids = [c for c in el if isinstance(c.tag, str)]
            if len(kids) != 1 or (el.text and el.text.strip()):
                return False
            el = kids[0]
        if el.tag != "table":
            return True
        # rows of text: a table of one row lays out a list item beside its bullet
        return sum(1 for r in _rows(el) if self._frame._raw.get(r)) >= 2

    # -- anchored containers --------------------------------------------------------------------
    def _anchored(self, body: lxml.html.HtmlElement) -> None:
        groups: dict[tuple[lxml.html.HtmlElement, str, str], list[lxml.html.HtmlElement]] = \
            defaultdict(list)
        for el in body.iter("div", "section", "article", "li"):
            parent = el.getparent()
            if el.get("id") and parent is not None and el not in self._frame.chrome:
                # one kind: the same element and first class word (a second word is a variant:
                # "method-detail method-alias")
                groups[(parent, el.tag, next(iter(_tokens(el)), ""))].append(el)
        pooled: dict[tuple[str, str], list[lxml.html.HtmlElement]] = defaultdict(list)
        for members in groups.values():
            if len(members) < 2 or any(self._frame._heads.get(m) for m in members):
                continue
            heads = [_first_child(m, self._frame._raw) for m in members]
            kinds = {(h.tag, h.get("class") or "") for h in heads if h is not None}
            if len(kinds) != 1 or any(
                    h is None or h.tag not in ("div", "p", "header", "span")
                    or not self._short(h) or self._frame._raw.get(m, 0) <= self._frame._raw.get(h, 0)
                    or _in(m, self._frame.chrome) or self._caption(h) or self._closes_early(h)
                    for h, m in zip(heads, members, strict=True)):
                continue
            blocks = [h for h in heads if h is not None]
            self.headings.update((h, 0) for h in blocks)
            pooled[kinds.pop()].extend(blocks)
        for blocks in pooled.values():  # the page's blocks of one kind, whatever their section
            if len(blocks) >= 3:
                self.chrome.update(_repeated_parts(blocks))

    def _caption(self, head: lxml.html.HtmlElement) -> bool:
        """``head`` and one object (a table, a code block, a figure or an image, alone in its
        wrappers) are all their container holds: a titled table, example or listing, whose
        title is its caption, not a section's heading."""
        rest = [c for c in head.itersiblings() if isinstance(c.tag, str)]
        if len(rest) != 1 or any(c.tail and c.tail.strip() for c in [head, *rest]):
            return False
        return self._object(rest[0])

    # -- tests ----------------------------------------------------------------------------------
    def _short(self, el: lxml.html.HtmlElement) -> bool:
        """A line, not a sentence: some text, at most ~100 characters and 14 words, not ending
        with sentence punctuation."""
        chars = self._frame._raw.get(el, 0)
        if not 0 < chars <= _MAX_CHARS:
            return False
        text = " ".join("".join(el.itertext()).split())
        return len(text.split()) <= _MAX_WORDS and not _SENTENCE_END.search(text)

    def _bold(self, el: lxml.html.HtmlElement) -> bool:
        """All of ``el``'s text is set bold or larger: ``el`` itself is, or its text lies in
        bold descendants only."""
        if self._strong(el):
            return True
        total = self._frame._raw.get(el, 0)
        if not total or (el.text and _chars(el.text)):
            return False
        bold = 0
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tail and _chars(child.tail):
                return False
            if self._frame._raw.get(child, 0):
                if not (self._strong(child) or (child.tag in _EMPHASIS_TAGS and self._bold(child))):
                    return False
                bold += self._frame._raw.get(child, 0)
        return bold == total

    def _strong(self, el: lxml.html.HtmlElement) -> bool:
        if el.tag in _BOLD_TAGS:
            return True
        style = el.get("style") or ""
        if _BOLD_DECL.search(style) or _LARGE_DECL.search(style):
            return True
        if el.tag == "font" and (el.get("size") or "").startswith("+"):
            return True
        return bool(self._emphasis) and any(
            t in self._emphasis for t in (el.get("class") or "").split())

    def _links_only(self, cell: lxml.html.HtmlElement) -> bool:
        raw = self._frame._raw.get(cell, 0)
        return raw > 0 and self._frame._linked.get(cell, 0) == raw


def _code(el: lxml.html.HtmlElement) -> bool:
    """All of ``el``'s text is set as code (``<code>``, ``<tt>``, ``<kbd>``, ``<samp>``): a
    command line or an identifier, never a heading."""
    if el.tag in _CODE_TAGS:
        return True
    kids = [c for c in el if isinstance(c.tag, str)]
    return bool(kids) and not (el.text or "").strip() and all(
        _code(c) and not (c.tail or "").strip() for c in kids)


def _css_emphasis(page: lxml.html.HtmlElement) -> frozenset[str]:
    """Classes the page's own ``<style>`` sets bold or larger (``.title { font-weight: bold }``,
    ``p.big { font-size: 150% }``)."""
    out: set[str] = set()
    for style in page.iter("style"):
        for selectors, decls in _CSS_RULE.findall(style.text or ""):
            if not (_BOLD_DECL.search(decls) or _LARGE_DECL.search(decls)):
                continue
            for sel in selectors.split(","):
                m = _CSS_CLASS.match(sel.strip())
                if m:
                    out.add(m.group(1))
    return frozenset(out)


def _repeated_parts(blocks: list[lxml.html.HtmlElement]) -> set[lxml.html.HtmlElement]:
    """Child elements of one kind, in three blocks or more and in half of them at least, with
    the same text in each: a control's label repeated beside each title, not part of it (a title
    part names its section and differs from block to block); kept only when text remains."""
    texts: dict[tuple[str, str], list[lxml.html.HtmlElement]] = defaultdict(list)
    for block in blocks:
        for child in block:
            if isinstance(child.tag, str):
                texts[(child.tag, child.get("class") or "")].append(child)
    out: set[lxml.html.HtmlElement] = set()
    for parts in texts.values():
        words = {" ".join("".join(p.itertext()).split()) for p in parts}
        if len(parts) >= max(3, len(blocks) / 2) and len(words) == 1 and words != {""}:
            out.update(parts)
    return out if all(_text_without(b, out) for b in blocks) else set()


def _text_without(block: lxml.html.HtmlElement, skip: set[lxml.html.HtmlElement]) -> str:
    parts = [block.text or ""]
    for child in block:
        if child not in skip and isinstance(child.tag, str):
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return "".join(parts).strip()


def _first_child(el: lxml.html.HtmlElement | None,
                 raw: dict[lxml.html.HtmlElement, int]) -> lxml.html.HtmlElement | None:
    """``el``'s first element child with text, when no text stands before it (an empty anchor
    before it does not count)."""
    if el is None or (el.text and el.text.strip()):
        return None
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if raw.get(child) or child.tag in _OBJECT_TAGS:
            return child
        if child.tail and child.tail.strip():
            return None
    return None


def _rows(table: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The table's own rows (not a nested table's)."""
    out = []
    for child in table:
        if child.tag == "tr":
            out.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            out.extend(r for r in child if r.tag == "tr")
    return out


def _cells(row: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    return [c for c in row if c.tag in ("td", "th")]


def _span(cell: lxml.html.HtmlElement) -> int:
    try:
        return max(1, int(cell.get("colspan") or 1))
    except ValueError:
        return 1


def _indent(el: lxml.html.HtmlElement) -> float:
    m = _MARGIN_LEFT.search(el.get("style") or "")
    return float(m.group(1)) if m else 0.0


def _in(el: lxml.html.HtmlElement, chrome: set[lxml.html.HtmlElement]) -> bool:
    return any(a in chrome for a in el.iterancestors())
