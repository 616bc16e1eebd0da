"""``fusion: comb_mnz``: CombMNZ over min-max normalised scores.

Fox and Shaw, "Combination of Multiple Searches", TREC-2 (NIST SP 500-215), 1994:
``score(d) = hits(d) * sum over lists l containing d of s_l(d)``, where ``hits(d)`` is the number
of lists (each cut to its top ``pool``) that contain ``d``. Scores are min-max normalised to
[0, 1] per list first, as in Lee, "Analyses of Multiple Evidence Combination", SIGIR 1997. A list
whose scores are all equal gives each of its chunks 1.0 (see ``fusion.base.minmax``); a chunk
whose normalised scores are all 0 scores 0 however many lists contain it.
"""

from __future__ import annotations

from collections.abc import Mapping

from situate.fusion.base import RETRIEVERS, accumulate, minmax, pooled
from situate.rankings import Rankings


class CombMNZ:
    """CombSUM times the number of lists a chunk appears in.

    Parameters
    ----------
    pool : int
        Candidates taken from the top of each list (min and max are over these).
    """

    name = "comb_mnz"
    needs = RETRIEVERS

    def __init__(self, pool: int = 150):
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        ranked = pooled(lists, self.needs, self.pool)
        return accumulate(ranked, lambda _n, _r, scores: minmax(scores), depth, times_hits=True)
