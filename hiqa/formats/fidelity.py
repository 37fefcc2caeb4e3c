"""How far to trust a document's heading tree: the fidelity report (``hiqa structure FILE
--report``, and per document on the Ingest page and in the registry).

HCA is only as good as the tree it is given, and a user cannot see a PDF's tree go wrong
until answers do.  The report says which evidence the tree came from (the PDF's outline, its
printed table of contents, its typography -- font sizes, weights and numbering in a PDF, styled
blocks in an HTML page without heading elements -- or the source's markup), how many
headings sit at each level, which pages were set aside as a table of contents or an index
(they give no segments), and warns when the tree looks wrong: the reasons of
``llm_format.structure_confidence`` (the score ``--llm-format auto`` acts on: no headings, one
flat level, numbering that jumps or disagrees with levels), plus headings denser than the text
and TOC-like pages the body does not confirm.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

from hiqa.formats.llm_format import structure_confidence
from hiqa.formats.pdf.lines import numbering_depth
from hiqa.model import Document

EVIDENCE = {
    "outline": "the PDF's outline (bookmarks)",
    "toc": "the printed table of contents",
    "layout": "typography (font sizes, weights and numbering)",
    "typography": "typography (bold lines, banner cells, styled blocks)",
    "markup": "the source's markup",
}
_DENSE_LINES = 3  # a heading for fewer body lines than this, on average, is suspect
_DENSE_MIN = 20


@dataclass(frozen=True)
class Fidelity:
    evidence: str  # a key of EVIDENCE
    headings: int
    per_level: dict[int, int]
    numbered: int  # headings with a section number ("2.3.1", "Chapter 4")
    toc_pages: str  # "3-5": pages set aside as a table of contents
    index_pages: str
    toc_entries: int
    toc_found: int
    confidence: float  # ``llm_format.structure_confidence``: below 0.6, --llm-format auto repairs
    warnings: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["per_level"] = {str(k): v for k, v in self.per_level.items()}
        d["warnings"] = list(self.warnings)
        d["summary"] = self.summary
        return d

    @property
    def summary(self) -> str:
        """One line: "42 headings (L1 6 · L2 36) from the printed table of contents"."""
        levels = " · ".join(f"L{k} {v}" for k, v in sorted(self.per_level.items()))
        text = f"{self.headings} headings" + (f" ({levels})" if levels else "")
        return f"{text} from {EVIDENCE[self.evidence]}"


def fidelity(doc: Document) -> Fidelity:
    meta = doc.metadata
    evidence = meta.get("headings_from", "markup") if doc.format in ("pdf", "html") else "markup"
    heads = doc.headings
    per_level = dict(sorted(Counter(h.level for h in heads).items()))
    numbered = sum(1 for h in heads if numbering_depth(h.title) is not None)
    entries, found = int(meta.get("toc_entries", 0) or 0), int(meta.get("toc_found", 0) or 0)
    confidence, reasons = structure_confidence(doc)
    warnings = list(reasons) if confidence < 1.0 else []
    body_lines = sum(1 for s in doc.sections for b in s.blocks for line in b.text.splitlines()
                     if line.strip())
    if len(heads) >= _DENSE_MIN and body_lines < _DENSE_LINES * len(heads):
        warnings.append(f"{len(heads)} headings for {body_lines} lines of text: some headings "
                        "are probably terms or table rows")
    placed = int(meta.get("toc_placed", found) or 0)
    if evidence == "toc" and placed < found:
        warnings.append(f"{found - placed} of the table of contents' entries found in the text "
                        "could not be placed in order (a heading out of its TOC order?) and "
                        "are not headings")
    if meta.get("toc_unconfirmed_pages") and evidence != "outline":
        warnings.append(
            f"page(s) {meta['toc_unconfirmed_pages']} look like a table of contents, but its "
            f"{meta.get('toc_unconfirmed_entries')} entries are not headings on the pages they "
            "name: those pages are kept as text and the headings come from font styles")
    return Fidelity(evidence, len(heads), per_level, numbered, meta.get("toc_pages", ""),
                    meta.get("index_pages", ""), entries, found, round(confidence, 2),
                    tuple(warnings))
