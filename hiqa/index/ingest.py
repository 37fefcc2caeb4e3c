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
import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from hiqa.augment import SEGMENT_FORMAT
from hiqa.errors import DocumentError, HiqaError, ParameterError
from hiqa.faults import checkpoint
from hiqa.files import check_free_space
from hiqa.formats import SUPPORTED_EXTENSIONS, save_figures
from hiqa.formats.fidelity import fidelity
from hiqa.index.derived import derived
from hiqa.index.keywords import identity_candidates, refresh_identity, sources_for
from hiqa.index.lock import ingest_lock
from hiqa.index.orphans import ADOPTED, sweep_orphans
from hiqa.index.parts import Parts
from hiqa.index.payload import to_payload, version_key
from hiqa.index.prepare import Job, Prepared, Preparer, next_ticking
from hiqa.index.registry import StagedFiles
from hiqa.keywords.records import merged
from hiqa.keywords.rules import Identities
from hiqa.model import Document, page_labels_of

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


def expand(paths: Iterable[str | os.PathLike[str]], root: str | os.PathLike[str] | None,
           refused: list[IngestResult] | None = None) -> Iterator[tuple[Path, str]]:
    """``(file, doc_id)`` for every supported file under ``paths``.

    ``doc_id`` is the path relative to ``root``; without one, relative to the folder that holds
    all the inputs (a folder given alone is its own root), so ``a/readme.md`` and
    ``b/readme.md`` ingested together stay two documents.  A link found in a folder is followed
    only when its target lies inside that folder: a link to a system file must not be indexed
    because it sits among the documents (folders behind links are never entered).  Each link
    left out is appended to ``refused`` as a skipped result naming its target.
    """
    inputs = [Path(p).absolute() for p in paths]  # sources are recorded absolute: `hiqa repair`
    # and a title correction find them again from any working directory
    if root is not None:
        base = Path(root).absolute()
    elif len(inputs) == 1:
        base = inputs[0] if inputs[0].is_dir() else inputs[0].parent
    else:
        parents = [str((p if p.is_dir() else p.parent).absolute()) for p in inputs]
        base = Path(os.path.commonpath(parents)) if parents else Path(".")
    for p in inputs:
        if p.is_dir():
            inside = p.resolve()
            for f in sorted(p.rglob("*")):
                if not (f.is_file() and f.suffix.lower() in SUPPORTED_EXTENSIONS) or any(
                        part.startswith(".") for part in f.relative_to(p).parts):
                    continue
                if f.is_symlink() and not f.resolve().is_relative_to(inside):
                    if refused is not None:
                        refused.append(IngestResult(_relative_id(f, base), "skipped", error=(
                            f"a link to {f.resolve()}, outside the folder being ingested "
                            f"({p}); links are followed only inside it")))
                    continue
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


STORED_PER_BYTE = {".pdf": 2}
"""Bytes the data dir grows by per byte of input (measured: 80 man pages of 0.67 MB made a
22.9 MB collection, 20 Django release notes of 0.94 MB 14.5 MB, 11 PostgreSQL PDFs of 4.9 MB
4.1 MB); a PDF's file holds far more than its text.  Other formats: ``STORED_PER_TEXT_BYTE``."""
STORED_PER_TEXT_BYTE = 40


def space_needed(files: Iterable[tuple[Path, str]]) -> int:
    """About what indexing ``files`` adds to the data dir (points, vectors, Markdown, the
    lexical index), rounded up: what ``check_free_space`` asks for before an ingest starts."""
    total = 0
    for path, _ in files:
        with contextlib.suppress(OSError):
            per = STORED_PER_BYTE.get(path.suffix.lower(), STORED_PER_TEXT_BYTE)
            total += per * path.stat().st_size
    return total


SEGMENTS_PER_PDF_PAGE = 5.0
"""Segments an ingest makes of a PDF page (the dev PDFs: 3.1 PostgreSQL, 5.1 Django release
notes, 6.2 man pages): the first estimate of a PDF's segments, before any is segmented."""
BYTES_PER_SEGMENT = 690
"""Bytes of Markdown, HTML or text per segment (the dev sets: 240 man pages, 690 Django, 810
PostgreSQL)."""


