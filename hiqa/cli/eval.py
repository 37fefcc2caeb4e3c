"""``hiqa eval``: the ablation ladder, degradation curve and fusion grid on a labelled corpus."""
from __future__ import annotations

import argparse
import html
import sys
import time
from pathlib import Path
from typing import Any

from hiqa.cli import jsonout
from hiqa.cli.index import settings_of
from hiqa.retrieve.params import FusionMethod
from hiqa.settings import EmbedderName


def _cmd_eval(args: argparse.Namespace) -> int:
    from hiqa.eval.runner import DEFAULT_DISTRACTORS, run_eval
    from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA

    args.alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
    args.beta = DEFAULT_BETA if args.beta is None else args.beta

    variants = [v.strip() for v in args.variants.split(",")] if args.variants else None
    distractors = None
    if args.distractors is not None:
        text = args.distractors or ",".join(map(str, DEFAULT_DISTRACTORS))
        try:
            distractors = [int(n) for n in text.split(",") if n.strip()]
        except ValueError:
            print("error: --distractors takes comma-separated integers, e.g. 1,5,10,20,40,80",
                  file=sys.stderr)
            return 2
    state: dict[str, Any] = {"stage": "", "t": 0.0}

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != state["stage"] or done >= total or now - state["t"] > 0.5:
            state.update(stage=stage, t=now)
            end = "\n" if done >= total else ""
            if sys.stderr.isatty() or done >= total:
                print(f"\r{stage:28} {done}/{total}", end=end, file=sys.stderr, flush=True)

    report = run_eval(args.corpus, args.questions, variants=variants, distractors=distractors,
                      seed=args.seed, method=args.method, alpha=args.alpha, beta=args.beta,
                      gamma=args.gamma, settings=settings_of(args), embedder=args.embedder,
                      fusion_grid=args.fusion_grid, dump_rankings=args.dump_rankings,
                      progress=progress)
    for q in report.get("unmapped", []):
        print(f"warning: question {q['id']} left out: its gold section is not a section of "
              f"the document ({q['gold']})", file=sys.stderr)
    if args.json:
        print(jsonout.dumps(report, indent=1))
    else:
        print(format_report(report))
    if args.out:
        Path(args.out).write_text(jsonout.dumps(report, indent=1))
        print(f"wrote {args.out}", file=sys.stderr)
    if args.fusion_grid:
        stem = Path(args.out).with_suffix("") if args.out else Path("fusion-grid")
        Path(f"{stem}.fusion-grid.json").write_text(jsonout.dumps(report["fusion_grid"], indent=1))
        for metric in ("log_rank", "recall@5"):
            Path(f"{stem}.fusion-grid.{metric.replace('@', '')}.html").write_text(
                grid_html(report["fusion_grid"], metric), encoding="utf-8")
        print(f"wrote {stem}.fusion-grid.json and .html heat maps", file=sys.stderr)
    return 0


def format_report(report: dict[str, Any]) -> str:
    """The plain-text table ``hiqa eval`` prints."""
    unmapped = report.get("unmapped", [])
    lines = [(f"{report['questions']} questions, {report['documents']} documents "
              f"({report.get('seconds', 0)} s)")]
    if unmapped:
        lines.append(f"{len(unmapped)} question(s) left out: no gold section found in the "
                     "document (listed on stderr)")
    lines.append("")
    head = f"{'variant':16} {'segs':>6} {'R@5':>6} {'P@5':>6} {'MRR':>6} {'nDCG10':>6} {'LogRank':>7}  R@5 95% CI      MRR 95% CI"
    lines += [head, "-" * len(head)]
    for name, r in report["variants"].items():
        ci = r.get("ci", {})
        cr, cm = ci.get("recall@5", [0, 0]), ci.get("mrr", [0, 0])
        lines.append(f"{name:16} {r['segments']:6} {r['recall@5']:6.3f} {r['precision@5']:6.3f} "
                     f"{r['mrr']:6.3f} {r['ndcg@10']:6.3f} {r['log_rank']:7.3f}  "
                     f"[{cr[0]:.3f}, {cr[1]:.3f}]  [{cm[0]:.3f}, {cm[1]:.3f}]")
    pt = report.get("paired_test", {}).get("full_vs_fixed-dense")
    if pt:
        lines += ["", (f"full vs fixed-dense: ΔMRR {pt['mrr_diff']:+.3f} (p={pt['mrr_p']:.4f}), "
                       f"ΔR@5 {pt['recall@5_diff']:+.3f} (p={pt['recall@5_p']:.4f})")]
    if report.get("degradation"):
        sizes = list(next(iter(report["degradation"].values())).keys())
        lines += ["", "Degradation (Recall@5 / MRR) by knowledge-base size N:",
                  f"{'variant':16} " + " ".join(f"{'N=' + n:>13}" for n in sizes)]
        for name, by_n in report["degradation"].items():
            lines.append(f"{name:16} " + " ".join(
                f"{by_n[n]['recall@5']:6.3f}/{by_n[n]['mrr']:.3f}" for n in sizes))
    grid = report.get("fusion_grid")
    if grid:
        lines += ["", "Fusion methods (hca, default α/β):"]
        for m, r in grid["methods"].items():
            lines.append(f"  {m:8} R@5 {r['recall@5']:.3f}  MRR {r['mrr']:.3f}  LogRank {r['log_rank']:.3f}")
    diag = report.get("diagnostics") or {}
    if diag.get("questions"):
        lines += ["", (f"Wrong document outranked gold in {diag['wrong_doc_outranked_gold']} of "
                       f"{len(diag['questions'])} questions ({diag.get('variant')})")]
        for c in diag.get("confusions", [])[:5]:
            lines.append(f"  {c['gold']} confused with {c['wrong']}: {c['count']}")
    return "\n".join(lines)



