"""HTML sources: ``h1``-``h6`` headings, paragraphs and lists as text, ``table`` as Markdown
tables (with ``caption``).  Scripts, styles and navigation (``nav`` elements, and elements whose
class names a navigation header/footer, as in DocBook/PostgreSQL pages) are skipped.  The
``<title>`` element plays the role of the PDF metadata title in the title rule.

Line breaks in the source are whitespace, as a browser treats them (only ``br`` and ``pre``
break lines).  A ``<dt>`` is a definition term (the finest level of the tree, see
``hiqa.structure.resolve_terms``), its ``<dd>`` the term's body.  A list item starts with "- " even when its text sits in a ``<p>`` inside the
``<li>``, as in DocBook.  A heading inside an admonition box (DocBook's
``<div class="note"><h3>Note</h3>``) is a label, not a section: it becomes "Note:" before the
box's text, so the text after the box stays in the section it belongs to.
"""
from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping

import lxml.etree
import lxml.html

from ..errors import EmptyDocumentError
from ..model import Block, Document, Heading
from ..structure import Event, build_document, is_term_text

_BLOCK_TAGS = {
    "p", "div", "li", "dt", "dd", "blockquote", "pre", "section", "article", "ul", "ol", "dl",
    "br", "hr", "figure", "figcaption", "header", "footer", "main", "aside", "td", "th", "tr",
}
_SKIP_TAGS = {"script", "style", "nav", "noscript", "template", "svg", "button", "input",
              "select", "textarea"}
_FRAME_TAGS = ("div", "table", "header", "footer", "ul", "section", "aside", "p", "address", "hr")
_NO_SPACE = str.maketrans("", "", " \n\t\r\xa0")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_ROOT_CLASS = re.compile(
    r"\b(body|contents|content|document|main-content|rst-content|md-content)\b", re.IGNORECASE)
_CELL_BREAKS = {"h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}
_VOID = {"br", "hr", "img", "meta", "link", "input", "col", "area", "base", "wbr", "source"}
_NAV_CLASS = re.compile(
    r"\bnav(header|footer|bar|path|row|tree)?\b|\bbreadcrumbs?\b|\bskip-?link\b|\bsphinxsidebar\b"
    r"|\bsidebar\b|\btoc\b|\bfooter\b|\brelated\b|\bsearch(box)?\b|\bmenu-?bar\b",
    re.IGNORECASE)
# a page header that only links elsewhere (Texinfo's "Next: ..., Previous: ..., Up: ...")
_SECTION_CLASS = re.compile(r"\bsection\b", re.IGNORECASE)
_HEADER_CLASS = re.compile(r"\b(header|summary)\b", re.IGNORECASE)
# page tools set inside the content: source and edit links, expand/collapse toggles, copy buttons
_TOOL_CLASS = re.compile(
    r"\b(srclink|viewcode-link|out-of-band|edit-?(this-?)?page|edit-?link|toggle\w*|copy-?btn|"
    r"copy-?button)\b", re.IGNORECASE)
# a code listing set as one element per line (Doxygen's div.fragment > div.line)
_LISTING_CLASS = re.compile(r"\bfragment\b", re.IGNORECASE)
_TITLE_BLOCK_CLASS = "title"  # the whole class attribute of Doxygen's page title block
_CHROME_ROLE = frozenset({"navigation", "search", "banner", "contentinfo"})
# whole ids only: a section's id is made from its heading ("s-...-related-objects-in-the-admin")
_CHROME_ID = frozenset({"sidebar", "searchbox", "search", "footer", "toc", "nav", "navbar",
                        "navigation", "breadcrumbs", "menu-bar"})
_ROOT_ID = frozenset({"content", "main-content", "main", "doc-content", "maincontent"})
_PERMALINK_CLASS = re.compile(r"\b(headerlink|anchor-?link|permalink|hash-?link)\b", re.IGNORECASE)
_PERMALINK_MARK = re.compile(r"\s*(?:[¶§#🔗]+|\[link\])$")
_LEAD_MARK = re.compile(r"^[◆¶§🔗]\s*")
_HEADING_TAG = re.compile(r"h[1-6]")
_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_BOOK_SUFFIX = re.compile(r"\s+\([^()]+\)$")
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*|[a-z](?:\.\d+)+)\.?\s+")
_TITLE_SEPARATORS = re.compile(r"\s+(?:[—–|·«»:]{1,2}|-)\s+|:\s+")
_ADMONITION_CLASS = re.compile(
    r"\b(admonition|note|tip|hint|warning|caution|important|danger)\b", re.IGNORECASE)
_BOX_TAGS = ("div", "aside", "section")


