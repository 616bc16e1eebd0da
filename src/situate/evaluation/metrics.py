"""Retrieval metrics over hit matrices.

For one question, ``hits`` is a boolean matrix of shape ``(n_gold, depth)``: ``hits[g, r]`` is
True when the chunk at rank ``r`` (0-based) satisfies gold item ``g``. Every metric below is the
per-question value; averages over questions are taken by the caller. Definitions follow
trec_eval / ranx with binary relevance.
"""

from __future__ import annotations

import math

import numpy as np


def first_hit_rank(hits: np.ndarray) -> np.ndarray:
    """1-based rank of the first hit of each gold item (``inf`` where it is never hit)."""
    if hits.size == 0:
        return np.full(hits.shape[0], np.inf)
    any_hit = hits.any(axis=1)
    return np.where(any_hit, hits.argmax(axis=1) + 1.0, np.inf)


def recall_at_k(hits: np.ndarray, k: int) -> float:
    """Fraction of the question's gold items hit within the top ``k``.

    With ``hits`` from text matching of golden chunks this is the cookbook's Pass@k (fractional
    credit: golden chunks found / golden chunks).
    """
    return float(np.mean(first_hit_rank(hits) <= k)) if hits.shape[0] else 0.0


def reciprocal_rank(relevant: np.ndarray) -> float:
    """1 / rank of the first relevant chunk in ``relevant`` (a boolean vector), 0 if none."""
    idx = np.flatnonzero(relevant)
    return 1.0 / (idx[0] + 1) if len(idx) else 0.0


def ndcg_at_k(relevant: np.ndarray, n_relevant: int, k: int) -> float:
    """Binary nDCG@k: DCG = sum of 1/log2(rank + 1) over relevant ranks <= k; the ideal ranking
    puts all ``n_relevant`` relevant chunks first."""
    gains = relevant[:k].astype(float)
    dcg = float(np.sum(gains / np.log2(np.arange(2, len(gains) + 2))))
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(k, n_relevant) + 1))
    return dcg / ideal if ideal else 0.0


def precision_at_k(relevant: np.ndarray, k: int) -> float:
    """Relevant chunks in the top ``k`` / ``k`` (trec_eval's P_k: a short list still divides by k)."""
    return float(np.sum(relevant[:k])) / k


def average_precision(relevant: np.ndarray, n_relevant: int) -> float:
    """Mean over the ``n_relevant`` relevant chunks of the precision at the rank of each one
    retrieved (a relevant chunk not retrieved adds 0): trec_eval's AP over the ranked list given."""
    if not n_relevant:
        return 0.0
    ranks = np.flatnonzero(relevant) + 1.0
    return float(np.sum(np.arange(1, len(ranks) + 1) / ranks)) / n_relevant


def graded_ndcg_at_k(gains: np.ndarray, ideal_gains: np.ndarray, k: int) -> float:
    """nDCG@k with graded gains (trec_eval's ndcg_cut: gain = the grade, 1/log2(rank + 1)
    discount); the ideal ranking sorts ``ideal_gains`` (every judged grade of the question)."""
    gains = np.asarray(gains, dtype=float)[:k]
    ideal = np.sort(np.asarray(ideal_gains, dtype=float))[::-1][:k]
    dcg = float(np.sum(gains / np.log2(np.arange(2, len(gains) + 2))))
    idcg = float(np.sum(ideal / np.log2(np.arange(2, len(ideal) + 2))))
    return dcg / idcg if idcg > 0 else 0.0
