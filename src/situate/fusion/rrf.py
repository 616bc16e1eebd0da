"""``fusion: rrf``: reciprocal rank fusion.

Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank
Learning Methods", SIGIR 2009: ``score(d) = sum over lists containing d of 1 / (k + rank(d))`` with
1-based ranks. ``k`` (60 in the paper) is the rank constant, not the k of top-k.
"""

from __future__ import annotations

from collections.abc import Mapping

from situate.errors import SituateError
from situate.fusion.base import RETRIEVERS, accumulate, pooled
from situate.rankings import Rankings


class ReciprocalRankFusion:
    name = "rrf"
    needs = RETRIEVERS

    def __init__(self, k: float = 60, pool: int = 150):
        if k < 0:
            raise SituateError(
                f"fusion.k={k} must be >= 0 (it is RRF's rank constant, 60 in the paper)"
            )
        self.k = k
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        ranked = pooled(lists, self.needs, self.pool)
        return accumulate(ranked, lambda _n, ranks, _s: 1.0 / (self.k + ranks), depth)
