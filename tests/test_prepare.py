"""An ingest's first half in a helper process (``hiqa.index.prepare``): real helper processes, a real
Edge store and the real embedder; the helper's faults are real ones (SIGKILL, an exception)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import hiqa.index.prepare
from hiqa.collection import Collection, read_registry
from hiqa.index.derived import derived
from hiqa.index.lexical import LexicalIndex

QUERIES = ("print the number of lines", "output the last part of files", "工作电压范围",
           "keep printing appended data as the file grows")

# a helper whose ``prepare`` misbehaves on the document named by HIQA_TEST_FAULT ("id:how")
FAULTY_HELPER = """
import os, signal
import hiqa.index.prepare as p

real = p.prepare
doc_id, how = os.environ["HIQA_TEST_FAULT"].split(":")

def prepare(job, *args, **kwargs):
    if job.doc_id == doc_id:
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError("an unexpected bug")
    return real(job, *args, **kwargs)

p.prepare = prepare
p.main()
"""


@pytest.fixture()
def helpers(monkeypatch):
    """Every ingest, however small, prepares in helper processes; returns the ones started."""
    started: list[subprocess.Popen[bytes]] = []
    real_start = hiqa.index.prepare._start

    def start(strategy: str, lock: int | None = None) -> subprocess.Popen[bytes]:
        started.append(real_start(strategy, lock))
        return started[-1]

    monkeypatch.setattr(hiqa.index.prepare, "HELPER_FROM", 1)
    monkeypatch.setattr(hiqa.index.prepare, "_start", start)
    return started


def faulty(monkeypatch, doc_id: str, how: str) -> None:
    monkeypatch.setenv("HIQA_TEST_FAULT", f"{doc_id}:{how}")
    monkeypatch.setattr(hiqa.index.prepare, "_command",
                        lambda strategy: [sys.executable, "-c", FAULTY_HELPER, strategy])


def snapshot(col: Collection) -> dict:
    """What an ingest leaves: registered documents, points, lexical scores, rankings."""
    docs = {d: {**{k: v for k, v in m.items() if k not in ("ingested_at", "markdown")},
                "markdown": Path(m["markdown"]).read_text(encoding="utf-8")}
            for d, m in col.registry.documents.items()}
    points = {r.id: r.payload for r in col.store.scroll()}
    lexical = derived(col.parts).lexical
    order = np.argsort(lexical.ids)
    return {"docs": docs, "points": points,
            "bm25": {q: lexical.scores(q)[order].tolist() for q in QUERIES},
            "ranked": {q: [h.segment.segment_id for h in col.search(q, k=10)] for q in QUERIES}}


def ingest_into(name: str, settings, corpus: Path) -> tuple[Collection, list]:
    col = Collection(name, settings, create=True)
    return col, col.ingest([corpus])


def test_the_helper_process_ingests_exactly_what_the_ingest_process_would(
        settings, corpus, helpers, monkeypatch):
    """Registry, points, lexical scores and rankings; the helper also built and saved the
    lexical index (this process built none), the in-process ingest built it here."""
    built: list[int] = []
    real_from_terms = LexicalIndex.from_terms.__func__
    monkeypatch.setattr(LexicalIndex, "from_terms", classmethod(
        lambda cls, t: built.append(1) or real_from_terms(cls, t)))
    col, results = ingest_into("helper", settings, corpus)
    assert len(helpers) == 1 and helpers[0].poll() == 0  # it ran, and was closed
    assert {r.status for r in results} == {"added"}
    assert built == []
    with_helper = snapshot(col)
    monkeypatch.setattr(hiqa.index.prepare, "HELPER_FROM", 10**9)
    col2, _ = ingest_into("inprocess", settings, corpus)
    assert len(helpers) == 1 and built == [1]
    alone = snapshot(col2)
    assert with_helper["docs"] == alone["docs"]
    assert with_helper["points"] == alone["points"]
    assert with_helper["bm25"] == alone["bm25"]
    assert with_helper["ranked"] == alone["ranked"]


def test_a_helper_that_dies_fails_its_document_and_a_new_helper_takes_the_rest(
        settings, corpus, helpers, monkeypatch):
    faulty(monkeypatch, "tail.1.md", "kill")
    col, results = ingest_into("man", settings, corpus)
    status = {r.doc_id: r for r in results}
    assert status["tail.1.md"].status == "failed"
    assert "formatter stopped" in status["tail.1.md"].error
    assert "SIGKILL" in status["tail.1.md"].error
    assert {d for d, r in status.items() if r.status == "added"} == {
        "head.1.md", "wc.1.md", "zh.md"}
    assert len(helpers) == 2  # the second took the documents sent after tail.1.md
    # the first helper took the term counts of head.1.md with it; the index read them from
    # the store, and equals an ingest of the same three documents without a fault
    broken = snapshot(col)
    (corpus / "tail.1.md").rename(corpus.parent / "tail.1.md")
    monkeypatch.setattr(hiqa.index.prepare, "HELPER_FROM", 10**9)
    col2, _ = ingest_into("clean", settings, corpus)
    clean = snapshot(col2)
    assert broken["bm25"] == clean["bm25"] and broken["ranked"] == clean["ranked"]
    # the file is back and the helper healthy: a rerun adds it
    (corpus.parent / "tail.1.md").rename(corpus / "tail.1.md")
    monkeypatch.delenv("HIQA_TEST_FAULT")
    monkeypatch.setattr(hiqa.index.prepare, "_command", lambda strategy: [
        sys.executable, "-m", "hiqa.index.prepare", strategy])
    monkeypatch.setattr(hiqa.index.prepare, "HELPER_FROM", 1)
    again = {r.doc_id: r.status for r in col.ingest([corpus])}
    assert again == {"head.1.md": "unchanged", "tail.1.md": "added", "wc.1.md": "unchanged",
                     "zh.md": "unchanged"}
    assert col.search("keep printing appended data as the file grows", k=1)[
        0].segment.doc_id == "tail.1.md"


def test_an_unexpected_error_in_the_helper_stops_the_ingest_as_in_process(
        settings, corpus, helpers, monkeypatch):
    faulty(monkeypatch, "tail.1.md", "raise")
    col = Collection("man", settings, create=True)
    with pytest.raises(RuntimeError, match="an unexpected bug"):
        col.ingest([corpus])
    assert helpers and all(h.poll() is not None for h in helpers)  # none left running
    assert read_registry("man", settings).documents == {}  # nothing registered or visible
    monkeypatch.delenv("HIQA_TEST_FAULT")
    monkeypatch.setattr(hiqa.index.prepare, "_command", lambda strategy: [
        sys.executable, "-m", "hiqa.index.prepare", strategy])
    assert {r.status for r in col.ingest([corpus])} == {"added"}
    assert len(col.registry.documents) == 4


def test_a_helper_that_cannot_start_leaves_the_work_to_the_ingest_process(
        settings, corpus, helpers, monkeypatch):
    """A helper that exits before answering (an interpreter that cannot import hiqa) is no
    file's fault: the ingest prepares every document itself, and none fails."""
    monkeypatch.setattr(hiqa.index.prepare, "_command",
                        lambda strategy: [sys.executable, "-c", "raise SystemExit(3)"])
    col, results = ingest_into("man", settings, corpus)
    assert len(helpers) == 1 and helpers[0].returncode == 3
    assert {r.status for r in results} == {"added"}
    assert col.search("keep printing appended data as the file grows", k=1)[
        0].segment.doc_id == "tail.1.md"


