"""From the DOM walk to HiQA's events: headings, paragraphs, list items, definition terms,
tables (a heading inside one splits it; code in a cell follows it as a code block) and code."""
from __future__ import annotations

import re
from collections.abc import Mapping

import lxml.html

from hiqa.formats.html.frame import _HEADING_TAGS, _TITLE_BLOCK_CLASS, _Frame
from hiqa.formats.structure import Event, is_term_text
from hiqa.model import Block, Heading

_BLOCK_TAGS = {
    "p", "div", "li", "dt", "dd", "blockquote", "pre", "section", "article", "ul", "ol", "dl",
    "br", "hr", "figure", "figcaption", "header", "footer", "main", "aside", "td", "th", "tr",
}
_CELL_BREAKS = _HEADING_TAGS | {"pre", "table"}
# a code listing set as one element per line (Doxygen's div.fragment > div.line)
_LISTING_CLASS = re.compile(r"\bfragment\b", re.IGNORECASE)
_PERMALINK_MARK = re.compile(r"(?:\s*[¶§🔗]+|\s+#+|\s*\[link\])$")  # "C#" keeps its "#"
_LEAD_MARK = re.compile(r"^[◆¶§🔗]\s*")
_ADMONITION_CLASS = re.compile(
    r"\b(admonition|note|tip|hint|warning|caution|important|danger)\b", re.IGNORECASE)
_BOX_TAGS = ("div", "aside", "section")


def _heading_text(raw: str) -> str:
    """A heading's text without the permalink marks generators put before or after it."""
    return _LEAD_MARK.sub("", _PERMALINK_MARK.sub("", " ".join(raw.split())))


def _fenced(code: str) -> Block:
    return Block("text", "```\n" + code + "\n```")


def _code_layout_row(row: list[str], codes: list[str]) -> bool:
    """A highlighter's layout row: line numbers in one cell, the code (and nothing else) in the
    other; a row whose cell holds prose around its code is data."""
    cells = [c for c in row if c]
    numbers = [c for c in cells if c.replace(" ", "").isdigit()]
    rest = [c for c in cells if c not in numbers]
    return bool(numbers) and bool(rest) and all(c in codes for c in rest)


def table_markdown(rows: list[tuple[str, ...]]) -> str:
    """Render rows as a pipe table; the first row is the header."""
    width = max(len(r) for r in rows)
    norm = [tuple(c.replace("|", "\\|") for c in r) + ("",) * (width - len(r)) for r in rows]
    out = ["| " + " | ".join(norm[0]) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(r) + " |" for r in norm[1:]]
    return "\n".join(out)


