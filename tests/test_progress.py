"""The ingest progress model (``hiqa.index.progress``), fed event streams with explicit timestamps.

The streams follow what ``hiqa.index.ingest`` reports (see its ``Progress``); the times are chosen, so
the expected shares and ETAs are worked out by hand, and nothing here sleeps.
"""
from __future__ import annotations

import itertools

import pytest

from hiqa.index.progress import IngestProgress, Snapshot, eta_text

Event = tuple[str, str, int, int, float]  # stage, doc_id, done, total, seconds it took


def document(doc_id: str, n: int, number: int, files: int, *, format_s: float = 0.01,
             batch_s: float = 0.8, batch: int = 8) -> list[Event]:
    """One document of ``n`` segments through ``ingest --dense now``, embedded in batches."""
    events: list[Event] = [("format", doc_id, 0, 1, 0.001), ("format", doc_id, 1, 1, format_s),
                           ("segment", doc_id, 0, 1, 0.0), ("segment", doc_id, 1, 1, 0.005),
                           ("embed", doc_id, 0, n, 0.0)]
    events += [("embed", doc_id, min(d, n), n, batch_s) for d in range(batch, n + batch, batch)]
    events += [("index", doc_id, 0, n, 0.001), ("index", doc_id, n, n, 0.01),
               ("done", doc_id, number, files, 0.005)]
    return events


def run(events: list[Event], model: IngestProgress | None = None) -> list[tuple[Event, Snapshot]]:
    model = model or IngestProgress()
    now = 100.0
    out = []
    for event in events:
        now += event[4]
        out.append((event, model.update(*event[:4], now=now)))
    return out


def three_documents(**kw: float) -> list[Event]:
    events: list[Event] = [("done", "", 0, 3, 0.0)]
    for i, doc in enumerate(("a.md", "b.md", "c.md"), 1):
        events += document(doc, 16, i, 3, **kw)
    return events + [("finalize", "", 0, 1, 0.01), ("finalize", "", 1, 1, 0.05)]


def shares(snapshots: list[tuple[Event, Snapshot]]) -> dict[str, float]:
    """How much of the bar each stage's events moved it."""
    out: dict[str, float] = {}
    before = 0.0
    for event, snap in snapshots:
        out[event[0]] = out.get(event[0], 0.0) + snap.fraction - before
        before = snap.fraction
    return out


def test_embedding_the_slow_stage_gets_most_of_the_bar():
    snaps = run(three_documents())
    fractions = [s.fraction for _, s in snaps]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0 and max(fractions[:-1]) < 1.0
    share = shares(snaps)
    assert share["embed"] > 0.85, share
    # once a document has shown what embedding costs, the bar follows the segments embedded
    for (stage, doc, *_), snap in snaps:
        if stage == "embed" and doc != "a.md":
            assert snap.fraction == pytest.approx(snap.segments_done / 48, abs=0.06), snap
    # the bar moves on every batch
    embeds = [s.fraction for (stage, _, done, *_), s in snaps if stage == "embed" and done]
    assert all(b > a for a, b in itertools.pairwise(embeds))


def test_the_share_follows_observed_costs_not_a_fixed_split():
    """The same run where formatting is the slow stage (an LLM repairing each document's
    headings) and embedding is quick (every vector cached): formatting gets the bar."""
    snaps = run(three_documents(format_s=3.0, batch_s=0.005))
    share = shares(snaps)
    # the bar never lags the segments counter the text shows, so embedding's batches move it
    # too (issue #34, item 7)
    assert share["format"] > 0.75 and share["embed"] < 0.2, share


def test_segments_and_eta_before_and_after_each_document_is_segmented():
    snaps = run(three_documents())
    by_event = {(stage, doc, done): snap for (stage, doc, done, *_), snap in snaps}
    first = by_event[("segment", "a.md", 1)]
    assert first.eta_s is None and "ETA ?" in first.text()  # nothing measured yet
    after_a = by_event[("done", "a.md", 1)]
    # 16 segments a document, seen once: the other two are estimated at 16 each
    assert (after_a.segments_done, after_a.segments_total, after_a.segments_exact) == (16, 48, False)
    assert "segments 16/~48 embedded · 1/3 documents" in after_a.text()
    # what is left: two documents as long as the first (1.632 s of it embedding), the finalize
    left = 2 * (0.001 + 0.01 + 0.005 + 2 * 0.8 + 0.001 + 0.01 + 0.005) + 0.01 + 0.05
    assert after_a.eta_s == pytest.approx(left, rel=0.1)
    assert after_a.rate == pytest.approx(16 / 1.648, rel=0.01)
    in_c = by_event[("embed", "c.md", 8)]
    assert (in_c.segments_done, in_c.segments_total, in_c.segments_exact) == (40, 48, True)
    assert in_c.eta_s == pytest.approx(0.8 + 0.016 + 0.06, rel=0.15)
    assert in_c.text().endswith("· c.md: embed")
    end = snaps[-1][1]
    assert (end.docs_done, end.docs_total, end.eta_s) == (3, 3, 0.0)


def test_files_that_finish_without_segments_leave_no_work_behind():
    """An unchanged file reports only ``done``; one that fails stops after its format stage."""
    events: list[Event] = [("done", "", 0, 3, 0.0), ("done", "same.md", 1, 3, 0.01),
                           ("format", "bad.pdf", 0, 1, 0.01), ("done", "bad.pdf", 2, 3, 0.2)]
    snaps = run(events + document("new.md", 8, 3, 3)[:-1])
    before_done = snaps[-1][1]
    assert (before_done.segments_total, before_done.segments_exact) == (8, True)
    assert before_done.fraction < 1.0  # the new document still has to be written and indexed
    model = IngestProgress()
    unchanged = run([("done", "", 0, 2, 0.0), ("done", "a.md", 1, 2, 0.01),
                     ("done", "b.md", 2, 2, 0.01)], model)
    assert unchanged[-1][1].fraction == 1.0 and model.work_left() == 0.0
    assert unchanged[-1][1].text().startswith("segments 0/0 embedded · 2/2 documents")


