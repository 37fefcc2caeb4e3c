"""Evaluation (paper §4.1, §5.2-5.3, Tables 1, 7-9, Fig. 1/7/25) on any labelled corpus.

Question files are JSONL, one question per line::

    {"id": "q1", "question": "...", "gold": [{"doc": "open.2.md", "section": ["ERRORS"]}]}

**Gold rule.** A segment is relevant iff it comes from ``doc`` and its heading path (document
title first) contains the ``section`` headings in order, or, for a gold ``page`` (1-based PDF
page), iff it comes from ``doc`` and its pages include ``page`` (case-insensitive, whitespace
collapsed); an empty ``section`` means the whole document.  A ``fixed`` chunk has no heading path
of its own: it is relevant when at least half of it lies inside the gold section (the section
and its sub-sections) or it holds at least half of the gold section's text, by character overlap
in the canonical Markdown.

**Recall@5** is the share of a question's gold sections hit in the top 5, a section counting once
whichever of its pieces or terms is ranked (how peers and the paper count it);
``piece_recall@5`` is the stricter share of every relevant segment, which falls as sections are
split finer (terms, long-section pieces).  MRR, nDCG and Log-Rank are taken over the pieces.

**Ranks.** A question's gold segments are ranked in the fused candidate list (the union of the
routes' top 100); a gold segment outside it gets rank N, N being the number of segments in the
question's knowledge base (Eq. 3/4).
"""
from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hiqa.augment import SEGMENT_FORMAT
from hiqa.checks import check_number
from hiqa.collection import Collection
from hiqa.errors import HiqaError
from hiqa.eval import metrics
from hiqa.formats import SUPPORTED_EXTENSIONS, load_document
from hiqa.keywords.records import KeywordSources
from hiqa.model import Document, Segment, normalize_title
from hiqa.retrieve.fusion import FusionMethod, fuse
from hiqa.retrieve.params import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_METHOD,
    check_weights,
)
from hiqa.retrieve.routes import SearchResult, prefetch
from hiqa.settings import Settings

VARIANTS: dict[str, tuple[str, str]] = {
    # name: (strategy, routes) -- paper Table 8 ladder
    "fixed-dense": ("fixed", "dense"),
    "fixed-hybrid": ("fixed", "hybrid"),
    "section-dense": ("section", "dense"),
    "section-hybrid": ("section", "hybrid"),
    "title-dense": ("title", "dense"),
    "title-hybrid": ("title", "hybrid"),
    "hca-dense": ("hca", "dense"),
    "hca-bm25": ("hca", "bm25"),
    "hca-dense-bm25": ("hca", "hybrid"),
    "full": ("hca", "full"),
}
DEFAULT_DISTRACTORS = (1, 5, 10, 20, 40, 80)
FUSION_METHODS = tuple(m.value for m in FusionMethod)
GRID_ALPHAS = tuple(round(a, 1) for a in np.linspace(0, 1, 11))
GRID_BETAS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Gold:
    """A gold section of a document, or (``page``, 1-based PDF page) a gold page of it: the
    evidence page of a benchmark that marks pages (FinanceBench), for which a unit is relevant
    when it comes from ``doc`` and one of its pages is ``page``."""

    doc: str
    section: tuple[str, ...]
    page: int | None = None


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    gold: tuple[Gold, ...]
    answer: str = ""


def load_questions(path: str | Path) -> list[Question]:
    """Read a questions JSONL file; malformed lines raise a HiqaError naming the line."""
    out = []
    lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            gold = tuple(Gold(g["doc"], tuple(g.get("section") or ()),
                              int(g["page"]) if g.get("page") is not None else None)
                         for g in row["gold"])
            out.append(Question(str(row["id"]), str(row["question"]), gold, row.get("answer", "")))
        except (ValueError, KeyError, TypeError) as exc:
            raise HiqaError(f"{path}, line {n}: not a question record ({exc}); expected "
                            '{"id", "question", "gold": [{"doc", "section"}]}') from None
    if not out:
        raise HiqaError(f"{path}: no questions found")
    return out


def path_matches(path: Sequence[str], section: Sequence[str]) -> bool:
    """``section`` headings occur in ``path`` in order (a subsequence), compared normalised."""
    it = iter(normalize_title(p) for p in path)
    return all(any(normalize_title(h) == p for p in it) for h in section)


