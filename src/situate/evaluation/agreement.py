"""Do two question sets rank the same configurations alike? (synthetic questions against human)

Two sets of questions over the same documents (a generated set and a human one) are each run
through the same arms. The sets share no question, so nothing is paired across them:

- the **ordering agreement** is Kendall's tau-b (``scipy.stats.kendalltau``: ties counted as
  neither concordant nor discordant) between the arms' mean scores on one set and on the other,
  with its two-sided p-value; tau = 1 when the synthetic set orders every pair of arms as the
  human set does, -1 when it reverses every pair;
- the **per-arm difference** is mean(synthetic) - mean(human) with a percentile bootstrap
  interval that resamples each set's questions independently (the unpaired two-sample
  bootstrap; Efron and Tibshirani 1993, ch. 8): how much easier or harder the synthetic set is;
- the **interval of tau** resamples the same way: each replicate draws each set's questions with
  replacement (one draw per set, shared by its arms, which score the same questions), recomputes
  every arm's mean on each set and the tau-b between the two orderings; the percentile interval
  of those taus (:func:`tau_interval`);
- the **decisions** (:func:`decisions`): for each pair of arms, which one each set picks (the
  larger mean), whether the human set separates the pair (paired randomization test on its
  questions, Holm-adjusted over the pairs, below ``alpha``) and whether the synthetic set picks
  the same winner (a pair it ties where the human set has a winner does not agree either);
- the **verdict** (:func:`verdict`, :class:`Criteria`): rank with the synthetic set when the
  tau reaches ``min_tau``, its interval's lower bound is above ``min_tau_low``, every pair the
  human set separates gets the same winner (none flipped or tied), and the synthetic set itself
  is not saturated, floored, underpowered or unstable at that metric
  (:mod:`situate.evaluation.informativeness`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from situate.errors import SituateError
from situate.evaluation.statistics import percentile_interval


@dataclass(frozen=True)
class ArmDifference:
    arm: str
    human: float  # mean score of the human questions
    synthetic: float
    difference: float  # synthetic - human
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class SetAgreement:
    tau: float
    p_value: float
    arms: list[ArmDifference]
    tau_low: float = float("nan")  # percentile bootstrap interval of tau (both sets resampled)
    tau_high: float = float("nan")


def difference_ci(
    human: Sequence[float],
    synthetic: Sequence[float],
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(synthetic) - mean(human), each set resampled with
    replacement on its own (the sets hold different questions)."""
    h, s = np.asarray(human, dtype=float), np.asarray(synthetic, dtype=float)
    if not len(h) or not len(s):
        raise SituateError("agreement: each question set needs at least one scored question")
    rng = np.random.default_rng(seed)

    def differences(n: int) -> np.ndarray:
        hs = h[rng.integers(0, len(h), size=(n, len(h)))].mean(axis=1)
        return s[rng.integers(0, len(s), size=(n, len(s)))].mean(axis=1) - hs

    return percentile_interval(differences, resamples, confidence)


def set_agreement(
    human: Mapping[str, Sequence[float]],
    synthetic: Mapping[str, Sequence[float]],
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> SetAgreement:
    """Kendall's tau between the arms' means on the two sets (with its bootstrap interval), and
    each arm's difference.

    ``human`` and ``synthetic`` map each arm's name to its per-question scores on that set (the
    same arms in both; within a set, every arm on the same questions in the same order)."""
    from scipy.stats import kendalltau

    if set(human) != set(synthetic) or len(human) < 2:
        raise SituateError(
            f"agreement: both sets need the same two or more arms (human: {sorted(human)}, "
            f"synthetic: {sorted(synthetic)})"
        )
    arms = []
    for arm in human:
        low, high = difference_ci(human[arm], synthetic[arm], resamples, confidence, seed)
        h, s = float(np.mean(human[arm])), float(np.mean(synthetic[arm]))
        arms.append(ArmDifference(arm, h, s, s - h, low, high))
    result = kendalltau([a.human for a in arms], [a.synthetic for a in arms])
    tau = float(result.statistic)
    p = float(result.pvalue)
    if np.isnan(tau):  # every arm scored the same on one set: no ordering to agree with
        tau, p = 0.0, 1.0
    low, high = tau_interval(human, synthetic, resamples, confidence, seed)
    return SetAgreement(tau, p, arms, low, high)


_TIE = 1e-12  # means closer than this are tied (sums of one set's scores in another order)


def tau_b(x, y) -> np.ndarray:
    """Kendall's tau-b between the rows of ``x`` and ``y`` (replicates x arms, or one vector
    each): (concordant - discordant) / sqrt(pairs untied in x * pairs untied in y), 0 where a row
    has no ordering (every arm tied), as :func:`set_agreement` says of a flat set."""
    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    i, j = np.triu_indices(x.shape[1], k=1)
    sx, sy = _sign(x[:, i] - x[:, j]), _sign(y[:, i] - y[:, j])
    denominator = np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1))
    numerator = (sx * sy).sum(axis=1)
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0.0)


