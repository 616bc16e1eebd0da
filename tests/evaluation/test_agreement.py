"""Synthetic against human question sets: Kendall's tau of the arm orderings, per-arm differences."""

from __future__ import annotations

import pytest

from situate.errors import SituateError
from situate.evaluation.agreement import difference_ci, set_agreement, split_half, tau_a, tau_b

# four arms, each set's per-question Pass@5 (human: 4 questions, synthetic: 2)
HUMAN = {
    "none+dense": [0, 0, 1, 1],  # mean 0.50
    "none+rrf": [0, 1, 1, 1],  # 0.75
    "heading+dense": [0, 1, 1, 1],  # 0.75 (tied with none+rrf)
    "heading+rrf": [1, 1, 1, 1],  # 1.00
}
SYNTHETIC = {
    "none+dense": [0, 0],  # 0.0
    "none+rrf": [1, 0],  # 0.5
    "heading+dense": [0, 0],  # 0.0
    "heading+rrf": [1, 1],  # 1.0
}


def test_tau_counts_pairs_and_ties_by_hand():
    # pairs of arms (human order, synthetic order): nd<nr (< <) concordant; nd<hd (< =) tied in
    # synthetic; nd<hr (< <) concordant; nr=hd (= >) tied in human; nr<hr (< <) concordant;
    # hd<hr (< <) concordant. tau-b = (C - D) / sqrt((n0 - T_h)(n0 - T_s))
    # = (4 - 0) / sqrt((6 - 1)(6 - 1)) = 0.8
    result = set_agreement(HUMAN, SYNTHETIC, resamples=2000)
    assert result.tau == pytest.approx(0.8)
    assert 0 < result.p_value < 1
    by_arm = {a.arm: a for a in result.arms}
    assert (by_arm["none+rrf"].human, by_arm["none+rrf"].synthetic) == (0.75, 0.5)
    assert by_arm["none+dense"].difference == pytest.approx(-0.5)
    assert by_arm["heading+rrf"].difference == 0.0
    # every question of heading+rrf passes on both sets: no resample can differ
    assert (by_arm["heading+rrf"].ci_low, by_arm["heading+rrf"].ci_high) == (0.0, 0.0)


def test_a_reversed_ordering_is_tau_minus_one():
    human = {"a": [0.1], "b": [0.2], "c": [0.3]}
    synthetic = {"a": [0.9], "b": [0.5], "c": [0.1]}
    assert set_agreement(human, synthetic, resamples=100).tau == pytest.approx(-1.0)
    flat = {"a": [0.5], "b": [0.5], "c": [0.5]}  # no ordering at all: no agreement claimed
    result = set_agreement(human, flat, resamples=100)
    assert (result.tau, result.p_value) == (0.0, 1.0)


def test_tau_a_keeps_a_tied_pair_in_the_denominator():
    # x ties arms 0 and 1; y orders all three: pairs (0,1) tied in x (counts 0), (0,2) and (1,2)
    # concordant: tau-a = (2 - 0) / 3; tau-b leaves the tie out: 2 / sqrt((3 - 1) * 3) = 0.8165
    assert tau_a([1, 1, 2], [1, 2, 3]) == pytest.approx([2 / 3])
    assert tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx([2 / 6**0.5])
    # both rows tie the same pair: tau-b calls that perfect agreement, tau-a does not
    assert tau_b([1, 1, 2], [5, 5, 9]) == pytest.approx([1.0])
    assert tau_a([1, 1, 2], [5, 5, 9]) == pytest.approx([2 / 3])
    # a row each: alike, reversed, and a flat row that orders nothing
    rows = tau_a([[1, 2, 3], [1, 2, 3], [4, 4, 4]], [[1, 2, 3], [3, 2, 1], [1, 2, 3]])
    assert rows == pytest.approx([1.0, -1.0, 0.0])
    assert tau_a([[7]], [[3]]) == pytest.approx([0.0])  # one arm: no pair


def test_a_part_of_one_question_against_the_other_three_by_hand():
    arms = {"a": [1, 1, 1, 1], "b": [0, 0, 0, 0], "c": [1, 0, 0, 0]}
    # question 0 alone: a = c > b, against a > c = b: only a-b ordered alike in both, tau-a 1/3;
    # any other alone: a > b = c, against a > c > b: a-b and a-c, tau-a 2/3 (three splits in four)
    alone = split_half(arms, splits=400, statistic=tau_a, part=1)
    assert alone.half == 1
    assert alone.tau == pytest.approx(2 / 3) and alone.low == pytest.approx(1 / 3)
    with pytest.raises(SituateError, match="a part of 4 of 4 questions leaves no other part"):
        split_half(arms, part=4)


def test_split_half_with_tau_a_counts_arms_every_half_ties():
    # a and b identical, c solves 50 more of 100 questions: every half puts c above both and ties
    # a with b, so each split's tau-a is 2/3 (tau-b: 1, the tie left out)
    a = [1.0] * 50 + [0.0] * 50
    arms = {"a": a, "b": list(a), "c": [1.0] * 100}
    assert split_half(arms, splits=100, statistic=tau_a).tau == pytest.approx(2 / 3)
    assert split_half(arms, splits=100).tau == pytest.approx(1.0)


def test_difference_interval_resamples_each_set_on_its_own():
    # human [0, 1]: a resample's mean is 0 (p = 1/4), 0.5 (1/2) or 1 (1/4); synthetic [1, 1] is
    # always 1. synthetic - human is 1, 0.5 or 0 with those odds: the 2.5% quantile is 0 and the
    # 97.5% quantile is 1.
    low, high = difference_ci([0, 1], [1, 1], resamples=4000, seed=3)
    assert (low, high) == (0.0, 1.0)
    # a 40% interval (the 30% and 70% quantiles) falls inside the middle value's half: 0.5, 0.5
    assert difference_ci([0, 1], [1, 1], resamples=4000, confidence=0.4, seed=3) == (0.5, 0.5)


def test_sets_of_other_arms_are_refused_in_one_line():
    with pytest.raises(SituateError, match="same two or more arms"):
        set_agreement({"a": [1], "b": [0]}, {"a": [1], "c": [0]})
    with pytest.raises(SituateError, match="at least one scored question"):
        difference_ci([], [1])
