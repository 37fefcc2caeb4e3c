"""The store rewrite's promises (#12): nothing is lost or shown silently, on a real Edge shard.

Each test drives a real collection (Qdrant Edge, the real embedder with the session's shared
cache) into one situation a fault probe found, and checks what the user sees.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from index_fixtures import DOCS, store_held_elsewhere

from hiqa.cli import main as cli
from hiqa.collection import Collection
from hiqa.errors import CollectionError
from hiqa.index import store
from hiqa.index.ingest import shown_warnings
from hiqa.index.payload import DOCUMENT_FIELDS
from hiqa.index.repair import repair


def build(settings, corpus):
    col = Collection("man", settings, create=True)
    assert {r.status for r in col.ingest([corpus])} == {"added"}
    return col


@pytest.mark.parametrize("indexed_then", [["wc.1.md"], ["wc.1.md", "head.1.md", "tail.1.md"]])
def test_an_old_registry_copy_loses_no_document(settings, corpus, indexed_then):
    """Issue #33: a registry restored from a backup made when fewer documents were indexed.
    Before, the next ingest deleted the points of the documents the copy lacks (silently when
    they were a minority, and `repair` then found nothing to repair); now it registers them
    again from their points and says so."""
    col = Collection("man", settings, create=True)
    col.ingest([corpus / name for name in indexed_then], root=corpus)
    old_copy = (col.dir / "meta.json").read_text()
    col.ingest([corpus])
    titles = {d: m["title"] for d, m in col.documents.items()}
    n = col.store.count()
    (col.dir / "meta.json").write_text(old_copy)
    lacking = sorted(set(DOCS) - set(indexed_then))
    (corpus / "extra.md").write_text("# extra(1)\n\n## NAME\n\nextra - one more page\n")
    results = {r.doc_id: r for r in col.ingest([corpus])}
    assert results["extra.md"].status == "added"
    for doc_id in lacking:
        assert results[doc_id].status == "unchanged"
        assert "registered again from the stored points" in results[doc_id].warnings[0]
    assert sorted(col.documents) == sorted([*DOCS, "extra.md"])
    assert {d: col.documents[d]["title"] for d in titles} == titles
    assert col.store.count() == n + len(col.segments("extra.md"))
    assert col.search("tail: follow appended data", k=1)[0].segment.doc_id == "tail.1.md"
    assert repair(col.parts, dry_run=True).lines() == ["nothing to repair"]


def test_same_file_names_in_two_folders_stay_two_documents(settings, tmp_path):
    for folder, what in (("a", "alpha"), ("b", "beta")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "readme.md").write_text(
            f"# {what} readme\n\n## Usage\n\nThe {what} tool reads files.\n")
    col = Collection("two", settings, create=True)
    res = col.ingest([tmp_path / "a" / "readme.md", tmp_path / "b" / "readme.md"])
    assert [(r.doc_id, r.status) for r in res] == [("a/readme.md", "added"),
                                                   ("b/readme.md", "added")]
    # the same id from two places in one ingest is refused, not a silent overwrite
    clash = Collection("clash", settings, create=True)
    res = clash.ingest([tmp_path / "a" / "readme.md", tmp_path / "b" / "readme.md"],
                       root=tmp_path / "a")
    assert [r.status for r in res] == ["added", "failed"]
    assert "would both be document 'readme.md'" in res[1].error
    # issue #33: a later ingest of another file with the same id (reports/2023/summary.pdf
    # after reports/2022/summary.pdf) replaced the earlier document with a CLI warning; now it
    # is refused, and replaces it only when asked to
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "readme.md").write_text("# gamma readme\n\n## Usage\n\nGamma reads.\n")
    moved = col.ingest([tmp_path / "c" / "readme.md"], root=tmp_path / "c")[0]
    assert moved.status == "added" and moved.doc_id == "readme.md"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "readme.md").write_text("# delta readme\n\n## Usage\n\nDelta reads.\n")
    refused = col.ingest([tmp_path / "d" / "readme.md"], root=tmp_path / "d")[0]
    assert refused.status == "failed" and "comes from another file" in refused.error
    assert str(tmp_path / "c" / "readme.md") in refused.error and "--replace" in refused.error
    assert "Gamma reads" in " ".join(s.text for s in col.segments("readme.md"))
    (tmp_path / "c" / "readme.md").write_text("# gamma readme\n\n## Usage\n\nGamma writes.\n")
    same = col.ingest([tmp_path / "c" / "readme.md"], root=tmp_path / "c")[0]
    assert same.status == "updated" and not same.warnings  # its own file: an update
    moved = col.ingest([tmp_path / "d" / "readme.md"], root=tmp_path / "d",
                       replace_others=True)[0]
    assert moved.status == "updated"
    assert any("replaces the document of the same id, read before from another file" in w
               and "/c/readme.md" in w for w in moved.warnings)


def test_warnings_name_the_document_not_the_path_it_was_read_from(settings, tmp_path):
    """An upload lives in a folder on the server (under the data dir): its warnings name the
    document, each once, and a replaced upload's folder is not shown (#43 item 8)."""
    col = Collection("warned", settings, create=True)
    uploads = settings.data_dir / "uploads" / "warned"
    uploads.mkdir(parents=True)
    (uploads / "notes.md").write_bytes("# Café notes\n\n## Menu\n\nCrème brûlée and café au "
                                       "lait, served all day.\n".encode("cp1252"))
    added = col.ingest([uploads / "notes.md"], root=uploads)[0]
    assert added.status == "added"
    assert added.warnings == ("notes.md: not UTF-8; decoded as cp1252 (Western European)",)
    assert col.documents["notes.md"]["warnings"] == list(added.warnings)
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text("# Café notes\n\n## Menu\n\nTea only.\n")
    moved = col.ingest([elsewhere / "notes.md"], root=elsewhere, replace_others=True)[0]
    again = col.ingest([uploads / "notes.md"], root=uploads, replace_others=True)[0]
    assert again.warnings[0] == ("replaces the document of the same id, read before from "
                                 f"another file ({elsewhere / 'notes.md'})")
    assert not any(str(uploads) in w for w in moved.warnings + again.warnings)
    assert moved.warnings[0] == ("replaces the document of the same id, read before from "
                                 "another file")
    twice = [f"{uploads / 'x.pdf'}: page 3 repaired", f"{uploads / 'x.pdf'}: page 3 repaired"]
    assert shown_warnings(twice, uploads / "x.pdf", "x.pdf") == ["x.pdf: page 3 repaired"]


