"""Ingest progress as one bar whose share follows the slow stage, with segments done and an ETA.

Ingest reports per file and stage (``hiqa.index.ingest.Progress``).  The stages cost very different
amounts: a Markdown page is formatted and segmented in milliseconds, while embedding takes about
0.1 s a segment on 2 cores (docs/benchmarks.md), so a bar that gives each stage a fixed share sits
near its end while the slow stage runs.  Here each stage's cost per unit (seconds per document
for format and segment, per segment for embed and index) is measured as the run goes, from the
time between events, starting from ``PRIOR_S_PER_UNIT``; then

    work left = Σ over stages (units left × seconds per unit)

is the ETA, and every event moves the bar by its share of the work that was left before it:
``fraction += (1 - fraction) × work / (work + left)``, ``work`` being what the event reports
done, in seconds at the current costs.  So the bar never goes back when an estimate changes, the
slow stage gets most of its width, and it reaches 1 exactly when no work is left.  It is also
never behind the segments counter the text shows (``segments done / total``, less the share of
the finalize stage still to come, up to ``COUNTER_CAP``), so a stage measured slower than it
turns out cannot leave the bar a third full at "349/349 embedded".  Segments of documents not segmented yet are estimated from their size (or the mean
per document) by those segmented so far.

Pure: the caller passes the time of each event, so a test can feed a run with explicit
timestamps; the CLI (``hiqa.cli.index.ProgressLine``) and the app's Ingest page draw the same
``Snapshot``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PRIOR_S_PER_UNIT = {"format": 0.05, "segment": 0.02, "embed": 0.1, "index": 0.002}
"""Seconds per document (format, segment) or segment (embed, index) before any is measured:
embed is docs/benchmarks.md's 10 segments a second on 2 cores; the others are small on purpose."""
PRIOR_WEIGHT = 1.0
"""How many units the prior counts as: one, so that the first measurements outweigh it."""
FINALIZE_S = (0.05, 0.00005)
"""The finalize stage (the BM25 weights recomputed from saved term counts, the store optimized)
happens once, so it is never measured before it runs: seconds, fixed and per segment of the
collection (adding a document to 200k segments took 7.6 s, docs/benchmarks.md, Store)."""
PRIOR_SEGMENTS_PER_DOC = 10
COUNTER_CAP = 0.99
"""The bar follows the segments counted up to here; the rest is what follows the last one."""
LONG_STAGE_S = 2.0
"""A stage of one document running this long shows its seconds, which the ingest's tick
(``hiqa.index.prepare.next_ticking``) advances while a long PDF is read."""
PER_DOC = ("format", "segment")
PER_SEGMENT = ("embed", "index")


@dataclass(frozen=True)
class Snapshot:
    """What a bar shows after one event."""

    fraction: float
    stage: str
    doc_id: str
    docs_done: int
    docs_total: int
    segments_done: int
    segments_total: int
    segments_exact: bool
    """False while some documents are not segmented yet and ``segments_total`` is an estimate"""
    segment_verb: str
    """what ``segments_done`` counts: "embedded" (``dense="now"``) or "indexed" """
    eta_s: float | None
    """None until a segment is done: before that it would be the priors' guess alone"""
    rate: float
    """segments done per second since the first event"""
    stage_s: float = 0.0
    """seconds since the document's current stage began (shown once it lasts, ``LONG_STAGE_S``)"""

    def text(self) -> str:
        """``segments 340/~1,200 embedded · 3/40 documents · 9.8/s · ETA 1m52s · a.md: embed``"""
        approx = "" if self.segments_exact else "~"
        doing = self.doing()
        return (f"segments {self.segments_done:,}/{approx}{self.segments_total:,} "
                f"{self.segment_verb} · {self.docs_done:,}/{self.docs_total:,} documents · "
                f"{self.rate:.1f}/s · ETA {eta_text(self.eta_s)}" + (f" · {doing}" if doing else ""))

    def doing(self) -> str:
        """``a.md: embed``, or what the whole ingest is doing; "" between files."""
        if self.stage == "finalize":
            return "updating the BM25 index"
        if not self.doc_id or self.stage == "done":
            return ""
        lasting = f" {self.stage_s:.0f} s" if self.stage_s >= LONG_STAGE_S else ""
        return f"{self.doc_id}: {self.stage}{lasting}"


