"""``hiqa demo``: build (on first use) the demo collection and say what to try."""
from __future__ import annotations

import argparse
import json
import time

from hiqa.cli.index import ProgressLine, settings_of
from hiqa.demo import demo_dir, ensure_demo


def _cmd_demo(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    root = demo_dir(settings)
    bar = ProgressLine()
    t0 = time.perf_counter()
    try:
        col = ensure_demo(settings, progress=bar)
    finally:
        bar.close()
    print(f"{col.name}: {len(col.documents)} documents, {len(col)} segments, "
          f"ready in {time.perf_counter() - t0:.1f} s (data dir {settings.data_dir})")
    questions = root / "questions.jsonl"
    if questions.is_file():
        lines = [json.loads(x)["question"] for x in questions.read_text("utf-8").splitlines()
                 if x.strip()]
        print("try:")
        for q in lines[:3]:
            print(f'  hiqa search -c {col.name} "{q}"')
        print(f"  hiqa eval --corpus {root / 'docs'} --questions {questions} "
              "--variants hca-dense,hca-dense-bm25,full")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="build (on first use) the demo collection: 40 PostgreSQL "
                                    "SQL-command reference pages")
    p.set_defaults(func=_cmd_demo)
