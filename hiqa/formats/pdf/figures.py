"""Figures of a PDF as image references (paper A.3/A.5): caption, referring text, picture.

A figure is a raster image placed on the page at a useful size: placements smaller than
``MIN_AREA`` of the page or ``MIN_SIDE`` points on a side are decorations (logos, bullets,
rules) and one covering most of the page is a scan or a background.  Overlapping placements
(a figure tiled from several images) are one figure.  Its caption is a "Figure N ..." line
(``Fig.``, ``Abbildung``, ``Abb.``, ``Figure`` in French) just below or above it, found while
the page is read so a bold caption never becomes a heading; a figure without one takes, once
headings are known, a short line of its own right below or above it; a figure with no caption
at all is not indexed (nothing would say what it shows).  Its indexed text is the caption plus
the sentences elsewhere in the body that name its label ("as Figure 3 shows ...").

The picture is not kept in the ``Document``: a manual's screenshots would stay in memory for
the whole ingest and slow the formatter down.  Right after parsing, the collection has each
figure rendered from the source PDF (``render_figures``) and stores it in its data folder, so
the picture outlives an uploaded or moved source.  The picture is a clip of the page as the
reader sees it: masks, colour spaces and vector labels drawn over the image come out right,
whatever the image's codec.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pymupdf

from hiqa.formats.pdf.lines import BODY, CAPTION, Line
from hiqa.formats.structure import Event
from hiqa.model import Block

MIN_AREA = 0.02  # share of the page (a 100 x 100 pt picture on A4)
MIN_SIDE = 64.0  # points
MAX_AREA = 0.8  # a page-sized image is a scan or a background
_RENDER_DPI = 150
_RENDER_MAX_PX = 1600
_MAX_CAPTION_LINES = 3
_MAX_PLAIN_CAPTION = 120  # characters of an unlabelled caption line
_MAX_REFERENCES = 2
_CAPTION = re.compile(
    r"^(?P<word>figure|fig\.?|abbildung|abb\.|illustration|bild)\s*"
    r"(?P<label>[A-Z]?\d+(?:[.\-]\d+)*)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])(?<![Ff]ig\.)(?<![Ff]igs\.)(?<![Aa]bb\.)\s+")


@dataclass(frozen=True, slots=True)
class FoundFigure:
    """A figure to emit before line ``anchor``; ``caption`` is empty until one is found."""

    anchor: int
    page: int
    bbox: tuple[float, float, float, float]
    caption: str
    index: int  # its place among the page's figures, for its file name


def page_figures(page: Any, lines: Sequence[Line], offset: int) -> list[FoundFigure]:
    """The figures of ``page`` (``lines`` are its lines, ``offset`` the global index of
    ``lines[0]``); labelled caption lines are marked ``CAPTION``.  Cheap on pages without
    images: the resource list is read before any placement is computed."""
    try:
        if not page.get_images(full=False):
            return []
        infos = page.get_image_info()
    except Exception:  # noqa: BLE001 - damaged image resources: the page's text is kept
        return []
    page_rect = page.rect
    page_area = max(page_rect.width * page_rect.height, 1.0)
    rects = _merged(
        r for info in infos if not (r := pymupdf.Rect(info["bbox"]) & page_rect).is_empty
    )
    out: list[FoundFigure] = []
    for rect in sorted(rects, key=lambda r: (r.y0, r.x0)):
        area = rect.width * rect.height / page_area
        if min(rect.width, rect.height) < MIN_SIDE or not MIN_AREA <= area <= MAX_AREA:
            continue
        bbox = (rect.x0, rect.y0, rect.x1, rect.y1)
        caption, first = _labelled_caption(lines, bbox)
        below = next(
            (i for i, ln in enumerate(lines) if (ln.y0 + ln.y1) / 2 >= rect.y0), len(lines)
        )
        anchor = below if first is None else min(first, below)
        out.append(FoundFigure(offset + anchor, page.number + 1, bbox, caption, len(out) + 1))
    return out


def _merged(rects: Iterable[pymupdf.Rect]) -> list[pymupdf.Rect]:
    out: list[pymupdf.Rect] = []
    for r in rects:
        r = pymupdf.Rect(r)
        merged = True
        while merged:
            merged = False
            for k, other in enumerate(out):
                if (r + (-1, -1, 1, 1)).intersects(other):  # overlapping or abutting tiles
                    r |= out.pop(k)
                    merged = True
                    break
        out.append(r)
    return out


def _near(ln: Line, bbox: tuple[float, float, float, float]) -> float | None:
    """How far ``ln`` sits below (or, plus 1000, above) the box; None when not next to it."""
    x0, y0, x1, y1 = bbox
    if ln.x1 < x0 or ln.x0 > x1:
        return None
    reach = 3 * ln.height
    if -1 <= ln.y0 - y1 <= reach:
        return ln.y0 - y1
    if -1 <= y0 - ln.y1 <= reach:
        return y0 - ln.y1 + 1000
    return None


def _labelled_caption(
    lines: Sequence[Line], bbox: tuple[float, float, float, float]
) -> tuple[str, int | None]:
    """The "Figure N ..." line nearest below (preferred) or above the box with the rest of its
    block, marked ``CAPTION``, and the index of its first line."""
    best: tuple[float, int] | None = None
    for i, ln in enumerate(lines):
        score = _near(ln, bbox) if ln.role == BODY and _CAPTION.match(ln.text) else None
        if score is not None and (best is None or score < best[0]):
            best = (score, i)
    if best is None:
        return "", None
    i = best[1]
    parts = [lines[i]]
    j = i + 1
    while j < len(lines) and len(parts) < _MAX_CAPTION_LINES and lines[j].block == lines[i].block:
        if lines[j].role == BODY:
            parts.append(lines[j])
        j += 1
    for ln in parts:
        ln.role = CAPTION
    return " ".join(ln.text for ln in parts), i


def caption_unlabelled(figures: Sequence[FoundFigure], lines: Sequence[Line]) -> list[FoundFigure]:
    """Figures with a caption: an unlabelled one takes the short line standing alone right
    below or above it (run once headings are known, so a heading is never taken); one with
    no such line is dropped."""
    out = []
    for f in figures:
        if f.caption:
            out.append(f)
            continue
        best: tuple[float, int] | None = None
        for i in range(max(0, f.anchor - 40), min(len(lines), f.anchor + 40)):
            ln = lines[i]
            if ln.page != f.page or ln.role != BODY or len(ln.text) > _MAX_PLAIN_CAPTION:
                continue
            alone = all(lines[j].block != ln.block for j in (i - 1, i + 1) if 0 <= j < len(lines))
            score = _near(ln, f.bbox) if alone else None
            if score is not None and (best is None or score < best[0]):
                best = (score, i)
        if best is None:
            continue
        ln = lines[best[1]]
        ln.role = CAPTION
        out.append(FoundFigure(min(f.anchor, best[1]), f.page, f.bbox, ln.text, f.index))
    return out


def figure_block(f: FoundFigure) -> Block:
    """The figure's block; its text is the caption until ``add_references`` runs."""
    return Block(kind="image", text=f.caption, page=f.page, caption=f.caption,
                 image=f"figure-p{f.page}-{f.index}.png", bbox=f.bbox)


