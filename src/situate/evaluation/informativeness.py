"""How informative is a question set? Saturation, power, the metric that separates, a verdict.

A question set is run through several arms (configurations); this module says whether its
questions can tell those arms apart, before anyone picks a configuration from it. It takes, for
each metric, every arm's per-question scores on the same questions (``{metric: {arm: scores}}``,
scores in [0, 1]: 0/1 hits, fractional Pass@k, recall@k, MRR, nDCG; NaN marks a question the
metric does not score, left out of that metric for every arm) and returns plain dataclasses:

- **saturation** (:class:`MetricSaturation`): each arm's mean; the share of questions every arm
  *solves* (scores at the metric's maximum, 1.0: a hit for a 0/1 metric, every gold span found
  for a fractional Pass@k, the first rank for MRR) and the share *no* arm gets anything for
  (every arm scores 0); the share on which at least two arms score differently, the only
  questions that can separate them;
- **power** (:class:`PairPower`), for each compared pair (every arm against ``baseline`` when one
  is given, else every pair of arms) from the paired per-question differences
  d = score(arm) - score(versus), sd(d) with n - 1 degrees of freedom:

  - the *minimum detectable difference* (MDE) of the two-sided paired t-test at level alpha and
    power 1 - beta with the set's n questions: MDE = sd(d) * es, where the standardized effect
    es solves power(es, n) = 1 - beta exactly on the noncentral t distribution,
    power(es, n) = P(|T'| > t_{1-alpha/2, n-1}) with T' ~ t'(n - 1, es * sqrt(n))
    (:func:`paired_t_power`; Cohen, "Statistical Power Analysis for the Behavioral Sciences",
    2nd ed. 1988, ch. 2). Its normal approximation is
    MDE ~ (z_{1-alpha/2} + z_{1-beta}) * sd(d) / sqrt(n) = 2.80 * sd(d) / sqrt(n) at 80% and
    0.05; the t version is larger on small sets (by 0.7% at n = 131, 12% at n = 10). The sd is
    estimated from the same questions, so it is the set's sensitivity to a true difference of
    that size, not a test of the difference observed;
  - the *questions needed* to detect a difference of 2 and 5 points (``effects``): Sakai's
    t-test-based topic set size design (Sakai, "Topic set size design", Information Retrieval
    Journal 19(3):256-283, 2016, section 4.1), the smallest n whose paired t-test power at
    minD = effect / sd(d) reaches 1 - beta. Sakai starts from the normal approximation with a
    correction, n0 = ((z_{1-alpha/2} + z_{1-beta}) / minD)^2 + z_{1-alpha/2}^2 / 2, then steps
    n up until the power reaches 1 - beta; here the step is checked on the exact noncentral t
    (``scipy.stats.nct``) where Sakai's tool uses a normal approximation of it, and n is also
    stepped down while n - 1 still suffices, so the answer is the exact smallest n (n0 is only
    the starting point; :func:`questions_needed`);
  - a pair whose arms never differ on any question (sd(d) = 0 and d = 0) has no detectable
    difference at all (MDE infinite, no n): this set cannot separate them; a pair that differs
    by the same amount on every question (sd(d) = 0, d != 0) is separated with certainty
    (MDE 0);
- **stability** (:attr:`MetricInformativeness.stability`): how alike two random halves of the
  set's questions order the arms at one metric, Kendall's tau-a between the halves' means (the
  net share of pairs of arms both halves order alike; a pair tied in a half counts for neither,
  so a metric that cannot tell arms apart is not rewarded for tying them in both), the median
  over ``Thresholds.halves`` seeded splits (the split-half reliability of a ranking; Voorhees
  and Buckley, "The effect of topic set size on retrieval experiment error", SIGIR 2002, count
  the swaps between two such halves); NaN below 4 questions;
- **the recommended metric** (:attr:`Informativeness.headline`): the metric, among those given,
  that orders the arms most reproducibly on this set, a value for ``report.headline`` when the
  metric names are the report's (``pass_at_5``, ``recall_at_20``, ``mrr``): metrics neither
  saturated nor floored first, then not underpowered, then the highest stability (to two
  decimals, the resolution of the splits' median), then the most *separated* pairs
  (|mean d| >= MDE: the set detects a true difference of the size observed with 80% power;
  stricter than p < 0.05, which asks about 1.96 standard errors where the MDE is about 2.8),
  then the largest mean |mean d| / MDE over the compared pairs; the first metric given wins a
  tie. Stability comes before separated pairs because a set that is to rank the arms as other
  questions would must first order them alike on its own halves, and a metric on which many
  pairs differ significantly may still leave others tied or swapped: on COVID-QA's 98 papers
  (16 arms, three generated sets) the most stable metric agreed with the 1,380 human questions
  as well as the one with the most separated pairs or better (tau +0.83 / +0.89 / +0.86 at the
  recommended metric against +0.83 / +0.89 / +0.86), and on their PDF pages it chose the same
  metric (docs/research/recommended-metric.md);
- **a verdict**: at that metric the set *cannot separate the arms it compares* when it is
  saturated, floored, underpowered or unstable (:class:`Thresholds`); then
  :attr:`Informativeness.warning` is one line for the run log and
  :attr:`Informativeness.paragraph` says it in words a stakeholder reads, ending "Do not pick a
  configuration from it."; :func:`markdown_lines` puts the paragraph and the tables behind it
  in Markdown for a report.

The result's dataclasses and every sentence above are
:mod:`situate.evaluation.informativeness_result`; this module computes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import combinations

import numpy as np

from situate.errors import SituateError
from situate.evaluation.agreement import split_half, tau_a
from situate.evaluation.informativeness_result import (
    Informativeness,
    MetricInformativeness,
    MetricSaturation,
    PairPower,
    Thresholds,
    median_mde,
)
from situate.evaluation.statistics import paired_differences

DEFAULTS = Thresholds()  # the verdict's thresholds unless a caller sets its own
_SOLVED = 1e-9  # a score within this of the maximum solves the question; within this of 0, nothing


def paired_t_power(effect_size: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` pairs at the standardized effect
    ``effect_size`` = delta / sd(d): P(|T'| > t_{1-alpha/2, n-1}), T' ~ t'(n - 1, es * sqrt(n))."""
    from scipy.stats import nct, t

    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs, got {n}")
    df = n - 1
    critical = t.ppf(1 - alpha / 2, df)
    noncentrality = abs(effect_size) * math.sqrt(n)
    upper = float(nct.sf(critical, df, noncentrality))
    lower = float(nct.cdf(-critical, df, noncentrality))  # NaN where it underflows far below 1e-20
    return upper + (lower if math.isfinite(lower) else 0.0)


