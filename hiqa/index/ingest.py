"""Ingest: files -> Markdown -> segments -> vectors -> points, and the registry commit.

Consistency rules (the store is the source of truth, the registry says what is visible):

1. before a document's points are written, its ``doc_version`` key is journaled
   (``Registry.journal``), so whatever a crash leaves behind is known to be HiQA's own;
2. the points are written, then the registry names the new version (batched commits, every
   ``COMMIT_EVERY_S``), and only then are the document's other versions deleted: the document
   is never missing, and routes show only registered versions, so nothing half-written or stale
   is ever visible;
3. the next ingest re-reads the registry under the ingest lock and sweeps what is neither
   registered nor current: journaled leftovers and old versions of registered documents.  Points
   nobody accounts for (another registry copy, a folder swapped under us) are not deleted on
   HiQA's own authority when they are most of the store or the registry is empty: the sweep stops
   and points to ``hiqa repair``.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hiqa.augment import SEGMENT_FORMAT
from hiqa.errors import DocumentError, HiqaError, IngestBusyError, ParameterError, StorageError
from hiqa.faults import checkpoint
from hiqa.formats.fidelity import fidelity
from hiqa.index.prepare import Job, Prepared, Preparer
from hiqa.index.registry import StagedFiles, StoredVersions
from hiqa.index.store import payload_key, version_key
from hiqa.keywords.rules import Identities
from hiqa.model import Document

if TYPE_CHECKING:
    from hiqa.collection import Collection

COMMIT_EVERY_S = 5.0
DENSE_MODES = ("now", "later")
"""``now``: ingest embeds each document before writing it; ``later``: documents are written
without dense vectors, searchable by the lexical and keyword routes at once, and ``fill_dense``
(``hiqa embed``, the app's background worker) adds the vectors."""

Progress = Callable[[str, str, int, int], None]
"""progress(stage, doc_id, done, total).  Per document: format and segment (0/1, 1/1); embed
(segments: 0/n, then after every batch; ``dense="now"`` only); index (segments, per 256
points).  Per file, whatever its outcome: done (files done of the files found; 0/files, without
a ``doc_id``, at the start).  Once at the end, when anything was written: finalize.
``hiqa.index.progress`` turns these into one bar with an ETA."""


@dataclass(frozen=True)
class IngestResult:
    """One row of the ingest summary."""

    doc_id: str
    status: str  # added | updated | unchanged | skipped | failed
    title: str = ""
    pages: int = 0
    sections: int = 0
    segments: int = 0
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()
    error: str = ""
    structure: str = ""  # the fidelity report's summary line (``formats.fidelity``)


# ---------------------------------------------------------------------- files
def titled_version(content_hash: str, title: str) -> str:
    """The version of a document whose title the user corrected: content and title together."""
    return hashlib.sha256(f"{content_hash}\x1f{title}".encode()).hexdigest()


def file_hash(path: Path) -> str:
    """SHA-256 of a regular file; anything else raises ``DocumentError``.

    Opened non-blocking and checked with ``fstat`` on the open descriptor: a FIFO named
    ``x.md`` would otherwise block the read forever while ingest holds the collection's lock,
    and a device or socket is not a document either.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise DocumentError(str(path), f"not a regular file ({_file_kind(mode)}); only "
                                "regular files are indexed: copy its content into a file")
        os.set_blocking(fd, True)
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISDIR, "a directory"))
    return next((name for test, name in kinds if test(mode)), "not a plain file")


def safe_doc_name(doc_id: str) -> str:
    """A file name for ``doc_id`` that cannot escape its folder."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id).strip("._") or "document"
    return cleaned[:120] + "-" + hashlib.sha1(doc_id.encode()).hexdigest()[:8]


def expand(paths: Iterable[str | os.PathLike[str]],
           root: str | os.PathLike[str] | None) -> Iterator[tuple[Path, str]]:
    """``(file, doc_id)`` for every supported file under ``paths``.

    ``doc_id`` is the path relative to ``root``; without one, relative to the folder that holds
    all the inputs (a folder given alone is its own root), so ``a/readme.md`` and
    ``b/readme.md`` ingested together stay two documents.
    """
    from hiqa.formats import SUPPORTED_EXTENSIONS

    inputs = [Path(p) for p in paths]
    if root is not None:
        base = Path(root)
    elif len(inputs) == 1:
        base = inputs[0] if inputs[0].is_dir() else inputs[0].parent
    else:
        parents = [str((p if p.is_dir() else p.parent).absolute()) for p in inputs]
        base = Path(os.path.commonpath(parents)) if parents else Path(".")
    for p in inputs:
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix.lower() in SUPPORTED_EXTENSIONS and not any(
                        part.startswith(".") for part in f.relative_to(p).parts):
                    yield f, _relative_id(f, base)
        else:
            yield p, _relative_id(p, base)


def file_sizes(paths: Iterable[str | os.PathLike[str]],
               root: str | os.PathLike[str] | None = None) -> dict[str, int]:
    """``{doc_id: bytes}`` of the files ``ingest(paths, root=root)`` reads: the progress bar
    estimates the segments of documents not reached yet from their size."""
    sizes = {}
    for path, doc_id in expand(paths, root):
        with contextlib.suppress(OSError):
            sizes[doc_id] = path.stat().st_size
    return sizes


def source_root(doc_id: str, source: str) -> str | None:
    """The folder a document was first ingested from: its recorded source path without its id
    (the id is the path relative to that folder), so that ingesting the source again under it
    gives the same id; None when the source does not end with the id."""
    source = Path(source).as_posix()
    return source[: len(source) - len(doc_id)] if source.endswith(doc_id) else None


def _relative_id(path: Path, base: Path) -> str:
    for candidate, b in ((path, base), (path.absolute(), base.absolute())):
        with contextlib.suppress(ValueError):
            return candidate.relative_to(b).as_posix()
    return path.name


# ---------------------------------------------------------------------- locking
@contextlib.contextmanager
def ingest_lock(col: Collection, *, wait_s: float = 0.0, holder: str = "ingest",
                reread: bool = True) -> Iterator[int]:
    """One writer per collection; the registry is re-read once the lock is held.

    A dense-vector writer (``holder="embed"``, ``fill_dense``) holds it for milliseconds per
    batch, so anyone finding it there waits; an ingest held by another ingest fails at once
    unless ``wait_s`` says to wait.
    """
    col.dir.mkdir(parents=True, exist_ok=True)
    with open(col.dir / "ingest.lock", "a+") as fh:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                fh.seek(0)
                who = fh.read().strip()
                waited = time.monotonic() - deadline + wait_s
                # a vector writer holds it for milliseconds; a holder that has not written its
                # name yet may be one
                brief = (who.startswith("embed") and waited < wait_s + 30) or (
                    not who and waited < wait_s + 1)
                who = who or "another process"
                if not brief and time.monotonic() >= deadline:
                    raise IngestBusyError(
                        f"another ingest into collection {col.name!r} is running ({who}); wait "
                        "for it to finish and try again"
                    ) from None
                time.sleep(0.05)
        fh.seek(0)
        fh.truncate()
        fh.write(f"{holder}, pid {os.getpid()}")
        fh.flush()
        try:
            if reread:
                col.registry.reload()  # never work from a stale copy
            yield fh.fileno()  # a helper process given it holds the lock while it lives
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ---------------------------------------------------------------------- the pipeline
def ingest(col: Collection, paths: Iterable[str | os.PathLike[str]], *,
           progress: Progress | None = None, root: str | os.PathLike[str] | None = None,
           force: bool = False, prepare: Callable[[Document], Document] | None = None,
           dense: str = "now") -> list[IngestResult]:
    """Add or update documents (see ``Collection.ingest``)."""
    if dense not in DENSE_MODES:
        raise ParameterError(f"dense must be one of {', '.join(DENSE_MODES)}, not {dense!r}")
    progress = progress or (lambda *a: None)
    files = list(expand(paths, root))
    results: list[IngestResult] = []
    with ingest_lock(col) as lock:
        sweep_orphans(col)
        docs = col.registry.documents
        plan = _plan(files, docs, force)
        jobs = [job for job in plan if isinstance(job, Job)]
        pending: dict[str, dict[str, Any]] = {}
        replaced: list[tuple[str, str]] = []
        last_commit = time.monotonic()
        staged = StagedFiles()  # the Markdown copies and figures of the pending documents
        # what tells each document apart, counted over the collection as documents come in
        # (the final counts are the registry's: Collection.refresh_identity in _finalize)
        identities = Identities(col.identity_candidates())
        progress("done", "", 0, len(files))
        with Preparer(col.strategy, len(jobs), hook=prepare, lock=lock) as preparer:
            prepared = preparer.run(jobs)
            for job in _reported(plan, progress):
                if not isinstance(job, Job):
                    results.append(job)
                    continue
                t0 = time.perf_counter()
                progress("format", job.doc_id, 0, 1)
                ready = next(prepared)
                progress("format", job.doc_id, 1, 1)
                staged_before = len(staged)
                try:
                    if ready.error:
                        raise DocumentError(str(job.path), ready.error)
                    record, result = _write_one(col, job, ready, progress, identities,
                                                embed=dense == "now",
                                                files=staged)
                except HiqaError as exc:
                    staged.discard(staged_before)
                    error = exc.reason if isinstance(exc, DocumentError) else str(exc)
                    results.append(IngestResult(job.doc_id, "failed", error=error,
                                                seconds=time.perf_counter() - t0))
                    continue
                old = docs.get(job.doc_id)
                warnings = list(result.warnings)
                if old and Path(old.get("source", "")).absolute() != job.path.absolute():
                    warnings.insert(0, f"replaces the document of the same id from "
                                       f"{old['source']}")
                pending[job.doc_id] = record
                replaced.append((job.doc_id, version_key(job.doc_id, job.version)))
                results.append(replace(result, status="updated" if old else "added",
                                       warnings=tuple(warnings),
                                       seconds=time.perf_counter() - t0))
                if time.monotonic() - last_commit > COMMIT_EVERY_S:
                    _commit(col, pending, replaced, staged)
                    last_commit = time.monotonic()
            if pending:
                _commit(col, pending, replaced, staged)
            # finalize when this run registered a document, even when the last document's
            # timed commit left nothing pending
            if any(r.status in ("added", "updated") for r in results):
                checkpoint("ingest:before-derived")
                progress("finalize", "", 0, 1)
                _finalize(col, preparer)
                progress("finalize", "", 1, 1)
    return results


def _finalize(col: Collection, preparer: Preparer) -> None:
    """The committed generation's lexical index and the store's vector index (``optimize``).

    With a helper process, the helper builds and saves the lexical index from the term counts
    it kept while the store builds the last of its segments here (the others were built as
    they filled, ``_write_one``): ``optimize`` holds this process and Python's GIL.
    """
    from hiqa.retrieve.routes import derived

    col.registry.refresh()
    col.refresh_identity()
    asked = preparer.start_index(col.registry.version_segments(),
                                 col.dir / "derived" / "bm25", col.registry.generation)
    checkpoint("ingest:mid-finalize")
    col.store.optimize()
    if asked and preparer.index_saved():
        derived(col)  # loads what the helper saved
    else:
        derived(col, force=True, fresh=preparer.terms())


def _plan(files: list[tuple[Path, str]], docs: dict[str, dict[str, Any]],
          force: bool) -> list[Job | IngestResult]:
    """Each file's job, or its result when it needs none: failed (unreadable, or a second file
    of the same id), skipped (same content as another document) or unchanged."""
    plan: list[Job | IngestResult] = []
    seen = {m.get("file_hash", m["hash"]): d for d, m in docs.items()}
    in_this_run: dict[str, Path] = {}
    for path, doc_id in files:
        if doc_id in in_this_run:
            plan.append(IngestResult(doc_id, "failed", error=(
                f"{path} and {in_this_run[doc_id]} would both be document {doc_id!r}; "
                "ingest them from the folder that holds both (or pass --root) so their "
                "ids differ")))
            continue
        in_this_run[doc_id] = path
        try:
            version = content = file_hash(path)
        except DocumentError as exc:
            plan.append(IngestResult(doc_id, "failed", error=exc.reason))
            continue
        except OSError as exc:
            plan.append(IngestResult(doc_id, "failed", error=(
                f"cannot read: {exc.strerror or exc}")))
            continue
        if seen.get(content, doc_id) != doc_id:
            plan.append(IngestResult(doc_id, "skipped", error=(
                f"duplicate of {seen[content]} (same content); not indexed twice")))
            continue
        seen[content] = doc_id
        old = docs.get(doc_id)
        title = (old or {}).get("title_override")
        if title:  # a corrected title is part of the version: new paths, new points
            version = titled_version(content, title)
        if old and old.get("hash") == version and not force:
            plan.append(IngestResult(doc_id, "unchanged", title=old.get("title", ""),
                                     pages=old.get("pages", 0),
                                     sections=old.get("sections", 0),
                                     segments=old.get("segments", 0)))
            continue
        plan.append(Job(path, doc_id, version, title, content))
    return plan


def _reported(plan: list[Job | IngestResult], progress: Progress) -> Iterator[Job | IngestResult]:
    """Each file's job or result in turn; when the loop is through with one, whatever its
    outcome (added, unchanged, failed), ``progress("done", doc_id, files done, files)``."""
    for i, job in enumerate(plan, 1):
        yield job
        progress("done", job.doc_id, i, len(plan))


def _write_one(col: Collection, job: Job, ready: Prepared, progress: Progress,
               identities: Identities, *,
               embed: bool, files: StagedFiles) -> tuple[dict[str, Any], IngestResult]:
    """Embed and write one prepared document; its Markdown copy and figures are staged in
    ``files`` (published by the commit that registers it)."""
    from hiqa.formats import save_figures

    doc_id, version, doc = job.doc_id, job.version, ready.doc
    assert doc is not None
    progress("segment", doc_id, 0, 1)
    identities.put(doc_id, ready.keyword_candidates)
    keywords = col.keyword_sources_for(doc_id, [k.text for k in identities.distinct(doc_id)])
    merged = col.merge_keywords(keywords)
    segments = ready.segments
    progress("segment", doc_id, 1, 1)
    if embed:
        progress("embed", doc_id, 0, len(segments))
        vectors = np.asarray(col.embedder.embed_passages(
            [s.augmented_text for s in segments],
            progress=lambda done, total: progress("embed", doc_id, done, total)), dtype=np.float32)
    key = version_key(doc_id, version)
    progress("index", doc_id, 0, len(segments))
    if embed and col.store.build_due():
        # the documents before this one fill a segment: build it now, so the store never
        # builds one large segment (``store.edge.SEGMENT_POINTS``); the last one is built by
        # ``_finalize``, beside the helper's lexical index
        col.store.optimize()
    checkpoint("ingest:before-upsert")
    col.registry.journal("write", key)
    registered = col.registry.documents.get(doc_id)
    try:
        ids = [s.segment_id for s in segments]
        payloads = [col.payload(s, version, merged if i == 0 else None)
                    for i, s in enumerate(segments)]
        step = 256
        for i in range(0, len(ids), step):
            if i:
                checkpoint("ingest:mid-upsert")
            col.store.upsert(ids[i:i + step], payloads[i:i + step],
                             {"hca": vectors[i:i + step]} if embed else {})
            progress("index", doc_id, min(i + step, len(ids)), len(ids))
    except BaseException:
        with contextlib.suppress(Exception):  # leave no half version behind when we can
            col.store.delete_document(
                doc_id, keep=version_key(doc_id, registered["hash"]) if registered else None)
        raise
    checkpoint("ingest:after-upsert")
    md_path = col.settings.markdown_dir / col.name / (safe_doc_name(doc_id) + ".md")
    files.write(md_path, doc.markdown)
    figure_dir = col.figure_dir(doc_id)
    shutil.rmtree(figure_dir, ignore_errors=True)
    warnings = [*doc.warnings, *save_figures(
        doc, lambda name, png: files.write(figure_dir / Path(name).name, png))]
    n_sections = sum(1 for s in doc.sections if s.level > 0)
    report = fidelity(doc)
    warnings += [w for w in report.warnings if w not in warnings]
    record = {
        "title": doc.title, "title_source": doc.metadata.get("title_source", ""),
        "source": str(job.path), "hash": version, "file_hash": job.file_hash,
        "format": doc.format, "pages": doc.page_count, "segment_format": SEGMENT_FORMAT,
        "sections": n_sections, "structure": report.as_dict(),
        "segments": len(segments), "keywords": keywords, "warnings": warnings,
        "identity": list(ready.keyword_candidates),
        "markdown": str(md_path), "ingested_at": time.time(),
        "dense_pending": 0 if embed else len(segments),
    }
    if job.title:
        record["title_override"] = job.title
    checkpoint("ingest:after-markdown")
    result = IngestResult(doc_id, "added", title=doc.title, pages=doc.page_count,
                          sections=n_sections, segments=len(segments),
                          warnings=tuple(warnings), structure=report.summary)
    return record, result


def _commit(col: Collection, pending: dict[str, dict[str, Any]],
            replaced: list[tuple[str, str]], files: StagedFiles) -> None:
    """Put the pending documents' Markdown copies in place (durable), register the documents,
    then drop the versions they replace.

    Registry writes are batched (``COMMIT_EVERY_S``): rewriting the whole registry after every
    document made a 2,000-document ingest quadratic.
    """
    files.publish()
    checkpoint("ingest:before-commit")
    col.registry.update(lambda d: d["documents"].update(pending))
    checkpoint("ingest:after-commit")
    for i, (doc_id, keep) in enumerate(replaced):
        if i:
            checkpoint("ingest:mid-delete-old")
        col.store.delete_document(doc_id, keep=keep)
    pending.clear()
    replaced.clear()
    col.registry.clear_journal()


# ---------------------------------------------------------------------- orphans and repair
@dataclass(frozen=True)
class Orphans:
    """Points the registry does not name: HiQA's leftovers and points nobody accounts for."""

    leftovers: tuple[str, ...]
    unknown: tuple[str, ...]
    total: int
    unknown_docs: tuple[str, ...] = ()


def find_orphans(col: Collection) -> Orphans:
    registered = set(col.registry.version_keys())
    docs = set(col.registry.documents)
    journaled = col.registry.journaled()
    leftovers, unknown, unknown_docs, total = [], [], set(), 0
    for rec in col.store.scroll(fields=["doc_id", "version"]):
        total += 1
        doc_id = str(rec.payload.get("doc_id", ""))
        key = payload_key(rec.payload)
        if key in registered:
            continue
        if key in journaled or doc_id in docs:
            leftovers.append(rec.id)
        else:
            unknown.append(rec.id)
            unknown_docs.add(doc_id)
    return Orphans(tuple(leftovers), tuple(unknown), total, tuple(sorted(unknown_docs)))


def sweep_orphans(col: Collection) -> int:
    """Delete HiQA's own leftovers; refuse a sweep that looks like a lost registry.

    Skipped (one count instead of a scroll of every point) when nothing was journaled and the
    store holds exactly as many points as the registered versions have segments.
    """
    if not col.registry.journaled() and col.store.count() == col.registry.segment_count():
        return 0
    found = find_orphans(col)
    if found.unknown and (not col.registry.documents or 2 * len(found.unknown) > found.total):
        raise StorageError(
            f"collection {col.name!r}: {len(found.unknown):,} of {found.total:,} stored points "
            f"belong to {len(found.unknown_docs):,} documents its registry does not list "
            f"(e.g. {', '.join(found.unknown_docs[:3])}). Nothing was deleted: the registry may "
            f"be an old copy. See `hiqa repair -c {col.name} --dry-run`, then run "
            f"`hiqa repair -c {col.name}` to re-register or drop them."
        )
    stale = [*found.leftovers, *found.unknown]
    if stale:
        col.store.delete(stale)
    col.registry.clear_journal()
    return len(stale)


@dataclass
class RepairPlan:
    """What ``hiqa repair`` does (or, with ``--dry-run``, would do)."""

    create_store: bool = False
    drop_points: int = 0
    adopt: list[str] = field(default_factory=list)
    """documents found only in the store, registered again from their points' payloads"""
    reindex: list[str] = field(default_factory=list)
    """registered documents whose points are missing or incomplete, re-read from their source"""
    forget: list[str] = field(default_factory=list)
    """registered documents with missing points and no source file left"""

    def lines(self) -> list[str]:
        out = []
        if self.create_store:
            out.append("create the missing store")
        if self.drop_points:
            out.append(f"delete {self.drop_points:,} points of unregistered versions")
        for label, docs in (("register again from the store", self.adopt),
                            ("re-index from the source file", self.reindex),
                            ("forget (points missing, source file gone)", self.forget)):
            out += [f"{label}: {d}" for d in docs]
        return out or ["nothing to repair"]


def repair(col: Collection, *, dry_run: bool = False,
           progress: Progress | None = None) -> RepairPlan:
    """Make the registry and the store agree again, losing as little as possible.

    Documents found only in the store are registered again from their payloads (the latest
    version of each when several are stored); registered documents whose points are missing or
    incomplete are re-indexed from their source file, or forgotten when it is gone; points of
    any other version are deleted.
    """
    from hiqa.retrieve.routes import derived

    plan = RepairPlan(create_store=not col.store.exists())
    if plan.create_store and not dry_run:
        col.store.create(int(col.meta["dim"]))
    with ingest_lock(col):
        docs = col.registry.documents
        stored = StoredVersions([] if plan.create_store else col.store.scroll())
        counts = stored.counts
        adopted = stored.records(stored.documents() - set(docs), warnings=(
            "registered again by `hiqa repair` from the stored points",))
        plan.adopt = sorted(adopted)
        for doc_id, record in sorted(docs.items()):
            if counts.get(version_key(doc_id, record["hash"]), 0) == int(record.get("segments", -1)):
                continue
            if Path(record.get("source", "")).is_file():
                plan.reindex.append(doc_id)
            else:
                plan.forget.append(doc_id)
        keep = {version_key(d, m["hash"]) for d, m in {**docs, **adopted}.items()}
        plan.drop_points = sum(n for key, n in counts.items() if key not in keep)
        if dry_run:
            return plan
        if adopted or plan.forget:
            def change(d: dict[str, Any]) -> None:
                d["documents"].update(adopted)
                for doc_id in plan.forget:
                    d["documents"].pop(doc_id, None)
            col.registry.update(change)
        visible = set(col.registry.version_keys())
        stale = [r.id for r in ([] if plan.create_store else col.store.scroll(
            fields=["doc_id", "version"])) if payload_key(r.payload) not in visible]
        col.store.delete(stale)
        col.registry.clear_journal()
    for doc_id in plan.reindex:
        source = docs[doc_id]["source"]
        ingest(col, [source], root=source_root(doc_id, source) or None, progress=progress,
               force=True)
    derived(col, force=True)
    return plan


# ---------------------------------------------------------------------- dense vectors later
DenseProgress = Callable[[int, int], None]
"""progress(done, total): dense vectors written of those pending when filling started."""


def dense_status(col: Collection) -> tuple[int, int]:
    """(segments with a dense vector, segments) of the registered documents, from the registry."""
    total = col.registry.segment_count()
    pending = sum(int(m.get("dense_pending", 0)) for m in col.registry.documents.values())
    return total - pending, total


def fill_dense(col: Collection, *, progress: DenseProgress | None = None, batch: int = 64,
               embedder: Any = None, stop: Callable[[], bool] | None = None) -> int:
    """Embed and write every pending ``hca`` vector of registered documents; returns how many.

    Resumable by construction: what is pending is read from the store (points without the
    vector), vectors are written batch by batch, so a crash, Ctrl-C or ``kill -9`` loses at most
    the batch being embedded.  Writes take the ingest lock for milliseconds, and only points that
    still exist are written (an ingest may have replaced a version meanwhile).  ``stop`` is
    polled between batches (the app's worker); ``embedder`` lets a background thread use its own
    model instance.
    """
    embedder = embedder or col.embedder
    col.registry.refresh()
    visible = set(col.registry.version_keys())
    total = col.store.count_missing("hca")
    done, offset = 0, None
    pending_by_doc: dict[str, int] = {}
    last_save = time.monotonic()
    if progress:
        progress(0, total)
    while True:
        if stop is not None and stop():
            break
        recs, offset = col.store.missing("hca", limit=batch, after=offset,
                                         fields=["augmented_text", "doc_id", "version"])
        recs = [r for r in recs if payload_key(r.payload) in visible]
        if recs:
            base = done
            vectors = np.asarray(embedder.embed_passages(
                [str(r.payload.get("augmented_text", "")) for r in recs],
                progress=(lambda d, _t, base=base: progress(base + d, total))
                if progress else None),
                dtype=np.float32)
            checkpoint("embed:before-write")
            with ingest_lock(col, wait_s=600, holder="embed", reread=False):
                alive = {r.id for r in col.store.retrieve([r.id for r in recs], fields=False)}
                rows = [i for i, r in enumerate(recs) if r.id in alive]
                if rows:
                    col.store.set_vectors("hca", [recs[i].id for i in rows], vectors[rows])
            for i in rows:
                doc_id = str(recs[i].payload.get("doc_id", ""))
                pending_by_doc[doc_id] = pending_by_doc.get(doc_id, 0) + 1
            done += len(rows)
            if progress:
                progress(done, total)
            checkpoint("embed:mid-write")
        if offset is None or time.monotonic() - last_save > COMMIT_EVERY_S:
            _save_pending(col, pending_by_doc)
            last_save = time.monotonic()
        if offset is None:
            break
    _save_pending(col, pending_by_doc)
    if done:
        col.store.optimize()
    return done


def _save_pending(col: Collection, written: dict[str, int]) -> None:
    """Lower each document's ``dense_pending`` in the registry by the vectors just written."""
    if not written:
        return

    def change(d: dict[str, Any]) -> None:
        for doc_id, n in written.items():
            record = d["documents"].get(doc_id)
            if record is not None:
                record["dense_pending"] = max(0, int(record.get("dense_pending", 0)) - n)

    col.registry.update(change, new_generation=False)
    written.clear()
