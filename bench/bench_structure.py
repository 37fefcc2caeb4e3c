"""Heading structure of the PDF formatter on the development PDFs, and titles of man-page PDFs.

    python bench/bench_structure.py [--cases DIR] [--man DIR]
    python bench/bench_structure.py --quick      # smoke run: the smallest case only
    python bench/bench_structure.py --cases DIR --peer   # + pymupdf4llm, same scorer

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
import contextlib
import importlib.util
import io
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _common import ROOT, SHARED_BENCH, score_structure, scratch
from bench_format import score

MAKE_PDF_CASES = SHARED_BENCH / "make_pdf_cases.py"
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
EMPHASIS = re.compile(r"[*_`]+")
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


def contained_f1(gold_path: Path, pred: list[list[object]]) -> float:
    """Heading F1 where a prediction also matches a gold entry (page ±1) whose title it
    *contains* as whole words, hyphens, underscores and groff escapes ignored.  Outlines are
    often shorter than the printed heading ("mp_run" for "3.4.6 int mp_run(MP mp)") or lose
    characters ("fontsconf" for "fonts-conf", "F[C]pdfmarkF[]" for "pdfmark"); this column
    shows how much of the strict score's gap is that, never replaces it."""
    scorer = score_structure()
    gold = scorer.load(str(gold_path))

    def clean(t: object) -> str:
        t = scorer.norm_title(str(t))
        return re.sub(r"[-_]", "", re.sub(r"f\[c?\]", "", t))

    used: set[int] = set()
    hits = 0
    for level, title, page in pred:
        pt = clean(title)
        for j, g in enumerate(gold):
            gt = clean(g["title"])
            if j in used or not gt or abs(g["page"] - int(page)) > 1:  # type: ignore[call-overload]
                continue
            if gt == pt or re.search(r"(^|\W)" + re.escape(gt) + r"($|\W)", pt):
                used.add(j)
                hits += 1
                break
    p = hits / len(pred) if pred else 0.0
    r = hits / len(gold) if gold else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def peer_headings(pdf: Path) -> list[list[object]]:
    """pymupdf4llm's headings (``#`` lines of ``to_markdown``, per page), cached by file
    size and time: the peer takes ~0.3 s a page."""
    stat = pdf.stat()
    cache = scratch("hiqa-bench") / "pymupdf4llm" / f"{pdf.stem}-{stat.st_size}-{int(stat.st_mtime)}.json"
    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    import pymupdf4llm

    heads: list[list[object]] = []
    with contextlib.redirect_stdout(io.StringIO()):
        chunks = pymupdf4llm.to_markdown(str(pdf), page_chunks=True, show_progress=False)
    for chunk in chunks:
        page = chunk["metadata"]["page_number"]
        for line in chunk["text"].splitlines():
            m = HEADING.match(line)
            if m:
                title = EMPHASIS.sub("", m.group(2)).strip()
                if title:
                    heads.append([len(m.group(1)), title, page])
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(heads), encoding="utf-8")
    return heads


def structure_table(folder: Path, quick: bool, peer: bool = False) -> None:
    from hiqa.formats.pdf.reader import parse_pdf

    golds = sorted(folder.glob("*.gold.json"))
    if quick:
        golds = sorted(golds, key=lambda g: g.with_name(g.name[: -len(".gold.json")] + ".pdf")
                       .stat().st_size)[:1]
    extra = " pymupdf4llm F1 | F1 ⊇ | level | path |" if peer else ""
    print("| PDF | producer | pages | heading F1 | F1 ⊇ | P | R | level acc | path acc | gold | "
          f"predicted | evidence | pages/s |{extra}")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
          + ("---:|---:|---:|---:|" if peer else ""))
    rows, peers, speeds = [], [], []
    for gold in golds:
        pdf = gold.with_name(gold.name[: -len(".gold.json")] + ".pdf")
        t0 = time.perf_counter()
        doc = parse_pdf(pdf, pdf.name)
        seconds = time.perf_counter() - t0
        s = score(gold, [[h.level, h.title, h.page] for h in doc.headings])
        if s is None:
            print(f"| {pdf.stem} | | {doc.page_count} | scorer not found | | | | | | | | |")
            continue
        pred = [[h.level, h.title, h.page] for h in doc.headings]
        s["contained_f1"] = contained_f1(gold, pred)
        rows.append(s)
        speeds.append(doc.page_count / max(seconds, 1e-6))
        producer = doc.metadata.get("producer", "") or doc.metadata.get("creator", "")
        line = (f"| {pdf.stem} | {producer[:28]} | {doc.page_count} | {s['heading_f1']:.3f} | "
                f"{s['contained_f1']:.3f} | "
                + " | ".join(f"{s[k]:.3f}" for k in KEYS[1:])
                + f" | {s['n_gold']} | {s['n_pred']} | {doc.metadata.get('headings_from', '')}"
                f" | {speeds[-1]:.0f} |")
        if peer:
            heads = peer_headings(pdf)
            p = score(gold, heads)
            p["contained_f1"] = contained_f1(gold, heads)
            peers.append(p)
            line += (f" {p['heading_f1']:.3f} | {p['contained_f1']:.3f} | {p['level_acc']:.3f} | "
                     f"{p['path_acc']:.3f} |")
        print(line, flush=True)
    if not rows:
        print(f"| (no cases in {folder}) | | | | | | | | | | | |")
        return
    shown = ("heading_f1", "contained_f1", "heading_p", "heading_r", "level_acc", "path_acc")
    for name, pick in (("**mean**", lambda v: sum(v) / len(v)), ("**worst**", min)):
        line = f"| {name} | | | " + " | ".join(
            f"{pick([r[k] for r in rows]):.3f}" if k not in ("heading_p", "heading_r") else ""
            for k in shown) + " | | | | |"
        if peer:
            line += " " + " | ".join(f"{pick([p[k] for p in peers]):.3f}" for k in
                                     ("heading_f1", "contained_f1", "level_acc", "path_acc")) + " |"
        print(line)
    speeds.sort()
    print(f"\npages/s: median {speeds[len(speeds) // 2]:.0f}, slowest {speeds[0]:.0f} "
          f"(one core, parse only)")


def man_titles(folder: Path) -> None:
    from hiqa.formats.pdf.reader import parse_pdf

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
    ap.add_argument("--peer", action="store_true",
                    help="add pymupdf4llm's headings scored the same way (slow: ~0.3 s a page, "
                         "cached)")
    a = ap.parse_args()
    if a.peer and importlib.util.find_spec("pymupdf4llm") is None:
        print("--peer: pymupdf4llm is not installed (pip install -e '.[bench]'); "
              "HiQA's columns only", file=sys.stderr)
        a.peer = False
    sys.path.insert(0, str(ROOT))
    default = scratch("hiqa-bench") / ("devpdf-quick" if a.quick else "devpdf")
    structure_table(a.cases or dev_cases(default, a.quick), a.quick, a.peer)
    if a.man:
        man_titles(a.man)


if __name__ == "__main__":
    main()
