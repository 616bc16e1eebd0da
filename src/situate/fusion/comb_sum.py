"""``fusion: comb_sum``: CombSUM over min-max normalised scores.

Fox and Shaw, "Combination of Multiple Searches", TREC-2 (NIST SP 500-215), 1994:
``score(d) = sum over lists l containing d of s_l(d)``. Fox and Shaw summed raw similarities;
here, as in Lee, "Analyses of Multiple Evidence Combination", SIGIR 1997, each list's scores are
first min-max normalised to [0, 1] over its top ``pool`` (BM25 and cosine scores live on different
scales). Unweighted: equal to ``minmax_sum`` with both weights 1. A list whose scores are all
equal gives each of its chunks 1.0 (see ``fusion.base.minmax``).
"""

from __future__ import annotations

from situate.fusion.base import NormalizedSum, minmax


class CombSum(NormalizedSum):
    """Sum of per-list min-max normalised scores.

    Parameters
    ----------
    pool : int
        Candidates taken from the top of each list (min and max are over these).
    """

    name = "comb_sum"
    normalize = staticmethod(minmax)
