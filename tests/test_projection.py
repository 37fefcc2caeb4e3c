"""Projection and separation maths, checked against scikit-learn and hand-made geometry."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score
from sklearn.neighbors import NearestNeighbors

from hiqa.eval.projection import (
    knn_purity,
    load_cached,
    pca_2d,
    pca_fit,
    place_points,
    save_cached,
    separation,
    silhouette_by_document,
    stratified_sample,
    umap_2d,
)


def blobs(n_per: int = 20, docs: int = 3, spread: float = 0.05, seed: int = 0):
    """Well separated clusters on the unit sphere, one per document."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(docs, 16))
    x = np.concatenate([c + spread * rng.normal(size=(n_per, 16)) for c in centres])
    labels = [f"doc{i}" for i in range(docs) for _ in range(n_per)]
    return x, labels


def test_pca_matches_sklearn_up_to_sign():
    x, _ = blobs()
    ours = pca_2d(x)
    ref = PCA(n_components=2).fit_transform(x)
    for j in range(2):
        assert np.allclose(np.abs(ours[:, j]), np.abs(ref[:, j]), atol=1e-8)


def test_pca_transform_places_new_points_and_is_deterministic():
    x, _ = blobs()
    fit = pca_fit(x)
    assert np.allclose(fit.transform(x[:3]), pca_2d(x)[:3])
    assert np.array_equal(pca_2d(x), pca_2d(x.copy()))
    assert 0 < fit.explained[1] <= fit.explained[0] <= 1


def test_pca_degenerate_inputs():
    one = pca_2d(np.ones((1, 4)))
    assert one.shape == (1, 2) and np.allclose(one, 0)
    with pytest.raises(ValueError, match="2-D"):
        pca_2d(np.ones(4))


def test_silhouette_matches_sklearn_and_ranks_separation():
    x, labels = blobs()
    assert silhouette_by_document(x, labels) == pytest.approx(
        silhouette_score(x, labels, metric="cosine"))
    mixed = silhouette_by_document(x, np.random.default_rng(1).permutation(labels))
    assert silhouette_by_document(x, labels) > 0.8
    assert mixed < 0.1


def test_silhouette_undefined_cases_are_nan():
    x, _ = blobs(n_per=2, docs=1)
    assert np.isnan(silhouette_by_document(x, ["a"] * len(x)))
    assert np.isnan(silhouette_by_document(x[:2], ["a", "b"]))
    with pytest.raises(ValueError, match="labels"):
        silhouette_by_document(x, ["a"])


def test_knn_purity_matches_brute_force_reference():
    x, labels = blobs(spread=0.8, seed=3)
    y = np.asarray(labels)
    nn = NearestNeighbors(n_neighbors=6, metric="cosine").fit(x)
    _, idx = nn.kneighbors(x)
    expected = np.mean([(y[row[1:]] == y[i]).mean() for i, row in enumerate(idx)])
    assert knn_purity(x, labels, k=5) == pytest.approx(expected)


def test_knn_purity_extremes_and_block_boundaries():
    x, labels = blobs(n_per=700, docs=2, spread=0.01)  # 1400 rows: two blocks of 1024
    assert knn_purity(x, labels, k=10) == 1.0
    line = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    assert knn_purity(line, ["a", "b", "a", "b"], k=1) == 0.0
    assert knn_purity(line, ["a", "a", "b", "b"], k=99) == pytest.approx(1 / 3)  # k capped at n-1
    assert np.isnan(knn_purity(line[:1], ["a"]))


def test_separation_bundles_both_numbers():
    x, labels = blobs()
    sep = separation(x, labels, k=5)
    assert sep.purity == 1.0 and sep.silhouette > 0.8


def test_place_points_puts_a_question_near_its_neighbours():
    x, _ = blobs()
    coords = pca_2d(x)
    placed = place_points(x, coords, x[:1] + 0.001, k=3)
    assert np.linalg.norm(placed[0] - coords[:20].mean(axis=0)) < np.linalg.norm(
        placed[0] - coords[20:40].mean(axis=0))


def test_umap_layout_with_progress():
    x, labels = blobs(n_per=15)
    steps = []
    coords = umap_2d(x, progress=lambda d, t: steps.append((d, t)))
    assert coords.shape == (45, 2) and np.isfinite(coords).all()
    assert steps[0] == (0, 3) and steps[-1] == (3, 3)
    y = np.asarray(labels)
    centres = np.stack([coords[y == d].mean(axis=0) for d in sorted(set(labels))])
    nearest = np.argmin(((coords[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    assert (nearest == np.repeat(np.arange(3), 15)).mean() > 0.9  # clusters stay apart
    with pytest.raises(ValueError, match="at least 5"):
        umap_2d(x[:3])


def test_cached_layout_round_trip(tmp_path):
    path = tmp_path / "derived" / "projection.npz"
    coords = np.arange(6, dtype=float).reshape(3, 2)
    assert load_cached(path, ["a", "b", "c"]) is None
    save_cached(path, ["a", "b", "c"], coords)
    assert np.array_equal(load_cached(path, ["a", "b", "c"]), coords)
    assert load_cached(path, ["a", "b"]) is None  # other segments: recompute


def test_a_stratified_sample_shows_every_document_in_proportion():
    """Issue #43, item 6: the embedding page's first look is a sample, not the collection."""
    docs = ["big"] * 1000 + ["mid"] * 100 + ["small"] * 3 + [f"one{i}" for i in range(5)]
    rows = stratified_sample(docs, 60)
    assert len(rows) == 60 and rows == sorted(set(rows))
    counts = {d: sum(1 for i in rows if docs[i] == d) for d in set(docs)}
    assert all(c >= 1 for c in counts.values())  # every document is on the map
    assert counts["mid"] in (5, 6) and counts["big"] >= 45  # the rest in proportion
    big = [i for i in rows if docs[i] == "big"]
    assert big[0] < 100 and big[-1] > 900  # spread through the document, not its start
    assert stratified_sample(docs, 60) == rows  # the same sample every time
    assert stratified_sample(docs[:50], 60) == list(range(50))  # few: all of them
    assert len(stratified_sample(docs, 4)) == 4  # more documents than points: the largest


def test_content_vectors_are_embedded_for_the_asked_segments_only(settings, corpus):
    from hiqa.collection import Collection

    col = Collection("man", settings, create=True)
    col.ingest([corpus])
    segments, _ = col.vectors("hca")
    some = [s.segment_id for s in segments[:3]]
    assert col.ensure_content_vectors(ids=some) == 3
    done, _ = col.vectors("content")
    assert sorted(s.segment_id for s in done) == sorted(some)
    assert col.ensure_content_vectors() == len(segments) - 3
