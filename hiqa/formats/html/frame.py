"""The site's frame around an HTML page, and where the page's own content is.

Every test reads the markup every generator uses for its frame (elements, ARIA roles, class
words and whole ids, links), never the page's wording; counts come from one pass over the DOM
(``_Frame``) so no test walks a subtree twice.
"""
from __future__ import annotations

import re

import lxml.html

_SKIP_TAGS = {"head", "script", "style", "nav", "noscript", "noframes", "template", "svg", "button",
              "input", "select", "textarea"}
_FRAME_TAGS = ("div", "table", "header", "footer", "ul", "section", "aside", "p", "address", "hr")
_NO_SPACE = str.maketrans("", "", " \n\t\r\xa0")
# Class words are whole tokens of the class attribute (split on white space): a hyphen joins
# words of one name, so DocBook's "table-contents" is not "contents" and Sphinx's slug of an
# admonition title ("admonition-...-related-errors") is not "related".
_ROOT_TOKENS = frozenset({"body", "contents", "content", "document", "main-content", "rst-content",
                          "md-content"})
# the frame's words, with at most one word before and two after ("sub-nav", "navbar-header",
# "toc-numbered-mark"); a bare "sidebar" is also reST's sidebar directive: frame only when links
_NAV_TOKEN = re.compile(
    r"(?:[a-z0-9]+-)?(?:nav[a-z]*|breadcrumbs?|skip-?links?|sphinxsidebar|bs-sidebar|toc|footer"
    r"|related|searchbox|search|menu-?bar)(?:-[a-z0-9]+){0,2}", re.IGNORECASE)
_SIDEBAR_TOKEN = "sidebar"
# a page header that only links elsewhere (Texinfo's "Next: ..., Previous: ..., Up: ...")
_HEADER_TOKENS = frozenset({"header", "summary"})
_SECTION_TOKEN = "section"
# page tools set inside the content: source and edit links, expand/collapse toggles, copy buttons
_TOOL_TOKEN = re.compile(
    r"srclink|viewcode-link|out-of-band|edit-?(?:this-?)?page|edit-?link|toggle[a-z-]*|copy-?btn"
    r"|copy-?button", re.IGNORECASE)
_TITLE_BLOCK_CLASS = "title"  # the whole class attribute of Doxygen's page title block
_CHROME_ROLE = frozenset({"navigation", "search", "banner", "contentinfo"})
# whole ids only: a section's id is made from its heading ("s-...-related-objects-in-the-admin")
_CHROME_ID = frozenset({"sidebar", "searchbox", "search", "footer", "toc", "nav", "navbar",
                        "navigation", "breadcrumbs", "menu-bar"})
_ROOT_ID = frozenset({"content", "main-content", "main", "doc-content", "maincontent"})
_PERMALINK_TOKEN = re.compile(r"headerlink|anchor(?:-?link)?|copiable-anchor|permalink|hash-?link",
                              re.IGNORECASE)
# an id names the frame only on a container: a heading or a term keeps its id ("nav" option)
_ID_TAGS = frozenset({"div", "ul", "ol", "table", "header", "footer", "aside", "nav", "address"})
_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))


def _tokens(el: lxml.html.HtmlElement) -> list[str]:
    return (el.get("class") or "").casefold().split()


def _frame_id(el: lxml.html.HtmlElement) -> bool:
    """An id that names the frame (``div#footer``, ``div#sidebar``), on a container that is not
    a content section (a section's id comes from its heading: "Search" gives ``id="search"``;
    MkDocs gives its ``nav`` option ``h3#nav``)."""
    ident = (el.get("id") or "").casefold()
    return ident in _CHROME_ID and el.tag in _ID_TAGS and _SECTION_TOKEN not in _tokens(el)


