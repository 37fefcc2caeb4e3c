import copy
import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from qdrant_client.http import models
from qdrant_client.hybrid.fusion import reciprocal_rank_fusion

from hiqa.retrieve.breadth import document_bonus
from hiqa.retrieve.fusion import (
    Candidates,
    FusionMethod,
    asked_first,
    earlier_on_ties,
    fuse,
    keyword_bonus,
    minmax,
    named_first,
    route_ranks,
    zscore,
)

LOG2_OVER_LOG3 = math.log(2) / math.log(3)  # bonus of m=1 when M=2: 0.6309297535714574


def example() -> Candidates:
    """Three segments: a is dense's best, b is BM25's best, c is in between on both."""
    return Candidates(
        ids=("a", "b", "c"),
        dense=np.array([0.9, 0.5, 0.7]),
        dense_content=np.full(3, np.nan),
        bm25=np.array([0.0, 10.0, 5.0]),
        matches=np.array([2, 0, 1]),
        query="q",
    )


def test_minmax_by_hand() -> None:
    # dense -> (1, 0, 0.5); bm25 -> (0, 1, 0.5); bonus -> (1, 0, log2/log3)
    ranking = fuse(example(), "minmax", alpha=0.5, beta=0.2)
    expected = [0.5 + 0.0 + 0.2, 0.0 + 0.5 + 0.0, 0.25 + 0.25 + 0.2 * LOG2_OVER_LOG3]
    np.testing.assert_allclose(ranking.scores, expected)
    np.testing.assert_allclose(ranking.scores, [0.7, 0.5, 0.6261859507])
    assert ranking.ids() == ["a", "c", "b"]
    np.testing.assert_allclose(ranking.contributions["dense"], [0.5, 0.0, 0.25])
    np.testing.assert_allclose(ranking.contributions["bm25"], [0.0, 0.5, 0.25])
    np.testing.assert_allclose(ranking.contributions["keyword"], [0.2, 0.0, 0.2 * LOG2_OVER_LOG3])
    total = sum(ranking.contributions.values())
    np.testing.assert_allclose(total, ranking.scores)


def test_minmax_lexical_weight_flips_order() -> None:
    ranking = fuse(example(), alpha=0.2, beta=0.0)
    np.testing.assert_allclose(ranking.scores, [0.2, 0.8, 0.1 + 0.4])
    assert ranking.ids() == ["b", "c", "a"]
    assert ranking.method is FusionMethod.MINMAX


def test_zscore_by_hand() -> None:
    # dense mean 0.7, population std sqrt(0.08/3) -> z = (sqrt(1.5), -sqrt(1.5), 0);
    # bm25 mean 5, std sqrt(50/3) -> z = (-sqrt(1.5), sqrt(1.5), 0)
    s = math.sqrt(1.5)
    ranking = fuse(example(), "zscore", alpha=0.75, beta=0.2)
    expected = [0.75 * s - 0.25 * s + 0.2, -0.75 * s + 0.25 * s, 0.2 * LOG2_OVER_LOG3]
    np.testing.assert_allclose(ranking.scores, expected)
    np.testing.assert_allclose(ranking.scores, [0.8123724357, -0.6123724357, 0.1261859507])
    assert ranking.ids() == ["a", "c", "b"]


def test_rrf_by_hand() -> None:
    # dense ranks a=1, c=2, b=3; bm25 ranks b=1, c=2, a=3; k = 60
    ranking = fuse(example(), "rrf", alpha=0.5, beta=0.2)
    expected = [
        0.5 / 61 + 0.5 / 63 + 0.2 * 1.0 / 61,
        0.5 / 63 + 0.5 / 61 + 0.0,
        0.5 / 62 + 0.5 / 62 + 0.2 * LOG2_OVER_LOG3 / 61,
    ]
    np.testing.assert_allclose(ranking.scores, expected)
    np.testing.assert_allclose(ranking.scores, [0.0194119, 0.0161332, 0.0181977], atol=1e-7)
    assert ranking.ids() == ["a", "c", "b"]