@lru_cache(maxsize=1024)  # the same for every pair of a metric: solved once per n
def detectable_effect_size(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The standardized effect delta / sd(d) the paired t-test with ``n`` pairs detects with
    probability ``power`` (solved on the noncentral t; inf below 2 pairs)."""
    from scipy.optimize import brentq
    from scipy.stats import norm, t

    if n < 2:
        return math.inf

    def short(nc: float) -> float:  # power at noncentrality nc, minus the target
        return paired_t_power(nc / math.sqrt(n), n, alpha) - power

    high = 2 * (t.ppf(1 - alpha / 2, n - 1) + norm.ppf(power))  # power is above the target there
    while short(high) < 0:
        high *= 2
    return brentq(short, 0.0, high, xtol=1e-10) / math.sqrt(n)


def minimum_detectable_difference(
    sd: float, n: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """sd(d) * the detectable standardized effect at ``n`` pairs (inf below 2 pairs)."""
    if n < 2:
        return math.inf
    return sd * detectable_effect_size(n, alpha, power) if sd > 0 else 0.0


def questions_needed(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Sakai's (2016) topic set size: the smallest n >= 2 whose paired t-test power at
    minD = effect / sd reaches ``power``, from n0 = ((z_{1-a/2} + z_{power}) / minD)^2 +
    z_{1-a/2}^2 / 2 stepped on the exact noncentral t. ``sd`` > 0 and ``effect`` > 0."""
    from scipy.stats import norm

    if sd <= 0 or effect <= 0:
        raise ValueError(f"questions_needed: effect and sd must be positive, got {effect}, {sd}")
    min_d = effect / sd
    z_alpha, z_power = norm.ppf(1 - alpha / 2), norm.ppf(power)
    n = max(2, math.ceil(((z_alpha + z_power) / min_d) ** 2 + z_alpha**2 / 2))
    while paired_t_power(min_d, n, alpha) < power:
        n += 1
    while n > 2 and paired_t_power(min_d, n - 1, alpha) >= power:
        n -= 1
    return n


def pair_power(
    metric: str,
    arm: str,
    versus: str,
    scores: Sequence[float],
    versus_scores: Sequence[float],
    thresholds: Thresholds = DEFAULTS,
) -> PairPower:
    """MDE and questions needed for ``arm`` against ``versus`` from their per-question scores."""
    d = paired_differences(versus_scores, scores)
    n = len(d)
    sd = float(np.std(d, ddof=1)) if n >= 2 else 0.0
    difference = float(d.mean()) if n else 0.0
    if n < 2 or not d.any():  # no pairs to test, or the arms never differ: nothing detectable
        mde, needed = math.inf, {e: None for e in thresholds.effects}
    elif sd == 0:  # the same nonzero difference on every question
        mde, needed = 0.0, {e: None for e in thresholds.effects}
    else:
        mde = minimum_detectable_difference(sd, n, thresholds.alpha, thresholds.power)
        needed = {
            e: questions_needed(e, sd, thresholds.alpha, thresholds.power)
            for e in thresholds.effects
        }
    return PairPower(metric, arm, versus, n, difference, sd, mde, needed)


def saturation(
    metric: str, scores: Mapping[str, np.ndarray], thresholds: Thresholds = DEFAULTS
) -> MetricSaturation:
    """Means and shares of solved / unsolved / discriminating questions of one metric (arms'
    scores aligned on the same questions, without NaN)."""
    matrix = np.vstack([scores[a] for a in scores])  # arms x questions
    n = matrix.shape[1]
    means = {a: float(matrix[i].mean()) if n else 0.0 for i, a in enumerate(scores)}
    all_solved = float(np.mean(np.all(matrix >= 1.0 - _SOLVED, axis=0))) if n else 0.0
    none_solved = float(np.mean(np.all(matrix <= _SOLVED, axis=0))) if n else 0.0
    spread = matrix.max(axis=0) - matrix.min(axis=0) if n else np.zeros(0)
    discriminating = float(np.mean(spread > _SOLVED)) if n else 0.0
    graded = bool(np.any((matrix > _SOLVED) & (matrix < 1.0 - _SOLVED)))
    t = thresholds
    saturated = all_solved > t.saturated_share or min(means.values()) > t.saturated_mean
    floored = none_solved > t.floored_share or max(means.values()) < t.floored_mean
    return MetricSaturation(
        metric, n, means, all_solved, none_solved, discriminating, graded, saturated, floored
    )


def informativeness(
    scores: Mapping[str, Mapping[str, Sequence[float]]],
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULTS,
) -> Informativeness:
    """Saturation, power, stability, the recommended metric and a verdict for one question set.

    ``scores`` maps each metric (the report's names: ``pass_at_5``, ``mrr``) to each arm's
    per-question scores, every arm on the same questions in the same order; NaN leaves a
    question out of that metric. ``baseline`` (an arm): compare every other arm with it; None
    compares every pair of arms.
    """
    if not scores:
        raise SituateError("informativeness: no metric given; pass {metric: {arm: scores}}")
    arms = list(next(iter(scores.values())))
    if len(arms) < 2:
        raise SituateError(f"informativeness: needs two or more arms to compare, got {arms}")
    if baseline is not None and baseline not in arms:
        raise SituateError(
            f"informativeness: baseline {baseline!r} is not one of the arms ({', '.join(arms)})"
        )
    metrics = {}
    for metric, by_arm in scores.items():
        if set(by_arm) != set(arms):
            raise SituateError(
                f"informativeness: metric {metric} has arms {sorted(by_arm)}, the first metric "
                f"{sorted(arms)}; every metric needs the same arms"
            )
        metrics[metric] = _metric(metric, {a: by_arm[a] for a in arms}, baseline, thresholds)
    order = list(metrics)
    headline = max(
        order,
        key=lambda m: (
            not (metrics[m].saturation.saturated or metrics[m].saturation.floored),
            not metrics[m].underpowered,
            -1.0 if math.isnan(metrics[m].stability) else round(metrics[m].stability, 2),
            metrics[m].separated,
            metrics[m].mean_ratio,
            -order.index(m),
        ),
    )
    return Informativeness(arms, baseline, metrics, headline, thresholds)


def _metric(
    metric: str,
    by_arm: Mapping[str, Sequence[float]],
    baseline: str | None,
    thresholds: Thresholds,
) -> MetricInformativeness:
    arrays = {a: np.asarray(v, dtype=float) for a, v in by_arm.items()}
    lengths = {a: v.shape for a, v in arrays.items()}
    if len(set(lengths.values())) > 1 or any(len(s) != 1 for s in lengths.values()):
        raise SituateError(
            f"informativeness: {metric} scores must be one vector per arm over the same "
            f"questions, got shapes {lengths}"
        )
    keep = ~np.any(np.isnan(np.vstack(list(arrays.values()))), axis=0)
    arrays = {a: v[keep] for a, v in arrays.items()}
    if not keep.any():
        raise SituateError(
            f"informativeness: {metric} scores none of the questions in every arm (NaN marks a "
            "question it does not score); leave that metric out"
        )
    if baseline is not None:
        pairs = [(a, baseline) for a in arrays if a != baseline]
    else:
        pairs = [(b, a) for a, b in combinations(arrays, 2)]
    powers = [pair_power(metric, a, v, arrays[a], arrays[v], thresholds) for a, v in pairs]
    underpowered = not any(p.separated for p in powers) and median_mde(powers) > thresholds.max_mde
    stability = _stability(arrays, thresholds.halves)
    unstable = not math.isnan(stability) and stability < thresholds.min_stability
    return MetricInformativeness(
        metric, saturation(metric, arrays, thresholds), powers, underpowered, stability, unstable
    )


def _stability(arrays: Mapping[str, np.ndarray], splits: int) -> float:
    """The median tau-a of two random halves' orderings of the arms (seeded); NaN below 4
    questions, where a half of 1 question orders nothing."""
    n = len(next(iter(arrays.values())))
    if n < 4:
        return math.nan
    return split_half(arrays, splits=splits, statistic=tau_a).tau
