"""Prediction-powered inference: a judge's mean corrected by a few human labels.

A judge grades every question of a set; a person grades a few. The judge's mean is biased by
its mistakes, and a bootstrap over questions covers only the sampling, not that bias. PPI
(Angelopoulos et al., "Prediction-powered inference", Science 382, 2023; ARES, Saad-Falcon et
al. 2023, uses it for RAG judges) subtracts the bias measured on the labelled questions:

    theta_pp = mean_N(f) - mean_n(f - y)
    CI       = theta_pp +- z * sqrt(var_N(f) / N + var_n(f - y) / n)

with ``f`` the judged per-question metric (every one of the N questions) and ``y`` the human one
(the n labelled questions, their ``f`` beside it). The second term, the "rectifier", is the
judge's estimated bias; its variance is what a few labels cost in width.

PPI++ (Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered inference", 2023)
weighs the judge by ``lambda``:

    theta_lambda = lambda * mean_N(f) - mean_n(lambda * f - y)
    var          = lambda^2 var_N(f) / N + var_n(lambda * f - y) / n
    lambda*      = cov_n(f, y) / ((1 + n / N) var_n(f))     (the variance's minimum)

clipped to [0, 1]: lambda = 1 is classic PPI, lambda = 0 the human labels alone (a judge that
tells nothing about the human grades gets no weight). Estimating lambda on the same labels costs
nothing asymptotically.

Here N counts every question, the labelled ones included (the judge grades them all), as the
formula above reads; the classic interval ignores the covariance this adds, which is of order
1/N beside the rectifier's 1/n (measured by the coverage test). Variances are sample variances
(ddof 1). A difference of two arms is the same estimate on per-question differences (paired by
question): f = f_b - f_a, y = y_b - y_a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from situate.errors import SituateError


def z_of(confidence: float) -> float:
    """The two-sided normal quantile: 1.95996... for 0.95."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class PPIEstimate:
    """One mean, corrected by the labelled questions."""

    mean: float  # theta: the corrected estimate
    ci_low: float
    ci_high: float
    judge_mean: float  # mean_N(f): the judge alone
    judge_ci: tuple[float, float]  # its normal interval (sampling of questions only)
    bias: float  # mean_n(f - y): the judge's estimated bias on the labelled questions
    bias_ci: tuple[float, float]
    lam: float  # 1.0 for classic PPI; PPI++'s tuned weight otherwise
    n: int  # labelled questions
    big_n: int  # all questions
    var_judge: float  # var_N(f)
    var_rectifier: float  # var_n(lambda * f - y)
    confidence: float

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2


def _arrays(f_all, f_labelled, y_labelled):
    f_all = np.asarray(f_all, dtype=float)
    f_lab = np.asarray(f_labelled, dtype=float)
    y_lab = np.asarray(y_labelled, dtype=float)
    if f_all.ndim != 1 or f_lab.shape != y_lab.shape or f_lab.ndim != 1:
        raise ValueError(
            f"PPI needs f over all questions and f, y of one length over the labelled ones, got "
            f"{f_all.shape}, {f_lab.shape}, {y_lab.shape}"
        )
    if len(f_lab) < 2 or len(f_all) < 2:
        raise SituateError(
            f"prediction-powered inference needs at least 2 labelled questions and 2 in all "
            f"(got {len(f_lab)} of {len(f_all)}); label more questions"
        )
    return f_all, f_lab, y_lab


def tuned_lambda(f_all, f_labelled, y_labelled) -> float:
    """PPI++'s weight of the judge: cov_n(f, y) / ((1 + n/N) var_n(f)), clipped to [0, 1]
    (1.0 where the judge's labelled values do not vary: nothing to tune)."""
    f_all, f_lab, y_lab = _arrays(f_all, f_labelled, y_labelled)
    n, big_n = len(f_lab), len(f_all)
    var_f = float(np.var(f_lab, ddof=1))
    if var_f == 0.0:
        return 1.0
    cov = float(np.cov(f_lab, y_lab, ddof=1)[0, 1])
    return float(np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0))


