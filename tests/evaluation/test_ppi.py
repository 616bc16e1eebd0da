"""Prediction-powered inference by hand on tiny arrays, and its coverage against a biased judge."""

from __future__ import annotations

import math

import numpy as np
import pytest

from situate.errors import SituateError
from situate.evaluation.ppi import (
    PPIEstimate,
    labels_needed,
    ppi_difference,
    ppi_mean,
    tuned_lambda,
    z_of,
)

Z = 1.959963984540054  # the 97.5% normal quantile
# N = 5 questions judged; the first 3 labelled by a person
F_ALL = [1.0, 0.5, 0.0, 1.0, 0.5]
F_LAB = [1.0, 0.5, 0.0]
Y_LAB = [1.0, 0.0, 0.0]


def test_z_is_the_normal_quantile():
    assert z_of(0.95) == pytest.approx(Z, abs=1e-12)


def test_classic_ppi_by_hand():
    e = ppi_mean(F_ALL, F_LAB, Y_LAB)
    # mean_N(f) = 3/5 = 0.6; f - y = [0, 0.5, 0], mean 1/6; theta = 0.6 - 1/6
    assert e.judge_mean == pytest.approx(0.6)
    assert e.bias == pytest.approx(1 / 6)
    assert e.mean == pytest.approx(0.6 - 1 / 6)
    # var_N(f): deviations .4 -.1 -.6 .4 -.1, squares sum .70, / 4 = .175
    assert e.var_judge == pytest.approx(0.175)
    # var_n(f - y): deviations -1/6 1/3 -1/6, squares sum 1/6, / 2 = 1/12
    assert e.var_rectifier == pytest.approx(1 / 12)
    # half = z sqrt(.175/5 + (1/12)/3) = z sqrt(.035 + .027778) = z * .250555
    half = Z * math.sqrt(0.175 / 5 + (1 / 12) / 3)
    assert half == pytest.approx(0.49108, abs=1e-5)
    assert (e.ci_low, e.ci_high) == pytest.approx((e.mean - half, e.mean + half))
    # the judge alone: 0.6 +- z sqrt(.035) = 0.6 +- .366675
    assert e.judge_ci == pytest.approx((0.6 - 0.366675, 0.6 + 0.366675), abs=1e-5)
    # the bias: 1/6 +- z sqrt((1/12)/3) = 1/6 +- z/6
    assert e.bias_ci == pytest.approx((1 / 6 - Z / 6, 1 / 6 + Z / 6))
    assert (e.lam, e.n, e.big_n) == (1.0, 3, 5)


def test_ppi_plus_plus_by_hand():
    # f_lab mean .5, y mean 1/3: cov = (.5 * 2/3 + 0 + (-.5)(-1/3)) / 2 = .25; var_n(f) = .25;
    # lambda = .25 / ((1 + 3/5) * .25) = .625
    assert tuned_lambda(F_ALL, F_LAB, Y_LAB) == pytest.approx(0.625)
    e = ppi_mean(F_ALL, F_LAB, Y_LAB, tuned=True)
    # .625 f - y = [-.375, .3125, 0], mean -.0625/3; theta = .625 * .6 + .0625/3 = .3958333
    assert e.mean == pytest.approx(0.375 + 0.0625 / 3)
    # var(.625 f - y): squares of deviations .125434 .111111 .000434, sum .236979, / 2 = .118490
    assert e.var_rectifier == pytest.approx(0.1184896, abs=1e-7)
    # half = z sqrt(.625^2 * .175/5 + .118490/3) = z sqrt(.0531684) = .451934
    assert e.half_width == pytest.approx(0.451934, abs=1e-5)
    # the judge's bias is reported as is (lambda does not enter it)
    assert e.bias == pytest.approx(1 / 6)
    # tuning never widens the interval on the data it tuned on
    assert e.half_width < ppi_mean(F_ALL, F_LAB, Y_LAB).half_width


def test_lambda_is_clipped_and_defined_for_a_constant_judge():
    # a judge anticorrelated with the person: cov < 0, lambda clipped to 0 (the labels alone)
    assert tuned_lambda([1, 0, 1, 0], [1, 0], [0, 1]) == 0.0
    e = ppi_mean([1, 0, 1, 0], [1, 0], [0, 1], tuned=True)
    assert e.mean == pytest.approx(0.5)  # mean_n(y)
    assert tuned_lambda([1, 1, 0], [1, 1], [0, 1]) == 1.0  # var_n(f) = 0: nothing to tune


