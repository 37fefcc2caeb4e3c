"""A descriptions set from another man-page section, to check naming rules on pages no rule was
set on (issue #45): N random pages of SECTION without their NAME section, each page's one-line
description as the question, gold DESCRIPTION.

    apt-get install -y --no-install-recommends manpages-dev      # section 2 (system calls)
    python bench/make_whatis_section.py sec2w --section 2 --docs 80 --seed 5
    hiqa eval --corpus sec2w --questions sec2w/questions.jsonl --variants section-hybrid,full
"""
from __future__ import annotations

import argparse
import glob
import json
import random
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--section", default="2")
    ap.add_argument("--docs", type=int, default=80)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--man-root", default="/usr/share/man")
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 pages")
    a = ap.parse_args(argv)
    if a.quick:
        a.docs = 3
    sys.path.insert(0, str(SHARED))
    import make_dev_corpus
    import man2md

    pages = sorted(glob.glob(f"{a.man_root}/man{a.section}/*.{a.section}.gz"))
    random.Random(a.seed).shuffle(pages)
    a.outdir.mkdir(parents=True, exist_ok=True)
    questions = []
    for path in pages:
        if len(questions) >= a.docs:
            break
        try:
            page = man2md.convert(path)
        except (OSError, ValueError, IndexError, KeyError) as exc:  # as make_dev_corpus skips
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        if not page or len(page["markdown"]) < 500:
            continue
        markdown, description = make_dev_corpus.drop_name_section(page["markdown"])
        name = f"{page['name']}.{page['section']}.md"
        if not description or "## DESCRIPTION" not in markdown or (a.outdir / name).exists():
            continue
        (a.outdir / name).write_text(markdown, encoding="utf-8")
        questions.append({"id": f"s{len(questions) + 1:04d}", "question": description,
                          "gold": [{"doc": name, "section": ["DESCRIPTION"]}]})
    with open(a.outdir / "questions.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(q) + "\n" for q in questions)
    print(f"wrote {len(questions)} pages and questions to {a.outdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
