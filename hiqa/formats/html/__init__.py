"""HTML sources: the page's own content, with its true heading tree, from any generator.

The page is parsed into a DOM (lxml), and read in four steps, one module each:

* ``frame``: which elements are the site's frame (navigation, sidebars, search, footers,
  permalink marks, page tools) and which element holds the page's content (``main``, an
  ``article``, a generator's content container), from the markup only;
* ``collect``: the content walked into HiQA's events: ``h1``-``h6`` headings (also inside lists,
  tables and ``<details>``), paragraphs and list items ("- "), ``<dt>`` definition terms with
  their ``<dd>`` (see ``hiqa.formats.structure.resolve_terms``), tables as Markdown tables with their
  caption, code blocks; a heading inside an admonition box is its label ("Note:"), not a
  section; line breaks in the source are white space, as a browser treats them;
* ``styled``: headings a page sets by styling instead of ``h1``-``h6`` (a table cell used as a
  banner, a bold line standing alone, a run of anchored containers each opening with a short
  block), from the page's own markup and ``<style>``;
* ``levels``: heading levels as the markup nests them, and the title: the heading that names the
  page's ``<title>``, else the ``<title>`` itself (it plays the role of the PDF metadata title).

docs/html-structure.md says how each rule decides and what is left alone.
"""
from __future__ import annotations

import re

import lxml.etree
import lxml.html

from hiqa.errors import EmptyDocumentError
from hiqa.formats.html.collect import _Collector, _walk, table_markdown
from hiqa.formats.html.frame import _content, _content_root, _Frame, _redirect_target
from hiqa.formats.html.levels import _nested, _rebased, _titled
from hiqa.formats.html.styled import Styled
from hiqa.formats.structure import Event, build_document
from hiqa.model import Document

__all__ = ["parse_html", "table_markdown"]

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_END_OF_PAGE = re.compile(r"</(?:body|html)\s*>", re.IGNORECASE)


def parse_html(
    text: str, *, doc_id: str, source: str, warnings: list[str] | tuple[str, ...] = ()
) -> Document:
    """The page's content (its root found and its frame left out, see ``_content_root`` and
    ``_Frame``) as a document whose levels follow the markup (``_nested``, ``_rebased``)."""
    page = _parse(text)
    page_title = None
    events: list[Event] = []
    styled_headings = 0
    if page is not None:
        page_title = " ".join((page.findtext(".//title") or "").split()) or None
        body = page.find("body")
        body = page if body is None else body
        frame = _Frame(body)
        target = _redirect_target(page, frame.size.get(body, 0))
        if target is not None:
            raise EmptyDocumentError(source, f"a redirect page (to {target or 'another page'}): "
                                             "it has no content of its own; ingest its target")
        styled = Styled(body, page, frame)
        frame.chrome |= styled.chrome
        frame.layout |= styled.tables
        collector = _Collector(styled.headings)
        for top in _content(body, _content_root(body, frame.size), frame):
            _walk(top, collector, frame)
        collector.close()
        styled_headings = collector.styled_count
        events = _nested(collector.events, collector.heading_elements)
    events, title = _titled(events, page_title)
    return build_document(
        doc_id=doc_id,
        source=source,
        fmt="html",
        events=_rebased(events, title),
        metadata_title=title,
        warnings=warnings,
        # the fidelity report's evidence: headings read from how the page sets them
        metadata={"headings_from": "typography"} if styled_headings else None,
    )


def _parse(text: str) -> lxml.html.HtmlElement | None:
    """The page's DOM (lxml's HTML parser: a real page's broken markup is repaired as a
    browser would), or None for a page without elements."""
    text = _XML_DECLARATION.sub("", text, count=1)  # lxml refuses str with an encoding declaration
    # a browser keeps what follows </body> or an early </html>; libxml2 drops it
    text = _END_OF_PAGE.sub("", text)
    try:
        # huge_tree: libxml2 otherwise stops at 256 open elements (unclosed <span>s in a log)
        return lxml.html.document_fromstring(text, parser=lxml.html.HTMLParser(huge_tree=True))
    except (lxml.etree.ParserError, ValueError):
        return None