def expected_segments(paths: Iterable[str | os.PathLike[str]],
                      root: str | os.PathLike[str] | None = None) -> dict[str, float]:
    """``{doc_id: segments}`` expected of each file ``ingest(paths, root=root)`` reads, before
    any is segmented: a PDF's pages, or a file's bytes, times the rates measured above (an
    81-page PDF was first shown as "~10 segments")."""
    import pymupdf

    out = {}
    for path, doc_id in expand(paths, root):
        with contextlib.suppress(Exception):  # unreadable: the flat prior stands
            if path.suffix.lower() == ".pdf":
                with pymupdf.open(path) as doc:
                    out[doc_id] = SEGMENTS_PER_PDF_PAGE * doc.page_count
            else:
                out[doc_id] = max(1.0, path.stat().st_size / BYTES_PER_SEGMENT)
    return out


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


# ---------------------------------------------------------------------- the pipeline
def ingest(parts: Parts, paths: Iterable[str | os.PathLike[str]], *,
           progress: Progress | None = None, root: str | os.PathLike[str] | None = None,
           force: bool = False, prepare: Callable[[Document], Document] | None = None,
           dense: str = "now", replace_others: bool = False) -> list[IngestResult]:
    """Add or update documents (``Collection.ingest`` documents the arguments)."""
    if dense not in DENSE_MODES:
        raise ParameterError(f"dense must be one of {', '.join(DENSE_MODES)}, not {dense!r}")
    progress = progress or (lambda *a: None)
    results: list[IngestResult] = []
    files = list(expand(paths, root, refused=results))
    with ingest_lock(parts) as lock, parts.store.kept_open():
        adopted = set(sweep_orphans(parts))  # documents the registry had lost, listed again
        docs = parts.registry.documents
        plan = _plan(files, docs, force, replace_others)
        results += [IngestResult(d, "unchanged", title=docs[d].get("title", ""),
                                 segments=docs[d].get("segments", 0), warnings=(ADOPTED,))
                    for d in sorted(adopted - {job.doc_id for job in plan})]
        jobs = [job for job in plan if isinstance(job, Job)]
        # before anything is written, for the files that will be (unchanged ones need nothing)
        check_free_space(parts.settings.data_dir, space_needed((j.path, j.doc_id) for j in jobs),
                         f"indexing {len(jobs):,} files")
        pending: dict[str, dict[str, Any]] = {}
        replaced: list[tuple[str, str]] = []
        last_commit = time.monotonic()
        staged = StagedFiles()  # the Markdown copies and figures of the pending documents
        # what tells each document apart, counted over the collection as documents come in
        # (the final counts are the registry's: index.keywords.refresh_identity in _finalize)
        identities = Identities(identity_candidates(parts.registry))
        progress("done", "", 0, len(files))
        with Preparer(parts.strategy, len(jobs), hook=prepare, lock=lock) as preparer:
            prepared = preparer.run(jobs)
            for job in _reported(plan, progress):
                if not isinstance(job, Job):
                    results.append(replace(job, warnings=(ADOPTED, *job.warnings))
                                   if job.doc_id in adopted else job)
                    continue
                t0 = time.perf_counter()
                progress("format", job.doc_id, 0, 1)
                # a long PDF takes seconds: the same event each second keeps the line alive
                ready = next_ticking(prepared, partial(progress, "format", job.doc_id, 0, 1))
                progress("format", job.doc_id, 1, 1)
                staged_before = len(staged)
                try:
                    if ready.error:
                        raise DocumentError(str(job.path), ready.error)
                    record, result = _write_one(parts, job, ready, progress, identities,
                                                embed=dense == "now",
                                                files=staged)
                except HiqaError as exc:
                    staged.discard(staged_before)
                    error = exc.reason if isinstance(exc, DocumentError) else str(exc)
                    results.append(IngestResult(job.doc_id, "failed", error=error,
                                                seconds=time.perf_counter() - t0))
                    continue
                old = docs.get(job.doc_id)
                warnings = [*([ADOPTED] if job.doc_id in adopted else []), *result.warnings]
                if old and _other_source(old, job.path):
                    warnings.insert(0, _replaces(old["source"], parts.settings.data_dir))
                pending[job.doc_id] = record
                replaced.append((job.doc_id, version_key(job.doc_id, job.version)))
                results.append(replace(result, status="updated" if old else "added",
                                       warnings=tuple(warnings),
                                       seconds=time.perf_counter() - t0))
                if time.monotonic() - last_commit > COMMIT_EVERY_S:
                    _commit(parts, pending, replaced, staged)
                    last_commit = time.monotonic()
            if pending:
                _commit(parts, pending, replaced, staged)
            # finalize when this run registered a document, even when the last document's
            # timed commit left nothing pending
            if any(r.status in ("added", "updated") for r in results):
                checkpoint("ingest:before-derived")
                progress("finalize", "", 0, 1)
                _finalize(parts, preparer)
                progress("finalize", "", 1, 1)
    return results


