"""The index-side CLI commands on a real collection (the app's capabilities, from a shell)."""
from __future__ import annotations

import json

import pytest

from hiqa import store
from hiqa.cli import build_parser, main


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


def test_ingest_search_ask_space_preset(settings, corpus, capsys):
    assert run(settings, "ingest", str(corpus), "-c", "man", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["status"] for r in rows} == {"added"}
    assert run(settings, "search", "tail: follow appended data", "-c", "man", "--json", "-k", "3") == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["doc"] == "tail.1.md" and hits[0]["path"] == ["tail(1)", "OPTIONS"]
    assert set(hits[0]["contributions"]) == {"dense", "bm25", "keyword"}
    assert run(settings, "ask", "tail: follow appended data", "-c", "man", "-k", "2") == 0
    out, err = capsys.readouterr()
    assert "[1]" in out or "[2]" in out
    assert "extractive" in err
    assert run(settings, "space", "-c", "man", "--json") == 0
    space = json.loads(capsys.readouterr().out)
    assert space["computed_content_vectors"] == space["hca"]["segments"]
    assert space["hca"]["knn_purity"] >= space["content"]["knn_purity"]
    assert run(settings, "preset", "-c", "man", "--alpha", "0.3", "--method", "rrf") == 0
    assert json.loads(capsys.readouterr().out) == {"method": "rrf", "alpha": 0.3, "beta": 0.2}
    assert run(settings, "remove-doc", "zh.md", "-c", "man") == 0
    capsys.readouterr()
    assert run(settings, "collections", "--json") == 0
    cols = json.loads(capsys.readouterr().out)
    assert cols[0]["name"] == "man" and cols[0]["documents"] == 3


def test_cli_errors_are_messages(settings, capsys):
    assert run(settings, "search", "x", "-c", "missing") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown collection 'missing'") and "Traceback" not in err
