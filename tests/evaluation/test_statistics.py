"""Paired statistics against hand-computed values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from situate.evaluation.statistics import bootstrap_ci, compare, flipped, holm, randomization_test


def exact_randomization_p(d: list[float]) -> float:
    """All 2^n sign flips: the exact two-sided p-value (fraction with |mean| >= observed)."""
    observed = abs(np.mean(d))
    flips = [
        abs(np.mean([s * x for s, x in zip(signs, d, strict=True)]))
        for signs in itertools.product((-1, 1), repeat=len(d))
    ]
    return sum(f >= observed - 1e-12 for f in flips) / len(flips)


def test_randomization_matches_the_exact_test_on_a_small_case():
    a = [0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 1, 1]  # d = [1, 1, 1, 0, 0, 1]: 4 ones, 2 zeros
    # exact: only the all-plus and all-minus flips of the four ones reach |mean| = 4/6 -> 2*4/64 = 1/8
    assert exact_randomization_p([1, 1, 1, 0, 0, 1]) == pytest.approx(1 / 8)
    p = randomization_test(a, b, permutations=20_000, seed=1)
    assert p == pytest.approx(1 / 8, abs=0.01)


def test_identical_runs_have_p_one_and_a_zero_interval():
    a = [0.5, 1, 0, 1]
    assert randomization_test(a, a) == 1.0
    assert bootstrap_ci(a, a, resamples=500) == (0.0, 0.0)


def test_p_value_is_never_zero():
    a, b = [0] * 30, [1] * 30
    p = randomization_test(a, b, permutations=1000, seed=0)
    # only the two all-same-sign flips reach the observed mean: expected (1 + ~0)/(1 + 1000)
    assert 1 / 1001 <= p < 0.01


def test_bootstrap_with_a_fixed_seed():
    a = [0, 0, 0, 0]
    b = [1, 0, 0, 0]  # d = [1, 0, 0, 0], mean 0.25
    low, high = bootstrap_ci(a, b, resamples=10_000, seed=7)
    # the resampled mean is k/4 with k ~ Binomial(4, 1/4): P(k=0) = 0.316, P(k<=2) = 0.949, P(k<=3) = 0.996
    assert low == 0.0
    assert high == 0.75
    assert bootstrap_ci(a, b, resamples=10_000, seed=7) == (low, high)  # deterministic


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.04 with m = 3: 3*0.01 = 0.03, 2*0.02 = 0.04, 1*0.04 = 0.04
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    # monotone: 1*0.3 = 0.3 may not fall below the earlier 2*0.2 = 0.4 -> both 0.4
    assert holm([0.2, 0.3]) == pytest.approx([0.4, 0.4])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])


def test_compare_counts_wins_ties_losses():
    a = [1, 0, 0.5, 1]
    b = [1, 1, 0.0, 1]
    c = compare(a, b, "pass_at_5", permutations=2000)
    assert (c.wins, c.ties, c.losses) == (1, 2, 1)
    assert c.baseline == pytest.approx(2.5 / 4)
    assert c.value == pytest.approx(3 / 4)
    assert c.difference == pytest.approx(0.125)
    assert c.ci_low <= c.difference <= c.ci_high
    assert not c.significant


def test_flipped_questions():
    assert flipped([1, 0, 1, 0], [1, 1, 0, 0]) == ([1], [2])


def test_unpaired_input_is_an_error():
    with pytest.raises(ValueError, match="paired scores"):
        randomization_test([1, 2], [1])
