"""Fusion methods and Rankings, with scores computed by hand (1-based ranks throughout)."""

from __future__ import annotations

import numpy as np
import pytest

from situate.errors import SituateError
from situate.fusion.dense_only import DenseOnly
from situate.fusion.rrf import ReciprocalRankFusion
from situate.fusion.sparse_only import SparseOnly
from situate.fusion.weighted_rank import WeightedRank
from situate.rankings import Rankings, sort_desc


def ranking(*rows: list[int], depth: int | None = None) -> Rankings:
    """One query per row of ids (best first); scores are descending and irrelevant to rank fusion."""
    depth = depth if depth is not None else max([len(r) for r in rows] + [1])
    packed = [
        (np.array(r, dtype=np.int64), np.arange(len(r), 0, -1, dtype=np.float64)) for r in rows
    ]
    return Rankings.from_rows(packed, depth)


def lists(dense: Rankings, sparse: Rankings) -> dict[str, Rankings]:
    return {"dense": dense, "sparse": sparse}


# ---------------------------------------------------------------- Rankings


def test_from_rows_pads_with_minus_one_and_minus_inf() -> None:
    r = Rankings.from_rows(
        [(np.array([4, 2]), np.array([0.5, 0.25])), (np.zeros(0, np.int64), np.zeros(0))], depth=3
    )
    assert r.ids.dtype == np.int64
    assert r.scores.dtype == np.float64
    assert r.ids.tolist() == [[4, 2, -1], [-1, -1, -1]]
    assert r.scores.tolist() == [[0.5, 0.25, -np.inf], [-np.inf, -np.inf, -np.inf]]
    assert (r.n_queries, r.depth) == (2, 3)


def test_from_rows_truncates_rows_longer_than_depth() -> None:
    r = Rankings.from_rows([(np.array([7, 8, 9]), np.array([3.0, 2.0, 1.0]))], depth=2)
    assert r.ids.tolist() == [[7, 8]]
    assert r.scores.tolist() == [[3.0, 2.0]]


def test_row_removes_padding() -> None:
    r = Rankings.from_rows(
        [(np.array([4, 2]), np.array([0.5, 0.25])), (np.zeros(0, np.int64), np.zeros(0))], depth=3
    )
    ids, scores = r.row(0)
    assert ids.tolist() == [4, 2]
    assert scores.tolist() == [0.5, 0.25]
    ids, scores = r.row(1)
    assert ids.tolist() == []
    assert scores.tolist() == []


def test_top_cuts_columns() -> None:
    r = ranking([1, 2, 3], [4, 5])
    assert r.top(2).ids.tolist() == [[1, 2], [4, 5]]
    assert r.top(2).depth == 2


def test_sort_desc_breaks_ties_by_ascending_id() -> None:
    ids, scores = sort_desc(np.array([9, 3, 5, 1]), np.array([0.5, 0.5, 0.9, 0.1]))
    assert ids.tolist() == [5, 3, 9, 1]
    assert scores.tolist() == [0.9, 0.5, 0.5, 0.1]


# ---------------------------------------------------------------- RRF


def test_rrf_k60_two_lists() -> None:
    # dense: 3 (rank 1), 1 (rank 2), 2 (rank 3); sparse: 1 (rank 1), 4 (rank 2)
    fused = ReciprocalRankFusion(k=60).fuse(lists(ranking([3, 1, 2]), ranking([1, 4])), depth=4)
    ids, scores = fused.row(0)
    # doc 1: 1/(60+2) + 1/(60+1) = 0.03252; doc 3: 1/(60+1) = 0.01639 (dense only);
    # doc 4: 1/(60+2) = 0.01613 (sparse only); doc 2: 1/(60+3) = 0.01587 (dense only)
    assert ids.tolist() == [1, 3, 4, 2]
    assert scores == pytest.approx(
        [1 / (60 + 2) + 1 / (60 + 1), 1 / (60 + 1), 1 / (60 + 2), 1 / (60 + 3)]
    )


def test_rrf_needs_both_retrievers() -> None:
    assert ReciprocalRankFusion().needs == ("dense", "sparse")
    assert ReciprocalRankFusion().pool == 150


