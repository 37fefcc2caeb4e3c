"""The page numbers printed on a PDF's pages, for citations ("p. 12 (PDF page 20)").

A reader cites the number printed on the page, not the file's page index: front matter in roman
numerals, a chapter file that starts at 231.  The PDF's own page labels say so when the producer
wrote them (``/PageLabels``); otherwise the numbers printed in the running header or footer do,
when they agree with one another: a printed arabic number read on at least half the pages at
one offset from the page index fixes the numbering of every page from the first one it reaches.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

_ARABIC = re.compile(r"^\d{1,5}$")
_ROMAN = re.compile(r"^(?=[ivxlcdm]+$)m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$",
                    re.IGNORECASE)
_PAGE_WORD = re.compile(r"^(?:page|p\.|seite|página|pagina)\s+", re.IGNORECASE)
MIN_SHARE = 0.5
"""Least share of the pages on which a printed number must agree with one offset."""


def pdf_page_labels(doc: Any) -> list[str]:
    """The labels the PDF itself declares, one per page (empty strings when it has none)."""
    try:
        labels = [str(doc[i].get_label() or "") for i in range(doc.page_count)]
    except Exception:  # noqa: BLE001 - a damaged label tree is no labels, not a failed document
        return [""] * doc.page_count
    return labels if any(labels) else [""] * doc.page_count


def printed_numbers(margins: Sequence[Sequence[str]]) -> list[str]:
    """Each page's printed number read from its header and footer pieces, where they agree."""
    found: list[str | None] = []
    for pieces in margins:
        numbers = [p for p in (_PAGE_WORD.sub("", x.strip()) for x in pieces)
                   if _ARABIC.match(p) or _ROMAN.match(p)]
        found.append(numbers[0] if len(numbers) == 1 else None)
    offsets = Counter(int(n) - i for i, n in enumerate(found, 1) if n and _ARABIC.match(n))
    if not offsets:
        return [""] * len(margins)
    offset, agreeing = offsets.most_common(1)[0]
    if agreeing < max(2, MIN_SHARE * len(margins)):
        return [""] * len(margins)
    out = []
    for i, n in enumerate(found, 1):
        if i + offset >= 1:
            out.append(str(i + offset))
        else:  # before the arabic numbering starts: a roman number printed there, if any
            out.append(n if n and _ROMAN.match(n) else "")
    return out


def page_labels(doc: Any, margins: Sequence[Sequence[str]]) -> list[str]:
    """One label per page: the PDF's own, else the printed numbers; ``[]`` when every page is
    labelled as the file counts it (nothing to show beside the PDF page number)."""
    labels = pdf_page_labels(doc)
    if not any(labels):
        labels = printed_numbers(margins)
    if all(label in ("", str(i)) for i, label in enumerate(labels, 1)):
        return []
    return labels
