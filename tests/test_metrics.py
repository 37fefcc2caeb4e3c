import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from hiqa.eval.metrics import (
    bootstrap_ci,
    hit_at_k,
    log_rank_index,
    ndcg_at_k,
    paired_test,
    precision_at_k,
    question_log_rank,
    recall_at_k,
    reciprocal_rank,
)


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        (1, 1.000),
        (5, 0.767),
        # Eq. 3 gives 1 - ln 20 / ln 1000 = 0.5663 and 1 - ln 100 / ln 1000 = 1/3; the paper's
        # Table 1 prints 0.559 and 0.332, which no gamma reconciles with its 0.767 and 0.100.
        (20, 0.566),
        (100, 0.333),
        (500, 0.100),
    ],
)
def test_table_1(rank: int, expected: float) -> None:
    assert round(log_rank_index(rank, 1000, gamma=1.0), 3) == expected


def test_log_rank_index_by_hand() -> None:
    assert log_rank_index(1000, 1000) == 0.0
    assert log_rank_index(1, 1) == 1.0
    # gamma = 2, N = 11: 1 - ln(1 + 2*2) / ln(1 + 2*10) = 1 - ln 5 / ln 21
    assert log_rank_index(3, 11, gamma=2.0) == pytest.approx(1 - math.log(5) / math.log(21))
    assert log_rank_index(3, 11, gamma=2.0) == pytest.approx(0.471366, abs=1e-6)


def test_question_log_rank_averages_and_penalises_misses() -> None:
    # (1.0 + (1 - ln 5 / ln 10) + 0.0) / 3 with N = 10
    expected = (1.0 + (1 - math.log(5) / math.log(10)) + 0.0) / 3
    assert question_log_rank([1, 5, None], 10) == pytest.approx(expected)
    assert question_log_rank([1, 5, None], 10) == pytest.approx(0.433677, abs=1e-6)
    assert question_log_rank([None], 10) == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: log_rank_index(0, 10), "rank must be in"),
        (lambda: log_rank_index(11, 10), "rank must be in"),
        (lambda: log_rank_index(1, 0), "n .* must be >= 1"),
        (lambda: log_rank_index(1, 10, gamma=0.0), "gamma must be > 0"),
        (lambda: question_log_rank([], 10), "at least one gold"),
        (lambda: recall_at_k([1], k=0), "k must be >= 1"),
        (lambda: recall_at_k([1, 2], k=5, n_gold=1), "n_gold=1 is less"),
        (lambda: precision_at_k([2, 2], k=5), "share a rank"),
        (lambda: hit_at_k([0], k=5), "1-based"),
    ],
)
def test_invalid_inputs(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_binary_metrics_by_hand() -> None:
    ranks = [2, 7, None]  # three gold segments, found at ranks 2 and 7, one missed
    assert recall_at_k(ranks, k=5) == pytest.approx(1 / 3)
    assert recall_at_k(ranks, k=10) == pytest.approx(2 / 3)
    assert recall_at_k([2, 7], k=10, n_gold=4) == pytest.approx(0.5)
    assert precision_at_k(ranks, k=5) == pytest.approx(1 / 5)
    assert precision_at_k(ranks, k=10) == pytest.approx(2 / 10)
    assert hit_at_k(ranks, k=1) == 0.0
    assert hit_at_k(ranks, k=2) == 1.0
    assert reciprocal_rank(ranks) == 0.5
    assert reciprocal_rank(ranks, k=1) == 0.0
    assert reciprocal_rank([None, None]) == 0.0
    # DCG@5 = 1/log2(3); IDCG@5 = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.6309 + 0.5
    assert ndcg_at_k(ranks, k=5) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3) + 0.5))
    assert ndcg_at_k(ranks, k=5) == pytest.approx(0.296082, abs=1e-6)
    assert ndcg_at_k([1, 2], k=10) == 1.0
    assert ndcg_at_k([], k=10) == 0.0
    assert recall_at_k([], k=10) == 0.0


@pytest.mark.parametrize("seed", range(20))
def test_ndcg_matches_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, n_gold, k = 30, int(rng.integers(1, 6)), int(rng.integers(1, 15))
    relevance = np.zeros(n)
    relevance[rng.choice(n, n_gold, replace=False)] = 1.0
    scores = rng.permutation(n).astype(float)  # distinct scores: no ties for sklearn to average
    ranked = np.argsort(-scores)
    ranks = [int(np.where(ranked == i)[0][0]) + 1 for i in np.flatnonzero(relevance)]
    expected = ndcg_score(relevance[None, :], scores[None, :], k=k)
    assert ndcg_at_k(ranks, k=k) == pytest.approx(expected)


def test_bootstrap_ci_brackets_the_mean_and_is_deterministic() -> None:
    values = np.random.default_rng(1).normal(0.6, 0.1, 200)
    low, high = bootstrap_ci(values, seed=3)
    assert low < values.mean() < high
    assert (low, high) == bootstrap_ci(values, seed=3)
    # a normal mean's 95% interval is about +-1.96 standard errors wide
    half_width = 1.96 * values.std() / math.sqrt(values.size)
    assert high - low == pytest.approx(2 * half_width, rel=0.15)
    assert bootstrap_ci([0.5]) == (0.5, 0.5)
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_ci([])


def test_paired_test() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, 50)
    assert paired_test(a, a) == 1.0
    assert paired_test(a + 0.2, a) < 0.001
    assert paired_test(a + rng.normal(0, 0.1, 50), a + rng.normal(0, 0.1, 50)) > 0.05
    assert paired_test(a, a + 0.2, seed=1) == paired_test(a + 0.2, a, seed=1)
    # 5 pairs, all differences +1: only the all-positive and all-negative of the 32 sign
    # patterns are as extreme, so the exact p-value is 2/32
    assert paired_test([1.0] * 5, [0.0] * 5, n=20000) == pytest.approx(2 / 32, abs=0.01)
    with pytest.raises(ValueError, match="equally long"):
        paired_test([1.0, 2.0], [1.0])


def test_section_recall_counts_each_gold_section_once():
    from hiqa.eval.metrics import section_recall_at_k

    # two gold sections, one segment lies in both (rank 1 twice), one section never ranked
    assert section_recall_at_k([1, 1, None], 5) == pytest.approx(2 / 3)
    assert section_recall_at_k([6], 5) == 0.0
    assert section_recall_at_k([5], 5) == 1.0
    assert section_recall_at_k([], 5) == 0.0
    with pytest.raises(ValueError):
        section_recall_at_k([0], 5)
