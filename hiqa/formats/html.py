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

import re
from html.parser import HTMLParser

from ..model import Block, Document, Heading
from ..structure import Event, build_document, is_term_text

_BLOCK_TAGS = {
    "p", "div", "li", "dt", "dd", "blockquote", "pre", "section", "article", "ul", "ol", "dl",
    "br", "hr", "figure", "figcaption", "header", "footer", "main", "aside", "td", "th", "tr",
}
_SKIP_TAGS = {"script", "style", "nav", "noscript", "template", "svg"}
_CELL_BREAKS = {"h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}
_VOID = {"br", "hr", "img", "meta", "link", "input", "col", "area", "base", "wbr", "source"}
_NAV_CLASS = re.compile(
    r"\bnav(header|footer|bar)?\b|\bbreadcrumbs?\b|\bskip-?link\b|\bsphinxsidebar\b|\btoc\b",
    re.IGNORECASE)
_TITLE_BLOCK_CLASS = "title"  # the whole class attribute of Doxygen's page title block
_CHROME_ROLE = frozenset({"navigation", "search", "banner", "contentinfo"})
_CHROME_ID = frozenset({"sidebar", "searchbox"})
_PERMALINK_CLASS = re.compile(r"\b(headerlink|anchor-?link|permalink|hash-?link)\b", re.IGNORECASE)
_PERMALINK_MARK = re.compile(r"\s*[¶§#🔗]+$")
_TITLE_SEPARATORS = re.compile(r"\s+(?:[—–|·«»:]{1,2}|-)\s+")
_ADMONITION_CLASS = re.compile(
    r"\b(admonition|note|tip|hint|warning|caution|important|danger)\b", re.IGNORECASE)
_BOX_TAGS = ("div", "aside", "section")


def table_markdown(rows: list[tuple[str, ...]]) -> str:
    """Render rows as a pipe table; the first row is the header."""
    width = max(len(r) for r in rows)
    norm = [tuple(c.replace("|", "\\|") for c in r) + ("",) * (width - len(r)) for r in rows]
    out = ["| " + " | ".join(norm[0]) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(r) + " |" for r in norm[1:]]
    return "\n".join(out)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[Event] = []
        self.title: str | None = None
        self._buf: list[str] = []
        self._skip_stack: list[str] = []
        self._heading: int | None = None
        self._heading_tag = ""  # the element that closes the heading being read
        self._pre = 0
        self._in_title = False
        self._table_depth = 0
        self._rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None
        self._table_caption = ""
        self._box_depth = {tag: 0 for tag in _BOX_TAGS}
        self._admonitions: list[tuple[str, int]] = []
        self._label_tag: str | None = None
        self._label = ""
        self._bullet = False
        self._dt = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_stack:
            if tag not in _VOID:
                self._skip_stack.append(tag)
            return
        cls = " ".join(v or "" for k, v in attrs if k in ("class", "role", "id"))
        klass = " ".join(v or "" for k, v in attrs if k == "class")
        role = next((v or "" for k, v in attrs if k == "role"), "").casefold()
        ident = next((v or "" for k, v in attrs if k == "id"), "").casefold()
        if (tag in _SKIP_TAGS or role in _CHROME_ROLE or ident in _CHROME_ID
                or (tag in ("div", "table", "header", "footer") and _NAV_CLASS.search(cls))
                or (tag in ("a", "span") and _PERMALINK_CLASS.search(cls))):
            if tag not in _VOID:
                self._skip_stack.append(tag)
            return
        if tag == "title":
            self._in_title = True
            return
        if tag in _BOX_TAGS:
            self._box_depth[tag] += 1
            if _ADMONITION_CLASS.search(klass):
                self._admonitions.append((tag, self._box_depth[tag]))
        if tag == "table":
            self._flush()
            self._table_depth += 1
            if self._table_depth == 1:
                self._rows, self._table_caption = [], ""
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
            return
        if re.fullmatch(r"h[1-6]", tag) and self._admonitions:
            self._flush()
            self._label_tag = tag
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self._heading, self._heading_tag = int(tag[1]), tag
        elif tag == "div" and klass == _TITLE_BLOCK_CLASS and not self._heading:
            # a generator's title block (Doxygen's <div class="title">Json::Value Class
            # Reference</div>) is the page's top heading
            self._flush()
            self._heading, self._heading_tag = 1, tag
        elif tag == "pre":
            self._flush()
            self._pre += 1
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

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self._skip_stack:
            while self._skip_stack:
                if self._skip_stack.pop() == tag:
                    break
            return
        if tag == "title":
            self._in_title = False
            return
        if tag in _BOX_TAGS and self._box_depth[tag]:
            if self._admonitions and self._admonitions[-1] == (tag, self._box_depth[tag]):
                self._admonitions.pop()
            self._box_depth[tag] -= 1
        if self._table_depth:
            if self._cell is not None and (tag in _BLOCK_TAGS or tag in _CELL_BREAKS) \
                    and tag not in ("td", "th", "tr"):
                self._cell.append(" ")
            if tag in ("td", "th") and self._cell is not None and self._rows:
                self._rows[-1].append(" ".join("".join(self._cell).split()))
                self._cell = None
            elif tag == "caption" and self._caption is not None:
                self._table_caption = " ".join("".join(self._caption).split())
                self._caption = None
            elif tag == "table":
                self._table_depth -= 1
                if self._table_depth == 0:
                    rows = [tuple(r) for r in self._rows if any(c for c in r)]
                    if rows:
                        self.events.append(
                            Block("table", table_markdown(rows), caption=self._table_caption,
                                  rows=tuple(rows))
                        )
            return
        if self._label_tag == tag:
            label = " ".join("".join(self._buf).split())
            self._buf.clear()
            self._label = label if not label or label[-1] in ".:!?" else label + ":"
            self._label_tag = None
        elif self._heading and tag == self._heading_tag:
            title = _PERMALINK_MARK.sub("", " ".join("".join(self._buf).split()))
            self._buf.clear()
            if title:
                self.events.append(Heading(self._heading, title))
            self._heading = None
        elif tag == "dt" and self._dt:
            self._dt = False
            self._term(" ".join("".join(self._buf).split()))
            self._buf.clear()
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            text = "".join(self._buf).strip("\n")
            self._buf.clear()
            if text.strip():
                self.events.append(Block("text", "```\n" + text + "\n```"))
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag == "li":
                self._bullet = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title = ((self.title or "") + data).strip()
            return
        if self._skip_stack:
            return
        if self._table_depth:
            if self._caption is not None:
                self._caption.append(data)
            elif self._cell is not None:
                self._cell.append(data)
            return
        self._buf.append(data if self._pre else data.replace("\n", " "))

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
        super().close()
        self._heading = None
        self._label_tag = None
        self._pre = 0
        self._flush()


def parse_html(
    text: str, *, doc_id: str, source: str, warnings: list[str] | tuple[str, ...] = ()
) -> Document:
    collector = _Collector()
    collector.feed(text)
    collector.close()
    events, title = _titled(collector.events, collector.title)
    return build_document(
        doc_id=doc_id,
        source=source,
        fmt="html",
        events=events,
        metadata_title=title,
        warnings=warnings,
    )


def _plain(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").casefold().split())


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
    parts = [p for p in _TITLE_SEPARATORS.split(page_title) if p.strip()]
    wanted = {_plain(page_title), *(_plain(p) for p in parts[:1])}
    for i, ev in enumerate(events):
        if isinstance(ev, Heading) and ev.kind == "heading" and _plain(ev.title) in wanted:
            return events[i:], ev.title
    return events, " ".join(page_title.split())
