"""``hiqa eval``: the ablation ladder, degradation curve and fusion grid on a labelled corpus."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from hiqa.cli.index import settings_of
from hiqa.retrieve.params import FusionMethod
from hiqa.settings import EmbedderName


def _cmd_eval(args: argparse.Namespace) -> int:
    from hiqa.eval.runner import DEFAULT_DISTRACTORS, format_report, fusion_grid_figure, run_eval
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
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print(format_report(report))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False))
        print(f"wrote {args.out}", file=sys.stderr)
    if args.fusion_grid:
        stem = Path(args.out).with_suffix("") if args.out else Path("fusion-grid")
        Path(f"{stem}.fusion-grid.json").write_text(json.dumps(report["fusion_grid"], indent=1))
        for metric in ("log_rank", "recall@5"):
            fusion_grid_figure(report["fusion_grid"], metric).write_html(
                f"{stem}.fusion-grid.{metric.replace('@', '')}.html", include_plotlyjs=True)
        print(f"wrote {stem}.fusion-grid.json and .html heat maps", file=sys.stderr)
    return 0


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
                   help="compare fusion methods and sweep α×β (JSON + plotly HTML)")
    p.add_argument("--dump-rankings", metavar="DIR", help="write DIR/VARIANT.jsonl top-100 rankings")
    p.add_argument("--out", help="write the report as JSON")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON instead of tables (progress stays on stderr)")
    p.set_defaults(func=_cmd_eval)
