"""A collection on a Qdrant server or cluster, through qdrant-client (``HIQA_QDRANT_URL``).

The same schema as the embedded store (``hiqa.index.store.base``), so a collection moves between the
two unchanged.  qdrant-client's Python local mode speaks the same API in-process; it was the
embedded store before Qdrant Edge and serves now to read old data dirs (``hiqa migrate``) and to
exercise this code path in tests without a server.
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from hiqa.index.payload import HEAD_FIELD, INDEXED_FIELDS
from hiqa.index.store.base import (
    BATCH,
    DENSE_OVERSAMPLING,
    QUANTILE,
    QUANTIZED_VECTORS,
    SEARCHED_VECTORS,
    VECTOR_NAMES,
    Record,
    Store,
    hnsw_ef,
    record_of,
)

_SCROLL = 512
_INT8 = models.ScalarQuantization(scalar=models.ScalarQuantizationConfig(
    type=models.ScalarType.INT8, quantile=QUANTILE, always_ram=True))
"""``QUANTIZED_VECTORS``' int8 copy, held in RAM: a server opens once and runs for weeks."""


def _doc_filter(doc_id: str, keep: str | None = None, *, heads: bool = False) -> models.Filter:
    """A document's points: all, all but those of version key ``keep``, or (``heads``) its
    head points only (``HEAD_FIELD``)."""
    must: list[Any] = [models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))]
    must_not: list[Any] = []
    if keep is not None:
        must_not.append(models.FieldCondition(key="doc_version",
                                              match=models.MatchValue(value=keep)))
    if heads:
        must_not.append(models.IsEmptyCondition(is_empty=models.PayloadField(key=HEAD_FIELD)))
    return models.Filter(must=must, must_not=must_not or None)


