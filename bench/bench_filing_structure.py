"""A line per filing (issue #46): its title and keywords from the cover, the Items it prints as
headings and at which levels, the statements found under the financial statements' Item (Item 8
of a 10-K, Item 1 of a 10-Q), the headings left on the cover page, and the segments that still
hold a bare page number (the number their own page prints, on a line of its own).

    python bench/bench_filing_structure.py filings/pdfs      # make_filings_corpus.py's output
    python bench/bench_filing_structure.py --quick           # smoke run: one generated filing
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hiqa.augment import segment_document
from hiqa.formats import load_document
from hiqa.formats.statements import families_of
from hiqa.keywords.filing import read_filing

ITEM = re.compile(r"^item\s+(\d+[a-c]?)\b", re.IGNORECASE)
STATEMENTS_ITEM = re.compile(r"^item\s+(?:8\b|1\.\s+financial statements)", re.IGNORECASE)
BARE_NUMBER = re.compile(r"(?m)^\s*\d{1,3}\s*$")


def printed_numbers(pdf: Path) -> dict[int, str]:
    """Each page's printed page number (1-based page -> the bare number on its first or last
    line of text), where it prints one: a bare number in a segment counts only when it is the
    number its own page prints, not a table's figure or an index's page reference."""
    import pymupdf

    out = {}
    with pymupdf.open(pdf) as doc:
        for page in doc:
            lines = [ln for ln in page.get_text().splitlines() if ln.strip()]
            for ln in (lines[-1:] + lines[:1]) if lines else []:
                if BARE_NUMBER.fullmatch(ln):
                    out[page.number + 1] = ln.strip()
                    break
    return out


def line(pdf: Path) -> str:
    doc = load_document(pdf)
    filing = read_filing(doc.markdown)
    segments = segment_document(doc, "hca")
    levels: dict[str, int] = {}
    for s in segments:
        for depth, title in enumerate(s.path[1:], start=1):
            m = ITEM.match(title)
            if m:
                levels.setdefault(m.group(1).upper(), depth)
    printed = printed_numbers(pdf)
    bare = sum(1 for s in segments
               if any(m.group().strip() in {printed.get(p) for p in s.pages}
                      for m in BARE_NUMBER.finditer(s.text)))
    title = filing.title() if filing else "(not a filing's cover)"
    at = ", ".join(f"L{lv}: {n}" for lv, n in sorted(Counter(levels.values()).items()))
    statements = set().union(*(families_of(s.path) for s in segments
                               if any(STATEMENTS_ITEM.match(t) for t in s.path[1:])))
    first = min((s.pages[0] for s in doc.sections if s.pages), default=1)
    cover = sum(1 for s in doc.sections if s.level and s.kind == "heading" and s.pages
                and s.pages[0] == first)
    return (f"| {pdf.name} | {title} | {len(levels)} ({at or '-'}) | "
            f"{', '.join(sorted(statements)) or '-'} | {cover} | {bare} of {len(segments)} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, nargs="?")
    ap.add_argument("--quick", action="store_true", help="smoke run: one generated filing")
    a = ap.parse_args(argv)
    print("| filing | title from the cover | Items as headings (levels) | statements under the "
          "statements' Item | headings on the cover page | segments with a bare page number |"
          "\n|---|---|---|---|---:|---|")
    if a.quick:
        sys.path.insert(0, str(ROOT / "tests"))
        from pdf_fixtures import filing_pdf

        with tempfile.TemporaryDirectory() as tmp:
            pdf = filing_pdf(Path(tmp), "Acme Widgets, Inc.", "10-K",
                             "For the fiscal year ended May 31, 2019", "July 24, 2019", 2019)
            print(line(pdf))
        return 0
    if a.folder is None:
        ap.error("give the folder of filings (or --quick)")
    for pdf in sorted(a.folder.glob("*.pdf")):
        print(line(pdf), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