def test_rrf_ties_break_by_candidate_order() -> None:
    # without the bonus a (1st, 3rd) and b (3rd, 1st) tie exactly and both beat c (2nd, 2nd)
    ranking = fuse(example(), "rrf", alpha=0.5, beta=0.0)
    assert ranking.scores[0] == ranking.scores[1]
    assert ranking.ids() == ["a", "b", "c"]


def test_cc_by_hand() -> None:
    ranking = fuse(example(), "cc", alpha=0.5, beta=0.2)
    expected = [0.8 * 0.5 + 0.2, 0.8 * 0.5, 0.8 * 0.5 + 0.2 * LOG2_OVER_LOG3]
    np.testing.assert_allclose(ranking.scores, expected)
    np.testing.assert_allclose(ranking.scores, [0.6, 0.4, 0.5261859507])
    assert ranking.scores.max() <= 1.0


def test_raw_by_hand() -> None:
    ranking = fuse(example(), "raw", alpha=0.5, beta=0.2, named_documents_first=False)
    expected = [0.45 + 0.0 + 0.2, 0.25 + 5.0, 0.35 + 2.5 + 0.2 * LOG2_OVER_LOG3]
    np.testing.assert_allclose(ranking.scores, expected)
    assert ranking.ids() == ["b", "c", "a"]
    # a matches the question's keywords most (m = M = 2): its document comes first
    assert fuse(example(), "raw", alpha=0.5, beta=0.2).ids() == ["a", "b", "c"]