def ppi_mean(
    f_all, f_labelled, y_labelled, confidence: float = 0.95, tuned: bool = False
) -> PPIEstimate:
    """The PPI (``tuned``: PPI++) estimate of the mean of y and its normal interval.

    ``f_all``: the judged value of every question (N); ``f_labelled`` and ``y_labelled``: the
    judged and the human value of each labelled question (n), in one order.
    """
    f_all, f_lab, y_lab = _arrays(f_all, f_labelled, y_labelled)
    n, big_n = len(f_lab), len(f_all)
    z = z_of(confidence)
    lam = tuned_lambda(f_all, f_lab, y_lab) if tuned else 1.0
    rect = lam * f_lab - y_lab
    var_judge = float(np.var(f_all, ddof=1))
    var_rect = float(np.var(rect, ddof=1))
    theta = lam * float(f_all.mean()) - float(rect.mean())
    half = z * math.sqrt(lam**2 * var_judge / big_n + var_rect / n)
    judge_mean = float(f_all.mean())
    judge_half = z * math.sqrt(var_judge / big_n)
    diff = f_lab - y_lab
    bias = float(diff.mean())
    bias_half = z * math.sqrt(float(np.var(diff, ddof=1)) / n)
    return PPIEstimate(
        theta, theta - half, theta + half, judge_mean,
        (judge_mean - judge_half, judge_mean + judge_half), bias,
        (bias - bias_half, bias + bias_half), lam, n, big_n, var_judge, var_rect, confidence,
    )  # fmt: skip


def ppi_difference(
    f_all_a,
    f_all_b,
    f_labelled_a,
    f_labelled_b,
    y_labelled_a,
    y_labelled_b,
    confidence: float = 0.95,
    tuned: bool = False,
) -> PPIEstimate:
    """The PPI estimate of mean(y_b - y_a), paired by question: :func:`ppi_mean` of the
    per-question differences (all arrays in one question order)."""
    d_all = np.asarray(f_all_b, dtype=float) - np.asarray(f_all_a, dtype=float)
    d_f = np.asarray(f_labelled_b, dtype=float) - np.asarray(f_labelled_a, dtype=float)
    d_y = np.asarray(y_labelled_b, dtype=float) - np.asarray(y_labelled_a, dtype=float)
    return ppi_mean(d_all, d_f, d_y, confidence, tuned)


@dataclass(frozen=True)
class LabelsNeeded:
    """How many labelled questions an interval of ``+- half_width`` needs."""

    half_width: float
    n: int | None  # labelled questions in all; None when no n suffices
    more: int | None  # beyond the ones labelled now (0 when already narrow enough)
    judge_half_width: float  # the judge-only term's own half-width (z * lambda * sd_N(f)/sqrt(N))

    def line(self, per_question: float | None = None) -> str:
        """The sentence the reports print (``per_question``: human labels per labelled question
        now, to say the count in labels as well)."""
        pts = f"+-{100 * self.half_width:g} points"
        if self.n is None:
            return (
                f"no number of human labels would narrow the interval to {pts}: the judge-only "
                f"part alone is +-{100 * self.judge_half_width:.1f} points (more questions would)"
            )
        if self.more == 0:
            return f"the interval is already within {pts}"
        labels = (
            f" (about {math.ceil(self.more * per_question)} (question, chunk) labels)"
            if per_question
            else ""
        )
        return (
            f"{self.more} more human-labelled questions{labels} would narrow the interval to {pts}"
        )


def labels_needed(estimate: PPIEstimate, half_width: float = 0.02) -> LabelsNeeded:
    """Solve z^2 (lambda^2 var_N(f)/N + var(lambda f - y)/n) = half_width^2 for n, holding the
    observed variances, lambda and N fixed: n = z^2 var(lambda f - y) / (half_width^2 -
    z^2 lambda^2 var_N(f)/N) where the denominator is positive; None where it is not (the
    judge-only part alone is as wide)."""
    z = z_of(estimate.confidence)
    judge_part = z**2 * estimate.lam**2 * estimate.var_judge / estimate.big_n
    room = half_width**2 - judge_part
    judge_half = math.sqrt(judge_part)
    if room <= 0:
        return LabelsNeeded(half_width, None, None, judge_half)
    n = max(2, math.ceil(z**2 * estimate.var_rectifier / room))  # PPI's least
    return LabelsNeeded(half_width, n, max(0, n - estimate.n), judge_half)
