"""Ranked lists for a batch of queries, as two padded numpy arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class Rankings:
    """``ids[q, r]`` is the chunk (row number in the run's chunk list) at rank ``r`` for query
    ``q``, best first; ``scores`` holds its score. Short lists are padded with id -1 and score -inf.
    """

    ids: np.ndarray  # (n_queries, depth) int64
    scores: np.ndarray  # (n_queries, depth) float64

    @classmethod
    def from_rows(cls, rows: Sequence[tuple[np.ndarray, np.ndarray]], depth: int) -> Rankings:
        """Pack per-query ``(ids, scores)`` rows (each already sorted best first)."""
        ids = np.full((len(rows), depth), -1, dtype=np.int64)
        scores = np.full((len(rows), depth), -np.inf, dtype=np.float64)
        for q, (row_ids, row_scores) in enumerate(rows):
            n = min(depth, len(row_ids))
            ids[q, :n] = row_ids[:n]
            scores[q, :n] = row_scores[:n]
        return cls(ids, scores)

    @property
    def n_queries(self) -> int:
        return self.ids.shape[0]

    @property
    def depth(self) -> int:
        return self.ids.shape[1]

    def row(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """The ids and scores of query ``q`` without padding."""
        keep = self.ids[q] >= 0
        return self.ids[q][keep], self.scores[q][keep]

    def top(self, k: int) -> Rankings:
        return Rankings(self.ids[:, :k], self.scores[:, :k])


def sort_desc(ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order by score, highest first; equal scores by ascending id, so results are deterministic."""
    order = np.lexsort((ids, -scores))
    return ids[order], scores[order]