def test_keyword_bonus() -> None:
    np.testing.assert_allclose(keyword_bonus(np.array([0, 1, 3])), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(keyword_bonus(np.array([2, 0, 1])), [1.0, 0.0, LOG2_OVER_LOG3])
    np.testing.assert_array_equal(keyword_bonus(np.array([0, 0, 0])), [0.0, 0.0, 0.0])
    assert keyword_bonus(np.array([], dtype=int)).size == 0


def test_normalisers_on_constant_vectors_give_zeros() -> None:
    np.testing.assert_array_equal(minmax(np.array([3.0, 3.0])), [0.0, 0.0])
    np.testing.assert_array_equal(zscore(np.array([3.0, 3.0])), [0.0, 0.0])
    c = Candidates(("a", "b"), np.array([0.4, 0.4]), np.zeros(2), np.zeros(2), np.array([0, 1]))
    ranking = fuse(c, alpha=0.5, beta=0.2)
    assert not np.isnan(ranking.scores).any()
    assert ranking.ids() == ["b", "a"]


def test_route_ranks_are_stable() -> None:
    np.testing.assert_array_equal(route_ranks(np.array([0.0, 2.0, 0.0, 1.0])), [3, 1, 4, 2])


def test_missing_dense_score_takes_the_bm25_score() -> None:
    c = Candidates(
        ("a", "b", "c"),
        dense=np.array([0.8, np.nan, 0.6]),
        dense_content=np.full(3, np.nan),
        bm25=np.array([0.0, 4.0, 2.0]),
        matches=np.zeros(3, dtype=int),
    )
    ranking = fuse(c, alpha=0.5, beta=0.0)
    # b's dense vector is pending: its dense share is its min-max BM25 (1.0), not the worst
    np.testing.assert_allclose(ranking.contributions["dense"], [0.5, 0.5, 0.0])
    assert not np.isnan(fuse(c, "rrf").scores).any()


def test_ranking_accessors() -> None:
    ranking = fuse(example(), alpha=0.5, beta=0.2)
    assert list(ranking.top(2)) == [0, 2]
    assert list(ranking.top(10)) == [0, 2, 1]
    assert ranking.rank_of("a") == 1
    assert ranking.rank_of("b") == 3
    assert ranking.rank_of("zzz") is None
    assert len(ranking) == len(example()) == 3


def test_empty_candidates() -> None:
    empty = np.array([])
    ranking = fuse(Candidates((), empty, empty, empty, np.array([], dtype=int)), "rrf")
    assert ranking.ids() == []
    assert ranking.scores.size == 0


def scored(ids: list[int], scores: np.ndarray) -> list[models.ScoredPoint]:
    return [models.ScoredPoint(id=int(i), version=0, score=float(s)) for i, s in zip(ids, scores)]


@pytest.mark.parametrize("seed", range(5))
def test_rrf_order_matches_qdrant_client(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 40
    dense = np.sort(rng.uniform(0.2, 0.9, n))[::-1]
    bm25 = np.where(rng.random(n) < 0.4, 0.0, rng.uniform(0, 12, n)).round(1)
    c = Candidates(
        ids=tuple(str(i) for i in range(n)),
        dense=dense,
        dense_content=np.full(n, np.nan),
        bm25=bm25,
        matches=np.zeros(n, dtype=int),
    )
    ours = fuse(c, "rrf", alpha=0.5, beta=0.0)

    dense_list = scored(list(np.argsort(-dense, kind="stable")), np.sort(dense)[::-1])
    bm25_order = np.argsort(-bm25, kind="stable")
    bm25_list = scored(list(bm25_order), bm25[bm25_order])
    # qdrant scores 1 / (rank + k' - 1), ours 0.5 / (60 + rank): same order when k' = 61
    theirs = reciprocal_rank_fusion([dense_list, bm25_list], limit=n, ranking_constant_k=61)

    assert ours.ids() == [str(p.id) for p in theirs]
    np.testing.assert_allclose(
        [ours.scores[int(p.id)] for p in theirs], [0.5 * p.score for p in theirs]
    )


def test_refusion_equals_fresh_computation() -> None:
    rng = np.random.default_rng(7)
    n = 30
    data: dict[str, Any] = {
        "ids": tuple(f"s{i}" for i in range(n)),
        "dense": rng.uniform(-0.2, 0.9, n),
        "dense_content": rng.uniform(-0.2, 0.9, n),
        "bm25": rng.uniform(0, 15, n),
        "matches": rng.integers(0, 4, n),
    }
    shared = Candidates(**data, query="q")
    before = fuse(shared, "minmax", alpha=0.5, beta=0.2)
    for method in FusionMethod:
        for alpha, beta in [(0.0, 0.0), (0.3, 0.7), (1.0, 1.0)]:
            again = fuse(shared, method, alpha=alpha, beta=beta)
            fresh = fuse(
                Candidates(**{k: copy.copy(v) for k, v in data.items()}, query="q"),
                method,
                alpha=alpha,
                beta=beta,
            )
            np.testing.assert_array_equal(again.scores, fresh.scores)
            np.testing.assert_array_equal(again.order, fresh.order)
    np.testing.assert_array_equal(fuse(shared, alpha=0.5, beta=0.2).scores, before.scores)


def test_candidates_are_read_only_copies() -> None:
    dense = np.array([0.1, 0.2])
    c = Candidates(("a", "b"), dense, np.zeros(2), np.zeros(2), np.array([0, 0]))
    dense[0] = 9.0
    assert c.dense[0] == 0.1
    with pytest.raises(ValueError):
        c.dense[0] = 1.0


def test_fusion_is_fast_enough_for_a_slider() -> None:
    rng = np.random.default_rng(0)
    n = 200
    c = Candidates(
        tuple(map(str, range(n))),
        rng.random(n),
        rng.random(n),
        rng.random(n),
        rng.integers(0, 3, n),
    )
    start = time.perf_counter()
    for i in range(100):
        fuse(c, FusionMethod.RRF if i % 2 else FusionMethod.MINMAX, alpha=i / 100, beta=0.2)
    assert time.perf_counter() - start < 0.5


def test_unknown_method_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="minmax, zscore, rrf, cc, raw"):
        FusionMethod.from_str("borda")
    assert FusionMethod.from_str("RRF") is FusionMethod.RRF
    with pytest.raises(ValueError, match="Unknown fusion method 'borda'"):
        fuse(example(), "borda")


@pytest.mark.parametrize("alpha", [-0.1, 1.01, float("nan")])
def test_alpha_out_of_range(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha must be in"):
        fuse(example(), alpha=alpha)


@pytest.mark.parametrize("beta", [-0.5, float("nan")])
def test_negative_beta(beta: float) -> None:
    with pytest.raises(ValueError, match="beta must be >= 0"):
        fuse(example(), beta=beta)


def test_cc_requires_beta_at_most_one() -> None:
    with pytest.raises(ValueError, match="convex"):
        fuse(example(), "cc", beta=1.5)


def test_misaligned_candidates() -> None:
    with pytest.raises(ValueError, match="3 ids but bm25 has 2"):
        Candidates(("a", "b", "c"), np.zeros(3), np.zeros(3), np.zeros(2), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="unique"):
        Candidates(("a", "a"), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match=">= 0"):
        Candidates(("a",), np.zeros(1), np.zeros(1), np.zeros(1), np.array([-1]))


def _cands(dense, bm25, matches=None):
    n = len(dense)
    return Candidates(ids=tuple(f"s{i}" for i in range(n)), dense=np.array(dense, dtype=float),
                      dense_content=np.full(n, np.nan), bm25=np.array(bm25, dtype=float),
                      matches=np.array(matches or [0] * n))


def test_decisiveness_by_hand():
    from hiqa.retrieve.fusion import decisiveness

    # min-max → [1, 0.5, 0.5, 0, 0, 0]; top 1 minus the mean of the next five (0.2) = 0.8
    assert decisiveness(np.array([0.9, 0.7, 0.7, 0.5, 0.5, 0.5])) == pytest.approx(0.8)
    assert decisiveness(np.array([3.0, 3.0, 3.0])) == 0.0  # nothing stands out
    assert decisiveness(np.array([0.0, 0.0])) == 0.0  # the route scored nothing


def test_adaptive_alpha_leans_to_the_decisive_route():
    from hiqa.retrieve.fusion import adaptive_weights

    flat_bm25 = _cands([0.9, 0.5, 0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    w = adaptive_weights(flat_bm25, alpha=0.5, beta=0.2, spread=0.3)
    # d_dense = 1 - 0 = 1; d_bm25 = 1 - mean(1,1,1,1,0) = 0.2 → α = 0.5 + 0.3 · 0.8
    assert w.alpha == pytest.approx(0.74)
    assert w.beta == 0.2 and "dense route more decisive" in w.reason
    flat_dense = _cands([0.8, 0.8, 0.8, 0.8, 0.8, 0.7], [9.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert adaptive_weights(flat_dense, 0.5, 0.2, 0.3).alpha < 0.5
    same = _cands([1.0, 0.0, 0.0], [5.0, 0.0, 0.0])
    w = adaptive_weights(same, 0.6, 0.1)
    assert w.alpha == 0.6 and "equally decisive" in w.reason
    # α never leaves [0, 1]
    assert adaptive_weights(flat_bm25, alpha=0.95, spread=1.0).alpha == 1.0


def test_a_pending_dense_score_takes_the_candidates_bm25_score():
    """--dense later: a segment without its vector yet is judged on BM25, not sunk."""
    from hiqa.retrieve.fusion import Candidates, fuse

    c = Candidates(ids=("embedded", "pending", "weak"), dense=np.array([0.9, np.nan, 0.1]),
                   dense_content=np.full(3, np.nan), bm25=np.array([2.0, 8.0, 1.0]),
                   matches=np.zeros(3, dtype=np.int64), query="q")
    for method in ("minmax", "zscore", "cc", "rrf"):
        r = fuse(c, method, alpha=0.7, beta=0.0)
        assert c.ids[r.order[0]] == "pending", method
        assert r.contributions["dense"][1] == pytest.approx(
            0.7 / 0.3 * r.contributions["bm25"][1]), method
    # the old rule (worst dense score) would have ranked it below the embedded segment
    old = 0.7 * 0.0 + 0.3 * 1.0
    assert old < 0.7 * 1.0 + 0.3 * (2.0 - 1.0) / 7.0
    # with no dense score at all the route adds nothing
    none = Candidates(ids=c.ids, dense=np.full(3, np.nan), dense_content=c.dense_content,
                      bm25=c.bm25, matches=c.matches, query="q")
    assert not fuse(none, "minmax", alpha=0.7, beta=0.0).contributions["dense"].any()


def test_one_segment_per_section_first_then_the_rest_in_score_order() -> None:
    dense = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]  # score order s0..s5
    sections = [7, 7, 7, 3, 3, 9]  # s0-s2 one section (say three options of one list)
    plain = fuse(_cands(dense, [0] * 6), FusionMethod.MINMAX, 1.0, 0.0)
    assert plain.ids() == ["s0", "s1", "s2", "s3", "s4", "s5"]
    c = Candidates(ids=tuple(f"s{i}" for i in range(6)), dense=np.array(dense),
                   dense_content=np.full(6, np.nan), bm25=np.zeros(6), matches=np.zeros(6, int),
                   sections=np.array(sections))
    crowded = fuse(c, FusionMethod.MINMAX, 1.0, 0.0)
    # each section's best (s0, s3, s5), then each one's second (s1, s4), then s2
    assert crowded.ids() == ["s0", "s3", "s5", "s1", "s4", "s2"]
    assert np.array_equal(crowded.scores, plain.scores)  # the order moves, no score does
    assert crowded.rank_of("s2") == 6
    # re-fusion with other weights crowds the new order again
    refused = fuse(c, FusionMethod.MINMAX, 0.0, 0.0)
    assert len({sections[int(i[1:])] for i in refused.ids()[:3]}) == 3


def _named(method_scores: list[float], unnamed: list[float], documents: list[int],
           named: list[bool]) -> Candidates:
    """Candidates ranked by dense alone (α 1), with unnamed dense scores on the named rows."""
    n = len(method_scores)
    rows = np.array(named)
    return Candidates(ids=tuple(f"s{i}" for i in range(n)), dense=np.array(method_scores),
                      dense_content=np.full(n, np.nan), bm25=np.zeros(n),
                      matches=rows.astype(int), documents=np.array(documents),
                      unnamed_query="Display help",
                      unnamed_dense=np.where(rows, np.array(unnamed), np.nan),
                      unnamed_bm25=np.where(rows, 0.0, np.nan))


def test_a_named_documents_segments_trade_places_by_the_question_without_its_name() -> None:
    # s0, s2, s4 belong to the named document 1 (s0 its NAME line, s4 the answer); s1, s3 to
    # document 2, which the question does not name
    c = _named([0.9, 0.85, 0.8, 0.75, 0.7, 0.5], [0.1, 0.0, 0.2, 0.0, 0.9, 0.0],
               [1, 2, 1, 2, 1, 2], [True, False, True, False, True, False])
    r = fuse(c, FusionMethod.MINMAX, 1.0, 0.01, named_documents_first=False)
    # document 1 keeps places 1, 3, 5 and document 2 places 2, 4, 6: only who holds them moves
    # (s4: 0.51 + 1 against s0: 1.01 + 0 and s2: 0.76 + 0.125)
    assert r.ids() == ["s4", "s1", "s0", "s3", "s2", "s5"]
    plain = fuse(replace(c, unnamed_dense=None, unnamed_bm25=None),
                 FusionMethod.MINMAX, 1.0, 0.01, named_documents_first=False)
    assert plain.ids() == ["s0", "s1", "s2", "s3", "s4", "s5"]
    # and with the named document first, it holds places 1-3 in the same order among itself
    assert fuse(c, FusionMethod.MINMAX, 1.0, 0.01).ids() == ["s4", "s0", "s2", "s1", "s3", "s5"]
    assert np.array_equal(r.scores, plain.scores)  # scores are the whole question's
    bare = replace(c, unnamed_dense=None, unnamed_bm25=None)
    for method in ("zscore", "rrf", "cc", "raw"):
        ids, before = (fuse(c, method, 1.0, 0.01, named_documents_first=False).ids(),
                       fuse(bare, method, 1.0, 0.01, named_documents_first=False).ids())
        places = [i for i, s in enumerate(before) if s in {"s0", "s2", "s4"}]
        assert {ids[i] for i in places} == {"s0", "s2", "s4"}, method  # same places
        assert [s for s in ids if s not in {"s0", "s2", "s4"}] == [
            s for s in before if s not in {"s0", "s2", "s4"}], method  # the others unmoved
    assert fuse(c, "zscore", 1.0, 0.01).ids()[0] == "s4"
    # β 0 turns the keyword route off, and with it what the names do
    assert fuse(c, FusionMethod.MINMAX, 1.0, 0.0).ids() == plain.ids()


def test_two_named_documents_are_reordered_each_within_its_own_places() -> None:
    c = _named([0.9, 0.8, 0.7, 0.6], [0.0, 0.0, 1.0, 1.0], [1, 2, 1, 2], [True] * 4)
    assert fuse(c, FusionMethod.MINMAX, 1.0, 0.2).ids() == ["s2", "s3", "s0", "s1"]


def test_unnamed_scores_need_their_documents() -> None:
    with pytest.raises(ValueError, match="come together"):
        Candidates(ids=("a",), dense=np.ones(1), dense_content=np.full(1, np.nan),
                   bm25=np.zeros(1), matches=np.ones(1, int), unnamed_dense=np.ones(1),
                   unnamed_bm25=np.zeros(1))


def test_the_documents_a_question_names_most_come_first_when_the_keyword_route_is_on():
    # candidate 2 is of the named document but scores lowest on both routes
    c = Candidates(ids=("a", "b", "n1", "n2"), dense=[0.9, 0.8, 0.1, 0.2],
                   dense_content=[np.nan] * 4, bm25=[5.0, 4.0, 0.5, 1.0], matches=[0, 1, 2, 2])
    assert fuse(c, "minmax", 0.7, 0.2).ids() == ["n2", "n1", "a", "b"]
    # Eq. 2's bonus alone leaves the better-scoring segments of other documents ahead
    soft = fuse(c, "minmax", 0.7, 0.2, named_documents_first=False).ids()
    assert soft.index("a") < soft.index("n2")
    # β = 0 turns the keyword route off, names included
    assert fuse(c, "minmax", 0.7, 0.0).ids()[0] == "a"
    # nothing named: the order is the scores'
    none = replace(c, matches=np.zeros(4, dtype=np.int64))
    assert fuse(none, "minmax", 0.7, 0.2).ids() == ["a", "b", "n2", "n1"]


def test_named_first_keeps_each_groups_order():
    order = np.array([3, 0, 2, 1, 4])
    matches = np.array([1, 0, 1, 0, 1])
    assert named_first(order, matches).tolist() == [0, 2, 4, 3, 1]
    assert named_first(order, np.zeros(5)).tolist() == order.tolist()


def test_the_statement_a_question_asks_for_comes_first_one_per_section():
    # s2, s3 are rows of the balance sheet (one section, 5), s0 the MD&A paragraph on them
    c = Candidates(ids=tuple(f"s{i}" for i in range(5)), dense=np.array([0.9, 0.8, 0.7, 0.6, 0.5]),
                   dense_content=np.full(5, np.nan), bm25=np.zeros(5), matches=np.zeros(5, int),
                   sections=np.array([1, 2, 5, 5, 3]), asked=np.array([0, 0, 1, 1, 0]))
    r = fuse(c, FusionMethod.MINMAX, 1.0, 0.2)
    # the statement's best leads; its second row waits for the other sections' best
    assert r.ids() == ["s2", "s0", "s1", "s4", "s3"]
    plain = fuse(replace(c, asked=None), FusionMethod.MINMAX, 1.0, 0.2)
    assert plain.ids()[0] == "s0" and np.array_equal(r.scores, plain.scores)
    assert asked_first(np.array([2, 0, 1]), np.zeros(3)).tolist() == [2, 0, 1]


def test_near_ties_inside_a_document_the_question_is_the_title_of_go_to_the_earlier_section():
    # d0's candidates: usage line (reading 0), description (1), argument (2), example (3);
    # x1 and x2 belong to another document, between them
    c = Candidates(ids=("arg", "x1", "desc", "ex", "x2", "usage"),
                   dense=np.array([1.00, 0.99, 0.98, 0.97, 0.50, 0.20]),
                   dense_content=np.full(6, np.nan), bm25=np.zeros(6), matches=np.zeros(6, int),
                   documents=np.array([0, 1, 0, 0, 1, 0]), reading=np.array([2, -1, 1, 3, -1, 0]))
    r = fuse(c, FusionMethod.MINMAX, 1.0, 0.0)  # β 0: no document route, the tie rule alone
    # desc ties with arg (2 % of the span apart) and comes first in the page: it takes arg's
    # place; x1 keeps its own; the usage line is far below and stays there
    assert r.ids() == ["desc", "x1", "arg", "ex", "x2", "usage"]
    plain = fuse(replace(c, reading=None), FusionMethod.MINMAX, 1.0, 0.0)
    assert plain.ids() == ["arg", "x1", "desc", "ex", "x2", "usage"]
    assert np.array_equal(r.scores, plain.scores)  # only the order changes
    # a gap wider than the tolerance is not a tie
    assert earlier_on_ties(np.arange(3), np.array([1.0, 0.8, 0.0]), np.zeros(3, int),
                           np.array([1, 0, 2])).tolist() == [0, 1, 2]
    assert earlier_on_ties(np.arange(3), np.array([1.0, 0.96, 0.0]), np.zeros(3, int),
                           np.array([1, 0, 2])).tolist() == [1, 0, 2]
    with pytest.raises(ValueError, match="reading needs documents"):
        replace(c, documents=None)


def test_a_document_matched_in_several_sections_lifts_them_over_a_stray_segment_of_another():
    # xxd's one-line summary asked: xxd matches in four sections, its DESCRIPTION the fourth;
    # ln matches in one (an option that says "reverse"), scoring just above that DESCRIPTION
    c = Candidates(ids=("opt", "caveats", "examples", "ln", "desc", "far"),
                   dense=np.array([1.00, 0.75, 0.70, 0.47, 0.45, 0.00]),
                   dense_content=np.full(6, np.nan), bm25=np.zeros(6), matches=np.zeros(6, int),
                   documents=np.array([0, 0, 0, 1, 0, 2]))
    r = fuse(c, FusionMethod.MINMAX, 1.0, 0.2)
    assert r.ids() == ["opt", "caveats", "examples", "desc", "ln", "far"]
    # the mean of xxd's best three (0.82) and a third of ln's one (0.157), each times 0.2
    np.testing.assert_allclose(r.contributions["breadth"],
                               0.2 * np.array([2.45, 2.45, 2.45, 0.47, 2.45, 0]) / 3)
    np.testing.assert_allclose(r.scores, c.dense + r.contributions["breadth"])
    # document evidence comes and goes with Eq. 2's keyword route: none at β = 0, nor without
    # documents to group by
    for plain in (fuse(c, FusionMethod.MINMAX, 1.0, 0.0),
                  fuse(replace(c, documents=None), FusionMethod.MINMAX, 1.0, 0.2)):
        assert plain.ids() == ["opt", "caveats", "examples", "ln", "desc", "far"]
        assert not plain.contributions["breadth"].any()
    # one strong segment is not breadth: a document with one at 0.9 rises by a third of its
    # best, one with three at 0.6 by all of them, and their weaker sections follow suit
    np.testing.assert_allclose(document_bonus(np.array([0.9, 0.6, 0.6, 0.6, 0.0]),
                                              np.array([0, 1, 1, 1, 2]), 0.2, weight=1.0),
                               [0.3, 0.6, 0.6, 0.6, 0.0])
    # on a scale below 0 (z-scores), the weakest candidate is the floor a missing one counts as
    np.testing.assert_allclose(document_bonus(np.array([-1.0, -2.0, -3.0]),
                                              np.array([0, 1, 2]), 0.2, weight=3.0),
                               [2.0, 1.0, 0.0])