def gold_spans(doc: Document, section: Sequence[str]) -> list[tuple[int, int]]:
    """Character ranges of the gold section and its sub-sections in the canonical Markdown."""
    if not section:
        return [(0, len(doc.markdown))]
    return [s.span for s in doc.sections if path_matches(doc.path_of(s), section)]


def _overlap(span: tuple[int, int], ranges: Sequence[tuple[int, int]]) -> int:
    return sum(max(0, min(span[1], e) - max(span[0], s)) for s, e in ranges)


class GoldJudge:
    """Decides relevance of segments for questions (the gold rule in the module docstring)."""

    def __init__(self, docs: dict[str, Document]):
        self.docs = docs
        self._spans: dict[tuple[str, tuple[str, ...]], list[tuple[int, int]]] = {}

    def relevant(self, seg: Segment, q: Question) -> bool:
        return any(self.matches(seg, g) for g in q.gold)

    def matches(self, seg: Segment, g: Gold) -> bool:
        """Whether ``seg`` lies in the gold section ``g`` (the rule in the module docstring)."""
        if seg.doc_id != g.doc:
            return False
        if g.page is not None:
            return g.page in seg.pages
        if seg.strategy != "fixed":
            return path_matches(seg.path, g.section)
        key = (g.doc, g.section)
        if key not in self._spans:
            doc = self.docs.get(g.doc)
            self._spans[key] = gold_spans(doc, g.section) if doc else []
        ranges = self._spans[key]
        gold_len = sum(e - s for s, e in ranges)
        ov = _overlap(seg.span, ranges)
        return bool(gold_len) and (
            ov >= 0.5 * max(1, seg.span[1] - seg.span[0]) or ov >= 0.5 * gold_len)


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file()
                  and p.suffix.lower() in SUPPORTED_EXTENSIONS and not p.name.startswith("."))


def corpus_hash(files: Iterable[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:12]


READER = ("formats", "augment.py", "tokenize.py", "model.py")
"""What turns files into segments, under the ``hiqa`` package: the readers, the segmenter and
what it counts and builds with."""


def reader_digest(root: Path | None = None) -> str:
    """A digest of ``READER``'s Python files under ``root`` (the ``hiqa`` package).  A
    collection skips a file it holds unchanged, so a cached evaluation index built by an
    earlier reader would be scored as this one's (filings re-run after a reader change scored
    the old Markdown): its name carries this digest."""
    root = root or Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    files = [f for part in READER for f in ((root / part).rglob("*.py") if (root / part).is_dir()
                                            else [root / part]) if f.is_file()]
    for f in sorted(files):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:8]


def fusion_weights(routes: str, alpha: float, beta: float) -> tuple[float, float]:
    return {"dense": (1.0, 0.0), "bm25": (0.0, 0.0), "hybrid": (alpha, 0.0),
            "full": (alpha, beta)}[routes]


def sample_kb(q: Question, all_docs: Sequence[str], n: int, seed: int) -> list[str]:
    """The question's knowledge base of size ``n``: its gold documents plus seeded distractors."""
    gold = list(dict.fromkeys(g.doc for g in q.gold))
    others = sorted(d for d in all_docs if d not in gold)
    rng = random.Random(f"hiqa-kb:{seed}:{q.id}:{n}")
    k = max(0, min(n, len(all_docs)) - len(gold))
    return gold + rng.sample(others, k)


@dataclass
class _Scored:
    """One question's fused ranking: ``gold_ranks`` has a rank per relevant segment (piece),
    ``section_ranks`` the best rank of each gold section (``None`` when none of it was ranked);
    ``keyword`` is each ranked segment's share from Eq. 2's keyword bonus, in ranking order."""

    ranking: list[tuple[Segment, float]]
    gold_ranks: list[int | None]
    n: int
    section_ranks: list[int | None]
    keyword: list[float]