def test_a_stale_handle_keeps_what_another_handle_added(settings, corpus):
    first = Collection("man", settings, create=True)
    first.ingest([corpus / "wc.1.md"], root=corpus)
    second = Collection("man", settings)  # another object, its own registry copy
    second.ingest([corpus / "tail.1.md"], root=corpus)
    # the first handle's next ingest re-reads the registry: tail stays, head is added
    first.ingest([corpus / "head.1.md"], root=corpus)
    assert sorted(first.documents) == ["head.1.md", "tail.1.md", "wc.1.md"]
    assert sorted(second.documents) == ["head.1.md", "tail.1.md", "wc.1.md"]
    assert second.search("tail: follow appended data", k=1)[0].segment.doc_id == "tail.1.md"
    assert first.search("head: print the first lines", k=1)[0].segment.doc_id == "head.1.md"
    # a preset saved through one handle does not roll back the documents of the other
    first.save_preset("minmax", 0.5, 0.1)
    assert sorted(second.documents) == ["head.1.md", "tail.1.md", "wc.1.md"]
    assert second.preset == {"method": "minmax", "alpha": 0.5, "beta": 0.1}


def test_another_embedding_model_is_refused(settings, corpus):
    build(settings, corpus)
    store.close_all()
    meta = settings.data_dir / "collections" / "man" / "meta.json"
    data = json.loads(meta.read_text())
    data["model_id"] = "intfloat/another-model/384"
    meta.write_text(json.dumps(data))
    col = Collection("man", settings)
    with pytest.raises(CollectionError, match="holds vectors of model intfloat/another-model"):
        col.search("follow", k=1)