def _finalize(parts: Parts, preparer: Preparer) -> None:
    """The committed generation's lexical index and the store's vector index (``optimize``).

    With a helper process, the helper builds and saves the lexical index from the term counts
    it kept while the store builds the last of its segments here (the others were built as
    they filled, ``_write_one``): ``optimize`` holds this process and Python's GIL.
    """
    parts.registry.refresh()
    refresh_identity(parts)
    asked = preparer.start_index(parts.registry.version_segments(),
                                 parts.lexical_dir, parts.registry.generation)
    checkpoint("ingest:mid-finalize")
    parts.store.optimize()
    if asked and preparer.index_saved():
        derived(parts)  # loads what the helper saved
    else:
        derived(parts, force=True, fresh=preparer.terms())


def _plan(files: list[tuple[Path, str]], docs: dict[str, dict[str, Any]],
          force: bool, replace_others: bool = False) -> list[Job | IngestResult]:
    """Each file's job, or its result when it needs none: failed (unreadable, a second file
    of the same id, or a file that would replace the document of another source file without
    ``replace_others``), skipped (same content as another document) or unchanged."""
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
        other = _other_source(docs.get(doc_id), path)
        if other and not replace_others:
            plan.append(IngestResult(doc_id, "failed", error=(
                f"the collection's document {doc_id!r} comes from another file, {other}; "
                "nothing was replaced. Ingest both from the folder that holds them (their ids "
                "then keep the folder), or replace it on purpose (--replace)")))
            continue
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
        # a record read back from the points (repair, a registry that had lost it) keeps the
        # 16 characters the points hold
        if old and str(old.get("hash", ""))[:16] == version[:16] and not force:
            plan.append(IngestResult(doc_id, "unchanged", title=old.get("title", ""),
                                     pages=old.get("pages", 0),
                                     sections=old.get("sections", 0),
                                     segments=old.get("segments", 0)))
            continue
        plan.append(Job(path, doc_id, version, title, content))
    return plan


def shown_warnings(warnings: list[str], path: Path, doc_id: str) -> list[str]:
    """A document's warnings as its reader sees them: the file as the document's name, not the
    path it was read from (an upload's is a folder on the server), each said once."""
    full = (str(path), str(path.absolute()))
    out: list[str] = []
    for w in warnings:
        for f in full:
            w = w.replace(f, doc_id)
        if w not in out:
            out.append(w)
    return out


def _replaces(source: str, data_dir: Path) -> str:
    """The warning for a document that replaces one of the same id read from another file:
    where that file was, unless it was an upload (a folder under the data dir, nobody's)."""
    inside = Path(source).is_absolute() and Path(source).is_relative_to(data_dir.absolute())
    return ("replaces the document of the same id, read before from another file"
            + ("" if inside else f" ({source})"))


def _other_source(record: dict[str, Any] | None, path: Path) -> str | None:
    """The registered source of ``record`` when it is another file than ``path`` (None when
    it is the same file, or there is no record).  A source recorded relative to an earlier
    working directory (before sources were absolute) counts as the same file when ``path``
    ends with it."""
    source = str((record or {}).get("source", ""))
    if not source:
        return None
    if Path(source).is_absolute():
        return None if Path(source) == path.absolute() else source
    return None if path.absolute().as_posix().endswith("/" + Path(source).as_posix()) else source


def _reported(plan: list[Job | IngestResult], progress: Progress) -> Iterator[Job | IngestResult]:
    """Each file's job or result in turn; when the loop is through with one, whatever its
    outcome (added, unchanged, failed), ``progress("done", doc_id, files done, files)``."""
    for i, job in enumerate(plan, 1):
        yield job
        progress("done", job.doc_id, i, len(plan))


