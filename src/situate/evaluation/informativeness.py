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
  metric (docs/questions.md);
- **a verdict**: at that metric the set *cannot separate the arms it compares* when it is
  saturated, floored, underpowered or unstable (:class:`Thresholds`); then
  :attr:`Informativeness.warning` is one line for the run log and
  :attr:`Informativeness.paragraph` says it in words a stakeholder reads, ending "Do not pick a
  configuration from it."; :func:`markdown_lines` puts the paragraph and the tables behind it
  in Markdown for a report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations

import numpy as np

from situate.errors import SituateError
from situate.evaluation.agreement import split_half, tau_a
from situate.evaluation.statistics import paired_differences

_SOLVED = 1e-9  # a score within this of the maximum solves the question; within this of 0, nothing


@dataclass(frozen=True)
class Thresholds:
    """When a question set cannot separate the arms it compares, at one metric.

    - *saturated*: more than ``saturated_share`` of the questions are solved by every arm (they
      can separate nothing), or every arm's mean is above ``saturated_mean``;
    - *floored*: more than ``floored_share`` of the questions get nothing from any arm, or every
      arm's mean is below ``floored_mean``;
    - *underpowered*: no compared pair is separated (every |mean difference| is below its MDE)
      and the median MDE of the compared pairs is above ``max_mde`` (the set cannot even detect a
      difference of that size between arms that do not differ much on it);
    - *unstable*: two random halves of the questions order the arms alike at a median tau-a
      below ``min_stability`` (0.5: with no ties, fewer than 3 in 4 pairs of arms ordered alike;
      for two arms, their order held in at most half the splits): whatever the differences, the
      set's order of the arms is not one other questions would reproduce.

    Fractions of the metric's scale (0.05 = 5 points of Pass@k, 0.05 of MRR).
    """

    alpha: float = 0.05
    power: float = 0.8
    saturated_share: float = 0.75
    saturated_mean: float = 0.9
    floored_share: float = 0.75
    floored_mean: float = 0.05
    max_mde: float = 0.05
    effects: tuple[float, ...] = (0.02, 0.05)  # differences to size the set for (2 and 5 points)
    halves: int = 500  # random splits of the questions in two halves, for each metric's stability
    min_stability: float = 0.5


@dataclass(frozen=True)
class MetricSaturation:
    """How many questions of one metric the arms all solve, all miss, or score apart."""

    metric: str
    questions: int  # scored by this metric (NaN in any arm left out)
    means: dict[str, float]  # arm -> mean score
    all_solved: float  # share of questions every arm scores at the maximum (1.0)
    none_solved: float  # share of questions every arm scores 0
    discriminating: float  # share of questions at least two arms score differently
    graded: bool  # scores other than 0 and 1 occur (fractional Pass@k, MRR, nDCG)
    saturated: bool
    floored: bool


@dataclass(frozen=True)
class PairPower:
    """What the set can detect between ``arm`` and ``versus`` at one metric."""

    metric: str
    arm: str
    versus: str  # the baseline (or the other arm of the pair)
    questions: int
    difference: float  # mean of d = score(arm) - score(versus)
    sd: float  # sample standard deviation of d (n - 1 degrees of freedom)
    mde: float  # minimum detectable difference: inf if the arms never differ, 0 if d is constant
    needed: dict[float, int | None]  # effect -> questions needed (None: never differ, or n < 2)

    @property
    def identical(self) -> bool:
        """The arms score the same on every question (or there are fewer than 2): the set cannot
        separate them."""
        return math.isinf(self.mde)

    @property
    def separated(self) -> bool:
        """The observed difference is at least the smallest one the set can detect."""
        return not self.identical and abs(self.difference) >= self.mde

    @property
    def ratio(self) -> float:
        """|mean d| / MDE: above 1 when the set detects a difference of the size observed."""
        if self.identical:
            return 0.0
        return abs(self.difference) / self.mde if self.mde > 0 else math.inf


@dataclass(frozen=True)
class MetricInformativeness:
    metric: str
    saturation: MetricSaturation
    pairs: list[PairPower]
    underpowered: bool
    stability: float  # median tau-a of two random halves' orders of the arms; NaN: < 4 questions
    unstable: bool  # stability below Thresholds.min_stability

    @property
    def problem(self) -> str | None:
        """'saturated', 'floored', 'underpowered', 'unstable' or None (the set separates at this
        metric)."""
        s = self.saturation
        if s.saturated:
            return "saturated"
        if s.floored:
            return "floored"
        if self.underpowered:
            return "underpowered"
        return "unstable" if self.unstable else None

    @property
    def separated(self) -> int:
        return sum(p.separated for p in self.pairs)

    @property
    def mean_ratio(self) -> float:
        return float(np.mean([p.ratio for p in self.pairs]))

    @property
    def median_mde(self) -> float:
        return _median_mde(self.pairs)

    def median_needed(self, effect: float) -> int | None:
        ns = [p.needed[effect] for p in self.pairs if p.needed.get(effect) is not None]
        return int(np.ceil(np.median(ns))) if ns else None


