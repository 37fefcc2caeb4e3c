"""Several CLI clients on one data dir: refusals and waits (issue #33, many clients).

    python bench/bench_clients.py                  # 4 clients x 50 mixed commands
    python bench/bench_clients.py --clients 8 --commands 20
    python bench/bench_clients.py --quick          # smoke run: 2 clients x 3 commands

The embedded store admits one process at a time.  Each client is a loop of ``hiqa`` processes
(search, extractive ask, docs, collections, in a seeded random order; the first client also
ingests a new note one command in six) on one collection of the man-page dev corpus; a
command that finds the store held waits for it (``HIQA_STORE_WAIT``, 30 s by default)
instead of failing.  The table counts refusals (a command that failed), the
commands that had to wait (their "note: waiting" line), and the wall time of every command,
median and 95th percentile, against the same commands run one at a time, and checks that
nothing was lost: every note ingested is a document afterwards, and the store holds the points
of every registered document.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import ROOT, ensure_dev_corpus, nearest_rank, scratch

QUESTIONS = ("wc: count the lines", "tail: follow appended data", "head: print the first lines",
             "sort: reverse the order", "ls: list by modification time")


def run_hiqa(data: Path, *words: str) -> subprocess.CompletedProcess[str]:
    """One ``hiqa`` process on ``data``, its output captured."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "hiqa.cli", "--data-dir", str(data), *words],
                          capture_output=True, text=True, env=env, check=False)


def hiqa(data: Path, *words: str) -> tuple[int, float, str]:
    """One ``hiqa`` process: (exit code, seconds, stderr)."""
    t0 = time.perf_counter()
    proc = run_hiqa(data, *words)
    return proc.returncode, time.perf_counter() - t0, proc.stderr


def command(rng: random.Random, notes: Path | None = None) -> tuple[str, ...]:
    """One command; with ``notes`` (a folder), one in six ingests a new note written there."""
    kinds = ("search", "search", "ask", "docs", "collections", *(("ingest",) if notes else ()))
    kind = rng.choice(kinds)
    if kind == "ingest" and notes is not None:
        note = notes / f"note-{uuid.uuid4().hex[:12]}.md"  # new on every run
        note.write_text(f"# Note {note.stem}\n\n## Findings\n\nThe {note.stem} run found "
                        "nothing to report about the counters.\n", encoding="utf-8")
        return ("ingest", str(note), "-c", "bench")
    if kind == "search":
        return ("search", rng.choice(QUESTIONS), "-c", "bench", "--json")
    if kind == "ask":
        return ("ask", rng.choice(QUESTIONS), "-c", "bench", "--extractive", "--json")
    if kind == "docs":
        return ("docs", "-c", "bench", "--json")
    return ("collections",)


def client(data: Path, seed: int, n: int,
           notes: Path | None = None) -> list[tuple[int, float, str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = command(rng, notes)
        code, seconds, err = hiqa(data, *words)
        out.append((code, seconds, err, words[0]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--commands", type=int, default=50, help="commands per client")
    ap.add_argument("--docs", type=int, default=10, help="man pages in the collection")
    ap.add_argument("--quick", action="store_true", help="2 clients x 3 commands, 3 pages")
    args = ap.parse_args()
    if args.quick:
        args.clients, args.commands, args.docs = 2, 3, 3
    corpus = ensure_dev_corpus(scratch(f"hiqa-clients-corpus-{args.docs}"), args.docs)
    data = scratch(f"hiqa-clients-data-{args.docs}")
    code, _, err = hiqa(data, "ingest", str(corpus), "-c", "bench")
    if code != 0:
        raise SystemExit(f"ingest failed: {err[-2000:]}")
    solo = [hiqa(data, *command(random.Random(i)))[1] for i in range(min(5, args.commands))]
    notes = scratch("hiqa-clients-notes")
    shutil.rmtree(notes, ignore_errors=True)
    notes.mkdir()
    before = docs_of(data)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.clients) as pool:  # client 0 also writes: one command in six
        runs = list(pool.map(lambda i: client(data, i, args.commands, notes if i == 0 else None),
                             range(args.clients)))
    wall = time.perf_counter() - t0
    done = [r for run in runs for r in run]
    refused = [r for r in done if r[0] != 0]
    waited = [r for r in done if "note: waiting" in r[2]]
    times = [r[1] for r in done]
    print(f"### {args.clients} clients x {args.commands} commands on one data dir "
          f"({len(done)} commands, {wall:.0f} s)\n")
    print("| commands | refused | waited for the store | s per command p50 | p95 | "
          "alone p50 |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(done)} | {len(refused)} | {len(waited)} | {statistics.median(times):.2f} | "
          f"{nearest_rank(times, 0.95):.2f} | {statistics.median(solo):.2f} |")
    # nothing lost: every note ingested is a document, and opening the collection finds the
    # store holding every registered document's points (it refuses one that lacks any)
    added = sum(1 for r in done if r[3] == "ingest" and r[0] == 0)
    after = docs_of(data)
    check, _, check_err = hiqa(data, "search", QUESTIONS[0], "-c", "bench", "--json")
    print(f"\ndocuments ingested by a client: {added}; documents before {len(before)}, after "
          f"{len(after)}; store holds every registered document: {'yes' if check == 0 else 'NO'}")
    if check != 0:
        print(check_err.strip()[-500:], file=sys.stderr)
    for code, _, err, what in refused[:5]:
        print(f"\nrefused `{what}` (exit {code}): {err.strip()[-300:]}", file=sys.stderr)
    return 1 if refused or check != 0 or len(after) != len(before) + added else 0


def docs_of(data: Path) -> list[str]:
    proc = run_hiqa(data, "docs", "-c", "bench", "--json")
    if proc.returncode != 0:
        raise SystemExit("hiqa docs failed")
    return [row["id"] for row in json.loads(proc.stdout)]


if __name__ == "__main__":
    raise SystemExit(main())
