"""Per-question retrieval metrics over hit matrices, checked against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from situate.evaluation.metrics import first_hit_rank, ndcg_at_k, recall_at_k, reciprocal_rank

T, F = True, False

# gold 0 first hit at rank 2; gold 1 never hit; gold 2 hit at rank 1
HITS = np.array([[F, T, T], [F, F, F], [T, F, F]])


def test_first_hit_rank() -> None:
    assert first_hit_rank(HITS).tolist() == [2.0, math.inf, 1.0]


def test_first_hit_rank_of_an_empty_ranking_is_inf() -> None:
    assert first_hit_rank(np.zeros((2, 0), dtype=bool)).tolist() == [math.inf, math.inf]


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, 1 / 3),  # only gold 2
        (2, 2 / 3),  # golds 0 and 2
        (3, 2 / 3),  # gold 1 is never found
        (10, 2 / 3),
    ],
)
def test_recall_at_k(k: int, expected: float) -> None:
    assert recall_at_k(HITS, k) == pytest.approx(expected)


def test_recall_without_gold_is_zero() -> None:
    assert recall_at_k(np.zeros((0, 3), dtype=bool), 3) == 0.0


def test_reciprocal_rank() -> None:
    assert reciprocal_rank(np.array([F, F, T, T])) == pytest.approx(1 / 3)
    assert reciprocal_rank(np.array([T, F])) == 1.0
    assert reciprocal_rank(np.array([F, F])) == 0.0
    assert reciprocal_rank(np.zeros(0, dtype=bool)) == 0.0


def test_ndcg_hand_computed() -> None:
    relevant = np.array([F, T, F, T])
    # 3 relevant chunks exist; DCG@4 = 1/log2(2+1) + 1/log2(4+1)
    # IDCG@4 = 1/log2(1+1) + 1/log2(2+1) + 1/log2(3+1) = 1 + 0.6309 + 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(relevant, 3, 4) == pytest.approx(dcg / idcg)
    # @2: DCG = 1/log2(3); IDCG = 1 + 1/log2(3) (only 2 ideal slots)
    assert ndcg_at_k(relevant, 3, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(relevant, 3, 1) == 0.0


def test_ndcg_perfect_and_none() -> None:
    assert ndcg_at_k(np.array([T, T, F]), 2, 3) == pytest.approx(1.0)
    assert ndcg_at_k(np.array([F, F, F]), 2, 3) == 0.0
    assert ndcg_at_k(np.array([F, F]), 0, 2) == 0.0  # nothing relevant exists: 0, not nan


def test_ndcg_k_beyond_the_ranking() -> None:
    # one retrieved chunk, relevant; 2 relevant exist; k=5 -> IDCG = 1 + 1/log2(3)
    assert ndcg_at_k(np.array([T]), 2, 5) == pytest.approx(1 / (1 + 1 / math.log2(3)))
