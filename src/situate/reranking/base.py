"""The reranker protocol, and reranking with cached scores."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from situate.embedding.truncation import TokenWindow
from situate.money.billing import Billed
from situate.paid.endpoints import legacy_identity, recover_unverified
from situate.rankings import Rankings, sort_desc
from situate.stores.keys import content_hash
from situate.stores.sqlite import BlobStore


class Reranker(Protocol):
    """Scores (query, text) pairs; higher is more relevant.

    ``pool`` is how many fused candidates per query it rescores (0: it reorders nothing).
    """

    name: str
    pool: int

    def identity(self) -> dict:
        """Everything that changes a score (provider, model, truncation...)."""
        ...

    def score(self, query: str, texts: list[str]) -> np.ndarray: ...

    def window(self) -> TokenWindow | None:
        """How much of each (query, text) it reads and how tokens are counted (None: it reads
        no text); texts past it are truncated, counted as ``rerank_texts_truncated``."""
        ...

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        ...

    def billed(self) -> Billed:
        """The searches this instance was billed for so far (:class:`situate.money.billing.Unbilled`
        for a local model or none)."""
        ...


class CachedReranker:
    """Reorders each query's top ``reranker.pool`` candidates by the reranker's scores.

    Scores are cached by sha256(reranker identity, query, text), so a sweep over k or fusion
    rescores only pairs it has not seen. Candidates past the pool keep their fused order below
    the reranked ones. An API reranker's identity names its endpoint, so an emulator's scores are
    never served to a run against the real API; ``unverified`` acts on scores an older situate
    stored without their endpoint (:mod:`situate.paid.endpoints`).
    """

    def __init__(self, reranker: Reranker, store: BlobStore, unverified: str = "refuse"):
        self.reranker = reranker
        self.store = store
        self.unverified = unverified
        self.scored = 0  # pairs sent to the model (cache misses) in this process

    def __call__(self, query: str, texts: list[str], candidates: Rankings, depth: int) -> Rankings:
        """Rerank the single query of ``candidates`` (a one-row ``Rankings``)."""
        ids, _ = candidates.row(0)
        pool = min(self.reranker.pool, len(ids))
        if pool == 0:
            return candidates.top(depth)
        head, tail = ids[:pool], ids[pool:]
        ident = self.reranker.identity()
        keys = [content_hash(ident, query, texts[i]) for i in head]
        found = self.store.get_many(list(dict.fromkeys(keys)))
        legacy = legacy_identity(ident)
        if legacy is not None:
            legacy_of = {
                k: content_hash(legacy, query, texts[i])
                for k, i in zip(keys, head, strict=True)
                if k not in found
            }
            found.update(
                recover_unverified(
                    self.store,
                    legacy_of,
                    self.unverified,
                    f"rerank scores of {self.reranker.name}",
                    ident["endpoint"],
                )  # fmt: skip
            )
        missing = [j for j, k in enumerate(keys) if k not in found]
        if missing:
            scores = self.reranker.score(query, [texts[head[j]] for j in missing])
            fresh = {keys[j]: np.float64(s).tobytes() for j, s in zip(missing, scores, strict=True)}
            self.store.put_many(fresh.items())
            found.update(fresh)
            self.scored += len(missing)
        head_scores = np.array([np.frombuffer(found[k], dtype=np.float64)[0] for k in keys])
        head, head_scores = sort_desc(head, head_scores)
        # the rest stay in fused order, below every reranked candidate
        tail_scores = head_scores.min() - 1.0 - np.arange(len(tail), dtype=np.float64)
        return Rankings.from_rows(
            [(np.concatenate([head, tail]), np.concatenate([head_scores, tail_scores]))], depth
        )