@dataclass(frozen=True)
class Informativeness:
    """What a question set can tell about the arms it compares (see the module's docstring)."""

    arms: list[str]
    baseline: str | None
    metrics: dict[str, MetricInformativeness]
    headline: str  # the recommended metric (the most stable fit one): a report.headline value
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def best(self) -> MetricInformativeness:
        return self.metrics[self.headline]

    @property
    def separates(self) -> bool:
        """The set can separate the arms it compares at its best metric."""
        return self.best.problem is None

    @property
    def warning(self) -> str | None:
        """One line for the run log when the set cannot separate the arms; None when it can."""
        return None if self.separates else _warning_line(self)

    @property
    def verdict(self) -> str:
        """One line for the run log, whatever the verdict."""
        return self.warning or _informative_line(self)

    @property
    def paragraph(self) -> str:
        """The verdict in a short paragraph for the report."""
        return _paragraph(self)


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
    thresholds: Thresholds = Thresholds(),
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
    metric: str, scores: Mapping[str, np.ndarray], thresholds: Thresholds = Thresholds()
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
    thresholds: Thresholds = Thresholds(),
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
    underpowered = not any(p.separated for p in powers) and _median_mde(powers) > thresholds.max_mde
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


def _median_mde(pairs: list[PairPower]) -> float:
    """Median MDE of the compared pairs whose arms differ somewhere (inf when none does)."""
    finite = [p.mde for p in pairs if not p.identical]
    return float(np.median(finite)) if finite else math.inf


# -- words ----------------------------------------------------------------------------------------


JUDGED_NAMES = {
    "judged_ndcg": "judged nDCG",
    "judged_precision": "judged P",
    "judged_recall": "judged R",
}


def metric_name(metric: str) -> str:
    """``pass_at_20`` -> ``Pass@20``; ``mrr`` -> ``MRR``; ``judged_ndcg_at_10`` -> ``judged
    nDCG@10`` (the report's labels)."""
    if metric == "mrr":
        return "MRR"
    name, _, k = metric.rpartition("_at_")
    if name in JUDGED_NAMES:
        return f"{JUDGED_NAMES[name]}@{k}"
    return f"{name.capitalize()}@{k}" if k else metric


def _amount(metric: str, x: float) -> str:
    """A difference in points of a 0-1 metric (MRR as a fraction): '6.1 points', '0.061'."""
    return f"{x:.3f}" if metric == "mrr" else f"{100 * x:.1f} points"


def _count(n: int) -> str:
    """1234 -> '~1,200' (two significant figures; small counts exact)."""
    if n < 100:
        return str(n)
    digits = int(math.floor(math.log10(n))) - 1
    return f"~{round(n, -digits):,}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _tau(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:+.2f}"


def _effects_text(m: MetricInformativeness, effects: tuple[float, ...]) -> str:
    """'detecting 2 points would take ~1,200 questions, 5 points ~200' (medians over the pairs)."""
    parts = []
    for e in effects:
        n = m.median_needed(e)
        if n is not None:
            what = f"{e:g}" if m.metric == "mrr" else f"{100 * e:g} points"
            parts.append(
                f"{what} {_count(n)}" if parts else f"{what} would take {_count(n)} questions"
            )
    return f"detecting {', '.join(parts)}" if parts else ""


def _means_range(s: MetricSaturation) -> str:
    low, high = min(s.means.values()), max(s.means.values())
    if s.metric == "mrr":
        return f"{low:.3f}" if low == high else f"{low:.3f}-{high:.3f}"
    return f"{100 * low:.1f}%" if low == high else f"{100 * low:.1f}-{100 * high:.1f}%"


