"""``fusion: weighted_rrf``: reciprocal rank fusion with a weight per list.

``score(d) = sum over lists l containing d of w_l / (k + rank_l(d))`` with 1-based ranks, over the
top ``pool`` of each list. With every weight 1 this is plain RRF (Cormack, Clarke and Buettcher,
"Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009);
the per-list weight is the usual extension for favouring one retriever (weighted RRF as offered by
search engines, e.g. Elasticsearch and Vespa).
"""

from __future__ import annotations

from collections.abc import Mapping

from situate.errors import SituateError
from situate.fusion.base import RETRIEVERS, accumulate, list_weights, pooled
from situate.rankings import Rankings


class WeightedRRF:
    """Weighted reciprocal rank fusion.

    Parameters
    ----------
    weights : mapping
        One weight >= 0 per retriever, ``{dense: 1.0, sparse: 1.0}`` by default.
    k : float
        The rank constant (60 in the paper), not the k of top-k.
    pool : int
        Candidates taken from the top of each list.
    """

    name = "weighted_rrf"
    needs = RETRIEVERS

    def __init__(self, weights: Mapping[str, float] | None = None, k: float = 60, pool: int = 150):
        if k < 0:
            raise SituateError(
                f"fusion.k={k} must be >= 0 (it is RRF's rank constant, 60 in the paper)"
            )
        self.weights = list_weights(
            {n: 1.0 for n in self.needs} if weights is None else weights, self.needs
        )
        self.k = k
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        ranked = pooled(lists, self.needs, self.pool)
        return accumulate(ranked, lambda n, ranks, _s: self.weights[n] / (self.k + ranks), depth)