def score_result(res: SearchResult, q: Question, judge: GoldJudge, method: str, alpha: float,
                 beta: float, n_segments: int, n_gold: int) -> _Scored:
    """Fuse one retrieval result and locate the question's relevant segments in it."""
    ranking = fuse(res.candidates, FusionMethod.from_str(method), alpha, beta)
    prefetch(res.segments, [res.candidates.ids[i] for i in ranking.order])
    ordered = [(res.segments[res.candidates.ids[i]], float(ranking.scores[i])) for i in ranking.order]
    ranks: list[int | None] = [r for r, (s, _) in enumerate(ordered, start=1) if judge.relevant(s, q)]
    # gold segments that no route returned count as rank N (Eq. 4)
    ranks += [None] * max(0, n_gold - len(ranks))
    sections = [next((r for r, (s, _) in enumerate(ordered, start=1) if judge.matches(s, g)), None)
                for g in dict.fromkeys(q.gold)]
    keyword = ranking.contributions["keyword"][ranking.order].tolist()
    return _Scored(ordered, ranks, n_segments, sections, keyword)


def score_variants(res: SearchResult, q: Question, judge: GoldJudge, strategy: str,
                   names: Sequence[str], method: str, alpha: float, beta: float,
                   n_segments: int, n_gold: int) -> dict[str, _Scored]:
    """One retrieval, fused the way each requested variant of ``strategy`` fuses it."""
    out = {}
    for v in names:
        v_strategy, routes = VARIANTS[v]
        if v_strategy != strategy:
            continue
        a, b = fusion_weights(routes, alpha, beta)
        m = method if routes == "full" else "minmax"
        out[v] = score_result(res, q, judge, m, a, b, n_segments, n_gold)
    return out


def _metric_row(scored: Sequence[_Scored], gamma: float = 1.0) -> dict[str, float]:
    def mean(f: Callable[[_Scored], float]) -> float:
        return float(np.mean([f(s) for s in scored])) if scored else 0.0

    return {
        "recall@5": mean(lambda s: metrics.section_recall_at_k(s.section_ranks, 5)),
        "piece_recall@5": mean(lambda s: metrics.recall_at_k(s.gold_ranks, 5)),
        "precision@5": mean(lambda s: metrics.precision_at_k(s.gold_ranks, 5)),
        "hit@5": mean(lambda s: metrics.hit_at_k(s.gold_ranks, 5)),
        "mrr": mean(lambda s: metrics.reciprocal_rank(s.gold_ranks)),
        "ndcg@10": mean(lambda s: metrics.ndcg_at_k(s.gold_ranks, 10)),
        "log_rank": mean(lambda s: metrics.question_log_rank(s.gold_ranks, s.n, gamma)),
    }