def _why(m: MetricInformativeness) -> str:
    """The problem of one metric in a clause: 'saturated at Pass@20: 94% of the 131 questions
    are answered by every arm'."""
    s, name = m.saturation, metric_name(m.metric)
    solved = "at its maximum for every arm" if s.graded else "answered by every arm"
    missed = "at 0 for every arm" if s.graded else "answered by no arm"
    if m.problem == "saturated":
        if s.all_solved >= 0.5:
            return f"saturated at {name}: {_pct(s.all_solved)} of its {s.questions} questions are {solved}"
        return f"saturated at {name}: every arm scores {_means_range(s)}"
    if m.problem == "floored":
        if s.none_solved >= 0.5:
            return f"too hard at {name}: {_pct(s.none_solved)} of its {s.questions} questions are {missed}"
        return f"too hard at {name}: every arm scores {_means_range(s)}"
    if m.problem == "unstable":
        return (
            f"unstable at {name}: two random halves of its {s.questions} questions order the arms "
            f"alike at only tau-a {m.stability:+.2f} (the median of the splits; at 1 they order "
            f"every pair alike)"
        )
    if math.isinf(m.median_mde):
        return f"unable to separate the arms at {name}"
    return f"too small to separate the arms at {name}"


def _power_clause(m: MetricInformativeness, effects: tuple[float, ...], detail: str = "") -> str:
    """'differences under 6.1 points cannot be detected with 131 questions (detecting 2 points
    would take ~1,200 questions)', or why nothing can be detected; ``detail`` opens the
    parenthesis."""
    n = m.saturation.questions
    if math.isinf(m.median_mde):
        return f"no compared pair of arms scores differently on any of its {n} questions"
    if m.median_mde == 0:
        return "every compared pair differs by the same amount on every question"
    inside = "; ".join(x for x in (detail, _effects_text(m, effects)) if x)
    return (
        f"differences under {_amount(m.metric, m.median_mde)} cannot be detected with {n} "
        f"questions" + (f" ({inside})" if inside else "")
    )


def _warning_line(r: Informativeness) -> str:
    m = r.best
    return (
        f"question set cannot separate the arms: {_why(m)}; {_power_clause(m, r.thresholds.effects)}"
        ": do not pick a configuration from it"
    )


def _informative_line(r: Informativeness) -> str:
    m = r.best
    detectable = (
        f"smallest detectable difference {_amount(m.metric, m.median_mde)} with "
        f"{m.saturation.questions} questions"
    )
    if not m.separated:
        return (
            f"question set: no compared pair differs at {metric_name(m.metric)} by the "
            f"{detectable}: the arms score alike on it; recommended report.headline={r.headline}"
        )
    return (
        f"question set separates {m.separated} of {len(m.pairs)} compared pairs at "
        f"{metric_name(m.metric)} ({detectable}); recommended report.headline={r.headline}"
    )


def _paragraph(r: Informativeness) -> str:
    m, t = r.best, r.thresholds
    name = metric_name(m.metric)
    test = (
        f"80% power, alpha {t.alpha:g}"
        if t.power == 0.8
        else f"{_pct(t.power)} power, alpha {t.alpha:g}"
    )
    sentences = []
    if r.separates and m.separated:
        sentences.append(
            f"This question set orders the arms it compares most reproducibly at {name} "
            f"(recommended report.headline: {r.headline}): {m.separated} of {len(m.pairs)} "
            f"compared pairs differ by at least the smallest difference it can detect."
        )
    elif r.separates:
        largest = max(abs(p.difference) for p in m.pairs)
        sentences.append(
            f"This question set orders the arms it compares most reproducibly at {name} "
            f"(recommended report.headline: {r.headline}), but none of the {len(m.pairs)} "
            f"compared pairs differs by the smallest difference it can detect: on these questions "
            f"the arms score alike (largest difference: {_amount(m.metric, largest)})."
        )
    if r.separates and not (math.isinf(m.median_mde) or m.median_mde == 0):
        needed = _effects_text(m, t.effects)
        sentences.append(
            f"With its {m.saturation.questions} questions that is "
            f"{_amount(m.metric, m.median_mde)} (median over the pairs; {test}"
            + (f"; {needed}" if needed else "")
            + ")."
        )
    if r.separates and not math.isnan(m.stability):
        sentences.append(
            f"Two random halves of its questions order the arms alike at tau-a "
            f"{m.stability:+.2f} there (median of {t.halves} splits; at 1 they order every pair "
            f"alike)."
        )
    if not r.separates:
        why = _why(m)
        sentences.append(f"This question set is {why}.")
        power = _power_clause(m, t.effects, f"median over the compared pairs; {test}")
        sentences.append(f"{power[0].upper()}{power[1:]}.")
        if m.problem == "underpowered" and not math.isinf(m.median_mde):
            largest = max(abs(p.difference) for p in m.pairs)
            sentences.append(
                f"No compared pair differs by that much (largest difference: "
                f"{_amount(m.metric, largest)})."
            )
        sentences.append("Do not pick a configuration from it.")
    identical = [p for p in m.pairs if p.identical]
    if identical and not math.isinf(m.median_mde):
        names = ", ".join(f"{p.arm} and {p.versus}" for p in identical)
        sentences.append(
            f"At {name}, {names} score the same on every question: it cannot separate them."
        )
    others = [
        o for k, o in r.metrics.items() if k != r.headline and o.problem in ("saturated", "floored")
    ]
    if others and r.separates:
        sentences.append(
            "It is "
            + "; ".join(_why(o) for o in others)
            + ": do not compare arms at "
            + ("that metric." if len(others) == 1 else "those metrics.")
        )
    return " ".join(sentences)