def _heading_text(raw: str) -> str:
    """A heading's text without the permalink marks generators put before or after it."""
    return _LEAD_MARK.sub("", _PERMALINK_MARK.sub("", " ".join(raw.split())))


def _code_layout_row(row: list[str]) -> bool:
    """A row of line numbers beside a code cell: every other cell is numbers or empty."""
    return sum(1 for c in row if c and not c.replace(" ", "").isdigit()) <= 1


def table_markdown(rows: list[tuple[str, ...]]) -> str:
    """Render rows as a pipe table; the first row is the header."""
    width = max(len(r) for r in rows)
    norm = [tuple(c.replace("|", "\\|") for c in r) + ("",) * (width - len(r)) for r in rows]
    out = ["| " + " | ".join(norm[0]) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(r) + " |" for r in norm[1:]]
    return "\n".join(out)


class _Collector:
    """Turns the start/data/end stream of a DOM walk into events (headings, text, tables)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._buf: list[str] = []
        self.element: lxml.html.HtmlElement | None = None  # the element being started
        self.heading_elements: dict[int, lxml.html.HtmlElement] = {}  # event index -> element
        self._heading_el: lxml.html.HtmlElement | None = None
        self._heading: int | None = None
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
        self._code_rows: set[int] = set()
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
        if tag == "table":
            self._flush()
            self._table_depth += 1
            if self._table_depth == 1:
                self._rows, self._table_caption = [], ""
                self._table_code, self._code_rows = [], set()
            return
        if self._table_depth and _HEADING_TAG.fullmatch(tag) and not self._admonitions:
            # a heading inside a table (Doxygen's group headers in its member tables) is a
            # heading: the rows before it are one table, the rows after it another
            self._emit_table()
            self._rows = []
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
                    self._code_rows.add(len(self._rows) - 1)
            return
        if _HEADING_TAG.fullmatch(tag) and self._admonitions:
            self._flush()
            self._label_tag = tag
        elif _HEADING_TAG.fullmatch(tag):
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
        if self._heading and tag == self._heading_tag:
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
                self.events.append(Block("text", "```\n" + text + "\n```"))
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
            if self._heading_el is not None:
                self.heading_elements[len(self.events) - 1] = self._heading_el
        self._heading = None

    def _emit_table(self) -> None:
        """The rows read so far as a table, then the code blocks of its cells.  A row that only
        holds code beside line numbers (a highlighter's layout table) is the code alone."""
        rows = [tuple(r) for i, r in enumerate(self._rows)
                if any(r) and not (i in self._code_rows and _code_layout_row(r))]
        if rows:
            self.events.append(Block("table", table_markdown(rows), caption=self._table_caption,
                                     rows=tuple(rows)))
        self.events.extend(Block("text", "```\n" + code + "\n```") for code in self._table_code)
        self._rows, self._table_code, self._code_rows = [], [], set()

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


def parse_html(
    text: str, *, doc_id: str, source: str, warnings: list[str] | tuple[str, ...] = ()
) -> Document:
    """The page's content (its root found and its frame left out, see ``_content_root`` and
    ``_Frame``) as a document whose levels follow the markup (``_nested``, ``_rebased``)."""
    page = _parse(text)
    page_title = None
    events: list[Event] = []
    if page is not None:
        page_title = " ".join((page.findtext(".//title") or "").split()) or None
        body = page.find("body")
        body = page if body is None else body
        frame = _Frame(body)
        target = _redirect_target(page, frame.size.get(body, 0))
        if target is not None:
            raise EmptyDocumentError(source, f"a redirect page (to {target or 'another page'}): "
                                             "it has no content of its own; ingest its target")
        collector = _Collector()
        for top in _content(body, _content_root(body, frame.size), frame):
            _walk(top, collector, frame)
        collector.close()
        events = _nested(collector.events, collector.heading_elements)
    events, title = _titled(events, page_title)
    return build_document(
        doc_id=doc_id,
        source=source,
        fmt="html",
        events=_rebased(events, title),
        metadata_title=title,
        warnings=warnings,
    )


def _parse(text: str) -> lxml.html.HtmlElement | None:
    """The page's DOM (lxml's HTML parser: a real page's broken markup is repaired as a
    browser would), or None for a page without elements."""
    text = _XML_DECLARATION.sub("", text, count=1)  # lxml refuses str with an encoding declaration
    try:
        return lxml.html.document_fromstring(text)
    except (lxml.etree.ParserError, ValueError):
        return None


def _frame_id(el: lxml.html.HtmlElement) -> bool:
    """An id that names the frame (``div#footer``, ``div#sidebar``), on an element that is not
    a content section (a section's id comes from its heading: "Search" gives ``id="search"``)."""
    ident = (el.get("id") or "").casefold()
    return ident in _CHROME_ID and el.tag != "section" and not _SECTION_CLASS.search(
        el.get("class") or "")


class _Frame:
    """Which elements are the site's frame around the page, and how much content text each
    element holds, from one pass over the DOM (children before parents, so each test reads
    counts instead of walking a subtree again: a 2 MB single-page manual has 70k elements).

    The frame (navigation, search, sidebars, page headers/footers, permalink marks, page tools)
    is recognised by the markup every generator uses for it (elements, ARIA roles, class and id
    words, links), never by its wording.
    """

    def __init__(self, body: lxml.html.HtmlElement) -> None:
        self.chrome: set[lxml.html.HtmlElement] = set()
        self.size: dict[lxml.html.HtmlElement, int] = {}  # content characters, frame left out
        self._raw: dict[lxml.html.HtmlElement, int] = {}  # all characters (white space aside)
        self._linked: dict[lxml.html.HtmlElement, int] = {}  # characters inside links
        self._links: dict[lxml.html.HtmlElement, tuple[int, int]] = {}  # (links, links in page)
        self._heads: dict[lxml.html.HtmlElement, int] = {}  # headings at or under it
        for el in reversed(list(body.iter())):
            if isinstance(el.tag, str):
                self._count(el, is_body=el is body)

    def _count(self, el: lxml.html.HtmlElement, *, is_body: bool) -> None:
        kids = []
        loose = _chars(el.text) if el.text else 0
        raw = linked = links = local = heads = size = 0
        for c in el:
            if c.tail:
                loose += _chars(c.tail)
            if isinstance(c.tag, str):
                kids.append(c)
                raw += self._raw[c]
                linked += self._linked[c]
                n, m = self._links[c]
                links, local, heads, size = links + n, local + m, heads + self._heads[c], \
                    size + self.size[c]
        self._raw[el] = raw = raw + loose
        if el.tag == "a":
            linked = raw
            links, local = links + 1, local + (el.get("href") or "").startswith("#")
        self._linked[el] = linked
        self._links[el] = (links, local)
        self._heads[el] = heads + _is_heading(el)
        if not is_body and self._frame(el, kids):
            self.chrome.add(el)
            self.size[el] = 0
        else:
            self.size[el] = loose + size

    def _frame(self, el: lxml.html.HtmlElement, kids: list[lxml.html.HtmlElement]) -> bool:
        tag = el.tag
        if tag in _SKIP_TAGS:
            return True
        if tag == "footer":  # the page's footer; an article's own footer is its content
            return not any(a.tag == "article" for a in el.iterancestors())
        if tag == "form":  # a search box; ASP.NET pages wrap their whole body in one form
            return not self._heads[el] and self._raw[el] <= 300
        role = (el.get("role") or "").casefold()
        if role in _CHROME_ROLE or _frame_id(el):
            return True
        klass = el.get("class") or ""
        if tag in _FRAME_TAGS and _NAV_CLASS.search(klass):
            return True
        if tag in _FRAME_TAGS and _HEADER_CLASS.search(klass) and self._link_bar(el):
            return True
        if tag in ("a", "span", "div") and _TOOL_CLASS.search(klass):
            return self._raw[el] <= 24  # a label or a button; a "toggle" block of text is content
        if tag in ("a", "span") and _PERMALINK_CLASS.search(klass):
            return self._raw[el] <= 2  # a mark, not a word
        if tag == "a" and self._raw[el] <= 2 and (el.get("href") or "").startswith("#") and any(
                a.tag in _HEADING_TAGS for a in el.iterancestors()):
            return True  # a mark inside a heading linking into the page: RDoc's "¶ ↑"
        return tag in ("ul", "ol", "div", "p", "table") and self._local_toc(el, kids)

    def _link_bar(self, el: lxml.html.HtmlElement) -> bool:
        """Short, mostly links, no heading: a bar of links to other pages (Texinfo's "Next:
        ..., Previous: ..., Up: ..." header)."""
        text = self._raw[el]
        return text < 400 and self._linked[el] >= 0.5 * text and not self._heads[el]

    def _local_toc(self, el: lxml.html.HtmlElement, kids: list[lxml.html.HtmlElement]) -> bool:
        """A list of links into the page itself (pod2html's index, a "Contents" box): the
        headings it repeats follow, so the list is navigation.  Three links or more, all into
        the page, and no text outside them; at most one heading, its label, first ("Table of
        Contents" over Texinfo's list): a block with more headings is content (a Javadoc summary
        links each member it lists)."""
        links, local = self._links[el]
        if links < 3 or local < links:
            return False
        heads = self._heads[el]
        if heads > 1 or (heads and not (kids and _is_heading(kids[0]))):
            return False
        label = self._raw[kids[0]] if heads else 0
        return self._linked[el] >= 0.9 * (self._raw[el] - label)


def _is_heading(el: lxml.html.HtmlElement) -> bool:
    return el.tag in _HEADING_TAGS or _title_block(el)


def _chars(text: str) -> int:
    """Characters other than white space (the indentation between list items is not text)."""
    return len(text.translate(_NO_SPACE))


def _content_root(body: lxml.html.HtmlElement,
                  sizes: dict[lxml.html.HtmlElement, int]) -> lxml.html.HtmlElement:
    """The element holding the page's own content: the ``main`` landmark, else an ``article``,
    else a container generators name for it (Sphinx ``div.body``, Doxygen ``div.contents``,
    ``#content``); the body when none holds most of the page's text (half of it or more).
    Among containers of one kind the innermost that still holds half the text wins."""
    total = sizes.get(body, 0)
    best: tuple[int, int, lxml.html.HtmlElement] | None = None
    for el in body.iter():
        if not isinstance(el.tag, str):
            continue
        rank = _root_rank(el)
        size = sizes.get(el, 0)
        if rank is None or size < 0.5 * total:
            continue
        if best is None or (rank, size) < (best[0], best[1]):
            best = (rank, size, el)
    return body if best is None else best[2]


def _root_rank(el: lxml.html.HtmlElement) -> int | None:
    if el.tag == "main" or (el.get("role") or "").casefold() == "main":
        return 0
    if el.tag == "article":
        return 1
    if el.tag in ("div", "section") and (_ROOT_CLASS.search(el.get("class") or "")
                                         or (el.get("id") or "").casefold() in _ROOT_ID):
        return 2
    return None


def _content(body: lxml.html.HtmlElement, root: lxml.html.HtmlElement,
             frame: _Frame) -> list[lxml.html.HtmlElement]:
    """The content root, and before it what the page heads its content with outside the
    root: going up from the root, the earlier siblings from the first one that holds a
    heading (Doxygen's title block stands in the page header, outside ``div.contents``;
    AsciiDoc's title and NAME section in ``div#header``, outside ``div#content``).  What
    follows the root outside it is the site's (footers, related links)."""
    tops = [root]
    node = root
    while node is not body:
        parent = node.getparent()
        if parent is None:
            break
        before = [el for el in node.itersiblings(preceding=True) if isinstance(el.tag, str)]
        before.reverse()  # document order
        first = next((k for k, el in enumerate(before) if _holds_heading(el, frame)), None)
        if first is not None:
            tops = before[first:] + tops
        node = parent
    return tops


def _holds_heading(el: lxml.html.HtmlElement, frame: _Frame) -> bool:
    """``el`` is or holds a heading outside the frame."""
    if not isinstance(el.tag, str) or el in frame.chrome:
        return False
    return _is_heading(el) or any(_holds_heading(child, frame) for child in el)


def _title_block(el: lxml.html.HtmlElement) -> bool:
    return el.tag == "div" and el.get("class") == _TITLE_BLOCK_CLASS


def _redirect_target(page: lxml.html.HtmlElement, text_size: int) -> str | None:
    """Where a page that only sends the browser elsewhere points (``<meta http-equiv="refresh"
    content="0;URL=new.html">`` and a line such as "Redirecting to ..."), else None."""
    for meta in page.iter("meta"):
        if (meta.get("http-equiv") or "").casefold() == "refresh" and text_size < 300:
            return (meta.get("content") or "").partition("=")[2].strip()
    return None


def _walk(top: lxml.html.HtmlElement, collector: _Collector, frame: _Frame) -> None:
    """Feed ``top``'s subtree to the collector as start/data/end calls, chrome skipped.  The
    text after an element (its tail) belongs to its parent and is kept even when the element
    is chrome; ``top``'s own tail is outside it."""
    stack: list[tuple[lxml.html.HtmlElement, bool]] = [(top, False)]
    while stack:
        el, closing = stack.pop()
        tail = el.tail if el is not top else None
        if closing:
            collector.handle_endtag(el.tag)
        elif not isinstance(el.tag, str) or (el is not top and el in frame.chrome):
            pass  # a comment, a processing instruction, or chrome
        else:
            collector.element = el
            collector.handle_starttag(el.tag, el.attrib)
            if el.text:
                collector.handle_data(el.text)
            stack.append((el, True))
            stack.extend((child, False) for child in reversed(el))
            continue
        if tail:
            collector.handle_data(tail)


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