def test_the_difference_of_two_arms_is_paired_by_question():
    a_all, b_all = [0, 1, 0, 1], [1, 1, 1, 0]
    e = ppi_difference(a_all, b_all, [0, 1], [1, 1], [0, 0], [0, 1])
    # d = b - a = [1, 0, 1, -1], mean .25; d_f = [1, 0], d_y = [0, 1], d_f - d_y = [1, -1], mean 0
    assert e.mean == pytest.approx(0.25) and e.bias == pytest.approx(0.0)
    # var_N(d): deviations .75 -.25 .75 -1.25, squares sum 2.75, / 3; var(d_f - d_y) = 2 / 1
    # half = z sqrt(.916667/4 + 2/2) = z * 1.108678
    assert e.half_width == pytest.approx(Z * math.sqrt(2.75 / 3 / 4 + 1.0))
    assert e.half_width == pytest.approx(2.17297, abs=1e-5)


def test_a_judge_that_agrees_with_the_person_keeps_its_mean():
    e = ppi_mean(F_ALL, F_LAB, F_LAB)
    assert e.mean == pytest.approx(e.judge_mean) and e.bias == 0.0 and e.var_rectifier == 0.0
    assert e.half_width == pytest.approx(e.judge_mean - e.judge_ci[0])


def test_one_labelled_question_is_too_few():
    with pytest.raises(SituateError, match="at least 2 labelled questions"):
        ppi_mean(F_ALL, [1.0], [1.0])
    with pytest.raises(ValueError):
        ppi_mean(F_ALL, [1.0, 0.0], [1.0])


def _estimate(var_judge, big_n, var_rect, n, lam=1.0) -> PPIEstimate:
    return PPIEstimate(
        0.5, 0.4, 0.6, 0.5, (0.45, 0.55), 0.0, (0.0, 0.0), lam, n, big_n, var_judge, var_rect, 0.95
    )


def test_labels_needed_by_hand():
    # z^2 = 3.841459; judge part = 3.841459 * .04 / 1000 = 1.53658e-4;
    # room = .02^2 - 1.53658e-4 = 2.46342e-4; n = 3.841459 * .01 / 2.46342e-4 = 155.94 -> 156
    need = labels_needed(_estimate(0.04, 1000, 0.01, 20))
    assert (need.n, need.more) == (156, 136)
    assert (
        need.line() == "136 more human-labelled questions would narrow the interval to +-2 points"
    )
    assert "(about 408 (question, chunk) labels)" in need.line(per_question=3)  # 136 * 3
    # with lambda = .5: judge part / 4 = 3.84146e-5; room = 3.61585e-4; n = 106.24 -> 107
    assert labels_needed(_estimate(0.04, 1000, 0.01, 20, lam=0.5)).n == 107
    # already narrow: n = 156 labelled now
    assert labels_needed(_estimate(0.04, 1000, 0.01, 200)).more == 0
    assert "already within +-2 points" in labels_needed(_estimate(0.04, 1000, 0.01, 200)).line()


def test_no_number_of_labels_suffices_when_the_judge_part_is_wider():
    # judge part: z^2 * .25 / 100 = .0096 > .0004: sqrt = .098 (9.8 points)
    need = labels_needed(_estimate(0.25, 100, 0.01, 20))
    assert need.n is None and need.more is None
    assert need.judge_half_width == pytest.approx(Z * 0.05)
    assert need.line() == (
        "no number of human labels would narrow the interval to +-2 points: the judge-only part "
        "alone is +-9.8 points (more questions would)"
    )


def test_ppi_covers_the_truth_that_a_biased_judge_misses():
    """400 replications of N = 1000 questions, 100 of them labelled at random: the true per-question
    metric is 1 with probability .4, and the judge calls 30% of the 0s a 1 (its mean is .58)."""
    rng = np.random.default_rng(7)
    truth, big_n, n, reps = 0.4, 1000, 100, 400
    covered = {"ppi": 0, "ppi++": 0, "judge": 0}
    for _ in range(reps):
        y = (rng.random(big_n) < truth).astype(float)
        f = np.where((y == 0) & (rng.random(big_n) < 0.3), 1.0, y)
        lab = rng.choice(big_n, n, replace=False)
        for name, tuned in (("ppi", False), ("ppi++", True)):
            e = ppi_mean(f, f[lab], y[lab], tuned=tuned)
            covered[name] += e.ci_low <= truth <= e.ci_high
        covered["judge"] += e.judge_ci[0] <= truth <= e.judge_ci[1]
    assert 0.92 <= covered["ppi"] / reps <= 0.98, covered
    assert 0.92 <= covered["ppi++"] / reps <= 0.98, covered
    assert covered["judge"] / reps < 0.05, covered
