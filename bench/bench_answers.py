"""Answer quality on the demo: does the answer contain each question's gold phrase?

    python bench/bench_answers.py                          # extractive answers (no LLM)
    python bench/bench_answers.py --llm-base-url http://127.0.0.1:8765/v1 --llm-model NAME
    python bench/bench_answers.py --data-dir answers-data   # reuse a built demo
    python bench/bench_answers.py --quick                  # smoke run: the first 3 questions

Each line of ``data/demo/questions.jsonl`` carries a short ``answer_phrase`` quoted from the
gold section (e.g. "default fillfactor of 90").  For every question the demo collection is
searched exactly as the Chat page does (the collection's preset weights, top 5), the answer is
generated from those five context blocks, and the answer counts as correct when it contains the
phrase (case, whitespace and citations ignored: ``hiqa.answer.cited.contains_phrase``).  The table
shows where each miss comes from: the phrase was not in the context at all (a retrieval miss)
or it was in the context but the answer did not quote it (an answer miss).

With ``--llm-base-url`` the same questions go to an OpenAI-compatible endpoint instead; the
number then measures the model as much as the pipeline.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hiqa.answer.cited import answer, contains_phrase
from hiqa.collection import Collection
from hiqa.demo import DEMO_COLLECTION, demo_dir, ensure_demo
from hiqa.llm import LLMClient, LLMConfig
from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD
from hiqa.settings import Settings

TOP_K = 5


def load(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    missing = [r["id"] for r in rows if not r.get("answer_phrase")]
    if missing:
        raise SystemExit(f"{path}: no answer_phrase for {', '.join(missing)}")
    return rows


def run(col: Collection, rows: list[dict], llm: LLMClient | None) -> list[dict]:
    preset = col.preset
    method = preset.get("method", DEFAULT_METHOD)
    alpha = float(preset.get("alpha", DEFAULT_ALPHA))
    beta = float(preset.get("beta", DEFAULT_BETA))
    out = []
    for row in rows:
        t0 = time.perf_counter()
        hits = col.retrieve(row["question"]).rank(method, alpha, beta, TOP_K)
        context = col.answer_context([h.segment for h in hits])
        result = answer(row["question"], context, llm, embedder=col.embedder)
        phrase = row["answer_phrase"]
        out.append({
            "id": row["id"], "question": row["question"], "phrase": phrase,
            "in_context": any(contains_phrase(s.text, phrase) for s in context),
            "correct": contains_phrase(result.text, phrase), "answer": result.text,
            "cited_ok": bool(result.citations) and not result.invalid_citations,
            "seconds": time.perf_counter() - t0,
        })
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, help="where the demo is built (default: temp)")
    parser.add_argument("--questions", type=Path,
                        default=ROOT / "data" / "demo" / "questions.jsonl")
    parser.add_argument("--llm-base-url", help="answer with this endpoint instead (…/v1)")
    parser.add_argument("--llm-model", help="model name for --llm-base-url")
    parser.add_argument("--show", action="store_true", help="print every answer")
    parser.add_argument("--quick", action="store_true", help="smoke run: the first 3 questions")
    args = parser.parse_args()
    rows = load(args.questions)
    if args.quick:
        rows = rows[:3]
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="hiqa-bench-answers-")
        args.data_dir = Path(tmp.name)
    settings = Settings(data_dir=args.data_dir)
    ensure_demo(settings)
    col = Collection(DEMO_COLLECTION, settings)
    llm = None
    if args.llm_base_url:
        llm = LLMClient(LLMConfig(base_url=args.llm_base_url, model=args.llm_model or "default",
                                  max_tokens=200))
    mode = f"LLM {args.llm_model or args.llm_base_url}" if llm else "extractive"
    results = run(col, rows, llm)
    print(f"Demo answers ({mode}), {len(results)} questions from {demo_dir(settings)}, top {TOP_K}\n")
    print("| id | phrase in answer | phrase in context | s | gold phrase |")
    print("|---|---|---|---:|---|")
    for r in results:
        print(f"| {r['id']} | {'yes' if r['correct'] else 'no'} | "
              f"{'yes' if r['in_context'] else 'no'} | {r['seconds']:.1f} | {r['phrase']} |")
    for r in results:
        if args.show or not r["correct"]:
            print(f"\n{r['id']} answer: {r['answer'][:300]}")
    n = len(results)
    correct = sum(r["correct"] for r in results)
    reachable = sum(r["in_context"] for r in results)
    print()
    print(f"gold phrase in the context: {reachable}/{n} ({reachable / n:.0%})")
    print(f"gold phrase in the answer:  {correct}/{n} ({correct / n:.0%})"
          f"  [{correct}/{reachable} of the reachable ones]")
    print(f"answers citing only valid blocks: {sum(r['cited_ok'] for r in results)}/{n}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
