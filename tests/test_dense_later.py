"""Two-phase ingest (#11): searchable at once, dense vectors filled in afterwards.

Real components: the CLI, an Edge store, the default embedder; the app through AppTest with its
real background worker thread.
"""
from __future__ import annotations

import json
import threading

import pytest
import streamlit as st
from index_fixtures import DOCS, app_env, run_app

from hiqa.cli import main as cli
from hiqa.collection import Collection
from hiqa.handles import HANDLES
from hiqa.index import store
from hiqa.index.background import DenseWorker, dense_worker, start_dense_worker


def run(settings, *words: str) -> int:
    return cli.main(["--data-dir", str(settings.data_dir), *words])


def test_ingest_later_then_embed_from_the_cli(settings, corpus, capsys):
    assert run(settings, "ingest", str(corpus), "-c", "man", "--dense", "later") == 0
    out = capsys.readouterr().out
    col = Collection("man", settings)
    total = len(col)
    assert f"dense vectors: 0 of {total} segments" in out and "hiqa embed -c man" in out
    assert run(settings, "docs", "-c", "man", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert sum(r["dense_pending"] for r in rows) == total == sum(r["segments"] for r in rows)
    # searchable already: the lexical and keyword routes find the right section
    hits = col.search("tail: follow appended data", k=3)
    assert hits[0].segment.doc_id == "tail.1.md"
    assert all(h.raw["dense"] != h.raw["dense"] for h in hits)  # NaN: no vector yet
    # and says so, where α is set (issue #43, item 7)
    assert run(settings, "search", "-c", "man", "tail: follow appended data") == 0
    assert "Dense vectors are pending for all" in capsys.readouterr().err
    result, _ = col.search_result("tail: follow appended data", k=3)
    assert "α changes nothing" in (result.dense_pending_note() or "")
    assert run(settings, "embed", "-c", "man") == 0
    captured = capsys.readouterr()
    assert f"{total} dense vectors written" in captured.out
    assert f"dense vectors {total}/{total} (100%)" in captured.err
    assert col.dense_status() == (total, total)
    assert run(settings, "docs", "-c", "man", "--json") == 0
    assert all(r["dense_pending"] == 0 for r in json.loads(capsys.readouterr().out))
    hit = col.search("tail: follow appended data", k=1)[0]
    assert hit.segment.doc_id == "tail.1.md" and 0 < hit.raw["dense"] <= 1
    assert col.search_result("tail: follow appended data", k=3)[0].dense_pending_note() is None
    # nothing pending: a second run writes nothing
    assert run(settings, "embed", "-c", "man") == 0
    assert "0 dense vectors written" in capsys.readouterr().out


def test_an_ingest_waits_for_a_vector_write_instead_of_failing(settings, corpus):
    from hiqa.index.lock import ingest_lock

    col = Collection("man", settings, create=True)
    col.ingest([corpus / "wc.1.md"], root=corpus, dense="later")
    release, held = threading.Event(), threading.Event()

    def hold() -> None:
        with ingest_lock(col.parts, holder="embed", reread=False):
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    threading.Timer(0.5, release.set).start()
    try:
        assert {r.status for r in col.ingest([corpus / "tail.1.md"], root=corpus)} == {"added"}
    finally:
        holder.join()


PAGES = 12


@pytest.fixture()
def pending_app(tmp_path, embed_cache, monkeypatch):
    """A collection of unseen text ingested with dense vectors later, and the app over it."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "cache").symlink_to(embed_cache, target_is_directory=True)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    for i in range(PAGES):  # text no other test embedded, so the worker has work to do
        sections = "\n\n".join(
            f"## Register {i}.{j}\n\nThe control register {i}.{j} of unit U{i:03d} sets the "
            f"sampling divider to {i * 37 + j} and the watchdog period to {j * 11 + i} ms."
            for j in range(8))
        (corpus / f"unit-{i:03d}.md").write_text(f"# Unit U{i:03d}\n\n{sections}\n")
    app_env(monkeypatch, data)
    from hiqa.settings import Settings

    col = Collection("later", Settings(data_dir=data), create=True)
    assert {r.status for r in col.ingest([corpus], dense="later")} == {"added"}
    store.close_all()
    yield data
    st.cache_resource.clear()
    store.close_all()


def test_the_app_answers_while_the_dense_route_fills_in(pending_app):
    at = run_app()
    assert at.title[0].value == "Chat"
    from app_pages._shared import open_collection

    col = open_collection(str(pending_app), "later")
    worker = dense_worker(col.parts)
    assert worker is not None  # opening the page started it
    done, total = col.dense_status()
    assert total == len(col) and done < total
    shown = "\n".join(str(p.proto.text) for p in at.get("progress"))
    assert f"of {total:,} segments embedded" in shown
    # questions are answered meanwhile, from every route that is ready
    at.chat_input[0].set_value("tail: follow appended data").run()
    assert not at.exception, at.exception
    assert at.table[0].value.iloc[0]["document"] == "tail\\(1\\)"  # its title
    at.chat_input[0].set_value("watchdog period of unit U007 register 7.3").run()
    assert not at.exception, at.exception
    assert at.table[0].value.iloc[0]["document"] == "Unit U007"
    worker.join(timeout=300)  # the real thread finishes on its own
    assert not worker.running and not worker.error
    assert col.dense_status() == (total, total)
    assert all(m["dense_pending"] == 0 for m in col.documents.values())
    at.run()
    assert not at.exception
    assert not [p for p in at.get("progress") if "Dense route" in str(p.proto.text)]


def test_a_killed_embed_leaves_no_stale_pending_count(settings, corpus, capsys):
    """Issue #33: a killed ``hiqa embed`` left the registry's pending tally behind, shown
    everywhere.  Here the vectors of one batch are written as ``fill_dense`` writes them, and
    the process 'dies' before its tally is saved: the count shown comes from the store, and the
    next embed sets each document's tally right."""
    import numpy as np

    assert run(settings, "ingest", str(corpus), "-c", "man", "--dense", "later") == 0
    col = Collection("man", settings)
    total = len(col)
    written = [r.id for r in col.store.scroll(fields=["doc_id"])][:5]
    col.store.set_vectors("hca", written, np.ones((len(written), col.meta["dim"]), np.float32))
    assert sum(int(m["dense_pending"]) for m in col.documents.values()) == total  # stale tally
    assert col.dense_status() == (len(written), total)
    capsys.readouterr()
    assert run(settings, "embed", "-c", "man") == 0
    assert f"{total - len(written)} dense vectors written" in capsys.readouterr().out
    assert all(int(m["dense_pending"]) == 0 for m in col.documents.values())
    assert col.dense_status() == (total, total)


def test_a_failed_or_stopped_worker_is_started_again(pending_app):
    """The app asks the store what is pending once per registry generation; a worker that
    failed or was stopped within that generation must still be started again."""
    from app_pages._shared import open_collection

    col = open_collection(str(pending_app), "later")
    key = col.parts.handle_key
    for failed in (DenseWorker("later", done=0, total=5, error="boom"),
                   DenseWorker("later", done=2, total=5)):  # stopped part-way
        failed.generation = col.registry.generation
        HANDLES.workers[key] = failed
        worker = start_dense_worker(col.parts)
        assert worker is not None and worker is not failed
        worker.stop(timeout=300)
    HANDLES.workers.pop(key, None)