def test_docs_and_collections_work_while_another_process_holds_the_store(
        settings, corpus, capsys, monkeypatch):
    build(settings, corpus)
    with store_held_elsewhere(settings, "man"):
        data = str(settings.data_dir)
        assert cli.main(["--data-dir", data, "docs", "-c", "man", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert sorted(r["id"] for r in rows) == sorted(DOCS)
        assert all(r["segments"] > 0 and len(r["version"]) == 16 for r in rows)
        assert cli.main(["--data-dir", data, "collections"]) == 0
        assert "man" in capsys.readouterr().out
        monkeypatch.setenv("HIQA_STORE_WAIT", "0.5")
        assert cli.main(["--data-dir", data, "search", "follow", "-c", "man"]) != 0
        err = capsys.readouterr().err
        assert "waiting up to 0.5 s for the store of collection 'man'" in err
        assert "in use by" in err and "hiqa docs" in err


def test_a_command_waits_for_a_store_another_process_releases(settings, corpus, capsys,
                                                               monkeypatch):
    """Issue #33: of four CLI clients on one data dir, one in five commands failed "in use";
    a command now waits (HIQA_STORE_WAIT) and says for what."""
    import threading

    build(settings, corpus)
    monkeypatch.setenv("HIQA_STORE_WAIT", "30")
    data = str(settings.data_dir)
    with store_held_elsewhere(settings, "man") as release:
        threading.Timer(1.5, release).start()
        assert cli.main(["--data-dir", data, "search", "follow appended data", "-c", "man",
                         "--json"]) == 0
    out, err = capsys.readouterr()
    assert "waiting up to 30 s for the store of collection 'man', in use by pid" in err
    assert json.loads(out)[0]["doc"] == "tail.1.md"


def test_an_idle_store_is_handed_to_another_process_and_reopened(settings, corpus):
    """Issue #33: the app held the embedded store for its life, so `hiqa search` beside it
    waited HIQA_STORE_WAIT and failed.  A long-running process now closes a store no call has
    used for HIQA_STORE_IDLE seconds (never one in use), and its next call opens it again."""
    build(settings, corpus)
    col = Collection("man", settings)
    question = "follow appended data"
    before = [h.segment.text for h in col.search(question, k=3)]
    reader = col.store.scroll(fields=False)  # a reader part-way through keeps the store
    next(reader)
    assert store.release_idle(0) == []
    reader.close()
    with col.store.kept_open():  # so does an ingest between its writes
        assert store.release_idle(0) == []
    assert store.release_idle(60) == []  # used a moment ago
    assert store.release_idle(0) == ["man"]
    assert store.release_idle(0) == []  # closed already
    env = {**os.environ, "HIQA_STORE_WAIT": "0"}  # no waiting: the store must be free now
    done = subprocess.run([sys.executable, "-m", "hiqa.cli", "--data-dir",
                           str(settings.data_dir), "search", question, "-c", "man", "--json"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert [r["text"] for r in json.loads(done.stdout)][:3] == before
    assert [h.segment.text for h in col.search(question, k=3)] == before  # reopened


def test_the_idle_release_thread_runs_once_per_process(settings, corpus):
    build(settings, corpus)
    col = Collection("man", settings)
    col.search("follow", k=1)
    thread = store.start_idle_release(0.2)
    assert store.start_idle_release(0.2) is thread and thread.daemon
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and col.store._shard is not None:
        time.sleep(0.05)
    assert col.store._shard is None  # released by the thread, not by the test
    assert len(col.search("follow", k=1)) == 1


TAKE_TURNS = """
import sys, time, types, uuid
from pathlib import Path
import numpy as np
from hiqa import files
from hiqa.index.store import edge
from hiqa.index.store.edge import EdgeStore
# retry a held store every millisecond, not every 20-100 ms: the moment a close is still
# writing is then met often, instead of now and then
fast = types.SimpleNamespace(monotonic=time.monotonic, sleep=lambda s: time.sleep(min(s, 1e-3)))
edge.time = files.time = fast
where, me, turns = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
log = where.with_name("turns.log")
held = EdgeStore(where, "turns", wait_s=60)
rng = np.random.default_rng()
for turn in range(turns):
    found = held.count()  # opens the shard: waits while the other process has it
    written = 3 * len(log.read_text().splitlines())
    if found != written:
        sys.exit(f"{me} turn {turn}: {found} points, {written} written")
    ids = [str(uuid.uuid4()) for _ in range(3)]
    held.upsert(ids, [{"doc_id": me, "doc_version": me}] * 3, {})  # dense later
    held.set_vectors("hca", ids, rng.random((3, 8), dtype=np.float32))  # the worker's write
    with log.open("a") as fh:
        fh.write(f"{me} {turn}\\n")
    held.close()  # hands the shard to the other process
"""


def test_processes_taking_turns_on_the_store_lose_no_point(tmp_path):
    """Issue #33: with the app handing its idle store to a CLI command, a document's points
    were lost now and then.  Qdrant Edge lets the next process load a shard while the last one's
    close is still writing; the points written next could vanish (on the old code this test
    lost points within a few turns: "B turn 5: 30 points, 33 written").  Two processes take 80
    turns each, writing points without vectors then their vectors, as ingest and the app's
    dense worker do; every point written is found by the next turn and at the end."""
    from hiqa.index.store.edge import EdgeStore

    where = tmp_path / "store" / "turns"
    made = EdgeStore(where, "turns")
    made.create(8)
    made.close()
    (tmp_path / "store" / "turns.log").write_text("")
    script = tmp_path / "turns.py"
    script.write_text(TAKE_TURNS)
    runs = [subprocess.Popen([sys.executable, str(script), str(where), me, "80"],
                             stderr=subprocess.PIPE, text=True) for me in "AB"]
    errors = [p.communicate(timeout=600)[1] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], errors
    final = EdgeStore(where, "turns")
    try:
        assert final.count() == 3 * 2 * 80 and final.count_missing("hca") == 0
    finally:
        final.close()


def test_a_shard_another_program_holds_is_waited_for_without_touching_its_files(tmp_path):
    """Issue #33: a ``load`` that Qdrant Edge refuses for its lock has already repaired and
    rewritten the segments it read (their tracker journals deleted, points without a version
    marked deleted) under the process that has them open: every retry of the old wait loop
    could delete that process's newest points.  Now Edge's lock is probed, not tried: the
    holder's files are left exactly as they were, and the message says who holds the store."""
    import textwrap

    from hiqa.index.store.edge import EdgeStore

    where = tmp_path / "store" / "held"
    made = EdgeStore(where, "held")
    made.create(8)
    made.close()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time, uuid
        import qdrant_edge as qe
        shard = qe.EdgeShard.load({str(where)!r})
        ids = [str(uuid.uuid4()) for _ in range(3)]
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(id=i, payload={{"doc_id": "x"}}, vector={{}}) for i in ids]))
        shard.flush()
        print('ready', flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)

    def files() -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(where)): (p.stat().st_size, p.stat().st_mtime_ns)
                for p in sorted(where.rglob("*")) if p.is_file() and p.name != "hiqa.owner"}

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        before = files()
        waiting = EdgeStore(where, "held", wait_s=1.0)
        with pytest.raises(CollectionError, match="in use by another process"):
            waiting.count()
        assert files() == before
    finally:
        holder.kill()
        holder.wait()
    after = EdgeStore(where, "held")
    try:
        assert after.count() == 3
    finally:
        after.close()