def killed_cli_ingest(settings, corpus: Path, tmp_path: Path, crash_at: str,
                      helper: str | None = None, **env: str) -> None:
    """``hiqa ingest`` of ``corpus`` in a child with a helper process (``helper``: the
    helper's script instead of ``python -m hiqa.index.prepare``), killed at ``crash_at``."""
    script = "import sys, hiqa.index.prepare as p\np.HELPER_FROM = 1\n"
    if helper is not None:
        script += f"p._command = lambda strategy: [sys.executable, '-c', {helper!r}, strategy]\n"
    script += "from hiqa.cli.main import main\nsys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "HIQA_DATA_DIR": str(settings.data_dir), "HIQA_CRASH_AT": crash_at,
           **env}
    log = tmp_path / "cli.log"  # not a pipe: the helper inherits it, and run() would wait
    with log.open("w") as out:
        proc = subprocess.run([sys.executable, "-c", script, "ingest", "-c", "man", str(corpus)],
                              check=False, env=env, stdout=out, stderr=out, timeout=300)
    assert proc.returncode == -signal.SIGKILL, log.read_text()[-2000:]


def _helpers_of(marker: str) -> list[int]:
    """Helper processes whose environment holds ``marker``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (b"hiqa.index.prepare" in (proc / "cmdline").read_bytes()
                    and marker.encode() in (proc / "environ").read_bytes()):
                found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return found


def test_the_helper_exits_when_the_ingest_process_is_killed(settings, corpus, tmp_path):
    """``kill -9`` of an ingest (here at its second document's points) leaves no helper behind:
    it sees its pipe close and exits."""
    marker = f"HIQA_TEST_MARK={tmp_path.name}"
    killed_cli_ingest(settings, corpus, tmp_path, "ingest:after-upsert@2",
                      HIQA_TEST_MARK=tmp_path.name)
    deadline = time.monotonic() + 20
    while _helpers_of(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _helpers_of(marker) == []


SLOW_INDEX_HELPER = """
import time
import hiqa.index.prepare as p

real = p._save_index

def slow(*args):
    time.sleep(3)
    return real(*args)

p._save_index = slow
p.main()
"""


def test_a_helper_left_saving_the_index_keeps_the_next_ingest_out(settings, corpus, tmp_path):
    """``kill -9`` of the ingest while its helper saves the lexical index: the helper shares
    the ingest's lock, so until it is done another ingest is told one is running (two saves
    of different generations could mix their files), and afterwards it proceeds."""
    from hiqa.errors import IngestBusyError
    from hiqa.index.lock import ingest_lock

    killed_cli_ingest(settings, corpus, tmp_path, "ingest:mid-finalize",
                      helper=SLOW_INDEX_HELPER)
    col = Collection("man", settings)
    with pytest.raises(IngestBusyError), ingest_lock(col.parts):
        pass
    deadline = time.monotonic() + 30
    while True:
        try:
            with ingest_lock(col.parts):
                break
        except IngestBusyError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    # the helper saved the committed generation's index: a new process's search uses it
    assert col.search("keep printing appended data as the file grows", k=1)[
        0].segment.doc_id == "tail.1.md"
    assert {r.status for r in col.ingest([corpus])} == {"unchanged"}