def test_rrf_k_changes_scores_and_order() -> None:
    dense, sparse = ranking([10, 20]), ranking([30, 20])
    # k=0: doc 10: 1/1 = 1; doc 30: 1/1 = 1; doc 20: 1/2 + 1/2 = 1 -> a three-way tie, by id
    ids, scores = ReciprocalRankFusion(k=0).fuse(lists(dense, sparse), depth=3).row(0)
    assert ids.tolist() == [10, 20, 30]
    assert scores == pytest.approx([1 / 1, 1 / 2 + 1 / 2, 1 / 1])
    # k=1: doc 20: 1/(1+2) + 1/(1+2) = 2/3 beats docs 10 and 30: 1/(1+1) = 1/2
    ids, scores = ReciprocalRankFusion(k=1).fuse(lists(dense, sparse), depth=3).row(0)
    assert ids.tolist() == [20, 10, 30]
    assert scores == pytest.approx([1 / (1 + 2) + 1 / (1 + 2), 1 / (1 + 1), 1 / (1 + 1)])


def test_rrf_negative_k_is_an_error() -> None:
    with pytest.raises(SituateError, match="fusion.k=-1"):
        ReciprocalRankFusion(k=-1)


def test_rrf_pool_truncates_each_list_before_fusing() -> None:
    dense, sparse = ranking([1, 2, 3]), ranking([4, 2])
    # pool=2: doc 3 is at dense rank 3 = pool + 1 and contributes nothing (it is absent)
    fused = ReciprocalRankFusion(k=60, pool=2).fuse(lists(dense, sparse), depth=5)
    ids, scores = fused.row(0)
    # doc 2: 1/(60+2) + 1/(60+2); docs 1 and 4: 1/(60+1) each, tied -> ascending id
    assert ids.tolist() == [2, 1, 4]
    assert scores == pytest.approx([1 / (60 + 2) + 1 / (60 + 2), 1 / (60 + 1), 1 / (60 + 1)])
    assert fused.ids[0].tolist() == [2, 1, 4, -1, -1]
    # pool=3: doc 3 now gets 1/(60+3)
    ids, scores = ReciprocalRankFusion(k=60, pool=3).fuse(lists(dense, sparse), depth=5).row(0)
    assert ids.tolist() == [2, 1, 4, 3]
    assert scores[-1] == pytest.approx(1 / (60 + 3))


def test_rrf_depth_cuts_the_fused_list() -> None:
    fused = ReciprocalRankFusion(k=60).fuse(lists(ranking([3, 1, 2]), ranking([1, 4])), depth=2)
    assert fused.depth == 2
    assert fused.ids.tolist() == [[1, 3]]


def test_both_lists_empty_for_one_query_gives_a_padded_row() -> None:
    dense = ranking([5, 6], [], depth=2)
    sparse = ranking([6], [], depth=2)
    fused = ReciprocalRankFusion(k=60).fuse(lists(dense, sparse), depth=3)
    assert fused.ids.tolist() == [[6, 5, -1], [-1, -1, -1]]
    assert fused.scores[1].tolist() == [-np.inf, -np.inf, -np.inf]
    # doc 6: 1/(60+2) + 1/(60+1); doc 5: 1/(60+1)
    assert fused.scores[0, :2] == pytest.approx([1 / (60 + 2) + 1 / (60 + 1), 1 / (60 + 1)])


def test_one_list_empty_uses_the_other_alone() -> None:
    dense = ranking([], depth=2)
    sparse = ranking([2, 0])
    ids, scores = ReciprocalRankFusion(k=60).fuse(lists(dense, sparse), depth=2).row(0)
    assert ids.tolist() == [2, 0]
    assert scores == pytest.approx([1 / (60 + 1), 1 / (60 + 2)])


def test_ties_broken_by_ascending_id() -> None:
    # doc 5: dense rank 1, sparse rank 2; doc 2: dense rank 2, sparse rank 1 -> both 1/61 + 1/62
    ids, scores = (
        ReciprocalRankFusion(k=60).fuse(lists(ranking([5, 2]), ranking([2, 5])), depth=2).row(0)
    )
    assert ids.tolist() == [2, 5]
    assert scores == pytest.approx([1 / 61 + 1 / 62, 1 / 61 + 1 / 62])
    # one doc per list, both at rank 1: 1/61 each
    ids, _ = ReciprocalRankFusion(k=60).fuse(lists(ranking([7]), ranking([3])), depth=2).row(0)
    assert ids.tolist() == [3, 7]


