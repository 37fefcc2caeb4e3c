"""Speed, memory and heading quality of the PDF Markdown Formatter.

    python bench/bench_format.py [PDF ...] [--runs 3]
    python bench/bench_format.py --quick       # smoke run: a generated 20-page PDF, one run

Without arguments it measures
  * octave.pdf (``apt-get install octave-doc``) as shipped, i.e. with its outline, and a copy
    with the outline stripped (made with ``../shared/bench/make_pdf_cases.py`` when present);
  * a generated 2,000-page text PDF (built once under the temp folder).
Each case runs in a fresh process (so peak RSS is that case's own): ``parse_pdf`` ``--runs``
times, median seconds reported, then the HCA segmentation step when ``hiqa.augment`` exists.
For the stripped octave copy the heading scores against its outline are printed
(``score_structure.py``: heading F1, level accuracy, path accuracy), and for the original the
check that the detected headings equal the outline exactly.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, SHARED_BENCH, score_structure, scratch

OCTAVE = Path("/usr/share/doc/octave/octave.pdf")
WORK = scratch("hiqa-bench")


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure(pdf: Path, runs: int) -> dict:
    """One case, in this process: parse ``runs`` times, then segment once."""
    sys.path.insert(0, str(ROOT))
    from hiqa.formats.pdf.reader import parse_pdf

    base_rss = _rss_mib()
    times = []
    doc = None
    for _ in range(runs):
        t0 = time.perf_counter()
        doc = parse_pdf(pdf, pdf.name)
        times.append(time.perf_counter() - t0)
    assert doc is not None
    out = {
        "pdf": str(pdf),
        "pages": doc.page_count,
        "seconds": statistics.median(times),
        "headings": len(doc.headings),
        "headings_from": doc.metadata.get("headings_from", ""),
        "tables": sum(b.kind == "table" for s in doc.sections for b in s.blocks),
        "rss_base_mib": base_rss,
        "rss_peak_mib": _rss_mib(),
        "hca_seconds": None,
        "headings_list": [[h.level, h.title, h.page] for h in doc.headings],
    }
    try:
        from hiqa.augment import segment_document
    except ImportError:
        return out
    t0 = time.perf_counter()
    segments = segment_document(doc, strategy="hca")
    out["hca_seconds"] = time.perf_counter() - t0
    out["segments"] = len(segments)
    out["rss_peak_mib"] = _rss_mib()
    return out


def make_text_pdf(path: Path, pages: int = 2000) -> Path:
    """A long report: 100 distinct pages (numbered headings, paragraphs, running header and
    page numbers) repeated until ``pages``."""
    import pymupdf

    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    words = [
        *("sensor", "calibration", "pressure", "valve", "turbine", "schedule", "report"),
        *("quarter", "variance", "budget", "inspection", "maintenance", "output"),
        *("throughput", "coolant", "reactor", "shift", "operator", "safety"),
    ]
    unit = pymupdf.open()
    for p in range(100):
        page = unit.new_page(width=595, height=842)
        page.insert_text((72, 40), "Plant Operations Handbook", fontsize=9, fontname="helv")
        page.insert_text((300, 820), str(p + 1), fontsize=9, fontname="helv")
        y = 90.0
        chapter, section = divmod(p, 4)
        if section == 0:
            page.insert_text(
                (72, y), f"{chapter + 1} Chapter {chapter + 1}", fontsize=18, fontname="hebo"
            )
            y += 30
        page.insert_text(
            (72, y), f"{chapter + 1}.{section + 1} Section {p}", fontsize=14, fontname="hebo"
        )
        y += 24
        while y < 640:
            text = " ".join(words[(p * 7 + int(y) + k * k) % len(words)] for k in range(80))
            rest = page.insert_textbox(
                pymupdf.Rect(72, y, 523, y + 130), text, fontsize=10, fontname="helv"
            )
            y += 130 - max(rest, 0) + 10
    doc = pymupdf.open()
    while doc.page_count < pages:
        doc.insert_pdf(unit, to_page=min(99, pages - doc.page_count - 1))
    doc.save(path, garbage=3, deflate=True)
    return path


def octave_cases() -> list[tuple[str, Path]]:
    if not OCTAVE.exists():
        print(f"skip octave: {OCTAVE} missing (apt-get install -y octave-doc)", file=sys.stderr)
        return []
    cases = [("octave (outline)", OCTAVE)]
    stripped = WORK / "devpdf" / "octave.pdf"
    maker = SHARED_BENCH / "make_pdf_cases.py"
    if not stripped.exists() and maker.exists():
        subprocess.run(
            [sys.executable, str(maker), str(stripped.parent)], check=True, capture_output=True
        )
    if stripped.exists():
        cases.append(("octave (no outline)", stripped))
    else:
        print(f"skip octave without outline: {maker} not found", file=sys.stderr)
    return cases


def score(gold_path: Path, pred: list[list]) -> dict | None:
    scorer = SHARED_BENCH / "score_structure.py"
    if not gold_path.exists() or not scorer.exists():
        return None
    scorer_module = score_structure()
    gold = scorer_module.load(str(gold_path))
    items = [{"level": lv, "title": t, "page": p} for lv, t, p in pred]
    return scorer_module.score(gold, items)


def outline_exact(pdf: Path, pred: list[list]) -> bool:
    import pymupdf

    with pymupdf.open(pdf) as doc:
        toc = [[lv, " ".join(t.split()), p] for lv, t, p in doc.get_toc()]
    return toc == pred


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pdfs", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pages", type=int, default=2000, help="size of the generated text PDF")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (only a generated 20-page PDF, one run): checks the bench "
                         "works, its numbers mean little")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.quick:
        a.runs, a.pages = 1, min(a.pages, 20)
    if a.one:
        print(json.dumps(measure(a.one, a.runs)))
        return

    cases = [(p.name, p) for p in a.pdfs] or [
        *([] if a.quick else octave_cases()),
        (f"generated {a.pages} pages", make_text_pdf(WORK / f"text{a.pages}.pdf", a.pages)),
    ]
    header = f"{'case':<26}{'pages':>7}{'parse s':>9}{'pages/s':>9}{'HCA s':>8}{'headings':>10}{'tables':>8}{'peak RSS MiB':>14}"
    print(header)
    print("-" * len(header))
    results = []
    for name, pdf in cases:
        proc = subprocess.run(
            [sys.executable, __file__, "--one", str(pdf), "--runs", str(a.runs)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"{name:<26} failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append((name, pdf, r))
        hca = f"{r['hca_seconds']:.2f}" if r["hca_seconds"] is not None else "-"
        print(
            f"{name:<26}{r['pages']:>7}{r['seconds']:>9.2f}{r['pages'] / r['seconds']:>9.1f}{hca:>8}"
            f"{r['headings']:>10}{r['tables']:>8}{r['rss_peak_mib']:>9.0f} (base {r['rss_base_mib']:.0f})"
        )
    print(
        f"(median of {a.runs} parse runs, one process per case; peak RSS includes the interpreter)"
    )
    for name, pdf, r in results:
        if r["headings_from"] == "outline":
            print(
                f"{name}: headings equal the outline exactly: {outline_exact(pdf, r['headings_list'])}"
            )
        gold = pdf.with_name(pdf.stem + ".gold.json")
        s = score(gold, r["headings_list"]) if r["headings_from"] == "layout" else None
        if s:
            print(
                f"{name}: heading F1 {s['heading_f1']:.3f} (P {s['heading_p']:.3f} R {s['heading_r']:.3f}), "
                f"level acc {s['level_acc']:.3f}, path acc {s['path_acc']:.3f} "
                f"({s['n_matched']}/{s['n_gold']} gold, {s['n_pred']} predicted)"
            )


if __name__ == "__main__":
    main()
