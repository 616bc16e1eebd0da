"""Paired comparisons of two configurations over the same questions.

Every function takes per-question scores of a configuration ``b`` and of the baseline ``a``
(same questions, same order) and is deterministic for a given ``seed``.

References: Smucker, Allan and Carterette, "A Comparison of Statistical Significance Tests for
Information Retrieval Evaluation", CIKM 2007 (the randomization test); Efron and Tibshirani,
"An Introduction to the Bootstrap", 1993 (percentile intervals); Holm, "A Simple Sequentially
Rejective Multiple Test Procedure", 1979.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_BLOCK = 2000  # resamples drawn at a time (bounded memory for large question sets)


def paired_differences(a, b) -> np.ndarray:
    """b - a per question, for two score vectors of one length (a ValueError otherwise)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"paired scores must be two vectors of one length, got {a.shape} and {b.shape}"
        )
    return b - a


def randomization_test(a, b, permutations: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of mean(b - a) under random sign flips of the per-question differences.

    p = (1 + #{permutations with |mean| >= |observed mean|}) / (1 + permutations), so p is never 0.
    """
    d = paired_differences(a, b)
    observed = abs(d.mean()) if len(d) else 0.0
    if not d.any():
        return 1.0
    rng = np.random.default_rng(seed)
    extreme, done = 0, 0
    while done < permutations:
        n = min(_BLOCK, permutations - done)
        signs = rng.choice((-1.0, 1.0), size=(n, len(d)))
        means = np.abs((signs * d).mean(axis=1))
        extreme += int(np.sum(means >= observed - 1e-12))
        done += n
    return (1 + extreme) / (1 + permutations)


def bootstrap_ci(
    a, b, resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(b - a), resampling questions with replacement.

    Percentile rather than BCa: on our metrics' bounded, mostly tied differences it covers at its
    nominal level, and BCa does no better (measured in tests/evaluation/test_bootstrap_coverage.py).
    """
    d = paired_differences(a, b)
    if len(d) == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    return percentile_interval(
        lambda n: d[rng.integers(0, len(d), size=(n, len(d)))].mean(axis=1), resamples, confidence
    )


def percentile_interval(
    draw: Callable[[int], np.ndarray], resamples: int, confidence: float
) -> tuple[float, float]:
    """The percentile interval of ``resamples`` bootstrap replicates of a statistic, drawn
    ``_BLOCK`` at a time (``draw(n)`` returns ``n`` replicates; bounded memory)."""
    parts, done = [], 0
    while done < resamples:
        n = min(_BLOCK, resamples - done)
        parts.append(draw(n))
        done += n
    values = np.concatenate(parts)
    tail = (1 - confidence) / 2
    return float(np.quantile(values, tail)), float(np.quantile(values, 1 - tail))


def holm(pvalues: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, kept monotone, capped at 1), input order."""
    m = len(pvalues)
    order = np.argsort(pvalues, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted.tolist()


@dataclass(frozen=True)
class Comparison:
    metric: str
    baseline: float
    value: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    wins: int
    ties: int
    losses: int
    p_holm: float | None = None

    @property
    def significant(self) -> bool:
        p = self.p_holm if self.p_holm is not None else self.p_value
        return p < 0.05


def compare(a, b, metric: str, permutations: int = 10_000, seed: int = 0) -> Comparison:
    """Everything a report says about ``b`` against baseline ``a`` on one metric."""
    d = paired_differences(a, b)
    low, high = bootstrap_ci(a, b, permutations, seed=seed)
    return Comparison(
        metric=metric,
        baseline=float(np.mean(a)) if len(d) else 0.0,
        value=float(np.mean(b)) if len(d) else 0.0,
        difference=float(d.mean()) if len(d) else 0.0,
        ci_low=low,
        ci_high=high,
        p_value=randomization_test(a, b, permutations, seed),
        wins=int(np.sum(d > 0)),
        ties=int(np.sum(d == 0)),
        losses=int(np.sum(d < 0)),
    )


def flipped(a_hit, b_hit) -> tuple[list[int], list[int]]:
    """Question indices that went from miss to hit, and from hit to miss, against the baseline."""
    a_hit, b_hit = np.asarray(a_hit, dtype=bool), np.asarray(b_hit, dtype=bool)
    return np.flatnonzero(~a_hit & b_hit).tolist(), np.flatnonzero(a_hit & ~b_hit).tolist()
