"""The fusion protocol and the accumulation every score-adding method shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np

from situate.rankings import Rankings, sort_desc

RETRIEVERS = ("dense", "sparse")


class Fusion(Protocol):
    """Combines the ranked lists of named retrievers (``"dense"``, ``"sparse"``) into one.

    ``needs`` names the retrievers it reads, so the runner builds only those; ``pool`` is how many
    candidates of each list it considers (the cookbook uses 150).
    """

    name: str
    needs: tuple[str, ...]
    pool: int

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings: ...


def accumulate(
    lists: list[Rankings],
    contribution: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
    depth: int,
) -> Rankings:
    """Sum per-list contributions of each chunk, per query, and keep the best ``depth``.

    ``contribution(list_number, ranks, scores)`` gets 1-based ranks and raw scores of one query's
    list and returns what each of those chunks adds. A chunk absent from a list gets nothing from
    it; a chunk that appears twice in one list (a bad retriever) is counted at its best rank only.
    """
    rows = []
    for q in range(lists[0].n_queries):
        ids_parts, add_parts = [], []
        for n, ranking in enumerate(lists):
            ids, scores = ranking.row(q)
            ids, first = np.unique(ids, return_index=True)  # best rank of a duplicated id
            ranks = first + 1
            ids_parts.append(ids)
            add_parts.append(contribution(n, ranks, scores[first]))
        if not ids_parts or sum(len(p) for p in ids_parts) == 0:
            rows.append((np.zeros(0, np.int64), np.zeros(0)))
            continue
        all_ids = np.concatenate(ids_parts)
        uniq, inverse = np.unique(all_ids, return_inverse=True)
        total = np.bincount(inverse, weights=np.concatenate(add_parts), minlength=len(uniq))
        rows.append(sort_desc(uniq, total))
    return Rankings.from_rows(rows, depth)


class SingleList:
    """Pass one retriever's list through, cut to ``depth``."""

    needs: tuple[str, ...] = ()

    def __init__(self, pool: int = 150):
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        return lists[self.needs[0]].top(min(depth, self.pool))