def _write_one(parts: Parts, job: Job, ready: Prepared, progress: Progress,
               identities: Identities, *,
               embed: bool, files: StagedFiles) -> tuple[dict[str, Any], IngestResult]:
    """Embed and write one prepared document; its Markdown copy and figures are staged in
    ``files`` (published by the commit that registers it)."""
    doc_id, version, doc = job.doc_id, job.version, ready.doc
    assert doc is not None
    progress("segment", doc_id, 0, 1)
    identities.put(doc_id, ready.keyword_candidates)
    keywords = sources_for(parts, doc_id, [k.text for k in identities.distinct(doc_id)])
    meta = parts.registry.data  # read once per document, under the ingest lock
    head = {"keywords": merged(keywords), "embedder": meta["embedder"],
            "model_id": meta["model_id"], "segment_format": SEGMENT_FORMAT}
    segments = ready.segments
    progress("segment", doc_id, 1, 1)
    if embed:
        progress("embed", doc_id, 0, len(segments))
        vectors = np.asarray(parts.embedder.embed_passages(
            [s.augmented_text for s in segments],
            progress=lambda done, total: progress("embed", doc_id, done, total)), dtype=np.float32)
    key = version_key(doc_id, version)
    progress("index", doc_id, 0, len(segments))
    if embed and parts.store.build_due():
        # the documents before this one fill a segment: build it now, so the store never
        # builds one large segment (``store.edge.SEGMENT_POINTS``); the last one is built by
        # ``_finalize``, beside the helper's lexical index
        parts.store.optimize()
    checkpoint("ingest:before-upsert")
    parts.registry.journal("write", key)
    registered = parts.registry.documents.get(doc_id)
    try:
        ids = [s.segment_id for s in segments]
        payloads = [to_payload(s, version, head if i == 0 else None)
                    for i, s in enumerate(segments)]
        step = 256
        for i in range(0, len(ids), step):
            if i:
                checkpoint("ingest:mid-upsert")
            parts.store.upsert(ids[i:i + step], payloads[i:i + step],
                             {"hca": vectors[i:i + step]} if embed else {})
            progress("index", doc_id, min(i + step, len(ids)), len(ids))
    except BaseException:
        with contextlib.suppress(Exception):  # leave no half version behind when we can
            parts.store.delete_document(
                doc_id, keep=version_key(doc_id, registered["hash"]) if registered else None)
        raise
    checkpoint("ingest:after-upsert")
    md_path = parts.markdown_path(doc_id)
    files.write(md_path, doc.markdown)
    figure_dir = parts.figure_dir(doc_id)
    shutil.rmtree(figure_dir, ignore_errors=True)
    warnings = [*doc.warnings, *save_figures(
        doc, lambda name, png: files.write(figure_dir / Path(name).name, png))]
    n_sections = sum(1 for s in doc.sections if s.level > 0)
    report = fidelity(doc)
    warnings = shown_warnings([*warnings, *report.warnings], job.path, job.doc_id)
    record = {
        "title": doc.title, "title_source": doc.metadata.get("title_source", ""),
        "source": str(job.path), "hash": version, "file_hash": job.file_hash,
        "format": doc.format, "pages": doc.page_count, "segment_format": SEGMENT_FORMAT,
        "page_labels": list(page_labels_of(doc)),
        "sections": n_sections, "structure": report.as_dict(),
        "segments": len(segments), "keywords": keywords, "warnings": warnings,
        "identity": list(ready.keyword_candidates),
        "markdown": str(md_path), "ingested_at": time.time(),
        "dense_pending": 0 if embed else len(segments),
    }
    if job.title:
        record["title_override"] = job.title
    if "filing" in doc.metadata:
        record["filing"] = json.loads(doc.metadata["filing"])
    checkpoint("ingest:after-markdown")
    result = IngestResult(doc_id, "added", title=doc.title, pages=doc.page_count,
                          sections=n_sections, segments=len(segments),
                          warnings=tuple(warnings), structure=report.summary)
    return record, result


def _commit(parts: Parts, pending: dict[str, dict[str, Any]],
            replaced: list[tuple[str, str]], files: StagedFiles) -> None:
    """Put the pending documents' Markdown copies in place (durable), register the documents,
    then drop the versions they replace.

    Registry writes are batched (``COMMIT_EVERY_S``): rewriting the whole registry after every
    document made a 2,000-document ingest quadratic.
    """
    files.publish()
    checkpoint("ingest:before-commit")
    parts.registry.update(lambda d: d["documents"].update(pending))
    checkpoint("ingest:after-commit")
    for i, (doc_id, keep) in enumerate(replaced):
        if i:
            checkpoint("ingest:mid-delete-old")
        parts.store.delete_document(doc_id, keep=keep)
    pending.clear()
    replaced.clear()
    parts.registry.clear_journal()


# ---------------------------------------------------------------------- orphans and repair


# ---------------------------------------------------------------------- dense vectors later


