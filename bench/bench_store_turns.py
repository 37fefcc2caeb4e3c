"""Processes taking turns on one embedded store: are the points each one writes still there?

    python bench/bench_store_turns.py              # 2 processes x 200 turns, 3 rounds each way
    python bench/bench_store_turns.py --quick      # smoke run: 2 processes x 10 turns, 1 round

Each process, per turn: open the shard (waiting while the other has it), check that it holds
every point written so far, write 3 points without vectors and then their vectors (an ingest
with dense vectors later, then the app's worker), close it.  ``edge`` is Qdrant Edge alone,
retried on its own lock as soon as it is free; ``hiqa`` is ``EdgeStore``, which holds its
``hiqa.owner`` lock from before the shard is opened until after it is closed and dropped
(issue #33).  The table counts the rounds where a turn found fewer points than were written
(points lost), and the rounds where a load failed.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, scratch

TURNS = """
import sys, time, uuid
from pathlib import Path
sys.path.insert(0, {root!r})
import numpy as np
import qdrant_edge as qe
from hiqa.index.store.edge import EdgeStore
where, me, turns, kind = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
log = where.with_name(where.name + ".log")
rng = np.random.default_rng()

def bare_open():
    while True:
        try:
            return qe.EdgeShard.load(str(where))
        except Exception as exc:  # Edge's lock is held: retry at once
            if "WouldBlock" not in str(exc) and "lock" not in str(exc).lower():
                raise
            time.sleep(0.001)

held = EdgeStore(where, "turns", wait_s=120)
for turn in range(turns):
    if kind == "edge":
        shard = bare_open()
        found = shard.count(qe.CountRequest(exact=True))
    else:
        found = held.count()
    written = 3 * len(log.read_text().splitlines())
    if found < written:
        sys.exit(f"lost: {{me}} turn {{turn}} found {{found}} of {{written}} points")
    ids = [str(uuid.uuid4()) for _ in range(3)]
    vectors = rng.random((3, 8), dtype=np.float32)
    if kind == "edge":
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(id=i, payload={{"doc_id": me}}, vector={{}}) for i in ids]))
        shard.update(qe.UpdateOperation.update_vectors(
            [qe.PointVectors(id=i, vector={{"hca": v.tolist()}}) for i, v in zip(ids, vectors)]))
    else:
        held.upsert(ids, [{{"doc_id": me, "doc_version": me}}] * 3, {{}})
        held.set_vectors("hca", ids, vectors)
    with log.open("a") as fh:
        fh.write(f"{{me}} {{turn}}\\n")
    if kind == "edge":
        shard.flush()
        shard.close()
        del shard
    else:
        held.close()
"""


def one_round(kind: str, turns: int, directory: Path) -> tuple[str, float]:
    """('', seconds) when no point was lost, else what went wrong."""
    from hiqa.index.store.edge import EdgeStore

    shutil.rmtree(directory.parent, ignore_errors=True)
    made = EdgeStore(directory, "turns")
    made.create(8)
    made.close()
    directory.with_name(directory.name + ".log").write_text("")
    script = directory.parent / "turns.py"
    script.write_text(TURNS.format(root=str(ROOT)))
    t0 = time.perf_counter()
    runs = [subprocess.Popen([sys.executable, str(script), str(directory), me, str(turns), kind],
                             stderr=subprocess.PIPE, text=True) for me in "AB"]
    errors = [p.communicate(timeout=1800)[1].strip().splitlines() for p in runs]
    seconds = time.perf_counter() - t0
    failed = [e[-1] for p, e in zip(runs, errors) if p.returncode]
    return (failed[0] if failed else ""), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=200, help="turns per process and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10 turns, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.turns, args.rounds = 10, 1
    sys.path.insert(0, str(ROOT))
    base = scratch("hiqa-bench-turns")
    print(f"2 processes x {args.turns} turns x {args.rounds} rounds, each turn: open, check, "
          "write 3 points then their vectors, close\n")
    print("| store | rounds | rounds that lost points | other failures | median s per round |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("edge", "hiqa"):
        lost = other = 0
        times = []
        for r in range(args.rounds):
            failure, seconds = one_round(kind, args.turns, base / f"{kind}-{r}" / "shard")
            times.append(seconds)
            lost += failure.startswith("lost")
            other += bool(failure) and not failure.startswith("lost")
            if failure:
                print(f"  {kind} round {r}: {failure}", file=sys.stderr)
        times.sort()
        print(f"| {kind} | {args.rounds} | {lost} | {other} | {times[len(times) // 2]:.1f} |")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