def tau_a(x, y) -> np.ndarray:
    """Kendall's tau-a between the rows of ``x`` and ``y``: (concordant - discordant) / every pair
    of arms. A pair tied in either row counts for neither and stays in the denominator (tau-b
    leaves it out), so a row that ties arms scores lower: 1 only when both rows order every pair
    alike, 0 for a flat row."""
    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    i, j = np.triu_indices(x.shape[1], k=1)
    if not len(i):
        return np.zeros(x.shape[0])
    return (_sign(x[:, i] - x[:, j]) * _sign(y[:, i] - y[:, j])).mean(axis=1)


def _sign(d: np.ndarray) -> np.ndarray:
    return np.where(np.abs(d) <= _TIE, 0.0, np.sign(d))


def tau_interval(
    human: Mapping[str, Sequence[float]],
    synthetic: Mapping[str, Sequence[float]],
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of Kendall's tau-b between the arms' means on the two sets:
    each replicate draws each set's questions with replacement (one draw per set for all its
    arms: they score the same questions), recomputes every arm's mean and the tau."""
    arms = list(human)
    h = _matrix(human, arms, "human")
    s = _matrix(synthetic, arms, "synthetic")
    rng = np.random.default_rng(seed)
    return percentile_interval(
        lambda n: tau_b(_resampled_means(h, n, rng), _resampled_means(s, n, rng)),
        resamples, confidence,
    )  # fmt: skip


@dataclass(frozen=True)
class SplitHalf:
    """How well a set agrees with itself: Kendall's tau (tau-b unless asked otherwise) between the
    arms' means on two halves of its questions, over random splits (the median, and the central
    ``confidence`` share)."""

    tau: float  # the median over the splits
    low: float
    high: float
    half: int  # questions in the first part (the smaller half unless a part was given)
    splits: int


def split_half(
    scores: Mapping[str, Sequence[float]],
    splits: int = 2_000,
    confidence: float = 0.95,
    seed: int = 0,
    statistic=tau_b,
    part: int | None = None,
) -> SplitHalf:
    """Kendall's tau-b (or ``statistic``: :func:`tau_a`) between the arms' means on two random
    halves of one set's questions (each split a seeded permutation: the first ``n // 2``
    questions against the rest), its median and percentile range over ``splits`` splits. A
    sample whose halves order the arms alike orders them reliably; one whose halves disagree
    cannot confirm another set's order beyond that (of half its size: the whole sample agrees
    somewhat better). ``part``: the first part's size instead of ``n // 2`` (how far ``part``
    more questions of the same people would agree with the rest of them: the yardstick of a
    generated set of that size)."""
    arms = list(scores)
    if len(arms) < 2:
        raise SituateError("agreement: a split-half agreement needs two or more arms")
    m = _matrix(scores, arms, "human")
    n = m.shape[1]
    if n < 2:
        raise SituateError(f"agreement: {n} question is too few to split in halves (need 2)")
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((splits, n)), axis=1)  # one permutation a row
    half = n // 2 if part is None else part
    if not 1 <= half < n:
        raise SituateError(f"agreement: a part of {half} of {n} questions leaves no other part")
    first = np.zeros((splits, n))
    np.put_along_axis(first, order[:, :half], 1.0, axis=1)
    a = first @ m.T / half  # splits x arms
    b = (1.0 - first) @ m.T / (n - half)
    taus = statistic(a, b)
    tail = (1 - confidence) / 2
    low, median, high = np.quantile(taus, [tail, 0.5, 1 - tail])
    return SplitHalf(float(median), float(low), float(high), half, splits)


def _matrix(scores: Mapping[str, Sequence[float]], arms: list[str], name: str) -> np.ndarray:
    rows = [np.asarray(scores[a], dtype=float) for a in arms]
    if len({len(r) for r in rows}) != 1 or not len(rows[0]):
        raise SituateError(
            f"agreement: the {name} set's arms must score the same questions (got "
            f"{', '.join(f'{a} {len(r)}' for a, r in zip(arms, rows, strict=True))})"
        )
    return np.vstack(rows)  # arms x questions


