"""``fusion: weighted_rank``: the Anthropic cookbook's hybrid score.

``score(d) = w_dense / rank_dense(d) + w_sparse / rank_sparse(d)`` with 1-based ranks (the
cookbook writes ``w * 1 / (index + 1)`` over 0-based indexes), over the top ``pool`` (150) of each
list, weights 0.8 and 0.2.
"""

from __future__ import annotations

from collections.abc import Mapping

from situate.fusion.base import RETRIEVERS, accumulate, pooled
from situate.rankings import Rankings


class WeightedRank:
    name = "weighted_rank"
    needs = RETRIEVERS

    def __init__(self, dense_weight: float = 0.8, sparse_weight: float = 0.2, pool: int = 150):
        self.weights = (dense_weight, sparse_weight)
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        ranked = pooled(lists, self.needs, self.pool)
        return accumulate(ranked, lambda n, ranks, _s: self.weights[n] / ranks, depth)