def _mark(text: str) -> bool:
    """At most two characters and no letter or digit: "¶", "#", "§", "¶ ↑" — not "Rc" or "gc"."""
    return len(text) <= 2 and not any(c.isalnum() for c in text)


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
        # tables that lay a page out: a heading inside a cell with more than the heading in it
        # (a whole page set in one cell); Doxygen's group headers fill their row alone
        self.layout: set[lxml.html.HtmlElement] = set()
        for head in body.iter(*_HEADING_TAGS):
            cell = next((a for a in head.iterancestors() if a.tag in ("td", "th")), None)
            if cell is not None and self._raw.get(cell, 0) > self._raw.get(head, 0):
                # that table and the tables around it (a page framed in nested tables)
                self.layout.update(a for a in cell.iterancestors() if a.tag == "table")

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
        if tag == "footer":  # the page's footer; an article's or a quote's own is content
            return not any(a.tag in ("article", "blockquote") for a in el.iterancestors())
        if tag == "form":  # a search box; ASP.NET pages wrap their whole body in one form
            return not self._heads[el] and self._raw[el] <= 300
        role = (el.get("role") or "").casefold()
        if role in _CHROME_ROLE or _frame_id(el):
            return True
        tokens = _tokens(el)
        if tag in _FRAME_TAGS and any(_NAV_TOKEN.fullmatch(t) for t in tokens):
            return True
        if tag in _FRAME_TAGS and _SIDEBAR_TOKEN in tokens and \
                self._linked[el] >= 0.5 * self._raw[el]:
            return True  # a sidebar of links; reST's sidebar directive is prose
        if tag in _FRAME_TAGS and _HEADER_TOKENS.intersection(tokens) and self._link_bar(el):
            return True
        if tag in ("a", "span", "div") and any(_TOOL_TOKEN.fullmatch(t) for t in tokens):
            return self._raw[el] <= 24  # a label or a button; a "toggle" block of text is content
        if tag in ("a", "span") and any(_PERMALINK_TOKEN.fullmatch(t) for t in tokens):
            return _mark(_text(el))
        if tag == "a" and self._raw[el] <= 2 and (el.get("href") or "").startswith("#") and any(
                a.tag in _HEADING_TAGS for a in el.iterancestors()):
            return _mark(_text(el))  # a mark inside a heading linking into the page: RDoc's "¶ ↑"
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


def _text(el: lxml.html.HtmlElement) -> str:
    return "".join(el.itertext()).strip()


def _chars(text: str) -> int:
    """Characters other than white space (the indentation between list items is not text)."""
    return len(text.translate(_NO_SPACE))


def _content_root(body: lxml.html.HtmlElement,
                  sizes: dict[lxml.html.HtmlElement, int]) -> lxml.html.HtmlElement:
    """The element holding the page's own content: the ``main`` landmark, else an ``article``,
    else a container generators name for it (Sphinx ``div.body``, Doxygen ``div.contents``,
    ``#content``); the body when none holds most of the page's text (half of it or more).
    Among containers of one kind the outermost wins (AsciiDoc wraps every listing in a
    ``div.content``: the innermost holding half the text can be one long listing)."""
    total = sizes.get(body, 0)
    best: tuple[int, int, lxml.html.HtmlElement] | None = None
    for el in body.iter():
        if not isinstance(el.tag, str):
            continue
        rank = _root_rank(el)
        size = sizes.get(el, 0)
        if rank is None or size < 0.5 * total:
            continue
        if best is None or (rank, -size) < (best[0], -best[1]):
            best = (rank, size, el)
    return body if best is None else best[2]


def _root_rank(el: lxml.html.HtmlElement) -> int | None:
    if el.tag == "main" or (el.get("role") or "").casefold() == "main":
        return 0
    if el.tag == "article":
        return 1
    if el.tag in ("div", "section") and (_ROOT_TOKENS.intersection(_tokens(el))
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
    """``el`` is or holds a heading outside the frame (a subtree without any heading, by the
    frame's counts, is not walked; the walk is a loop, so no depth limit applies)."""
    stack = [el] if frame._heads.get(el) else []
    while stack:
        node = stack.pop()
        if not isinstance(node.tag, str) or node in frame.chrome:
            continue
        if _is_heading(node):
            return True
        stack.extend(node)
    return False


def _title_block(el: lxml.html.HtmlElement) -> bool:
    return el.tag == "div" and el.get("class") == _TITLE_BLOCK_CLASS


def _redirect_target(page: lxml.html.HtmlElement, text_size: int) -> str | None:
    """Where a page that only sends the browser elsewhere points (``<meta http-equiv="refresh"
    content="0;URL=new.html">`` and a line such as "Redirecting to ..."), else None."""
    for meta in page.iter("meta"):
        if (meta.get("http-equiv") or "").casefold() == "refresh" and text_size < 300:
            return (meta.get("content") or "").partition("=")[2].strip()
    return None
