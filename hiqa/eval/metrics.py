"""Retrieval metrics: the paper's Log-Rank Index (Eq. 3/4) and the usual binary-relevance ones.

Every ranking metric takes the same input, ``ranks``: the 1-based ranks at which a question's
relevant segments were retrieved, one entry per relevant segment, ``None`` for one that was not
retrieved (``Ranking.rank_of`` returns exactly that).  ``n_gold`` is the number of relevant
segments; it defaults to ``len(ranks)``.  Metrics that need a cut-off take ``k``.

Also here: a percentile bootstrap for confidence intervals and a paired sign-flip randomisation
test, so a table can say whether one configuration really beats another on the same questions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Ranks = Sequence[int | None]


def log_rank_index(rank: int, n: int, gamma: float = 1.0) -> float:
    """Eq. 3: ``1 − log(1 + γ(r − 1)) / log(1 + γ(N − 1))``.

    Unlike recall@k it still rewards a segment ranked 30th over one ranked 300th, and unlike MRR
    its log keeps the early ranks from dominating; γ sets how quickly the score decays.  Rank 1
    scores 1, rank N scores 0.  With a single candidate (N = 1) rank 1 scores 1.
    """
    if n < 1:
        raise ValueError(f"n (number of candidate segments) must be >= 1, got {n}")
    if not 1 <= rank <= n:
        raise ValueError(f"rank must be in [1, n={n}], got {rank}")
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")
    if n == 1:
        return 1.0
    return 1.0 - math.log1p(gamma * (rank - 1)) / math.log1p(gamma * (n - 1))


def question_log_rank(gold_ranks: Ranks, n: int, gamma: float = 1.0) -> float:
    """Eq. 4: the mean Log-Rank Index over a question's gold segments.

    A gold segment that was not retrieved (``None``) gets the worst rank ``N`` and so scores 0.
    """
    if len(gold_ranks) == 0:
        raise ValueError("a question needs at least one gold segment")
    return float(np.mean([log_rank_index(n if r is None else r, n, gamma) for r in gold_ranks]))


def _found(ranks: Ranks, n_gold: int | None) -> tuple[list[int], int]:
    found = [r for r in ranks if r is not None]
    if any(r < 1 for r in found):
        raise ValueError(f"ranks are 1-based, got {min(found)}")
    if len(set(found)) != len(found):
        raise ValueError(f"two relevant segments cannot share a rank: {sorted(found)}")
    n_gold = len(ranks) if n_gold is None else n_gold
    if n_gold < len(found):
        raise ValueError(f"n_gold={n_gold} is less than the {len(found)} relevant ranks given")
    return found, n_gold


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def recall_at_k(ranks: Ranks, k: int, n_gold: int | None = None) -> float:
    """Share of the relevant segments found in the top ``k``; 0 for a question without gold."""
    _check_k(k)
    found, n_gold = _found(ranks, n_gold)
    if n_gold == 0:
        return 0.0
    return sum(r <= k for r in found) / n_gold


def section_recall_at_k(section_ranks: Ranks, k: int) -> float:
    """Share of gold *sections* hit in the top ``k``: ``section_ranks`` holds, per gold section,
    the best rank of any of its segments (``None`` when none was ranked).

    Unlike :func:`recall_at_k` two sections may share a rank: one segment can lie in both (a
    question whose gold names a section and one of its sub-sections).
    """
    _check_k(k)
    if len(section_ranks) == 0:
        return 0.0
    if any(r is not None and r < 1 for r in section_ranks):
        raise ValueError("ranks are 1-based")
    return sum(1 for r in section_ranks if r is not None and r <= k) / len(section_ranks)


def precision_at_k(ranks: Ranks, k: int) -> float:
    """Share of the top ``k`` that is relevant (divides by ``k`` even if fewer were retrieved)."""
    _check_k(k)
    found, _ = _found(ranks, None)
    return sum(r <= k for r in found) / k


def hit_at_k(ranks: Ranks, k: int) -> float:
    """1 when at least one relevant segment is in the top ``k``, else 0."""
    _check_k(k)
    found, _ = _found(ranks, None)
    return float(any(r <= k for r in found))


def reciprocal_rank(ranks: Ranks, k: int | None = None) -> float:
    """``1 / rank`` of the first relevant segment (within the top ``k`` if given), else 0."""
    if k is not None:
        _check_k(k)
    found, _ = _found(ranks, None)
    best = min(found, default=None)
    if best is None or (k is not None and best > k):
        return 0.0
    return 1.0 / best


def ndcg_at_k(ranks: Ranks, k: int, n_gold: int | None = None) -> float:
    """Binary-relevance nDCG@k with the ``1 / log2(rank + 1)`` discount (Järvelin & Kekäläinen).

    The ideal ranking puts all ``n_gold`` relevant segments first; 0 for a question without gold.
    """
    _check_k(k)
    found, n_gold = _found(ranks, n_gold)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(n_gold, k) + 1))
    if ideal == 0:
        return 0.0
    return sum(1.0 / math.log2(r + 1) for r in found if r <= k) / ideal


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of per-question scores.

    Questions are resampled with replacement ``n_boot`` times; the interval is the
    ``(1 − level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled means.  Deterministic
    for a given ``seed``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def paired_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    seed: int = 0,
    n: int = 10000,
) -> float:
    """Two-sided paired randomisation (sign-flip) test of ``mean(a) == mean(b)``.

    ``a[i]`` and ``b[i]`` are two systems' scores on the same question.  Under the null
    hypothesis the sign of each difference ``a[i] − b[i]`` is arbitrary, so the p-value is the
    share of ``n`` random sign flips whose mean difference is at least as far from 0 as the
    observed one, counting the observed assignment itself: ``(1 + hits) / (1 + n)``
    (Fisher's randomisation test, as in Smucker et al., CIKM 2007).  Identical systems give 1.
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.ndim != 1 or len(a) != len(b):
        raise ValueError(f"paired_test needs two equally long score lists, got {len(a)}, {len(b)}")
    if diff.size == 0:
        raise ValueError("paired_test needs at least one pair of scores")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    observed = abs(diff.mean())
    tolerance = 1e-12 * max(1.0, float(np.abs(diff).max()))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n, 1000):
        rows = min(1000, n - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, diff.size))
        hits += int((np.abs((signs * diff).mean(axis=1)) >= observed - tolerance).sum())
    return (1 + hits) / (1 + n)