def test_a_long_document_after_short_ones_is_estimated_by_its_size():
    """Two short files, then one eight times as long: by size, the long one is expected to hold
    eight times the segments, so the short ones get a fifth of the bar, not two thirds."""
    events: list[Event] = [("done", "", 0, 3, 0.0)]
    for i, (doc, n) in enumerate((("a.md", 2), ("b.md", 2), ("c.md", 16)), 1):
        events += document(doc, n, i, 3, batch_s=0.2, batch=2)
    sizes = {"a.md": 1_000, "b.md": 1_000, "c.md": 8_000}
    by_size = {(e[0], e[1], e[2]): s for e, s in run(events, IngestProgress(sizes=sizes))}
    by_count = {(e[0], e[1], e[2]): s for e, s in run(events, IngestProgress())}
    assert by_size[("segment", "a.md", 1)].segments_total == 30  # nothing measured: 10 each
    after_a = by_size[("embed", "a.md", 2)]
    assert (after_a.segments_total, after_a.segments_exact) == (20, False)
    assert by_count[("embed", "a.md", 2)].segments_total == 6
    assert by_size[("done", "b.md", 2)].fraction == pytest.approx(4 / 20, abs=0.05)
    assert by_count[("done", "b.md", 2)].fraction > 0.6


def test_the_bar_is_never_behind_the_counter_the_text_shows():
    """Issue #34, item 7: the bar stood a third full at "349/349 embedded" when the first
    document's index stage measured slow; now it is at least the counter's share."""
    slow_index = [(s, d, a, b, 5.0 if s == "index" and a else t)
                  for s, d, a, b, t in three_documents()]
    for (stage, *_), snap in run(slow_index):
        if snap.segments_total and stage != "finalize":
            assert snap.fraction >= min(0.99, snap.segments_done / snap.segments_total) - 0.05


def test_a_pdf_is_first_estimated_by_its_pages(tmp_path):
    """Issue #34, item 7: an 81-page PDF was first shown as "~10 segments"."""
    import pymupdf

    from hiqa.index.ingest import SEGMENTS_PER_PDF_PAGE, expected_segments

    doc = pymupdf.open()
    for _ in range(81):
        doc.new_page().insert_text((72, 72), "A page of the manual.")
    doc.save(tmp_path / "manual.pdf")
    expected = expected_segments([tmp_path / "manual.pdf"])
    assert expected == {"manual.pdf": 81 * SEGMENTS_PER_PDF_PAGE}
    first = IngestProgress(sizes={"manual.pdf": 1}, expected=expected).update(
        "done", "", 0, 1, now=0.0)
    assert "segments 0/~405 embedded" in first.text()


def test_dense_later_counts_segments_indexed():
    events = [e for e in three_documents() if e[0] != "embed"]
    snaps = run(events, IngestProgress("later"))
    end = snaps[-1][1]
    assert end.text().startswith("segments 48/48 indexed · 3/3 documents")
    assert end.fraction == 1.0


def test_a_big_collection_makes_the_finalize_stage_count():
    """Rebuilding the BM25 index covers the whole collection, not just the new documents."""
    small = shares(run(three_documents()))["finalize"]
    big = shares(run(three_documents(), IngestProgress(existing_segments=200_000)))["finalize"]
    assert small < 0.05 < big


@pytest.mark.parametrize(("seconds", "text"), [(None, "?"), (0.4, "0m00s"), (67.2, "1m07s"),
                                                (3725, "62m05s"), (-3, "0m00s")])
def test_eta_text(seconds, text):
    assert eta_text(seconds) == text


def test_a_long_stage_shows_its_seconds_as_it_runs():
    """Issue #34, item 7: reading a long PDF gave no update for as long as it took; the
    ingest now repeats the stage's event every second (``next_ticking``), and the line counts
    the seconds once the stage lasts."""
    ticks = [("format", "big.pdf", 0, 1, 0.001)] + [("format", "big.pdf", 0, 1, 1.0)] * 4
    lines = [snap.text() for _, snap in run([("done", "", 0, 1, 0.0), *ticks])]
    assert lines[1].endswith("big.pdf: format")  # a moment: no seconds
    assert lines[3].endswith("big.pdf: format 2 s") and lines[-1].endswith("big.pdf: format 4 s")
    after = run([("format", "big.pdf", 1, 1, 0.5), ("segment", "big.pdf", 0, 1, 0.0)],
                model=IngestProgress())
    assert after[-1][1].text().endswith("big.pdf: segment")  # a new stage starts from 0


def test_an_ingest_reports_at_least_every_two_seconds_while_a_document_is_read(tmp_path):
    """The real ingest, with a formatter hook that takes 3.5 s (an LLM formatter or a long
    PDF): before, no event came between the document's start and its end of formatting."""
    import time

    from hiqa.collection import Collection
    from hiqa.settings import Settings

    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "slow.md").write_text("# Slow\n\n## Part\n\nA sentence of text.\n")

    def slow(document):
        time.sleep(3.5)
        return document

    events: list[tuple[float, str]] = []
    col = Collection("slow", Settings(data_dir=tmp_path / "data"), create=True)
    col.ingest([corpus], prepare=slow, dense="later",
               progress=lambda stage, doc, done, total: events.append((time.monotonic(), stage)))
    formatting = [t for t, stage in events if stage == "format"]
    assert formatting[-1] - formatting[0] >= 3.0
    assert max(b - a for a, b in itertools.pairwise(formatting)) <= 2.0