def add_references(events: list[Event]) -> list[Event]:
    """Each labelled figure's text gains the body sentences that name its label, nearest
    first: "Figure 3 shows the pipeline" tells what the figure is about in the words a
    question uses."""
    labels = {i: m.group("label") for i, e in enumerate(events)
              if isinstance(e, Block) and e.kind == "image" and (m := _CAPTION.match(e.caption))}
    if not labels:
        return events
    sentences = [(i, s) for i, e in enumerate(events) if isinstance(e, Block) and e.kind == "text"
                 for s in _SENTENCE.split(e.text)]  # fmt: skip
    out = list(events)
    for i, label in labels.items():
        mention = re.compile(r"\b(?:figures?|figs?\.?|abbildung(?:en)?|abb\.)\s*"
                             + re.escape(label) + r"(?![\w.]\w)", re.IGNORECASE)
        near = sorted((abs(j - i), j, s) for j, s in sentences if mention.search(s))
        refs = list(dict.fromkeys(" ".join(s.split()) for _, _, s in near))[:_MAX_REFERENCES]
        block = events[i]
        if refs and isinstance(block, Block):
            out[i] = replace(block, text=block.caption + "\n\n" + " ".join(refs))
    return out


def render_figures(
    source: Path, blocks: Iterable[Block], write: Callable[[str, bytes], None]
) -> list[str]:
    """Hand each figure block's picture (a PNG clip of its page) to ``write(name, png)``;
    returns a warning per figure that could not be rendered (its segment stays, without a
    picture)."""
    wanted = [b for b in blocks if b.kind == "image" and b.image and b.bbox]
    if not wanted:
        return []
    problems: list[str] = []
    try:
        doc = pymupdf.open(source, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - the text was indexed; only pictures are lost
        return [f"figures could not be rendered ({exc}); they are indexed without pictures"]
    try:
        for b in wanted:
            try:
                page = doc.load_page(b.page - 1)
                clip = pymupdf.Rect(b.bbox)
                scale = min(_RENDER_DPI / 72, _RENDER_MAX_PX / max(clip.width, clip.height, 1))
                pix = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), clip=clip)
                write(b.image, pix.tobytes("png"))
            except Exception as exc:  # noqa: BLE001 - one bad figure does not stop the rest
                problems.append(f"the figure on page {b.page} could not be rendered ({exc})")
    finally:
        doc.close()
    return problems