def test_migrate_an_old_local_mode_data_dir(settings, corpus, capsys):
    old = replace(settings, store="qdrant-local")
    col = Collection("man", old, create=True)
    col.ingest([corpus])
    col.ensure_content_vectors()
    questions = ["output the last part of files", "wc: maximum display width", "TMP117 电源"]
    before = [[h.segment.segment_id for h in col.search(q, k=5)] for q in questions]
    store.close_all()
    # the new default store finds an old data dir: a clear pointer, nothing changed
    with pytest.raises(CollectionError, match="old Qdrant local-mode format.*hiqa migrate"):
        Collection("man", settings)
    data = str(settings.data_dir)
    assert cli.main(["--data-dir", data, "migrate", "--dry-run"]) == 0
    assert f"man: would copy {len(col)} points" in capsys.readouterr().out
    assert not (settings.data_dir / "store" / "man").exists()
    assert cli.main(["--data-dir", data, "migrate"]) == 0
    assert f"man: copied {len(col)} points" in capsys.readouterr().out
    store.close_all()
    new = Collection("man", settings)
    assert [[h.segment.segment_id for h in new.search(q, k=5)] for q in questions] == before
    assert new.ensure_content_vectors() == 0  # the content vectors came along
    assert cli.main(["--data-dir", data, "migrate"]) == 0
    assert "already in the Edge store" in capsys.readouterr().out
    shutil.rmtree(settings.data_dir / "qdrant")
    assert new.search("follow", k=1)


def test_a_lost_registry_is_rebuilt_with_one_version_per_document(settings, corpus, monkeypatch):
    col = build(settings, corpus)
    (corpus / "wc.1.md").write_text((corpus / "wc.1.md").read_text().replace("maximum", "largest"))

    def crash(*a, **k):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr("hiqa.index.ingest._commit", crash)  # two versions of wc.1.md are stored
    with pytest.raises(KeyboardInterrupt):
        col.ingest([corpus])
    monkeypatch.undo()
    store.close_all()
    (settings.data_dir / "collections" / "man" / "meta.json").unlink()
    with pytest.raises(CollectionError, match=r"has a store .* but no registry.*nothing was "
                       r"changed.*hiqa repair -c man"):
        Collection("man", settings)  # a read never rebuilds it (issue #33)
    assert not (settings.data_dir / "collections" / "man" / "meta.json").exists()
    again = Collection("man", settings, repairing=True)
    repair(again.parts)
    assert again.older_format() == []  # the head point says which segment format it has
    assert sorted(again.documents) == sorted(DOCS)
    wc = again.segments("wc.1.md")
    assert len({s.segment_id for s in wc}) == len(wc) == again.documents["wc.1.md"]["segments"]
    texts = " ".join(s.text for s in wc)
    assert ("largest" in texts) != ("maximum" in texts)  # one version, never both
    # the next ingest brings it up to date and sweeps the other version
    again.ingest([corpus])
    assert "largest" in " ".join(s.text for s in again.segments("wc.1.md"))
    assert again.store.count() == len(again)


