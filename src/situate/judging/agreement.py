"""How far to trust the judge where gold exists: its agreement with gold on a stratified sample.

- ``gold_judged_relevant``: the share of the sample's gold chunks that the judge graded at least
  ``relevant_from`` (a judge that misses gold misses real answers);
- Cohen's kappa between "judged relevant" and "gold" over the whole sample (half gold pairs, half
  pooled pairs without gold, so both kinds of mistake count): 1 = perfect agreement, 0 = what
  chance gives, < 0 = worse than chance. Pooled pairs without gold include real answers gold
  missed (the false misses the judge is for), so kappa is a lower bound of the judge's quality.

Reference: Cohen, "A Coefficient of Agreement for Nominal Scales", 1960.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two binary labelings of the same items (0.0 when chance agreement is 1)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if len(a) == 0:
        return 0.0
    observed = float(np.mean(a == b))
    pa, pb = float(np.mean(a)), float(np.mean(b))
    chance = pa * pb + (1 - pa) * (1 - pb)
    return (observed - chance) / (1 - chance) if chance < 1 else 0.0


@dataclass
class Agreement:
    n_gold: int
    n_other: int
    gold_judged_relevant: float  # share of gold pairs judged relevant
    other_judged_relevant: float  # share of non-gold pairs judged relevant
    kappa: float
    unparsed: int  # sampled pairs whose answer held no grade (counted as not relevant)


def agreement(sample: Sequence[tuple[int | None, bool]], relevant_from: int = 2) -> Agreement:
    """``sample``: (judged grade or None, is gold) per sampled pair."""
    judged = np.array([g is not None and g >= relevant_from for g, _ in sample], dtype=bool)
    gold = np.array([is_gold for _, is_gold in sample], dtype=bool)
    return Agreement(
        n_gold=int(gold.sum()),
        n_other=int((~gold).sum()),
        gold_judged_relevant=float(judged[gold].mean()) if gold.any() else 0.0,
        other_judged_relevant=float(judged[~gold].mean()) if (~gold).any() else 0.0,
        kappa=cohen_kappa(judged, gold),
        unparsed=sum(1 for g, _ in sample if g is None),
    )
