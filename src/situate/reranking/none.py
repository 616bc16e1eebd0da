"""``reranker: none``: keep the fused order."""

from __future__ import annotations

from situate.rankings import Rankings


class NoReranker:
    name = "none"

    def __init__(self, pool: int = 0):
        self.pool = pool  # no candidates beyond the evaluated depth are needed

    def rerank(
        self, queries: list[str], texts: list[str], candidates: Rankings, depth: int
    ) -> Rankings:
        return candidates.top(depth)