def test_only_the_searched_vector_gets_an_hnsw_graph(tmp_path):
    """``content`` is never searched whole, so neither engine builds a graph (or an int8 copy)
    for it: the one-time index build of a large collection covers ``hca`` alone."""
    from qdrant_client import QdrantClient

    from hiqa.index.store.client import ClientStore
    from hiqa.index.store.edge import EdgeStore

    edge = EdgeStore(tmp_path / "shard", "t")
    edge.create(8)
    edge.close()
    vectors = json.loads((tmp_path / "shard" / "edge_config.json").read_text())["vectors"]
    assert vectors["content"]["hnsw_config"]["m"] == 0
    assert vectors["hca"].get("hnsw_config", {}).get("m") != 0
    assert vectors["hca"]["quantization_config"]["scalar"]["type"] == "int8"
    assert vectors["content"].get("quantization_config") is None

    client = QdrantClient(location=":memory:")
    ClientStore(client, "t", ":memory:").create(8)
    params = client.get_collection("hiqa__t").config.params.vectors
    assert params["content"].hnsw_config.m == 0
    assert params["hca"].hnsw_config is None or params["hca"].hnsw_config.m != 0
    assert params["hca"].quantization_config.scalar.type == "int8"
    assert params["content"].quantization_config is None


def _clustered(n, dim):
    """``n`` point ids and clustered unit vectors, the same for the same ``n`` and ``dim``."""
    import numpy as np

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((20, dim))
    v = centres[rng.integers(0, 20, n)] + 0.7 * rng.standard_normal((n, dim))
    v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return [f"00000000-0000-0000-0000-{i:012d}" for i in range(n)], v


def _clustered_store(tmp_path, monkeypatch, n=12_000, dim=384):
    """An optimized Edge store of ``n`` clustered unit vectors: int8 copy and HNSW graph (``n``
    is above the optimizer's own size threshold), and a question near one of its texts."""
    import numpy as np

    from hiqa.index.store import edge as edge_module

    ids, v = _clustered(n, dim)
    rng = np.random.default_rng(1)
    s = edge_module.EdgeStore(tmp_path / "shard", "t")
    s.create(dim)
    s.upsert(ids, [{"doc_id": f"d{i // 40}", "doc_version": f"d{i // 40}@1"} for i in range(n)],
             {"hca": v, "content": v})
    monkeypatch.setattr(edge_module, "HNSW_FROM", 1_000)
    assert s.optimize()
    q = v[5] + 0.03 * rng.standard_normal(dim).astype(np.float32)
    return s, ids, v, q / np.linalg.norm(q)


def test_the_int8_graph_leaves_every_score_exact(tmp_path, monkeypatch):
    """``hca`` is also kept as int8, and the HNSW graph is built and walked with it; what the
    dense route and the fill-in scores return must still be the float vectors' cosines (the
    fusion normalises them), which Qdrant gives only when asked to rescore or ignore the int8
    copy.  The raw int8 scores are checked to differ, so the graph really is quantized."""
    import qdrant_edge as qe

    s, ids, v, q = _clustered_store(tmp_path, monkeypatch)
    links = list((tmp_path / "shard").glob("segments/*/vector_index-hca/links*.bin"))
    assert links and max(f.stat().st_size for f in links) > 100_000  # a graph of 12k points
    exact = dict(zip(ids, (v @ q).tolist()))
    raw = s.shard.query(qe.QueryRequest(
        limit=100, query=qe.Query.Nearest(q.tolist(), using="hca"),
        params=qe.SearchParams(quantization=qe.QuantizationSearchParams(rescore=False))))
    assert max(abs(p.score - exact[str(p.id)]) for p in raw) > 1e-4  # int8 scores

    found = s.nearest(q, using="hca", k=100, versions=None)
    assert len(found) == 100
    assert max(abs(score - exact[i]) for i, score in found) < 1e-5
    best = sorted(exact, key=exact.__getitem__, reverse=True)
    assert [i for i, _ in found[:10]] == best[:10]
    assert len(set(best[:100]) & {i for i, _ in found}) >= 95
    scored = s.scores(ids[:50], q, "hca")
    assert max(abs(scored[i] - exact[i]) for i in ids[:50]) < 1e-5
    s.close()


def test_the_int8_copy_is_read_ahead_at_open(tmp_path, monkeypatch):
    """``EdgeStore`` reads the int8 files ahead once ``optimize`` has built them and at open
    (Qdrant maps them for random access, and the first search of a process fetched them a page
    at a time): the file pattern it reads must still be where this Qdrant Edge writes the
    copy."""
    from hiqa.index.store import edge as edge_module

    read: list[str] = []
    real_open = Path.open

    def spy(self, *a, **k):
        read.append(self.name)
        return real_open(self, *a, **k)

    monkeypatch.setattr(Path, "open", spy)
    s, *_ = _clustered_store(tmp_path, monkeypatch)
    assert "quantized.data" in read  # after the build
    s.close()
    files = list((tmp_path / "shard").glob("segments/*/vector_storage-*/quantized.data"))
    assert files and sum(f.stat().st_size for f in files) >= 12_000 * 384
    read.clear()
    edge_module.EdgeStore(tmp_path / "shard", "t").shard.close()
    assert "quantized.data" in read  # at open