class Evaluator:
    """Builds (and caches) one collection per chunking strategy, then ranks every question."""

    def __init__(self, corpus: str | Path, questions: str | Path | Sequence[Question], *,
                 settings: Settings | None = None, embedder: str | None = None,
                 progress: Progress | None = None,
                 keywords: dict[str, dict[str, list[str]]] | None = None):
        self.corpus = Path(corpus)
        self.keywords = keywords or {}
        """Keyword sources to install after ingest (``{"lexicon": {doc: [kw, ...]}}``), e.g. a
        collection's expert lexicon, without which β has nothing to weigh."""
        if not self.corpus.is_dir():
            raise HiqaError(f"corpus folder not found: {self.corpus}")
        base = settings or Settings()
        self.settings = replace(base, data_dir=base.data_dir / "eval",
                                cache_override=base.cache_dir)
        self.embedder = embedder or base.embedder
        self.progress = progress or (lambda *a: None)
        self.questions = (load_questions(questions) if isinstance(questions, (str, Path))
                          else list(questions))
        self.files = corpus_files(self.corpus)
        if not self.files:
            raise HiqaError(f"no supported documents under {self.corpus}")
        self.doc_ids = [f.relative_to(self.corpus).as_posix() for f in self.files]
        missing = sorted({g.doc for q in self.questions for g in q.gold} - set(self.doc_ids))
        if missing:
            raise HiqaError(f"questions name documents missing from the corpus: {', '.join(missing[:5])}")
        self.hash = corpus_hash(self.files, self.corpus)
        self.reader = reader_digest()
        self._docs: dict[str, Document] | None = None
        self.unmapped: list[dict[str, str]] = []  # questions left out: no gold section found
        self._collections: dict[str, Collection] = {}
        self._counts: dict[str, Counter[str]] = {}
        self._n_gold: dict[tuple[str, str], int] = {}
        self._segs: dict[str, dict[str, list[Segment]]] = {}

    @property
    def docs(self) -> dict[str, Document]:
        if self._docs is None:
            self._docs = {d: load_document(f, doc_id=d) for d, f in zip(self.doc_ids, self.files)}
        return self._docs

    def drop_unmapped(self) -> None:
        """Leave out the questions none of whose gold sections is a section of its document
        (a heading renamed, a reader that reads the page differently), each with its reason
        in ``unmapped``; every question left out is one the run could not score, so none
        scores zero silently and none stops the run."""
        kept: list[Question] = []
        for q in self.questions:
            if any(gold_spans(self.docs[g.doc], g.section) for g in q.gold):
                kept.append(q)
                continue
            wanted = "; ".join(f"{g.doc}: {' > '.join(g.section) or '(whole document)'}"
                               for g in q.gold)
            self.unmapped.append({"id": q.id, "gold": wanted})
        if not kept:
            raise HiqaError(f"none of the {len(self.questions)} questions has a gold section "
                            f"found in its document (first: {self.unmapped[0]['gold']})")
        self.questions = kept

    def collection(self, strategy: str) -> Collection:
        if strategy not in self._collections:
            # the segment format and the reader are part of the name: a cached index of older
            # segments, or of an earlier reader's, is never scored as if it were this code's
            name = f"{strategy}-{self.embedder}-{self.hash}-f{SEGMENT_FORMAT}-r{self.reader}"
            col = Collection(name, self.settings, create=True, strategy=strategy,
                             embedder=self.embedder)

            def prog(stage: str, doc: str, d: int, t: int) -> None:
                if stage == "done" and doc:
                    self.progress(f"index {strategy}", d, t)

            col.ingest([self.corpus], progress=prog)
            # the collection is cached across runs: set every extra source, emptying the ones
            # this run does not give, so keywords of an earlier run never linger
            for source in sorted({"lexicon", "llm", *self.keywords}):
                given = self.keywords.get(source, {})
                changed = {d: list(given.get(d, ())) for d, record in col.documents.items()
                           if list(KeywordSources.of(record).by_source().get(source, ()))
                           != list(given.get(d, ()))}
                if changed:
                    col.set_keywords(source, changed)
            self._collections[strategy] = col
            self._counts[strategy] = Counter(
                {d: int(m.get("segments", 0)) for d, m in col.documents.items()})
        return self._collections[strategy]

    def n_gold(self, strategy: str, q: Question, judge: GoldJudge) -> int:
        key = (strategy, q.id)
        if key not in self._n_gold:
            col = self.collection(strategy)
            if strategy not in self._segs:
                by_doc: dict[str, list[Segment]] = {}
                for s in col.segments():
                    by_doc.setdefault(s.doc_id, []).append(s)
                self._segs[strategy] = by_doc
            docs = {g.doc for g in q.gold}
            self._n_gold[key] = sum(1 for d in docs for s in self._segs[strategy].get(d, ())
                                    if judge.relevant(s, q))
        return self._n_gold[key]

    def retrieve(self, strategy: str, q: Question, kb: Sequence[str] | None) -> SearchResult:
        col = self.collection(strategy)
        return col.retrieve(q.question, doc_ids=kb)

    def kb_size(self, strategy: str, kb: Sequence[str] | None) -> int:
        counts = self._counts[strategy]
        return sum(counts.values()) if kb is None else sum(counts[d] for d in kb)


