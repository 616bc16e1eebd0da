"""``fusion: zscore_sum``: weighted sum of z-score normalised scores.

Per query and per list, each score over that list's top ``pool`` becomes ``z = (s - mean) / std``
(population std, ``ddof=0``), and ``score(d) = sum over lists l containing d of w_l * z_l(d)``:
the "ZMUV" normalisation of Montague and Aslam, "Relevance Score Normalization for Metasearch",
CIKM 2001. A list whose scores are all equal (one score included, std 0) gives each chunk z = 0,
the same as being absent from it. Note that z is negative below the list's mean, so a chunk in the
bottom half of a list ranks below a chunk absent from it.
"""

from __future__ import annotations

import numpy as np

from situate.fusion.base import WeightedNormalizedSum, finite_only


@finite_only
def zscore(scores: np.ndarray) -> np.ndarray:
    """``(s - mean) / std`` over one list's scores; all zeros when std is 0."""
    std = scores.std()
    if std == 0:
        return np.zeros(len(scores))
    return (scores - scores.mean()) / std


class ZScoreSum(WeightedNormalizedSum):
    """Weighted sum of per-list z-scores.

    Parameters
    ----------
    weights : mapping
        One weight >= 0 per retriever, ``{dense: 0.5, sparse: 0.5}`` by default.
    pool : int
        Candidates taken from the top of each list (mean and std are over these).
    """

    name = "zscore_sum"
    normalize = staticmethod(zscore)