def _segmented_store(directory, n, dim=1024, every=4_000):
    """An Edge store into which ``n`` clustered unit vectors were written a thousand at a time
    as an ingest writes them, building when ``build_due``, ``SEGMENT_POINTS`` being ``every``
    (1024 dimensions: 4,000 points are 16 MB of vectors, over the optimizer's own 10 MB
    threshold for building a graph at all)."""
    from hiqa.index.store import edge as edge_module

    edge_module.SEGMENT_POINTS = edge_module.HNSW_FROM = every
    ids, v = _clustered(n, dim)
    s = edge_module.EdgeStore(directory, "t")
    s.create(dim)
    for i in range(0, n, 1_000):
        if s.build_due():
            s.optimize()
        s.upsert(ids[i:i + 1_000], [{"doc_id": f"d{j // 40}"} for j in range(i, i + 1_000)],
                 {"hca": v[i:i + 1_000], "content": v[i:i + 1_000]})
    return s, ids, v


def _built(directory) -> list[Path]:
    """The segments with an int8 copy of ``hca``: those the optimizer built."""
    return [p.parents[1] for p in directory.glob("segments/*/vector_storage-hca/quantized.data")]


def _assert_exact(s, ids, v):
    import numpy as np

    q = v[5] + 0.03 * np.random.default_rng(1).standard_normal(v.shape[1]).astype(np.float32)
    q /= np.linalg.norm(q)
    exact = dict(zip(ids, (v @ q).tolist()))
    found = s.nearest(q, using="hca", k=100, versions=None)
    assert len(found) == 100
    assert max(abs(score - exact[i]) for i, score in found) < 1e-5
    best = sorted(exact, key=exact.__getitem__, reverse=True)
    assert [i for i, _ in found[:10]] == best[:10]


def test_the_points_are_built_in_segments_of_a_fixed_size_as_they_arrive(tmp_path, monkeypatch):
    """Edge builds nothing until ``optimize``; ``build_due`` says when the points written since
    the last build fill a segment (``SEGMENT_POINTS``), and the shard's ``max_segment_size``
    keeps the optimizer from merging the built segments back into one (one segment of
    everything, built at the end, took longer than several of a fixed size: docs/benchmarks.md, Store).
    Each built segment gets its int8 copy and its graph, a final ``optimize`` builds the rest
    apart from them, and the dense route still returns the exact top 10 with exact scores
    across them."""
    from hiqa.index.store import edge as edge_module

    # a segment every 4,000 points instead of 50,000 (restored after the test)
    monkeypatch.setattr(edge_module, "SEGMENT_POINTS", 4_000)
    monkeypatch.setattr(edge_module, "HNSW_FROM", 4_000)
    s, ids, v = _segmented_store(tmp_path / "shard", 14_000)
    assert len(_built(tmp_path / "shard")) == 3  # at 4k, 8k and 12k points, during the writes
    assert s.unbuilt == 2_000 and not s.build_due()
    s.optimize()
    assert s.unbuilt == 0
    assert len(_built(tmp_path / "shard")) == 3  # the last 2k: under the optimizer's threshold
    s.upsert(ids[:1], [{"doc_id": "d0"}], {"hca": v[:1], "content": v[:1]})
    assert s.unbuilt == 1
    extra = [f"00000000-0000-0000-0001-{i:012d}" for i in range(4_000)]
    s.upsert(extra, [{"doc_id": "extra"}] * 4_000, {"content": v[:4_000]})
    assert s.unbuilt == 1  # points without the searched vector wait for ``fill_dense``
    built = _built(tmp_path / "shard")
    for segment in built:
        links = list(segment.glob("vector_index-hca/links*.bin"))
        assert links and max(f.stat().st_size for f in links) > 100_000
    assert s.count() == 18_000
    _assert_exact(s, ids, v)
    s.close()


def test_a_shard_made_before_segmenting_is_built_once_at_the_end(tmp_path, monkeypatch):
    """A shard created without ``max_segment_size`` would merge the segments built during an
    ingest back into one, rewriting each again: ``build_due`` stays false there, and the ingest
    builds once at the end, as it did when the shard was made."""
    import qdrant_edge as qe

    from hiqa.index.store import edge as edge_module

    monkeypatch.setattr(edge_module, "SEGMENT_POINTS", 1_000)
    old = qe.EdgeConfig(vectors={v: qe.EdgeVectorParams(size=8, distance=qe.Distance.Cosine)
                                 for v in ("hca", "content")})
    qe.EdgeShard.create(str(tmp_path / "shard"), old).close()
    ids, v = _clustered(1_000, 8)
    s = edge_module.EdgeStore(tmp_path / "shard", "old")
    s.upsert(ids, [{"doc_id": "a"}] * 1_000, {"hca": v, "content": v})
    assert s.unbuilt == 1_000 and not s.build_due()
    s.close()
    fresh = edge_module.EdgeStore(tmp_path / "new", "new")
    fresh.create(8)
    fresh.upsert(ids[:999], [{"doc_id": "a"}] * 999, {"hca": v[:999], "content": v[:999]})
    assert not fresh.build_due()
    fresh.upsert(ids[999:], [{"doc_id": "a"}], {"hca": v[999:], "content": v[999:]})
    assert fresh.build_due()
    fresh.close()


