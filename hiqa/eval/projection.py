"""2-D maps of the segment embeddings and how well they separate documents (paper §7.1).

HCA prefixes every segment with its cascaded path, so segments of one document should sit closer
to each other than to the homologous segment of a sibling document ("soft partitioning").  The
embedding-space page shows the same segments embedded without (``content``) and with (``hca``)
the path, side by side, and two numbers that make the effect measurable:

* :func:`silhouette_by_document`: the silhouette coefficient (Rousseeuw, 1987) with documents as
  clusters and cosine distance, in [-1, 1]; higher means documents form tighter, better separated
  groups.
* :func:`knn_purity`: the share of each segment's ``k`` nearest neighbours (cosine, itself
  excluded) that come from the same document, averaged over segments; 1.0 means a neighbourhood
  never mixes documents.

Everything here is a pure function of arrays, except :func:`load_cached` / :func:`save_cached`,
which keep slow UMAP layouts on disk per collection.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hiqa.files import atomic_write

SILHOUETTE_SAMPLE = 4000
"""Silhouette is O(n²); above this many segments it is estimated on a fixed random sample."""

Progress = Callable[[int, int], None]


def stratified_sample(doc_ids: Sequence[str], limit: int) -> list[int]:
    """Indices of at most ``limit`` of the segments whose documents are ``doc_ids`` (in
    document order), each document in proportion to its size and with one at least (while
    ``limit`` allows), spread evenly through it: the maps then show every document, its
    beginning, middle and end, and a first look costs ``limit`` embeddings, not the whole
    collection's.  Deterministic; every index when there are no more than ``limit``."""
    n = len(doc_ids)
    if n <= limit:
        return list(range(n))
    groups: dict[str, list[int]] = {}
    for i, d in enumerate(doc_ids):
        groups.setdefault(d, []).append(i)
    docs = sorted(groups, key=lambda d: (-len(groups[d]), d))
    if len(docs) >= limit:  # more documents than points: one each of the largest
        share = {d: int(k < limit) for k, d in enumerate(docs)}
    else:
        want = {d: limit * len(groups[d]) / n for d in docs}
        share = {d: min(len(groups[d]), max(1, int(want[d]))) for d in docs}
        while sum(share.values()) > limit:  # the ones lifted to 1 are paid by the largest
            share[max(docs, key=lambda d: share[d])] -= 1
        for d in sorted(docs, key=lambda d: (-(want[d] - int(want[d])), d)):
            if sum(share.values()) >= limit:
                break
            share[d] += share[d] < len(groups[d])
        for d in docs:  # what is left, to the largest documents with segments to spare
            while sum(share.values()) < limit and share[d] < len(groups[d]):
                share[d] += 1
    out: list[int] = []
    for d in docs:
        rows, k = groups[d], share[d]
        out += [rows[int((j + 0.5) * len(rows) / k)] for j in range(k)] if k else []
    return sorted(out)


