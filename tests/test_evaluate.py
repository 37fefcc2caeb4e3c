"""Evaluation: gold rule, fixed-chunk overlap rule, seeded knowledge bases, report schema."""
from __future__ import annotations

import json
import re

import pytest

from hiqa.augment import segment_document
from hiqa.cli.main import main
from hiqa.errors import HiqaError
from hiqa.eval.runner import (
    VARIANTS,
    Evaluator,
    Gold,
    GoldJudge,
    Question,
    load_questions,
    path_matches,
    reader_digest,
    run_eval,
    sample_kb,
)
from hiqa.formats import load_document


def test_path_matching_rule():
    path = ("open(2)", "ERRORS", "EACCES / EPERM")
    assert path_matches(path, ["ERRORS"])
    assert path_matches(path, ["errors", "eacces   /  eperm"])  # case and whitespace
    assert path_matches(path, ["open(2)", "EACCES / EPERM"])  # in order, gaps allowed
    assert not path_matches(path, ["EACCES / EPERM", "ERRORS"])  # order matters
    assert not path_matches(path, ["EACCES"])  # "/" is inside one heading, not a separator
    assert path_matches(path, [])  # whole document


def test_fixed_chunks_judged_by_character_overlap(tmp_path):
    body = " ".join(f"word{i}" for i in range(400))
    p = tmp_path / "x.md"
    name = " ".join(f"name{i}" for i in range(200))
    p.write_text(f"# x(1)\n\n## NAME\n\n{name}\n\n## OPTIONS\n\n{body}\n\n## BUGS\n\nnone\n")
    doc = load_document(p, doc_id="x.md")
    judge = GoldJudge({"x.md": doc})
    q = Question("q", "?", (Gold("x.md", ("OPTIONS",)),))
    chunks = segment_document(doc, "fixed", fixed_tokens=64)
    flags = [judge.relevant(c, q) for c in chunks]
    assert flags[0] is False  # the first chunk lies inside NAME
    assert flags[-2] is True  # a chunk inside OPTIONS
    assert flags[-1] is True  # the tail chunk holds mostly OPTIONS text, then BUGS
    # a segment from the right document with the right path is relevant; another doc is not
    sections = segment_document(doc, "hca")
    rel = [s.path[-1] for s in sections if judge.relevant(s, q)]
    assert set(rel) == {"OPTIONS"}
    other = Question("q", "?", (Gold("y.md", ("OPTIONS",)),))
    assert not any(judge.relevant(s, other) for s in sections)


def test_knowledge_base_sampling_is_seeded_and_keeps_gold():
    docs = [f"d{i}.md" for i in range(30)]
    q = Question("q7", "?", (Gold("d3.md", ()), Gold("d9.md", ())))
    kb = sample_kb(q, docs, 10, seed=1)
    assert len(kb) == 10 and {"d3.md", "d9.md"} <= set(kb) and len(set(kb)) == 10
    assert kb == sample_kb(q, docs, 10, seed=1)
    assert kb != sample_kb(q, docs, 10, seed=2)
    assert sample_kb(q, docs, 1, seed=1) == ["d3.md", "d9.md"]  # gold always stays
    assert len(sample_kb(q, docs, 500, seed=1)) == 30


def test_bad_question_file(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "a", "question": "x", "gold": [{"doc": "a.md"}]}\nnot json\n')
    with pytest.raises(HiqaError, match="line 2"):
        load_questions(p)