def test_a_kill_after_a_segment_was_built_loses_no_point(tmp_path):
    """``kill -9`` right after the writes that made the shard build two segments, nothing
    flushed or closed: the reopened store holds every point, its built segments and exact
    answers."""
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from pathlib import Path
from test_store import _segmented_store
_segmented_store(Path({str(tmp_path / "shard")!r}), 9_000)
os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == -9, proc.stderr
    from hiqa.index.store.edge import EdgeStore

    assert len(_built(tmp_path / "shard")) == 2
    s = EdgeStore(tmp_path / "shard", "t")
    assert s.count() == 9_000
    _assert_exact(s, *_clustered(9_000, 1024))  # the child's points
    s.close()


def test_a_kill_during_a_build_loses_no_point(tmp_path):
    """``kill -9`` while the shard builds a segment (Qdrant's optimizer, in Rust, holding the
    process): the reopened store holds every point and answers exactly, whether or not the
    build is redone."""
    import time

    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from pathlib import Path
from test_store import _segmented_store
from hiqa.index.store import edge
s, _, _ = _segmented_store(Path({str(tmp_path / "shard")!r}), 20_000, every=100_000)
edge.HNSW_FROM = 1_000
print("building", flush=True)
s.optimize()
print("built", flush=True)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "building"
        time.sleep(0.25)  # a 20k-point build takes seconds
        proc.kill()
        rest = proc.stdout.read()
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -9
    assert "built" not in rest, "the build ended before the kill: build more points"
    from hiqa.index.store.edge import EdgeStore

    s = EdgeStore(tmp_path / "shard", "t")
    assert s.count() == 20_000
    _assert_exact(s, *_clustered(20_000, 1024))
    s.close()


