"""``fusion: dbsf``: distribution-based score fusion.

Mazzeschi, "Distribution-based Score Fusion (DBSF), a new approach to Vector Search Ranking",
2023 (as implemented in Qdrant): per query and per list, over the list's top ``pool``, scores are
mapped with the bounds ``lo = mean - 3 std`` and ``hi = mean + 3 std`` to
``clip((s - lo) / (hi - lo), 0, 1)``, and ``score(d) = sum over lists containing d``.
``std`` is the sample standard deviation (``ddof=1``), as in Qdrant. A list with a single score,
or whose scores are all equal (std 0), gives each chunk 0.5, the midpoint of the range, again as
Qdrant does. Unlike Qdrant, values outside the bounds are clipped, so each list adds at most 1.
"""

from __future__ import annotations

import numpy as np

from situate.fusion.base import NormalizedSum, finite_only


@finite_only
def three_sigma(scores: np.ndarray) -> np.ndarray:
    """``clip((s - (mean - 3 std)) / (6 std), 0, 1)`` over one list; 0.5 each when std is 0."""
    if len(scores) < 2:
        return np.full(len(scores), 0.5)
    mean, std = scores.mean(), scores.std(ddof=1)
    if std == 0:
        return np.full(len(scores), 0.5)
    lo, hi = mean - 3 * std, mean + 3 * std
    return np.clip((scores - lo) / (hi - lo), 0.0, 1.0)


class DBSF(NormalizedSum):
    """Sum of per-list scores normalised with mean +- 3 standard deviations as bounds.

    Parameters
    ----------
    pool : int
        Candidates taken from the top of each list (mean and std are over these).
    """

    name = "dbsf"
    normalize = staticmethod(three_sigma)
