"""``fusion: minmax_sum``: weighted sum of min-max normalised scores.

Per query and per list, each score over that list's top ``pool`` is mapped to
``(s - min) / (max - min)`` in [0, 1], and ``score(d) = sum over lists l containing d of
w_l * minmax_l(d)``: the convex combination studied by Bruch, Gai and Ingber, "An Analysis of
Fusion Functions for Hybrid Retrieval", ACM TOIS 2023, with min-max normalisation as in Lee,
"Analyses of Multiple Evidence Combination", SIGIR 1997. A list whose scores are all equal (one
score included) gives each of its chunks 1.0 (see ``fusion.base.minmax``).
"""

from __future__ import annotations

from situate.fusion.base import WeightedNormalizedSum, minmax


class MinMaxSum(WeightedNormalizedSum):
    """Weighted sum of per-list min-max normalised scores.

    Parameters
    ----------
    weights : mapping
        One weight >= 0 per retriever, ``{dense: 0.5, sparse: 0.5}`` by default.
    pool : int
        Candidates taken from the top of each list (min and max are over these).
    """

    name = "minmax_sum"
    normalize = staticmethod(minmax)