class _Collector:
    """Turns the start/data/end stream of a DOM walk into events (headings, text, tables)."""

    def __init__(self, styled: Mapping[lxml.html.HtmlElement, int] | None = None) -> None:
        self.events: list[Event] = []
        # headings set by styling (``styled.Styled``): element -> banner nesting depth
        self._styled = styled or {}
        self.styled_count = 0
        self._last_level = 0  # the level of the last h1-h6 heading: a styled one goes below
        self._buf: list[str] = []
        self.element: lxml.html.HtmlElement | None = None  # the element being started
        self.heading_elements: dict[int, lxml.html.HtmlElement] = {}  # event index -> element
        self._heading_el: lxml.html.HtmlElement | None = None
        self._heading: int | None = None
        self._heading_styled = False
        self._heading_tag = ""  # the element that closes the heading being read
        self._pre = 0
        self._table_depth = 0
        self._rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None
        self._table_caption = ""
        self._code: list[str] | None = None  # a <pre> inside a table cell
        self._listing: int | None = None  # div depth of an open line-per-div code listing
        self._table_code: list[str] = []  # the cells' code blocks, emitted after the table
        self._code_rows: dict[int, list[str]] = {}  # row -> its cells' code, words joined
        self._box_depth = {tag: 0 for tag in _BOX_TAGS}
        self._admonitions: list[tuple[str, int]] = []
        self._label_tag: str | None = None
        self._label = ""
        self._bullet = False
        self._dt = False

    def handle_starttag(self, tag: str, attrs: Mapping[str, str]) -> None:
        klass = attrs.get("class") or ""
        if tag in _BOX_TAGS:
            self._box_depth[tag] += 1
            if _ADMONITION_CLASS.search(klass):
                self._admonitions.append((tag, self._box_depth[tag]))
        if self._styled and self.element in self._styled and not self._heading \
                and not self._table_depth and not self._admonitions and not self._pre:
            self._flush()
            self._heading = self._last_level + 1 + self._styled[self.element]
            self._heading_tag, self._heading_el, self._heading_styled = tag, self.element, True
            return
        if tag == "table":
            self._flush()
            self._table_depth += 1
            if self._table_depth == 1:
                self._rows, self._table_caption = [], ""
                self._table_code, self._code_rows = [], {}
            return
        if self._table_depth and tag in _HEADING_TAGS and not self._admonitions:
            # a heading inside a table (Doxygen's group headers in its member tables) is a
            # heading: the rows before it are one table, the rows after it another
            self._emit_table()
            self._heading, self._heading_tag = int(tag[1]), tag
            self._heading_el = self.element
            return
        if self._table_depth:
            if tag == "tr":
                self._rows.append([])
            elif tag in ("td", "th"):
                self._cell = []
            elif tag == "caption":
                self._caption = []
            elif self._cell is not None and (tag in _BLOCK_TAGS or tag in _CELL_BREAKS):
                self._cell.append(" ")  # <p>, <br>, <pre> in a cell: words stay apart
                if tag == "pre" and self._rows:
                    self._code = []
            return
        if tag in _HEADING_TAGS and self._admonitions:
            self._flush()
            self._label_tag = tag
        elif tag in _HEADING_TAGS:
            self._flush()
            self._heading, self._heading_tag = int(tag[1]), tag
            self._heading_el = self.element
        elif tag == "div" and klass == _TITLE_BLOCK_CLASS and not self._heading:
            # a generator's title block (Doxygen's <div class="title">Json::Value Class
            # Reference</div>) is the page's top heading
            self._flush()
            self._heading, self._heading_tag = 1, tag
            self._heading_el = self.element
        elif tag == "pre":
            self._flush()
            self._pre += 1
        elif tag == "div" and self._listing is None and _LISTING_CLASS.search(klass):
            self._flush()
            self._pre += 1
            self._listing = self._box_depth["div"]
        elif tag == "div" and self._listing is not None:
            self._buf.append("\n")  # one line of the listing
        elif tag == "dt":
            self._flush()
            self._dt = True
        elif tag in _BLOCK_TAGS:
            if tag == "br":
                self._buf.append("\n")
            else:
                self._flush()
            if tag == "li":
                self._bullet = True

    def handle_endtag(self, tag: str) -> None:
        if tag in _BOX_TAGS and self._box_depth[tag]:
            if self._admonitions and self._admonitions[-1] == (tag, self._box_depth[tag]):
                self._admonitions.pop()
            self._box_depth[tag] -= 1
        if self._heading and tag == self._heading_tag and (
                self._heading_el is None or self.element is self._heading_el):
            self._end_heading()
            return
        if self._table_depth:
            if self._cell is not None and (tag in _BLOCK_TAGS or tag in _CELL_BREAKS) \
                    and tag not in ("td", "th", "tr"):
                self._cell.append(" ")
            if tag == "pre" and self._code is not None:
                code = "".join(self._code).strip("\n")
                if code.strip():
                    self._table_code.append(code)
                    if self._rows:
                        self._code_rows.setdefault(len(self._rows) - 1, []).append(
                            " ".join(code.split()))
                self._code = None
            if tag in ("td", "th") and self._cell is not None and self._rows:
                self._rows[-1].append(" ".join("".join(self._cell).split()))
                self._cell = None
            elif tag == "caption" and self._caption is not None:
                self._table_caption = " ".join("".join(self._caption).split())
                self._caption = None
            elif tag == "table":
                self._table_depth -= 1
                if self._table_depth == 0:
                    self._emit_table()
            return
        if self._label_tag == tag:
            label = " ".join("".join(self._buf).split())
            self._buf.clear()
            self._label = label if not label or label[-1] in ".:!?" else label + ":"
            self._label_tag = None
        elif tag == "dt" and self._dt:
            self._dt = False
            self._term(" ".join("".join(self._buf).split()))
            self._buf.clear()
        elif tag == "pre" or (tag == "div" and self._listing == self._box_depth["div"] + 1):
            if tag == "div":
                self._listing = None
            self._pre = max(0, self._pre - 1)
            text = "".join(self._buf).strip("\n")
            if tag == "div":
                text = "\n".join(ln for ln in text.split("\n") if ln.strip())
            self._buf.clear()
            if text.strip():
                self.events.append(_fenced(text))
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag == "li":
                self._bullet = False

    def handle_data(self, data: str) -> None:
        if self._table_depth and not self._heading:
            if self._caption is not None:
                self._caption.append(data)
            elif self._cell is not None:
                self._cell.append(data)
                if self._code is not None:
                    self._code.append(data)
            return
        self._buf.append(data if self._pre else data.replace("\n", " "))

    def _end_heading(self) -> None:
        title = _heading_text("".join(self._buf))
        self._buf.clear()
        if title and self._heading:
            self.events.append(Heading(self._heading, title))
            if self._heading_styled:
                self.styled_count += 1
            else:
                self._last_level = self._heading
                if self._heading_el is not None:
                    self.heading_elements[len(self.events) - 1] = self._heading_el
        self._heading, self._heading_styled = None, False

    def _emit_table(self) -> None:
        """The rows read so far as a table, then the code blocks of its cells.  A row that only
        holds code beside line numbers (a highlighter's layout table) is the code alone."""
        rows = [tuple(r) for i, r in enumerate(self._rows)
                if any(r) and not (i in self._code_rows and _code_layout_row(r, self._code_rows[i]))]
        if rows:
            self.events.append(Block("table", table_markdown(rows), caption=self._table_caption,
                                     rows=tuple(rows)))
        self.events.extend(_fenced(code) for code in self._table_code)
        self._rows, self._table_code, self._code_rows = [], [], {}

    def _term(self, term: str) -> None:
        """A ``<dt>`` is a definition term (issue #17); ``<dt>-a</dt><dt>--all</dt>`` is one."""
        if not term:
            return
        last = self.events[-1] if self.events else None
        if isinstance(last, Heading) and last.kind == "term":
            term = f"{last.title}, {term}"
            self.events.pop()
        if is_term_text(term):
            self.events.append(Heading(0, term, kind="term"))
        else:
            self.events.append(Block("text", term))

    def _flush(self) -> None:
        if self._heading or self._pre or self._label_tag or self._dt:
            return
        text = "".join(self._buf)
        self._buf.clear()
        lines = [" ".join(ln.split()) for ln in text.split("\n")]
        text = "\n".join(ln for ln in lines if ln)
        if text:
            if self._label:
                text, self._label = f"{self._label} {text}", ""
            if self._bullet:
                text, self._bullet = "- " + text, False
            self.events.append(Block("text", text))

    def close(self) -> None:
        self._heading = None
        self._label_tag = None
        self._pre = 0
        self._flush()