class ClientStore(Store):
    """Collection ``hiqa__<name>`` through ``client``."""

    def __init__(self, client: QdrantClient, name: str, where: str):
        self.client = client
        self.name = name
        self.qdrant_name = f"hiqa__{name}"
        self.where = where
        self._tuned = False
        # qdrant-client's Python local mode (old data dirs, tests) searches exactly and warns
        # at every query given search parameters
        self.local = type(getattr(client, "_client", None)).__name__ == "QdrantLocal"

    def _tune(self) -> None:
        if not self._tuned:
            tune_local_storage(self.client, self.qdrant_name)  # a no-op on a server
            self._tuned = True

    def exists(self) -> bool:
        return bool(self.client.collection_exists(self.qdrant_name))

    def create(self, dim: int) -> None:
        self.client.create_collection(self.qdrant_name, vectors_config={
            v: models.VectorParams(
                size=int(dim), distance=models.Distance.COSINE,
                hnsw_config=None if v in SEARCHED_VECTORS else models.HnswConfigDiff(m=0),
                quantization_config=_INT8 if v in QUANTIZED_VECTORS else None)
            for v in VECTOR_NAMES})
        for field_name in INDEXED_FIELDS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode: payload indexes are a no-op
                self.client.create_payload_index(self.qdrant_name, field_name,
                                                 models.PayloadSchemaType.KEYWORD)

    def dimension(self) -> int | None:
        if not self.exists():
            return None
        params = self.client.get_collection(self.qdrant_name).config.params.vectors
        return int(params["hca"].size) if isinstance(params, dict) else None

    def drop(self) -> None:
        self.client.delete_collection(self.qdrant_name)

    def upsert(self, ids: Sequence[str], payloads: Sequence[dict[str, Any]],
               vectors: dict[str, np.ndarray]) -> None:
        self._tune()
        for i in range(0, len(ids), BATCH):
            self.client.upsert(self.qdrant_name, [
                models.PointStruct(id=ids[j], payload=payloads[j],
                                   vector={n: m[j].tolist() for n, m in vectors.items()})
                for j in range(i, min(i + BATCH, len(ids)))], wait=True)

    def set_vectors(self, name: str, ids: Sequence[str], matrix: np.ndarray) -> None:
        self.client.update_vectors(self.qdrant_name, [
            models.PointVectors(id=i, vector={name: row.tolist()})
            for i, row in zip(ids, matrix)], wait=True)

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.client.delete(self.qdrant_name, models.PointIdsList(points=list(ids)), wait=True)

    def delete_document(self, doc_id: str, *, keep: str | None = None) -> None:
        self.client.delete(self.qdrant_name, models.FilterSelector(
            filter=_doc_filter(doc_id, keep)), wait=True)

    def set_document_payload(self, doc_id: str, payload: dict[str, Any]) -> None:
        self.client.set_payload(self.qdrant_name, payload, points=_doc_filter(doc_id, heads=True),
                                wait=True)

    def scroll(self, *, fields: Sequence[str] | bool = True, vectors: Sequence[str] = (),
               doc_id: str | None = None) -> Iterator[Record]:
        offset = None
        flt = None if doc_id is None else _doc_filter(doc_id)
        while True:
            points, offset = self.client.scroll(
                self.qdrant_name, scroll_filter=flt, limit=_SCROLL, offset=offset,
                with_payload=fields if isinstance(fields, bool) else list(fields),
                with_vectors=list(vectors) if vectors else False)
            for p in points:
                yield record_of(p)
            if offset is None:
                return

    def retrieve(self, ids: Sequence[str], *, fields: Sequence[str] | bool = True,
                 vectors: Sequence[str] = ()) -> list[Record]:
        if not ids:
            return []
        got = self.client.retrieve(
            self.qdrant_name, ids=list(ids),
            with_payload=fields if isinstance(fields, bool) else list(fields),
            with_vectors=list(vectors) if vectors else False)
        return [record_of(p) for p in got]

    def nearest(self, qvec: np.ndarray, *, using: str, k: int, versions: Sequence[str] | None,
                doc_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        must: list[Any] = []
        if versions is not None:
            if not versions:
                return []
            must.append(models.FieldCondition(key="doc_version",
                                              match=models.MatchAny(any=list(versions))))
        if doc_ids is not None:
            must.append(models.FieldCondition(key="doc_id",
                                              match=models.MatchAny(any=list(doc_ids))))
        res = self.client.query_points(
            self.qdrant_name, query=np.asarray(qvec, dtype=np.float32).tolist(), using=using,
            limit=k, query_filter=models.Filter(must=must) if must else None, with_payload=False,
            search_params=None if self.local else models.SearchParams(
                hnsw_ef=hnsw_ef(k), quantization=models.QuantizationSearchParams(
                    rescore=True, oversampling=DENSE_OVERSAMPLING)))
        return [(str(p.id), float(p.score)) for p in res.points]

    def scores(self, ids: Sequence[str], qvec: np.ndarray, using: str) -> dict[str, float]:
        """Cosine of each of ``ids`` with ``qvec``, computed by the server (no vectors sent)."""
        if not ids:
            return {}
        res = self.client.query_points(
            self.qdrant_name, query=np.asarray(qvec, dtype=np.float32).tolist(), using=using,
            limit=len(ids), with_payload=False,
            query_filter=models.Filter(must=[models.HasIdCondition(has_id=list(ids))]),
            search_params=None if self.local else models.SearchParams(
                quantization=models.QuantizationSearchParams(ignore=True)))
        return {str(p.id): float(p.score) for p in res.points}

    def missing(self, name: str, *, limit: int, fields: Sequence[str] | bool = True,
                after: str | None = None) -> tuple[list[Record], str | None]:
        points, offset = self.client.scroll(
            self.qdrant_name, limit=limit, offset=after, with_vectors=False,
            with_payload=fields if isinstance(fields, bool) else list(fields),
            scroll_filter=models.Filter(must_not=[models.HasVectorCondition(has_vector=name)]))
        return [record_of(p) for p in points], None if offset is None else str(offset)

    def count_missing(self, name: str) -> int:
        if not self.exists():
            return 0
        return int(self.client.count(self.qdrant_name, exact=True, count_filter=models.Filter(
            must_not=[models.HasVectorCondition(has_vector=name)])).count)

    def count(self) -> int:
        return int(self.client.count(self.qdrant_name, exact=True).count) if self.exists() else 0


def tune_local_storage(client: Any, name: str) -> None:
    """Let Qdrant local mode's SQLite file commit in WAL mode instead of fsyncing every point.

    Local mode persists each point in its own transaction; with the default rollback journal
    every one is an fsync (measured: 40 points/s; 512 points 12 s vs 0.33 s in WAL mode).  WAL
    with ``synchronous=NORMAL`` stays consistent after a crash; a power cut can lose only the
    last commits, which the registry rules (``hiqa.collection``) already tolerate.  This reaches
    into qdrant-client internals, so any surprise leaves the defaults in place.
    """
    with contextlib.suppress(Exception):
        conn = client._client.collections[name].storage.storage  # type: ignore[attr-defined]
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