def _resampled_means(scores: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` bootstrap replicates of every arm's mean (replicates x arms): each replicate counts
    how often it draws each question (a multinomial draw), shared by the arms."""
    q = scores.shape[1]
    counts = rng.multinomial(q, np.full(q, 1.0 / q), size=n)  # replicates x questions
    return counts @ scores.T / q


@dataclass(frozen=True)
class Decision:
    """One pair of arms: ``first`` - ``second`` on each set (the difference of their means) and
    whether the human set separates them (``p_holm`` below the criteria's alpha)."""

    first: str
    second: str
    human: float
    synthetic: float
    p_holm: float  # the human set's paired randomization test, Holm-adjusted over the pairs
    separated: bool

    @property
    def flipped(self) -> bool:
        """The two sets pick opposite winners."""
        return bool(_sign(np.array(self.human)) * _sign(np.array(self.synthetic)) < 0)

    @property
    def agrees(self) -> bool:
        """Both sets pick the same winner (or both tie): not flipped, and not a tie on one set
        only."""
        return bool(_sign(np.array(self.human)) == _sign(np.array(self.synthetic)))

    def words(self, metric: str = "", synthetic_name: str = "generated") -> str:
        """'human: heading_path beats none by 4.1 pts; generated: none beats heading_path by
        0.8 pts'."""
        return (
            f"human: {_winner(self.first, self.second, self.human, metric)}; "
            f"{synthetic_name}: {_winner(self.first, self.second, self.synthetic, metric)}"
        )


def _winner(first: str, second: str, difference: float, metric: str) -> str:
    if abs(difference) <= _TIE:
        return f"{first} and {second} tie"
    a, b = (first, second) if difference > 0 else (second, first)
    return f"{a} beats {b} by {points(metric, abs(difference))}"


def points(metric: str, x: float) -> str:
    """A difference of a 0-1 metric in points ('4.1 pts'); MRR and nDCG as a fraction."""
    if metric == "mrr" or metric.startswith("ndcg"):
        return f"{x:.3f}"
    return f"{100 * x:.1f} pts"


def decisions(
    human: Mapping[str, Sequence[float]],
    synthetic: Mapping[str, Sequence[float]],
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
) -> list[Decision]:
    """Every pair of arms (in the arms' order): the difference of their means on each set, and
    whether the human set separates them (paired randomization test over its questions,
    Holm-adjusted over the pairs, below ``alpha``)."""
    from situate.evaluation.statistics import holm, randomization_test

    arms = list(human)
    pairs = list(combinations(arms, 2))
    ps = [randomization_test(human[b], human[a], permutations, seed) for a, b in pairs]
    adjusted = holm(ps) if ps else []
    out = []
    for (a, b), p in zip(pairs, adjusted, strict=True):
        h = float(np.mean(human[a]) - np.mean(human[b]))
        s = float(np.mean(synthetic[a]) - np.mean(synthetic[b]))
        out.append(Decision(a, b, h, s, p, p < alpha))
    return out


@dataclass(frozen=True)
class Criteria:
    """When a synthetic set may rank the arms in place of the human questions, at one metric.

    - ``min_tau``: Kendall's tau-b between the two orderings is at least this (0.8: the two sets
      order at least 9 pairs in 10 alike, net of the reversed ones);
    - ``min_tau_low``: the lower bound of the tau's bootstrap interval (``confidence``) is above
      this (0: the agreement is not chance on these few human questions);
    - every pair the human set separates (randomization test, Holm-adjusted, below ``alpha``)
      gets the same winner on the synthetic set (not flipped, not tied): it must not undo what
      people's questions decide;
    - ``informative``: the synthetic set is not saturated, floored, underpowered or unstable at
      the metric (it can separate the arms at all).
    """

    min_tau: float = 0.8
    min_tau_low: float = 0.0
    alpha: float = 0.05
    confidence: float = 0.95
    informative: bool = True


RANK = "rank with this set"
DO_NOT_RANK = "do not rank with this set"


@dataclass(frozen=True)
class Verdict:
    rank: bool
    reasons: list[str]  # why not (empty when it may rank)

    @property
    def words(self) -> str:
        return RANK if self.rank else DO_NOT_RANK


def verdict(
    agreement: SetAgreement,
    pair_decisions: Sequence[Decision],
    criteria: Criteria = Criteria(),
    problem: str | None = None,
    metric: str = "",
    synthetic_name: str = "generated",
) -> Verdict:
    """The verdict of :class:`Criteria` on one metric's agreement and decisions; ``problem`` is
    the synthetic set's informativeness problem at that metric (saturated, floored,
    underpowered, unstable, or None)."""
    reasons = []
    if agreement.tau < criteria.min_tau:
        reasons.append(f"Kendall's tau {agreement.tau:+.2f} is below {criteria.min_tau:+.2f}")
    if not agreement.tau_low > criteria.min_tau_low:
        reasons.append(
            f"the tau's {100 * criteria.confidence:g}% interval reaches {agreement.tau_low:+.2f} "
            f"(not above {criteria.min_tau_low:+.2f}): the human questions cannot confirm the "
            "ordering"
        )
    lost = [d for d in pair_decisions if d.separated and not d.agrees]
    if lost:
        reasons.append(
            f"{len(lost)} of the {sum(d.separated for d in pair_decisions)} decisions the "
            f"human set makes (Holm p < {criteria.alpha:g}) are flipped or tied on the "
            f"{synthetic_name} set: " + ", ".join(f"{d.first} vs {d.second}" for d in lost)
        )
    if criteria.informative and problem is not None:
        reasons.append(f"the {synthetic_name} set is {problem} at {metric or 'this metric'}")
    return Verdict(not reasons, reasons)