def _questions(tmp_path):
    rows = [
        {"id": "q1", "question": "tail: keep printing appended data as the file grows",
         "gold": [{"doc": "tail.1.md", "section": ["OPTIONS"]}]},
        {"id": "q2", "question": "head: print the first NUM lines",
         "gold": [{"doc": "head.1.md", "section": ["OPTIONS"]}]},
        {"id": "q3", "question": "wc: print the maximum display width",
         "gold": [{"doc": "wc.1.md", "section": ["OPTIONS"]}]},
    ]
    p = tmp_path / "questions.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_eval_end_to_end_schema_and_dump(settings, corpus, tmp_path, capsys):
    qfile = _questions(tmp_path)
    out = tmp_path / "r.json"
    dump = tmp_path / "dump"
    code = main(["--data-dir", str(settings.data_dir), "eval", "--corpus", str(corpus),
                 "--questions", str(qfile), "--distractors", "1,2", "--out", str(out),
                 "--dump-rankings", str(dump)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "full" in printed and "fixed-dense" in printed
    report = json.loads(out.read_text())
    assert report["questions"] == 3 and report["documents"] == 4
    assert set(report["variants"]) == set(VARIANTS)
    for row in report["variants"].values():
        assert {"segments", "recall@5", "precision@5", "mrr", "ndcg@10", "log_rank"} <= set(row)
        assert all(0.0 <= row[k] <= 1.0 for k in ("recall@5", "mrr", "log_rank"))
    for by_n in report["degradation"].values():
        assert set(by_n) == {"1", "2"}
        assert {"recall@5", "mrr", "log_rank"} <= set(by_n["1"])
    # with only the gold document in the knowledge base, the full method finds it
    assert report["degradation"]["full"]["1"]["mrr"] > 0.5
    # dumped rankings let anyone recompute the metrics
    lines = [json.loads(x) for x in (dump / "full.jsonl").read_text().splitlines()]
    assert [row["id"] for row in lines] == ["q1", "q2", "q3"]
    for row, q in zip(lines, load_questions(qfile)):
        ranking = row["ranking"]
        assert len(ranking) <= 100 and ranking == sorted(ranking, key=lambda r: -r["score"])
        gold = q.gold[0]
        first = next(i for i, r in enumerate(ranking, 1)
                     if r["doc"] == gold.doc and path_matches(r["path"], gold.section))
        assert report["diagnostics"]["questions"][int(q.id[1]) - 1]["best_gold_rank"] == first
    assert "paired_test" in report


def test_eval_fusion_grid_and_unknown_variant(settings, corpus, tmp_path):
    qfile = _questions(tmp_path)
    report = run_eval(corpus, qfile, variants=["full", "hca-bm25"], settings=settings,
                      fusion_grid=True)
    grid = report["fusion_grid"]
    assert set(grid["methods"]) == {"minmax", "zscore", "rrf", "cc", "raw"}
    assert len(grid["surface"]["recall@5"]) == len(grid["surface"]["beta"])
    assert len(grid["surface"]["recall@5"][0]) == len(grid["surface"]["alpha"])
    with pytest.raises(HiqaError, match="unknown variant"):
        run_eval(corpus, qfile, variants=["nope"], settings=settings)


def test_eval_uses_given_keywords_and_forgets_them_on_the_next_run(settings, corpus, tmp_path):
    """A collection's lexicon, passed as keywords, gives β something to weigh ('full' has a
    keyword bonus, 'hca-dense-bm25' none); the cached evaluation collection does not keep it for
    a later run without it."""
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "q1", "question": "wordcount: print the newline counts",
                                 "gold": [{"doc": "wc.1.md", "section": ["OPTIONS"]}]}) + "\n")

    def bonuses(keywords, name):
        dump = tmp_path / name
        run_eval(corpus, qfile, variants=["hca-dense-bm25", "full"], settings=settings,
                 keywords=keywords, dump_rankings=dump)
        return [[r["keyword"] for r in json.loads((dump / f"{v}.jsonl").read_text())["ranking"]]
                for v in ("hca-dense-bm25", "full")]

    plain, full = bonuses({"lexicon": {"wc.1.md": ["wordcount"]}}, "with")
    assert not any(plain) and any(full)  # the keyword bonus moved the fused scores
    plain, full = bonuses(None, "without")
    assert not any(plain) and not any(full)


