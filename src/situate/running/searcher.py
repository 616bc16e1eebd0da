"""Query-time search over built indexes: embed, search, fuse, rerank (:class:`Searcher`), used
by a run (:class:`situate.running.pipeline.Pipeline`) and by a saved index (``situate search``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from situate.dense.base import DenseIndex
from situate.embedding.base import CachedEmbeddings
from situate.fusion.base import Fusion
from situate.rankings import Rankings
from situate.reranking.base import CachedReranker
from situate.sparse.base import SparseEngine


def timed_alone(n: int, sample: int | None) -> int:
    """How many of ``n`` queries go one at a time, timed: the first ``sample`` (None: all)."""
    return n if sample is None else max(0, min(sample, n))


# one query's list from each stage (dense, sparse, fusion, rerank): chunk rows, scores, seconds
StageLists = dict[str, tuple[np.ndarray, np.ndarray, float]]
STAGE_DEPTH = 10  # how much of each stage's list a run keeps per query (its traces show it)


@dataclass
class Latency:
    """Seconds spent per query, in total and in the reranker."""

    total: np.ndarray
    rerank: np.ndarray


class Searcher:
    """Answers queries over built indexes: embed, search, fuse, rerank.

    :meth:`search` answers one query as a user's would go, timed; :meth:`search_all` times a
    sample of the queries that way (per-query latency) and answers the rest in batches: their
    vectors are embedded together through the embedding cache (kind ``query``, cached like the
    chunks'), the indexes searched with all of them at once, each query then fused and reranked.
    Query vectors come from the embedding cache when present.
    """

    def __init__(
        self,
        embeddings: CachedEmbeddings,
        dense: DenseIndex,
        sparse: SparseEngine,
        fusion: Fusion,
        reranker: CachedReranker,
        rerank_texts: list[str],
        depth: int,
        stage_depth: int = 0,
    ):
        self.embeddings, self.dense, self.sparse = embeddings, dense, sparse
        self.fusion, self.reranker = fusion, reranker
        self.rerank_texts = rerank_texts
        self.depth = depth
        # with stage_depth, each stage's top stage_depth of each query, in query order (traces)
        self.stage_depth = stage_depth
        self.stages: list[StageLists] = []

    def search(self, query: str) -> tuple[Rankings, float]:
        """The top ``depth`` chunk rows for ``query`` (a one-row ``Rankings``) and rerank seconds."""
        fused = self._retrieve([query], None)
        t = time.perf_counter()
        ranked = self.reranker(query, self.rerank_texts, fused, self.depth)
        seconds = time.perf_counter() - t
        self._keep_rerank(len(self.stages) - 1, ranked, seconds)
        return ranked, seconds

    def warm_up(self) -> None:
        """Load the local models now, so that the first query's time is the query's alone."""
        self.embeddings.embedder.warm_up()
        self.reranker.reranker.warm_up()

    def search_all(
        self,
        queries: list[str],
        progress: Callable[[int, int], None] | None = None,
        sample: int | None = None,
        embed_progress: Callable[[int, int], None] | None = None,
    ) -> tuple[Rankings, Latency]:
        """Every query: the first ``sample`` (None: all) one at a time and timed, the rest in
        batches; ``progress(advance, total)`` is told of each answered query,
        ``embed_progress`` of each embedded batch of the rest. The latency covers the timed ones;
        the rerank seconds, every query."""
        timed = timed_alone(len(queries), sample)
        rows, total, rerank = [], np.zeros(timed), np.zeros(len(queries))
        for i, query in enumerate(queries[:timed]):
            t = time.perf_counter()
            ranked, rerank[i] = self.search(query)
            total[i] = time.perf_counter() - t
            rows.append(ranked.row(0))
            if progress:
                progress(1, len(queries))
        rest = queries[timed:]
        if rest:
            fused = self._retrieve(rest, embed_progress)
            first = len(self.stages) - len(rest)
            for j, query in enumerate(rest):
                one = Rankings.from_rows([fused.row(j)], fused.depth)
                t = time.perf_counter()
                ranked = self.reranker(query, self.rerank_texts, one, self.depth)
                rows.append(ranked.row(0))
                rerank[timed + j] = time.perf_counter() - t
                self._keep_rerank(first + j, ranked, rerank[timed + j])
                if progress:
                    progress(1, len(queries))
        return Rankings.from_rows(rows, self.depth), Latency(total, rerank)

    def _retrieve(
        self, queries: list[str], embed_progress: Callable[[int, int], None] | None
    ) -> Rankings:
        """Fused candidates of ``queries``, embedded and searched together (one row each)."""
        lists: dict[str, Rankings] = {}
        seconds: dict[str, float] = {}
        pool = max(self.fusion.pool, self.depth)
        t = time.perf_counter()
        if "dense" in self.fusion.needs:
            lists["dense"] = self.dense.search(
                self.embeddings(queries, "query", embed_progress), pool
            )
            seconds["dense"], t = time.perf_counter() - t, time.perf_counter()
        if "sparse" in self.fusion.needs:
            lists["sparse"] = self.sparse.search(queries, pool)
            seconds["sparse"], t = time.perf_counter() - t, time.perf_counter()
        fused = self.fusion.fuse(lists, max(self.reranker.reranker.pool, self.depth))
        seconds["fusion"] = time.perf_counter() - t
        if self.stage_depth:  # each query's share of a batch's seconds
            every = {**lists, "fusion": fused}
            for j in range(len(queries)):
                self.stages.append(
                    {
                        name: (*self._top(ranking.row(j)), seconds[name] / len(queries))
                        for name, ranking in every.items()
                    }
                )
        return fused

    def _top(self, row: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return row[0][: self.stage_depth], row[1][: self.stage_depth]

    def _keep_rerank(self, q: int, ranked: Rankings, seconds: float) -> None:
        """The reranker's list of query ``q`` (a reranker that reorders: not ``none``)."""
        if self.stage_depth and self.reranker.reranker.pool:
            self.stages[q]["rerank"] = (*self._top(ranked.row(0)), seconds)
