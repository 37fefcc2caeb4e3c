"""A page's text as MuPDF extracts it (``get_text("dict")``), repaired before it is read into
lines (``hiqa.formats.pdf.lines``): letter-spaced titles joined (``letterspacing``), accents
set over letters composed (``accents``), old-style figures and small capitals out of the
private use area (``private_use``), line numbers in the margin dropped (``gutter``).  What
one page proves (a tracking, a font's figures) holds for the pages after it."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from hiqa.formats.pdf.accents import compose_accents
from hiqa.formats.pdf.gutter import drop_line_numbers
from hiqa.formats.pdf.letterspacing import rejoin_letter_spaced
from hiqa.formats.pdf.private_use import read_private_use

LOG = logging.getLogger("hiqa.pdf")
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP


@dataclass(slots=True)
class TextLayer:
    """The document's pages read one after another; what the pages so far proved."""

    source: str
    tracking: tuple[tuple[str, float], ...] = ()  # letter-spacing proved
    private: set[str] = field(default_factory=set)  # fonts proved to set old-style figures

    def page_dict(self, page: Any, page_no: int) -> dict[str, Any]:
        """The page's ``dict`` text, repaired.  The character boxes the repairs need (its
        ``rawdict``) are extracted once, and only for a page that shows the need."""
        textpage = page.get_textpage(flags=TEXT_FLAGS)
        page_dict: dict[str, Any] = page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage)
        raw = functools.cache(functools.partial(
            page.get_text, "rawdict", flags=TEXT_FLAGS, textpage=textpage))
        self.tracking = rejoin_letter_spaced(page_dict, raw, self.tracking)
        try:  # a repair that fails costs the repair, not the page
            compose_accents(page_dict, raw)
            read_private_use(page_dict, self.private)
        except Exception:
            LOG.warning("%s: page %d: accents or private-use characters left as extracted",
                        self.source, page_no, exc_info=True)
        drop_line_numbers(page_dict)
        return page_dict