def grid_html(grid: dict[str, Any], metric: str = "log_rank") -> str:
    """The α×β sensitivity surface (paper Fig. 25) as a self-contained HTML heat map: a table
    whose cells are shaded by value, the best cell outlined (no script, opens anywhere)."""
    s = grid["surface"]
    values = [v for row in s[metric] for v in row]
    lo, hi = min(values), max(values)
    best = max(values)
    head = "".join(f"<th>{a:g}</th>" for a in s["alpha"])
    rows = []
    for beta, row in zip(s["beta"], s[metric], strict=True):
        cells = []
        for v in row:
            t = 0.0 if hi == lo else (v - lo) / (hi - lo)
            light = round(92 - 55 * t)
            mark = " style='outline:3px solid #d62728'" if v == best else ""
            cells.append(f"<td title='{metric} {v:.3f}' style='background:hsl(210,70%,{light}%);"
                         f"color:{'#fff' if light < 60 else '#000'}'{mark}>{v:.3f}</td>")
        rows.append(f"<tr><th>{beta:g}</th>{''.join(cells)}</tr>")
    title = html.escape(f"{metric} over α (dense weight) × β (keyword bonus), {s['method']}")
    return (f"<!doctype html><meta charset='utf-8'><title>{title}</title>"
            "<style>body{font:14px sans-serif}td,th{padding:4px 8px;text-align:right}</style>"
            f"<h3>{title}</h3><table><tr><th>β \\ α</th>{head}</tr>{''.join(rows)}</table>"
            f"<p>Best {metric}: {best:.3f} (outlined).</p>")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate retrieval variants on a labelled corpus")
    p.add_argument("--corpus", required=True, help="folder of documents")
    p.add_argument("--questions", required=True, help="questions JSONL (id, question, gold)")
    p.add_argument("--variants", help="comma-separated subset of: fixed-dense, fixed-hybrid, "
                   "section-dense, section-hybrid, title-dense, title-hybrid, hca-dense, hca-bm25, "
                   "hca-dense-bm25, full (default: all)")
    p.add_argument("--distractors", nargs="?", const="", default=None,
                   help="knowledge-base sizes for the degradation curve (default when given "
                        "without a value: 1,5,10,20,40,80)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--method", default="minmax", choices=[m.value for m in FusionMethod])
    p.add_argument("--alpha", type=float, default=None,
                   help="weight of the dense route (default: the collection default)")
    p.add_argument("--beta", type=float, default=None,
                   help="weight of the keyword bonus (default: the collection default)")
    p.add_argument("--gamma", type=float, default=1.0, help="Log-Rank γ (Eq. 3)")
    p.add_argument("--embedder", default=None, choices=[e.value for e in EmbedderName])
    p.add_argument("--fusion-grid", action="store_true",
                   help="compare fusion methods and sweep α×β (JSON + HTML heat maps)")
    p.add_argument("--dump-rankings", metavar="DIR", help="write DIR/VARIANT.jsonl top-100 rankings")
    p.add_argument("--out", help="write the report as JSON")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON instead of tables (progress stays on stderr)")
    p.set_defaults(func=_cmd_eval)