def test_a_shard_made_before_the_int8_copy_still_answers_exactly(tmp_path):
    """Collections keep the config they were created with: a shard with a float graph and no
    int8 copy (HiQA's config before it) must take the new search parameters (rescore,
    oversampling, ignore) and give the same exact cosines."""
    import numpy as np
    import qdrant_edge as qe

    from hiqa.index.store.edge import EdgeStore

    no_graph = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000)
    old = qe.EdgeConfig(vectors={v: qe.EdgeVectorParams(
        size=384, distance=qe.Distance.Cosine, hnsw_config=None if v == "hca" else no_graph)
        for v in ("hca", "content")})
    rng = np.random.default_rng(1)
    n = 12_000
    v = rng.standard_normal((n, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ids = [f"00000000-0000-0000-0000-{i:012d}" for i in range(n)]
    shard = qe.EdgeShard.create(str(tmp_path / "shard"), old)
    for i in range(0, n, 256):
        shard.update(qe.UpdateOperation.upsert_points([
            qe.Point(id=ids[j], payload={"doc_id": "a"},
                     vector={"hca": v[j].tolist(), "content": v[j].tolist()})
            for j in range(i, min(n, i + 256))]))
    assert shard.optimize()
    shard.close()
    assert not list((tmp_path / "shard").glob("segments/*/vector_storage-hca/quantized.data"))

    store = EdgeStore(tmp_path / "shard", "old")
    exact = dict(zip(ids, (v @ v[3]).tolist()))
    found = store.nearest(v[3], using="hca", k=100, versions=None)
    assert found[0][0] == ids[3] and len(found) == 100
    assert max(abs(score - exact[i]) for i, score in found) < 1e-5
    scored = store.scores(ids[:20], v[3], "hca")
    assert max(abs(scored[i] - exact[i]) for i in ids[:20]) < 1e-5
    store.close()


@pytest.mark.parametrize("engine", ["edge", "qdrant-local"])
def test_a_documents_own_fields_are_stored_once_on_its_head_point(settings, corpus, tmp_path,
                                                                   engine):
    """Title, source, keywords, strategy, embedder and model id are the document's: they are
    written on its first point only, yet every segment read back carries them, a keyword
    change reaches the head point, and a lost registry is rebuilt with them."""
    col = build(replace(settings, store=engine, data_dir=tmp_path / engine), corpus)
    document_fields = set(DOCUMENT_FIELDS)
    heads: dict[str, list[dict]] = {}
    for rec in col.store.scroll():
        has = document_fields & set(rec.payload)
        assert has in (set(), document_fields)  # all of them or none
        if has:
            heads.setdefault(rec.payload["doc_id"], []).append(rec.payload)
        assert "image" not in rec.payload and "is_table" not in rec.payload  # their defaults
    assert sorted(heads) == sorted(DOCS) and all(len(h) == 1 for h in heads.values())
    assert len(col) > len(DOCS)  # the other points are not heads
    for doc_id, (head,) in heads.items():
        record = col.documents[doc_id]
        assert head["doc_title"] == record["title"] and head["source"] == record["source"]
        for seg in col.segments(doc_id):
            assert (seg.doc_title, seg.source, seg.strategy) == \
                (record["title"], record["source"], "hca")
            assert seg.keywords == col.keywords(doc_id).texts() and seg.keywords
    hit = col.search("tail: follow appended data", k=1)[0]
    assert hit.segment.doc_title == col.documents["tail.1.md"]["title"]

    lexicon = tmp_path / "lex.csv"
    lexicon.write_text("doc,keyword\nhead.1.md,prefix printer\n")
    assert not col.set_lexicon(lexicon)
    stored = [r.payload for r in col.store.scroll(doc_id="head.1.md")]
    assert [p["keywords"] for p in stored if "keywords" in p] == \
        [list(col.keywords("head.1.md").texts())]
    assert "prefix printer" in col.keywords("head.1.md").texts()

    store.close_all()
    (col.dir / "meta.json").unlink()
    again = Collection("man", replace(settings, store=engine, data_dir=tmp_path / engine),
                       repairing=True)
    assert (again.meta["strategy"], again.meta["model_id"]) == ("hca", col.meta["model_id"])
    for doc_id, record in again.documents.items():
        assert (record["title"], record["source"]) == \
            (col.documents[doc_id]["title"], col.documents[doc_id]["source"])
    assert "prefix printer" in again.keywords("head.1.md").texts()


def test_a_store_older_than_the_registry_is_named_at_open_and_repaired_from_anywhere(
        settings, corpus, tmp_path, monkeypatch):
    """Issue #33: with points of registered versions missing (a store restored from an older
    backup, a repair killed halfway) every search failed with "KeyError ... this is a bug" while
    `docs` and `ingest` said all was well; and `repair` run from another working directory
    forgot every document, its sources having been recorded relative to the ingest's."""
    monkeypatch.chdir(corpus.parent)
    col = Collection("man", settings, create=True)
    col.ingest([corpus.name])  # a relative path, as typed
    assert all(Path(m["source"]).is_absolute() for m in col.documents.values())
    col.store.delete_document("tail.1.md")
    store.close_all()
    with pytest.raises(CollectionError, match=r"the store lacks points of 1 registered document"
                       r"\(s\) \(tail\.1\.md\).*Nothing was changed.*hiqa repair -c man"):
        Collection("man", settings)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    plan = repair(Collection("man", settings, repairing=True).parts)
    assert plan.reindex == ["tail.1.md"] and not plan.forget
    store.close_all()
    again = Collection("man", settings)
    assert sorted(again.documents) == sorted(DOCS)
    assert again.search("tail: follow appended data", k=1)[0].segment.doc_id == "tail.1.md"


def test_repair_keeps_what_is_stored_when_a_source_is_gone(settings, corpus):
    """A store restored from a backup holds the older version of a document whose source is
    gone: that version is registered again; a document with some points left keeps them."""
    col = build(settings, corpus)
    store.close_all()
    backup = settings.data_dir.parent / "store-backup"
    shutil.copytree(settings.data_dir / "store", backup)
    col = Collection("man", settings)
    (corpus / "wc.1.md").write_text((corpus / "wc.1.md").read_text().replace("maximum", "largest"))
    assert {r.doc_id: r.status for r in col.ingest([corpus])}["wc.1.md"] == "updated"
    head = [s.segment_id for s in col.segments("head.1.md")]
    store.close_all()
    shutil.rmtree(settings.data_dir / "store")
    shutil.copytree(backup, settings.data_dir / "store")  # the backup: wc.1.md's first version
    col = Collection("man", settings, repairing=True)
    col.store.delete(head[: len(head) // 2])
    (corpus / "wc.1.md").unlink()
    (corpus / "head.1.md").unlink()
    plan = repair(col.parts)
    assert (plan.restore, plan.keep_partial, plan.forget) == (["wc.1.md"], ["head.1.md"], [])
    store.close_all()
    again = Collection("man", settings)
    assert sorted(again.documents) == sorted(DOCS)
    assert "maximum" in " ".join(s.text for s in again.segments("wc.1.md"))
    assert len(again.segments("head.1.md")) == again.documents["head.1.md"]["segments"] == \
        len(head) - len(head) // 2
    assert again.search("wc: maximum display width", k=1)[0].segment.doc_id == "wc.1.md"
