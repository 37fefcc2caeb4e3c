"""The LLM options of ``hiqa ingest`` against the real local model server."""
from __future__ import annotations

from llm_server import MODEL_ALIAS

from hiqa.cli.main import main
from hiqa.collection import Collection
from hiqa.index import store


def test_ingest_with_llm_keywords_and_format(settings, corpus, llm_server, monkeypatch, capsys):
    monkeypatch.setenv("HIQA_LLM_BASE_URL", llm_server)
    monkeypatch.setenv("HIQA_LLM_MODEL", MODEL_ALIAS)
    monkeypatch.setenv("HIQA_LLM_TIMEOUT", "120")
    code = main(["--data-dir", str(settings.data_dir), "ingest", str(corpus / "wc.1.md"),
                 "--collection", "llm", "--llm-keywords", "--llm-format", "auto"])
    assert code == 0, capsys.readouterr().err
    store.close_all()
    col = Collection("llm", settings)
    record = col.documents["wc.1.md"]
    assert "llm" in record["keywords"]  # the source was asked and recorded (may be empty)
    for kw in record["keywords"]["llm"]:  # grounded: every LLM keyword occurs in the source
        assert all(w.casefold() in (corpus / "wc.1.md").read_text().casefold() for w in kw.split())


def test_llm_options_need_an_endpoint(settings, corpus, monkeypatch, capsys):
    monkeypatch.delenv("HIQA_LLM_BASE_URL", raising=False)
    code = main(["--data-dir", str(settings.data_dir), "ingest", str(corpus / "wc.1.md"),
                 "--collection", "llm", "--llm-keywords"])
    assert code == 2
    assert "need an LLM endpoint" in capsys.readouterr().err