def _walk(top: lxml.html.HtmlElement, collector: _Collector, frame: _Frame) -> None:
    """Feed ``top``'s subtree to the collector as start/data/end calls, chrome skipped.  The
    text after an element (its tail) belongs to its parent and is kept even when the element
    is chrome; ``top``'s own tail is outside it.  A table that lays the page out (a heading in a
    cell with more beside it) is read as blocks, its cells as the page's flow."""
    stack: list[tuple[lxml.html.HtmlElement, str | None]] = [(top, None)]
    while stack:
        el, closing = stack.pop()
        tail = el.tail if el is not top else None
        if closing is not None:
            collector.element = el
            collector.handle_endtag(closing)
        elif not isinstance(el.tag, str) or (el is not top and el in frame.chrome):
            pass  # a comment, a processing instruction, or chrome
        else:
            tag = "div" if frame.layout and _in_layout(el, frame.layout) else el.tag
            collector.element = el
            collector.handle_starttag(tag, el.attrib)
            if el.text:
                collector.handle_data(el.text)
            stack.append((el, tag))
            stack.extend((child, None) for child in reversed(el))
            continue
        if tail:
            collector.handle_data(tail)


_TABLE_PARTS = frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"})


def _in_layout(el: lxml.html.HtmlElement, layout: set[lxml.html.HtmlElement]) -> bool:
    """``el`` is a layout table or one of its own rows and cells (not a nested data table's)."""
    if el.tag == "table":
        return el in layout
    if el.tag not in _TABLE_PARTS:
        return False
    owner = next((a for a in el.iterancestors() if a.tag == "table"), None)
    return owner is not None and owner in layout