# -- Markdown -------------------------------------------------------------------------------------


def markdown_lines(r: Informativeness) -> list[str]:
    """The informativeness as Markdown lines for a report: the paragraph, a row per metric
    (saturation, stability, separated pairs, median MDE and questions needed, its verdict; the
    recommended headline in bold) and a row per compared pair at the recommended metric."""
    t = r.thresholds
    effects = " / ".join(f"{100 * e:g}" for e in t.effects)
    out = ["## How informative is this question set", "", r.paragraph, ""]
    out += [
        f"Per metric: the arms' means, the share of questions every arm solves (scores the "
        f"maximum) and no arm does (scores 0), the share on which the arms score differently, how "
        f"alike two random halves of the questions order the arms (Kendall's tau-a, median of "
        f"{t.halves} splits; below {t.min_stability:+.2f} unstable: the recommended metric is the "
        f"most stable one that is not saturated, floored or underpowered); over the compared "
        f"pairs, those whose difference reaches the smallest difference the set can detect "
        f"(paired t-test, {_pct(t.power)} power, alpha {t.alpha:g}; median over the pairs) "
        f"and the questions it would take to detect {effects} points (MRR: "
        f"{' / '.join(f'{e:g}' for e in t.effects)}; Sakai's topic set size design, 2016).",
        "",
    ]
    header, rows = metric_table(r)
    rows = [[f"**{row[0]}**" if m == r.headline else row[0], *row[1:]]
            for m, row in zip(r.metrics, rows, strict=True)]  # fmt: skip
    out += _table(header, rows)
    out += ["", f"Compared pairs at {metric_name(r.headline)}:", ""]
    out += _table(*pair_table(r))
    return out


def metric_table(r: Informativeness) -> tuple[list[str], list[list[str]]]:
    """A row per metric, in ``r.metrics`` order: its label, questions, the arms' means, the shares
    every arm solves / no arm solves / the arms differ on, its stability, the pairs separated,
    the median detectable difference, the questions for each effect, its verdict."""
    t = r.thresholds
    effects = " / ".join(f"{100 * e:g}" for e in t.effects)
    rows = []
    for name, m in r.metrics.items():
        s = m.saturation
        needed = " / ".join(
            "-" if (n := m.median_needed(e)) is None else _count(n) for e in t.effects
        )
        mde = "-" if math.isinf(m.median_mde) else _amount(name, m.median_mde)
        verdict = m.problem or ("recommended headline" if name == r.headline else "separates")
        rows.append(
            [metric_name(name), str(s.questions), _means_range(s), _pct(s.all_solved),
             _pct(s.none_solved), _pct(s.discriminating), _tau(m.stability),
             f"{m.separated} of {len(m.pairs)}", mde, needed, verdict]
        )  # fmt: skip
    header = ["metric", "questions", "arms' means", "every arm solves", "no arm solves",
              "arms differ", "halves agree (tau-a)", "pairs separated", "detectable difference",
              f"questions for {effects} points", "verdict"]  # fmt: skip
    return header, rows


def pair_table(r: Informativeness) -> tuple[list[str], list[list[str]]]:
    """A row per compared pair at the recommended metric: the observed mean difference, the sd of
    the differences, the detectable difference, whether it is separated, the questions needed
    for each effect."""
    t, m = r.thresholds, r.best
    rows = []
    for p in m.pairs:
        sign = "+" if p.difference > 0 else ""
        mde = "-" if p.identical else _amount(m.metric, p.mde)
        needed = ["-" if p.needed.get(e) is None else _count(p.needed[e]) for e in t.effects]
        separated = "never differ" if p.identical else ("yes" if p.separated else "no")
        rows.append(
            [f"{p.arm} - {p.versus}", f"{sign}{_amount(m.metric, p.difference)}", f"{p.sd:.3f}",
             mde, separated, *needed]
        )  # fmt: skip
    header = ["pair", "difference", "sd of the differences", "detectable difference",
              "separated", *(f"questions for {100 * e:g} points" for e in t.effects)]  # fmt: skip
    return header, rows


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    def cell(x: object) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