def test_duplicated_id_counted_once_at_its_best_rank() -> None:
    # dense lists doc 4 at ranks 1 and 3: it gets 1/(60+1) only, not 1/(60+1) + 1/(60+3)
    dense, sparse = ranking([4, 9, 4]), ranking([9])
    ids, scores = ReciprocalRankFusion(k=60).fuse(lists(dense, sparse), depth=3).row(0)
    # doc 9: 1/(60+2) + 1/(60+1) = 0.03252; doc 4: 1/(60+1) = 0.01639
    assert ids.tolist() == [9, 4]
    assert scores == pytest.approx([1 / (60 + 2) + 1 / (60 + 1), 1 / (60 + 1)])


def test_single_element_lists() -> None:
    fused = ReciprocalRankFusion(k=60).fuse(lists(ranking([8]), ranking([8])), depth=3)
    assert fused.ids.tolist() == [[8, -1, -1]]
    assert fused.scores[0, 0] == pytest.approx(1 / (60 + 1) + 1 / (60 + 1))


def test_fusion_is_per_query() -> None:
    dense = ranking([1, 2], [3, 4])
    sparse = ranking([2, 1], [4])
    fused = ReciprocalRankFusion(k=60).fuse(lists(dense, sparse), depth=2)
    # q0: docs 1 and 2 both 1/61 + 1/62 (tie -> id); q1: doc 4: 1/62 + 1/61, doc 3: 1/61
    assert fused.ids.tolist() == [[1, 2], [4, 3]]
    assert fused.scores[1] == pytest.approx([1 / 62 + 1 / 61, 1 / 61])


# ---------------------------------------------------------------- weighted rank


def test_weighted_rank_default_weights() -> None:
    fused = WeightedRank().fuse(lists(ranking([3, 1, 2]), ranking([1, 4])), depth=4)
    ids, scores = fused.row(0)
    # doc 3: 0.8/1 = 0.8; doc 1: 0.8/2 + 0.2/1 = 0.6; doc 2: 0.8/3 = 0.2667; doc 4: 0.2/2 = 0.1
    assert ids.tolist() == [3, 1, 2, 4]
    assert scores == pytest.approx([0.8 / 1, 0.8 / 2 + 0.2 / 1, 0.8 / 3, 0.2 / 2])


def test_weighted_rank_custom_weights() -> None:
    fused = WeightedRank(dense_weight=0.5, sparse_weight=0.5).fuse(
        lists(ranking([3, 1, 2]), ranking([1, 4])), depth=4
    )
    ids, scores = fused.row(0)
    # doc 1: 0.5/2 + 0.5/1 = 0.75; doc 3: 0.5/1; doc 4: 0.5/2; doc 2: 0.5/3
    assert ids.tolist() == [1, 3, 4, 2]
    assert scores == pytest.approx([0.5 / 2 + 0.5 / 1, 0.5 / 1, 0.5 / 2, 0.5 / 3])


def test_weighted_rank_pool() -> None:
    # pool=1: only dense rank 1 (doc 3) and sparse rank 1 (doc 1) count
    fused = WeightedRank(pool=1).fuse(lists(ranking([3, 1, 2]), ranking([1, 4])), depth=4)
    ids, scores = fused.row(0)
    assert ids.tolist() == [3, 1]
    assert scores == pytest.approx([0.8 / 1, 0.2 / 1])


# ---------------------------------------------------------------- single lists


def test_dense_only_passes_through_cut_to_depth() -> None:
    dense = Rankings.from_rows([(np.array([5, 2, 9]), np.array([0.9, 0.7, 0.1]))], depth=3)
    fusion = DenseOnly()
    assert fusion.needs == ("dense",)
    out = fusion.fuse({"dense": dense}, depth=2)
    assert out.ids.tolist() == [[5, 2]]
    assert out.scores.tolist() == [[0.9, 0.7]]  # raw scores, unchanged


def test_dense_only_cut_to_pool() -> None:
    dense = Rankings.from_rows([(np.array([5, 2, 9]), np.array([0.9, 0.7, 0.1]))], depth=3)
    out = DenseOnly(pool=1).fuse({"dense": dense}, depth=3)
    assert out.ids.tolist() == [[5]]


def test_sparse_only_reads_the_sparse_list() -> None:
    dense = ranking([1, 2, 3])
    sparse = Rankings.from_rows([(np.array([7, 4]), np.array([12.5, 3.0]))], depth=2)
    fusion = SparseOnly()
    assert fusion.needs == ("sparse",)
    out = fusion.fuse(lists(dense, sparse), depth=5)
    assert out.ids.tolist() == [[7, 4]]
    assert out.scores.tolist() == [[12.5, 3.0]]
    assert SparseOnly(pool=1).fuse(lists(dense, sparse), depth=5).ids.tolist() == [[7]]
