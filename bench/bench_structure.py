"""Heading structure of the PDF formatter on the development PDFs, and titles of man-page PDFs.

    python bench/bench_structure.py [--cases DIR] [--man DIR]
    python bench/bench_structure.py --quick      # smoke run: the smallest case only

``--cases`` is a folder of ``NAME.pdf`` + ``NAME.gold.json`` pairs as
``../shared/bench/make_pdf_cases.py`` writes them (outline stripped, outline kept as gold); by
default the six dev PDFs, built once under the temp folder.  Each PDF is parsed and scored with
``score_structure.py`` (heading F1, level accuracy, path accuracy); one Markdown table with the
mean and the worst file is printed.  ``--man`` is a folder of man pages rendered to PDF
(``make_dev_corpus.py --pdf``): each document's title must name its page (``LN(1)`` for
``ln.1.pdf``), and the title sources are counted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _common import ROOT, SHARED_BENCH, scratch
from bench_format import score

MAKE_PDF_CASES = SHARED_BENCH / "make_pdf_cases.py"
KEYS = ("heading_f1", "heading_p", "heading_r", "level_acc", "path_acc")


def dev_cases(folder: Path, quick: bool) -> Path:
    """The dev cases, built once; for ``quick`` only the smallest installed source PDF."""
    if list(folder.glob("*.gold.json")) or not MAKE_PDF_CASES.is_file():
        return folder
    picks: list[str] = []
    if quick:
        sys.path.insert(0, str(SHARED_BENCH))
        from make_pdf_cases import DEFAULT_PDFS

        present = [Path(p) for p in DEFAULT_PDFS if Path(p).is_file()]
        if present:
            picks = ["--pdf", str(min(present, key=lambda p: p.stat().st_size))]
    subprocess.run([sys.executable, str(MAKE_PDF_CASES), str(folder), *picks], check=True,
                   capture_output=True)
    return folder


def structure_table(folder: Path, quick: bool) -> None:
    from hiqa.formats.pdf import parse_pdf

    golds = sorted(folder.glob("*.gold.json"))
    if quick:
        golds = sorted(golds, key=lambda g: g.with_name(g.name[: -len(".gold.json")] + ".pdf")
                       .stat().st_size)[:1]
    print("| PDF | pages | heading F1 | P | R | level acc | path acc | gold | predicted | s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for gold in golds:
        pdf = gold.with_name(gold.name[: -len(".gold.json")] + ".pdf")
        t0 = time.perf_counter()
        doc = parse_pdf(pdf, pdf.name)
        seconds = time.perf_counter() - t0
        s = score(gold, [[h.level, h.title, h.page] for h in doc.headings])
        if s is None:
            print(f"| {pdf.stem} | {doc.page_count} | scorer not found | | | | | | | |")
            continue
        rows.append(s)
        print(f"| {pdf.stem} | {doc.page_count} | "
              + " | ".join(f"{s[k]:.3f}" for k in KEYS)
              + f" | {s['n_gold']} | {s['n_pred']} | {seconds:.1f} |")
    if not rows:
        print(f"| (no cases in {folder}) | | | | | | | | | |")
        return
    for name, pick in (("**mean**", lambda v: sum(v) / len(v)), ("**worst**", min)):
        print(f"| {name} | | " + " | ".join(
            f"{pick([r[k] for r in rows]):.3f}" if k in ("heading_f1", "level_acc", "path_acc")
            else "" for k in KEYS) + " | | | |")


def man_titles(folder: Path) -> None:
    from hiqa.formats.pdf import parse_pdf

    sources: Counter[str] = Counter()
    wrong = []
    pdfs = sorted(folder.glob("*.pdf"))
    for pdf in pdfs:
        doc = parse_pdf(pdf, pdf.name)
        sources[doc.metadata.get("title_source", "")] += 1
        page, section = pdf.stem.rsplit(".", 1)
        if doc.title.replace(" ", "").casefold() != f"{page}({section})".casefold():
            wrong.append(f"{pdf.name}: {doc.title!r}")
    print(f"\nman-page PDF titles naming their page exactly: {len(pdfs) - len(wrong)}/{len(pdfs)}"
          f"; sources {dict(sources)}")
    for w in wrong:
        print(f"  {w}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, help="folder of NAME.pdf + NAME.gold.json")
    ap.add_argument("--man", type=Path, help="folder of man pages as PDFs (make_dev_corpus --pdf)")
    ap.add_argument("--quick", action="store_true", help="smoke run: the smallest case only")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    default = scratch("hiqa-bench") / ("devpdf-quick" if a.quick else "devpdf")
    structure_table(a.cases or dev_cases(default, a.quick), a.quick)
    if a.man:
        man_titles(a.man)


if __name__ == "__main__":
    main()
