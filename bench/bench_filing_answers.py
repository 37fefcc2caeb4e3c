"""Does the extractive answer give the figure? FinanceBench's metrics questions over filings
(issue #46: "the extractive answer contains the gold figure for ≥ 80 % of them").

    python bench/bench_filing_answers.py filings/pdfs filings/questions.jsonl --data-dir D
    python bench/bench_filing_answers.py --quick       # smoke run: one generated filing

Each question whose ``question_type`` starts with "metrics" is searched as the Chat page does
(top 5), its context built as the Chat page builds it (``Collection.answer_context``: statement
rows with their column header, the cells a measure needs), and answered with no LLM.  The answer
counts when its text, thousands separators removed, holds the gold answer without its "$" and
a trailing ".00" ("$1,577.00" → "1577", "24.26", "5.4%").  One line per question, then the
count.  ``--data-dir`` reuses the index ``bench_peers.py`` or ``hiqa eval`` built there.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hiqa.answer.cited import answer
from hiqa.eval.runner import Evaluator, load_questions
from hiqa.settings import Settings


def gold_figure(text: str) -> str:
    return re.sub(r"[$,]|\.00$", "", text.strip())


def run(corpus: Path, questions: Path, data_dir: Path) -> tuple[int, int]:
    rows = {json.loads(line)["id"]: json.loads(line)
            for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()}
    asked = [q for q in load_questions(questions)
             if rows[q.id].get("question_type", "").startswith("metrics")]
    col = Evaluator(corpus, asked, settings=Settings(data_dir=data_dir)).collection("hca")
    hits_n = 0
    print("| question | gold | in the answer | the answer's first line |\n|---|---|---|---|")
    for q in asked:
        _, hits = col.search_result(q.question, k=5)
        reply = answer(q.question, col.answer_context([h.segment for h in hits], q.question),
                       llm=None)
        gold = str(rows[q.id]["answer"])
        found = gold_figure(gold) in reply.text.replace(",", "")
        hits_n += found
        first = reply.text.strip().splitlines()[0][:120].replace("|", "/") if reply.text else ""
        print(f"| {q.id} | {gold} | {'yes' if found else 'no'} | {first} |", flush=True)
    print(f"\ngold figure in {hits_n} of {len(asked)} answers"
          + (f" ({100 * hits_n / len(asked):.1f} %)" if asked else ""))
    return hits_n, len(asked)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, nargs="?")
    ap.add_argument("questions", type=Path, nargs="?")
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--quick", action="store_true", help="smoke run: one generated filing")
    a = ap.parse_args(argv)
    if a.quick:
        sys.path.insert(0, str(ROOT / "tests"))
        from pdf_fixtures import filing_pdf

        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "pdfs"
            folder.mkdir()
            pdf = filing_pdf(folder, "Acme Widgets, Inc.", "10-K",
                             "For the fiscal year ended May 31, 2019", "July 24, 2019", 2019)
            questions = Path(tmp) / "questions.jsonl"
            questions.write_text(json.dumps({
                "id": "q1", "question": "What were Acme's total current assets in FY2019?",
                "question_type": "metrics-generated", "answer": "1019,5",
                "gold": [{"doc": pdf.name, "page": 3}]}) + "\n", encoding="utf-8")
            run(folder, questions, Path(tmp) / "data")
        return 0
    if a.corpus is None or a.questions is None:
        ap.error("give the filings folder and its questions (or --quick)")
    with tempfile.TemporaryDirectory() as tmp:
        run(a.corpus, a.questions, a.data_dir or Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