def test_beta_moves_the_fusion_surface_on_the_demo_with_its_lexicon(tmp_path):
    """The keyword bonus is wired into the α/β grid and matters on a real collection: the whole
    shipped demo (PostgreSQL pages, its expert lexicon, its shipped vectors) ranks differently
    at β 0 and β 1 for the same α."""
    import csv
    import shutil
    from pathlib import Path

    from hiqa.settings import Settings

    demo = Path(__file__).resolve().parents[1] / "data" / "demo"
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(demo / "embeddings.sqlite3", cache / "embeddings.sqlite3")
    lexicon: dict[str, list[str]] = {}
    with (demo / "lexicon.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            lexicon.setdefault(row["doc"], []).append(row["keyword"])
    report = run_eval(demo / "docs", demo / "questions.jsonl", variants=["full"],
                      settings=Settings(data_dir=tmp_path / "data", cache_override=cache),
                      fusion_grid=True, keywords={"lexicon": lexicon})
    surface = report["fusion_grid"]["surface"]
    betas = surface["beta"]
    mrr = surface["mrr"]
    assert mrr[betas.index(0.0)] != mrr[betas.index(1.0)]


def test_eval_leaves_out_questions_whose_gold_it_cannot_map_and_says_which(
        settings, corpus, tmp_path, capsys):
    """Issue #31: a gold heading the reader does not produce (renamed, or read differently)
    is a warning naming the question and a count, not the end of the run."""
    rows = [json.loads(x) for x in _questions(tmp_path).read_text().splitlines()]
    rows.append({"id": "q9", "question": "How do I tail a socket?",
                 "gold": [{"doc": "tail.1.md", "section": ["SOCKETS¶"]}]})
    qfile = tmp_path / "with-unmapped.jsonl"
    qfile.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "r.json"
    assert main(["--data-dir", str(settings.data_dir), "eval", "--corpus", str(corpus),
                 "--questions", str(qfile), "--variants", "full", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "1 question(s) left out: no gold section found" in captured.out
    assert "warning: question q9 left out" in captured.err and "tail.1.md: SOCKETS¶" in captured.err
    report = json.loads(out.read_text())
    assert report["questions"] == 3
    assert report["unmapped"] == [{"id": "q9", "gold": "tail.1.md: SOCKETS¶"}]
    # when no question can be scored, the run stops with the reason
    only = tmp_path / "only-unmapped.jsonl"
    only.write_text(json.dumps(rows[-1]) + "\n")
    with pytest.raises(HiqaError, match="none of the 1 questions has a gold section"):
        run_eval(corpus, only, variants=["full"], settings=settings)


def test_the_cli_grid_heat_map_marks_the_best_cell_without_a_script():
    from hiqa.cli.eval import grid_html

    grid = {"surface": {"method": "minmax", "alpha": [0.0, 0.5, 1.0], "beta": [0.0, 0.2],
                        "log_rank": [[0.5, 0.7, 0.6], [0.55, 0.9, 0.65]]}}
    page = grid_html(grid, "log_rank")
    cells = re.findall(r"<td[^>]*>([0-9.]+)</td>", page)
    assert cells == ["0.500", "0.700", "0.600", "0.550", "0.900", "0.650"]
    outlined = re.findall(r"<td[^>]*outline[^>]*>([0-9.]+)</td>", page)
    assert outlined == ["0.900"] and "Best log_rank: 0.900" in page
    assert "<script" not in page


def test_a_cached_evaluation_index_is_the_current_readers(settings, corpus, tmp_path):
    """A collection skips files it holds unchanged, so an evaluation index cached in a data
    dir kept the Markdown of the reader that built it: the filings re-run after a reader
    change scored the old parse.  The index's name carries a digest of the reader's code,
    which any change to it moves."""
    tree = tmp_path / "pkg"
    (tree / "formats" / "pdf").mkdir(parents=True)
    (tree / "augment.py").write_text("SEGMENT_FORMAT = 3\n")
    (tree / "formats" / "pdf" / "layout.py").write_text("LARGE_RATIO = 1.08\n")
    before = reader_digest(tree)
    assert reader_digest(tree) == before
    (tree / "formats" / "pdf" / "layout.py").write_text("LARGE_RATIO = 1.10\n")
    assert reader_digest(tree) != before
    (tree / "formats" / "pdf" / "layout.py").write_text("LARGE_RATIO = 1.08\n")
    (tree / "formats" / "pdf" / "blocks.py").write_text("\n")  # a module added
    added = reader_digest(tree)
    assert added != before
    (tree / "tokenize.py").write_text("CJK = ''\n")  # what the segmenter counts with
    assert reader_digest(tree) not in (before, added)

    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "q1", "question": "print the newline counts",
                                 "gold": [{"doc": "wc.1.md", "section": ["OPTIONS"]}]}) + "\n")
    name = Evaluator(corpus, qfile, settings=settings).collection("hca").name
    assert name.endswith(f"-r{reader_digest()}")