@dataclass(frozen=True)
class PCA2D:
    """A fitted 2-component PCA: ``transform`` places new vectors (a question) in the same map."""

    mean: np.ndarray
    components: np.ndarray  # (2, dim)
    explained: tuple[float, float]

    def transform(self, matrix: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
        return np.asarray((x - self.mean) @ self.components.T)


def _as_matrix(matrix: np.ndarray) -> np.ndarray:
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D matrix (segments × dimensions), got shape {x.shape}")
    return x


def pca_fit(matrix: np.ndarray) -> PCA2D:
    """PCA by SVD of the centred matrix; signs are fixed so the map does not flip between runs."""
    x = _as_matrix(matrix)
    if len(x) == 0:
        raise ValueError("no vectors to project")
    mean = x.mean(axis=0)
    centred = x - mean
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    components = np.zeros((2, x.shape[1]))
    k = min(2, len(vt))
    components[:k] = vt[:k]
    for row in components:  # deterministic sign: largest-magnitude loading is positive
        if row.any() and row[np.argmax(np.abs(row))] < 0:
            row *= -1
    var = s**2
    total = float(var.sum()) or 1.0
    explained = tuple(float(v / total) for v in (list(var[:2]) + [0.0, 0.0])[:2])
    return PCA2D(mean=mean, components=components, explained=explained)  # type: ignore[arg-type]


def pca_2d(matrix: np.ndarray) -> np.ndarray:
    """Coordinates of every row on the first two principal components, shape (n, 2)."""
    return pca_fit(matrix).transform(matrix)


def umap_2d(matrix: np.ndarray, progress: Progress | None = None, *, seed: int = 0,
            n_neighbors: int = 15) -> np.ndarray:
    """UMAP layout with cosine distance, shape (n, 2).

    ``umap`` is imported here because importing it costs seconds (numba); ``progress(done, 3)``
    reports the import, the fit and the end, since UMAP itself offers no progress hook.
    """
    x = _as_matrix(matrix)
    if len(x) < 5:
        raise ValueError(f"UMAP needs at least 5 segments, this collection has {len(x)}; use PCA")
    report = progress or (lambda done, total: None)
    report(0, 3)
    import umap  # type: ignore[import-untyped]

    report(1, 3)
    reducer = umap.UMAP(n_components=2, n_neighbors=max(2, min(n_neighbors, len(x) - 1)),
                        metric="cosine", random_state=seed, n_jobs=1, init="random" if len(x) < 20 else
                        "spectral")
    coords = np.asarray(reducer.fit_transform(x), dtype=np.float64)
    report(3, 3)
    return coords


def place_points(matrix: np.ndarray, coords: np.ndarray, points: np.ndarray,
                 k: int = 5) -> np.ndarray:
    """Put new vectors (a question) on an existing map at the mean of their k nearest segments.

    Used for layouts such as UMAP whose fitted model is not kept; cosine similarity picks the
    neighbours and weights their coordinates.
    """
    x = _normalised(_as_matrix(matrix))
    q = _normalised(np.atleast_2d(np.asarray(points, dtype=np.float64)))
    sims = q @ x.T
    k = max(1, min(k, len(x)))
    out = np.zeros((len(q), 2))
    for i, row in enumerate(sims):
        top = np.argpartition(-row, k - 1)[:k]
        w = np.clip(row[top], 1e-6, None)
        out[i] = (coords[top] * w[:, None]).sum(axis=0) / w.sum()
    return out


def _normalised(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def silhouette_by_document(matrix: np.ndarray, labels: Sequence[str],
                           sample: int = SILHOUETTE_SAMPLE) -> float:
    """Mean silhouette with documents as clusters, cosine distance; NaN when undefined.

    The silhouette needs at least two documents and fewer documents than segments.
    """
    from sklearn.metrics import silhouette_score  # type: ignore[import-untyped]

    x = _as_matrix(matrix)
    y = np.asarray(labels)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} vectors but {len(y)} labels")
    n_labels = len(set(y.tolist()))
    if n_labels < 2 or n_labels >= len(x):
        return float("nan")
    size = sample if len(x) > sample else None
    return float(silhouette_score(x, y, metric="cosine", sample_size=size, random_state=0))


def knn_purity(matrix: np.ndarray, labels: Sequence[str], k: int = 10) -> float:
    """Mean share of each segment's k nearest neighbours (cosine, self excluded) with its label.

    Computed in blocks so 20k segments need no 20k × 20k matrix.  ``k`` is capped at n − 1.
    """
    x = _normalised(_as_matrix(matrix)).astype(np.float32)
    y = np.asarray(labels)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} vectors but {len(y)} labels")
    n = len(x)
    if n < 2:
        return float("nan")
    k = max(1, min(k, n - 1))
    _, codes = np.unique(y, return_inverse=True)
    total = 0.0
    for start in range(0, n, 1024):
        block = x[start:start + 1024] @ x.T
        rows = np.arange(len(block))
        block[rows, start + rows] = -np.inf
        nn = np.argpartition(-block, k - 1, axis=1)[:, :k]
        total += float((codes[nn] == codes[start + rows][:, None]).sum())
    return total / (n * k)


@dataclass(frozen=True)
class Separation:
    """Separation numbers of one embedding (see module docstring)."""

    silhouette: float
    purity: float


def separation(matrix: np.ndarray, labels: Sequence[str], k: int = 10) -> Separation:
    return Separation(silhouette_by_document(matrix, labels), knn_purity(matrix, labels, k))


def load_cached(path: Path, ids: Sequence[str]) -> np.ndarray | None:
    """Coordinates saved by :func:`save_cached` for exactly these segment ids, else None."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if [str(i) for i in z["ids"]] != [str(i) for i in ids]:
                return None
            return np.asarray(z["coords"], dtype=np.float64)
    except (OSError, KeyError, ValueError):
        return None


def save_cached(path: Path, ids: Sequence[str], coords: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, ids=np.asarray(list(ids), dtype=str), coords=np.asarray(coords))
    atomic_write(path, buf.getvalue())