def run_eval(
    corpus: str | Path,
    questions: str | Path,
    *,
    variants: Sequence[str] | None = None,
    distractors: Sequence[int] | None = None,
    seed: int = 0,
    method: str = DEFAULT_METHOD,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    gamma: float = 1.0,
    settings: Settings | None = None,
    embedder: str | None = None,
    fusion_grid: bool = False,
    dump_rankings: str | Path | None = None,
    progress: Progress | None = None,
    keywords: dict[str, dict[str, list[str]]] | None = None,
) -> dict[str, Any]:
    """Run the ablation ladder (and optionally the degradation curve and fusion grid).

    ``keywords`` (source → document → keywords) are installed in the evaluation's collections,
    so that a collection's lexicon or LLM keywords take part as they do in search.
    Returns the report dict documented in the README (``--out`` writes it as JSON).
    """
    names = list(variants or VARIANTS)
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise HiqaError(f"unknown variant(s) {', '.join(unknown)}; valid: {', '.join(VARIANTS)}")
    FusionMethod.from_str(method)
    check_weights(method, alpha, beta)
    gamma = float(check_number("gamma", gamma, low=0.01, high=1000,
                               meaning="Log-Rank's rank discount, Eq. 3"))
    seed = int(check_number("seed", seed, low=0, integer=True))
    distractors = [int(check_number("distractors", n, low=0, high=100_000, integer=True,
                                    meaning="documents added to each question's own"))
                   for n in distractors] if distractors is not None else None
    ev = Evaluator(corpus, questions, settings=settings, embedder=embedder, progress=progress,
                   keywords=keywords)
    prog = ev.progress
    ev.drop_unmapped()
    judge = GoldJudge(ev.docs)
    t0 = time.perf_counter()
    strategies = list(dict.fromkeys(VARIANTS[v][0] for v in names))
    for s in strategies:
        ev.collection(s)
    report: dict[str, Any] = {
        "questions": len(ev.questions), "unmapped": ev.unmapped,
        "documents": len(ev.doc_ids), "corpus": str(ev.corpus),
        "method": method, "alpha": alpha, "beta": beta, "gamma": gamma, "seed": seed,
        "embedder": ev.embedder, "variants": {}, "degradation": {}, "diagnostics": {},
    }
    per_q: dict[str, list[_Scored]] = {v: [] for v in names}
    dumps: dict[str, list[dict[str, Any]]] = {v: [] for v in names}
    total = len(ev.questions) * len(strategies)
    done = 0
    for strategy in strategies:
        n_all = ev.kb_size(strategy, None)
        for q in ev.questions:
            res = ev.retrieve(strategy, q, None)
            n_gold = ev.n_gold(strategy, q, judge)
            for v, sc in score_variants(res, q, judge, strategy, names, method, alpha, beta,
                                        n_all, n_gold).items():
                per_q[v].append(sc)
                if dump_rankings:
                    dumps[v].append({"id": q.id, "ranking": [
                        {"doc": s.doc_id, "path": list(s.path), "score": round(score, 6),
                         "keyword": round(bonus, 6)}
                        for (s, score), bonus in zip(sc.ranking[:100], sc.keyword)]})
            done += 1
            prog("rank", done, total)
    for v in names:
        row: dict[str, Any] = dict(_metric_row(per_q[v], gamma))
        row["segments"] = ev.kb_size(VARIANTS[v][0], None)
        r5 = [metrics.section_recall_at_k(s.section_ranks, 5) for s in per_q[v]]
        rr = [metrics.reciprocal_rank(s.gold_ranks) for s in per_q[v]]
        row["ci"] = {"recall@5": list(metrics.bootstrap_ci(r5, seed=seed)),
                     "mrr": list(metrics.bootstrap_ci(rr, seed=seed))}
        report["variants"][v] = row
    if "full" in names and "fixed-dense" in names:
        a = [metrics.reciprocal_rank(s.gold_ranks) for s in per_q["full"]]
        b = [metrics.reciprocal_rank(s.gold_ranks) for s in per_q["fixed-dense"]]
        a5 = [metrics.section_recall_at_k(s.section_ranks, 5) for s in per_q["full"]]
        b5 = [metrics.section_recall_at_k(s.section_ranks, 5) for s in per_q["fixed-dense"]]
        report["paired_test"] = {"full_vs_fixed-dense": {
            "mrr_diff": float(np.mean(a) - np.mean(b)), "mrr_p": metrics.paired_test(a, b, seed=seed),
            "recall@5_diff": float(np.mean(a5) - np.mean(b5)),
            "recall@5_p": metrics.paired_test(a5, b5, seed=seed)}}
    diag_variant = "full" if "full" in names else names[-1]
    report["diagnostics"] = wrong_document_diagnostics(ev.questions, per_q[diag_variant], judge)
    report["diagnostics"]["variant"] = diag_variant
    if distractors:
        report["degradation"] = _degradation(ev, names, judge, distractors, seed, method, alpha,
                                             beta, gamma)
    if fusion_grid:
        report["fusion_grid"] = _fusion_grid(ev, judge, alpha, beta, gamma)
    if dump_rankings:
        out = Path(dump_rankings)
        out.mkdir(parents=True, exist_ok=True)
        for v, rows in dumps.items():
            with (out / f"{v}.jsonl").open("w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return report


def _degradation(ev: Evaluator, names: Sequence[str], judge: GoldJudge,
                 sizes: Sequence[int], seed: int, method: str, alpha: float, beta: float,
                 gamma: float) -> dict[str, dict[str, dict[str, float]]]:
    """Metrics as the knowledge base grows (paper Fig. 1/7): gold docs + N-1 distractors."""
    out: dict[str, dict[str, dict[str, float]]] = {v: {} for v in names}
    strategies = list(dict.fromkeys(VARIANTS[v][0] for v in names))
    total = len(sizes) * len(strategies) * len(ev.questions)
    done = 0
    for n in sizes:
        scored: dict[str, list[_Scored]] = {v: [] for v in names}
        for strategy in strategies:
            for q in ev.questions:
                kb = sample_kb(q, ev.doc_ids, n, seed)
                res = ev.retrieve(strategy, q, kb)
                n_seg = ev.kb_size(strategy, kb)
                n_gold = ev.n_gold(strategy, q, judge)
                for v, sc in score_variants(res, q, judge, strategy, names, method, alpha, beta,
                                            n_seg, n_gold).items():
                    scored[v].append(sc)
                done += 1
                ev.progress(f"degradation N={n}", done, total)
        for v in names:
            row = _metric_row(scored[v], gamma)
            out[v][str(n)] = {k: row[k] for k in ("recall@5", "mrr", "log_rank")}
    return out


def _fusion_grid(ev: Evaluator, judge: GoldJudge, alpha: float, beta: float,
                 gamma: float) -> dict[str, Any]:
    """Table 9 (fusion methods at the default weights) and the α×β surface (Fig. 25)."""
    results = []
    for i, q in enumerate(ev.questions):
        results.append((q, ev.retrieve("hca", q, None), ev.n_gold("hca", q, judge)))
        ev.progress("fusion grid", i + 1, len(ev.questions))
    n_all = ev.kb_size("hca", None)

    def evaluate(method: str, a: float, b: float) -> dict[str, float]:
        return _metric_row([score_result(r, q, judge, method, a, b, n_all, g)
                            for q, r, g in results], gamma)

    methods = {m: evaluate(m, alpha, min(beta, 1.0)) for m in FUSION_METHODS}
    surface: dict[str, Any] = {"alpha": list(GRID_ALPHAS), "beta": list(GRID_BETAS),
                               "method": "minmax", "recall@5": [], "log_rank": [], "mrr": []}
    for b in GRID_BETAS:
        rows = [evaluate("minmax", a, b) for a in GRID_ALPHAS]
        for key in ("recall@5", "log_rank", "mrr"):
            surface[key].append([round(r[key], 4) for r in rows])
    return {"methods": methods, "surface": surface}


def wrong_document_diagnostics(questions: Sequence[Question], scored: Sequence[_Scored],
                               judge: GoldJudge) -> dict[str, Any]:
    """Per question: the best-ranked segment from a wrong document and whether it outranked the
    best gold segment; plus how often each (gold doc, wrong doc) pair was confused at rank 1."""
    rows = []
    pairs: Counter[tuple[str, str]] = Counter()
    for q, sc in zip(questions, scored):
        gold_docs = {g.doc for g in q.gold}
        wrong = next(((r, s) for r, (s, _) in enumerate(sc.ranking, start=1)
                      if s.doc_id not in gold_docs), None)
        found = [r for r in sc.gold_ranks if r is not None]
        best_gold = min(found) if found else None
        outranked = wrong is not None and (best_gold is None or wrong[0] < best_gold)
        rows.append({
            "id": q.id, "question": q.question, "gold_docs": sorted(gold_docs),
            "best_gold_rank": best_gold,
            "wrong_doc": wrong[1].doc_id if wrong else None,
            "wrong_path": list(wrong[1].path) if wrong else None,
            "wrong_rank": wrong[0] if wrong else None, "outranked_gold": outranked,
        })
        if sc.ranking and sc.ranking[0][0].doc_id not in gold_docs:
            for g in sorted(gold_docs):
                pairs[(g, sc.ranking[0][0].doc_id)] += 1
    return {
        "questions": rows,
        "wrong_doc_outranked_gold": sum(r["outranked_gold"] for r in rows),
        "confusions": [{"gold": g, "wrong": w, "count": c} for (g, w), c in pairs.most_common()],
    }


