"""The reranker protocol."""

from __future__ import annotations

from typing import Protocol

from situate.rankings import Rankings


class Reranker(Protocol):
    """Reorders each query's candidates (the fused top ``pool``) and keeps the best ``depth``.

    ``texts[i]`` is what the reranker reads for chunk row ``i`` (chunk alone or chunk + context,
    as the context config's ``apply_to`` says).
    """

    name: str
    pool: int

    def rerank(
        self, queries: list[str], texts: list[str], candidates: Rankings, depth: int
    ) -> Rankings: ...
