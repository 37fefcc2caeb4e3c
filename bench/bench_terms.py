"""Definition terms (issue #17) the PDF formatter finds, against the Markdown of the same pages.

    python bench/bench_terms.py --pdf DIR --md DIR [--prose PDF ...] [--pages]

``--pdf`` holds man pages rendered to PDF (``make_dev_corpus.py --pdf``), ``--md`` their Markdown
sources (``NAME.md`` for ``NAME.pdf``), where a term is a ``- TERM`` item with its paragraph.
Terms are compared per page as sets of normal forms (case, spacing and Markdown emphasis
ignored): recall is the share of Markdown terms the PDF finds, false terms are PDF terms the
Markdown does not have.  ``--prose`` PDFs have no reference; their term counts are printed so a
change that finds terms in ordinary prose shows up.  ``--pages`` adds a row per page.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from hiqa.formats import load_document

_EMPHASIS = re.compile(r"[\\`*_]")
_SPACES = re.compile(r"\s+")


def terms(path: Path) -> list[str]:
    return [node.title for node in load_document(path).nodes if node.kind == "term"]


def normal(term: str) -> str:
    return _SPACES.sub(" ", _EMPHASIS.sub("", term)).strip().casefold()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pdf", type=Path, required=True, help="folder of NAME.pdf")
    ap.add_argument("--md", type=Path, required=True, help="folder of NAME.md, the same pages")
    ap.add_argument("--prose", type=Path, nargs="*", default=[], help="PDFs to count terms in")
    ap.add_argument("--pages", action="store_true", help="one row per page")
    args = ap.parse_args()

    rows = []
    for pdf in sorted(args.pdf.glob("*.pdf")):
        md = args.md / f"{pdf.stem}.md"
        if md.is_file():
            found, wanted = {normal(t) for t in terms(pdf)}, {normal(t) for t in terms(md)}
            hit, false = len(found & wanted), len(found - wanted)
            rows.append((pdf.stem, len(wanted), len(found), hit, false))
    if not rows:
        raise SystemExit(f"no NAME.pdf in {args.pdf} has its NAME.md in {args.md}")

    print("| page | Markdown terms | PDF terms | found | false | recall |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, wanted, found, hit, false in rows if args.pages else []:
        recall = hit / wanted if wanted else 1.0
        print(f"| {name} | {wanted} | {found} | {hit} | {false} | {recall:.3f} |")
    wanted, found, hit, false = (sum(r[k] for r in rows) for k in range(1, 5))
    print(f"| **all {len(rows)}** | {wanted} | {found} | {hit} | {false} | {hit / wanted:.3f} |")
    for pdf in args.prose:
        print(f"\n{pdf.name}: {len(terms(pdf))} terms")


if __name__ == "__main__":
    main()
