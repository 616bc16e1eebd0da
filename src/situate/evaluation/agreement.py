"""Do two question sets rank the same configurations alike? (synthetic questions against human)

Two sets of questions over the same documents (a generated set and a human one) are each run
through the same arms. The sets share no question, so nothing is paired across them:

- the **ordering agreement** is Kendall's tau-b (``scipy.stats.kendalltau``: ties counted as
  neither concordant nor discordant) between the arms' mean scores on one set and on the other,
  with its two-sided p-value; tau = 1 when the synthetic set orders every pair of arms as the
  human set does, -1 when it reverses every pair;
- the **per-arm difference** is mean(synthetic) - mean(human) with a percentile bootstrap
  interval that resamples each set's questions independently (the unpaired two-sample
  bootstrap; Efron and Tibshirani 1993, ch. 8): how much easier or harder the synthetic set is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from situate.errors import SituateError

_BLOCK = 2000  # resamples drawn at a time


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
    diffs, done = [], 0
    while done < resamples:
        n = min(_BLOCK, resamples - done)
        hs = h[rng.integers(0, len(h), size=(n, len(h)))].mean(axis=1)
        ss = s[rng.integers(0, len(s), size=(n, len(s)))].mean(axis=1)
        diffs.append(ss - hs)
        done += n
    all_diffs = np.concatenate(diffs)
    tail = (1 - confidence) / 2
    return float(np.quantile(all_diffs, tail)), float(np.quantile(all_diffs, 1 - tail))


def set_agreement(
    human: Mapping[str, Sequence[float]],
    synthetic: Mapping[str, Sequence[float]],
    resamples: int = 10_000,
    seed: int = 0,
) -> SetAgreement:
    """Kendall's tau between the arms' means on the two sets, and each arm's difference.

    ``human`` and ``synthetic`` map each arm's name to its per-question scores on that set (the
    same arms in both)."""
    from scipy.stats import kendalltau

    if set(human) != set(synthetic) or len(human) < 2:
        raise SituateError(
            f"agreement: both sets need the same two or more arms (human: {sorted(human)}, "
            f"synthetic: {sorted(synthetic)})"
        )
    arms = []
    for arm in human:
        low, high = difference_ci(human[arm], synthetic[arm], resamples, seed=seed)
        h, s = float(np.mean(human[arm])), float(np.mean(synthetic[arm]))
        arms.append(ArmDifference(arm, h, s, s - h, low, high))
    result = kendalltau([a.human for a in arms], [a.synthetic for a in arms])
    tau = float(result.statistic)
    p = float(result.pvalue)
    if np.isnan(tau):  # every arm scored the same on one set: no ordering to agree with
        tau, p = 0.0, 1.0
    return SetAgreement(tau, p, arms)