def eta_text(seconds: float | None) -> str:
    """``1m07s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    whole = max(0, round(seconds))
    return f"{whole // 60}m{whole % 60:02d}s"


@dataclass
class _Doc:
    done: dict[str, float] = field(default_factory=dict)
    segments: int | None = None


class IngestProgress:
    """Fold ingest's events into ``Snapshot``s; see the module docstring for the model.

    ``dense`` is the ingest's mode: with ``"later"`` there is no embed stage and segments count
    as done when indexed.  ``existing_segments``, the collection's before the ingest, sizes the
    finalize stage, which rebuilds the BM25 index of them all.  ``sizes`` (``{doc_id: bytes}``,
    ``hiqa.index.ingest.file_sizes``) lets the segments of documents not reached yet be estimated
    from their size.  An event costs O(1) whatever the number of files: running sums, and only
    the documents in progress (one, as ingest goes file by file) are looked at.
    """

    def __init__(self, dense: str = "now", existing_segments: int = 0,
                 sizes: Mapping[str, int] | None = None,
                 expected: Mapping[str, float] | None = None):
        self.existing_segments = existing_segments
        self.sizes = dict(sizes or {})
        self.expected = dict(expected or {})
        """segments expected of each document before any is segmented (``ingest.
        expected_segments``: pages or bytes times a measured rate), instead of a flat prior"""
        self.stages = ("format", "segment", "embed", "index") if dense == "now" else (
            "format", "segment", "index")
        self.counted = "embed" if dense == "now" else "index"
        self.verb = "embedded" if dense == "now" else "indexed"
        self.seconds = {s: PRIOR_S_PER_UNIT[s] * PRIOR_WEIGHT for s in self.stages}
        self.units = dict.fromkeys(self.stages, PRIOR_WEIGHT)
        self.open: dict[str, _Doc] = {}
        """documents reported and not done yet"""
        self.seen: set[str] = set()
        self.docs_total = 0
        self.docs_done = 0
        self.segments_done = 0.0
        self.finished_segments = 0.0
        """segments counted (embedded or indexed) of the documents done"""
        self.known = [0, 0, 0, 0]
        """segments and documents whose count is known; the same for those with a size, bytes"""
        self.unseen_sized = len(self.sizes)
        self.unseen_bytes = sum(self.sizes.values())
        self.finalized = 0.0
        self.fraction = 0.0
        self.start: float | None = None
        self.last: float | None = None
        self.current: tuple[str, str, float] = ("", "", 0.0)
        """the (document, stage) of the last event, and when it began"""

    def cost(self, stage: str) -> float:
        """Seconds per unit of ``stage``: what was measured, with the prior as one unit."""
        return self.seconds[stage] / self.units[stage]

    def update(self, stage: str, doc_id: str, done: int, total: int, now: float) -> Snapshot:
        """One ingest event at time ``now`` (seconds, any monotonic origin)."""
        self.start = now if self.start is None else self.start
        if self.current[:2] != (doc_id, stage):
            self.current = (doc_id, stage, now)
        elapsed = now - (self.last if self.last is not None else now)
        self.last = now
        work = self._record(stage, doc_id, done, total, elapsed)
        left = self.work_left()
        if left <= 0:
            self.fraction = 1.0
        else:
            if work > 0:
                self.fraction += (1.0 - self.fraction) * work / (work + left)
            # never behind the counter the text shows ("349/349 embedded" is not a third done),
            # less the share of the run the finalize stage takes after the last segment
            total_segments = self.segments_total()[0]
            if total_segments and self.start is not None:
                finalize = (1.0 - self.finalized) * self.finalize_cost()
                run = max(now - self.start + left, 1e-9)
                floor = self.segments_done / total_segments * (1.0 - min(1.0, finalize / run))
                self.fraction = max(self.fraction, min(COUNTER_CAP, floor))
        return self._snapshot(stage, doc_id, now, left)

    def _record(self, stage: str, doc_id: str, done: int, total: int, elapsed: float) -> float:
        """Update counts and measured costs; the work (in seconds) this event completed."""
        if stage == "finalize":
            step = done / total if total else 1.0
            work = max(0.0, step - self.finalized) * self.finalize_cost()
            self.finalized = max(self.finalized, step)
            return work
        if stage == "done":
            self.docs_total = max(self.docs_total, total)
            if doc_id:
                doc = self._doc(doc_id)
                self.open.pop(doc_id, None)
                self.docs_done += 1
                self.finished_segments += doc.done.get(self.counted, 0.0)
                self.seconds["index"] += elapsed  # its record and Markdown copy, after the points
            return 0.0
        if stage not in self.stages or not doc_id:
            return 0.0
        doc = self._doc(doc_id)
        if stage in PER_SEGMENT and total and doc.segments is None:
            doc.segments = total
            size = self.sizes.get(doc_id, 0)
            self.known = [a + b for a, b in zip(
                self.known, (total, 1, total if size else 0, size), strict=True)]
        units = max(0.0, done - doc.done.get(stage, 0.0))
        doc.done[stage] = doc.done.get(stage, 0.0) + units
        if stage == self.counted:
            self.segments_done += units
        self.seconds[stage] += elapsed
        self.units[stage] += units
        return units * self.cost(stage)

    def _doc(self, doc_id: str) -> _Doc:
        if doc_id not in self.seen:
            self.seen.add(doc_id)
            self.open[doc_id] = _Doc()
            if doc_id in self.sizes:
                self.unseen_sized -= 1
                self.unseen_bytes -= self.sizes[doc_id]
        return self.open.get(doc_id) or _Doc()

    def finalize_cost(self) -> float:
        fixed, per_segment = FINALIZE_S
        return fixed + per_segment * (self.existing_segments + self.segments_total()[0])

    def _estimate(self, doc_id: str) -> float:
        """Segments of a document not segmented yet: its size times the segments per byte of
        those segmented so far, or their mean without sizes (one large file among small ones
        would otherwise be guessed as small)."""
        segments, docs, sized_segments, sized_bytes = self.known
        if sized_bytes and doc_id in self.sizes:
            return self.sizes[doc_id] * sized_segments / sized_bytes
        if not docs and doc_id in self.expected:
            return self.expected[doc_id]
        return segments / docs if docs else PRIOR_SEGMENTS_PER_DOC

    def _unseen(self) -> tuple[int, float]:
        """Documents not reported yet, and their segments (estimated)."""
        unnamed = max(0, self.docs_total - len(self.seen) - self.unseen_sized)
        segments, docs, sized_segments, sized_bytes = self.known
        per_doc = segments / docs if docs else PRIOR_SEGMENTS_PER_DOC
        if sized_bytes:
            by_size = self.unseen_bytes * sized_segments / sized_bytes
        elif not docs and self.expected:  # nothing segmented yet: pages and bytes say how much
            by_size = sum(self.expected.get(d, per_doc) for d in self.sizes if d not in self.seen)
        else:
            by_size = self.unseen_sized * per_doc
        return self.unseen_sized + unnamed, by_size + unnamed * per_doc

    def _open_segments(self) -> list[tuple[_Doc, float]]:
        return [(doc, doc.segments if doc.segments is not None else self._estimate(doc_id))
                for doc_id, doc in self.open.items()]

    def segments_total(self) -> tuple[int, bool]:
        """Segments of this run (an estimate while documents are not segmented) and whether
        the count is exact.  A file that is done (written, unchanged, failed) counts the
        segments it got through."""
        unseen, unseen_segments = self._unseen()
        total = self.finished_segments + unseen_segments + sum(
            n for _, n in self._open_segments())
        exact = not unseen and all(doc.segments is not None for doc in self.open.values())
        return round(total), exact

    def work_left(self) -> float:
        """Seconds of work left, by the costs measured so far."""
        open_docs = self._open_segments()
        left = sum(max(0.0, (1.0 if stage in PER_DOC else n) - doc.done.get(stage, 0.0))
                   * self.cost(stage) for doc, n in open_docs for stage in self.stages)
        unseen, unseen_segments = self._unseen()
        left += sum(self.cost(stage) * (unseen if stage in PER_DOC else unseen_segments)
                    for stage in self.stages)
        if open_docs or unseen or self.known[1]:
            left += (1.0 - self.finalized) * self.finalize_cost()
        return left

    def _snapshot(self, stage: str, doc_id: str, now: float, left: float) -> Snapshot:
        segments_done = round(self.segments_done)
        segments_total, exact = self.segments_total()
        elapsed = now - self.start if self.start is not None else 0.0
        return Snapshot(
            fraction=self.fraction, stage=stage, doc_id=doc_id, docs_done=self.docs_done,
            docs_total=max(self.docs_total, len(self.seen)), segments_done=segments_done,
            segments_total=max(segments_total, segments_done), segments_exact=exact,
            segment_verb=self.verb, eta_s=left if segments_done else None,
            rate=segments_done / elapsed if elapsed > 0 else 0.0, stage_s=now - self.current[2])
