"""Weighted RRF and the score-normalising fusions, with expected values computed by hand.

Lists are written as ``(id, score)`` pairs, best first. Expected scores are spelled out as the
arithmetic that produces them; min-max is ``(s - min) / (max - min)``, z-scores use the population
std, DBSF the sample std (``ddof=1``) and bounds ``mean -/+ 3 std``.
"""

from __future__ import annotations

import numpy as np
import pytest

from situate.errors import SituateError
from situate.fusion.base import minmax
from situate.fusion.comb_mnz import CombMNZ
from situate.fusion.comb_sum import CombSum
from situate.fusion.dbsf import DBSF, three_sigma
from situate.fusion.minmax_sum import MinMaxSum
from situate.fusion.rrf import ReciprocalRankFusion
from situate.fusion.weighted_rrf import WeightedRRF
from situate.fusion.zscore_sum import ZScoreSum, zscore
from situate.rankings import Rankings

R2 = 2**0.5


def scored(*rows: list[tuple[int, float]], depth: int | None = None) -> Rankings:
    """One query per row of ``(id, score)`` pairs, best first."""
    depth = depth if depth is not None else max([len(r) for r in rows] + [1])
    packed = [
        (np.array([i for i, _ in r], dtype=np.int64), np.array([s for _, s in r], dtype=float))
        for r in rows
    ]
    return Rankings.from_rows(packed, depth)


def lists(dense: Rankings, sparse: Rankings) -> dict[str, Rankings]:
    return {"dense": dense, "sparse": sparse}


def fused_row(fusion, dense: Rankings, sparse: Rankings, depth: int = 10, q: int = 0):
    ids, scores = fusion.fuse(lists(dense, sparse), depth).row(q)
    return ids.tolist(), scores


# The running example: cosine-like dense scores and BM25-like sparse scores.
DENSE = scored([(3, 0.9), (1, 0.5), (2, 0.1)])
SPARSE = scored([(1, 12.0), (4, 4.0)])

METHODS = {
    "weighted_rrf": WeightedRRF,
    "minmax_sum": MinMaxSum,
    "zscore_sum": ZScoreSum,
    "comb_sum": CombSum,
    "comb_mnz": CombMNZ,
    "dbsf": DBSF,
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_names_needs_and_default_pool(name: str) -> None:
    fusion = METHODS[name]()
    assert fusion.name == name
    assert fusion.needs == ("dense", "sparse")
    assert fusion.pool == 150


# ---------------------------------------------------------------- weighted RRF


def test_weighted_rrf_default_weights_equal_plain_rrf() -> None:
    ids, scores = fused_row(WeightedRRF(), DENSE, SPARSE)
    # doc 1: 1/(60+2) + 1/(60+1); doc 3: 1/(60+1); doc 4: 1/(60+2); doc 2: 1/(60+3)
    assert ids == [1, 3, 4, 2]
    assert scores == pytest.approx(
        [1 / (60 + 2) + 1 / (60 + 1), 1 / (60 + 1), 1 / (60 + 2), 1 / (60 + 3)]
    )
    plain_ids, plain_scores = fused_row(ReciprocalRankFusion(k=60), DENSE, SPARSE)
    assert ids == plain_ids
    assert scores == pytest.approx(plain_scores)


def test_weighted_rrf_weights_and_k() -> None:
    fusion = WeightedRRF(weights={"dense": 2.0, "sparse": 0.5}, k=60)
    ids, scores = fused_row(fusion, DENSE, SPARSE)
    # doc 1: 2/(60+2) + 0.5/(60+1) = 0.04046; doc 3: 2/(60+1) = 0.03279;
    # doc 2: 2/(60+3) = 0.03175; doc 4: 0.5/(60+2) = 0.00806
    assert ids == [1, 3, 2, 4]
    assert scores == pytest.approx(
        [2 / (60 + 2) + 0.5 / (60 + 1), 2 / (60 + 1), 2 / (60 + 3), 0.5 / (60 + 2)]
    )
    # k=0: doc 3: 2/1 = 2 beats doc 1: 2/2 + 0.5/1 = 1.5
    ids, scores = fused_row(WeightedRRF(weights={"dense": 2.0, "sparse": 0.5}, k=0), DENSE, SPARSE)
    assert ids == [3, 1, 2, 4]
    assert scores == pytest.approx([2 / 1, 2 / 2 + 0.5 / 1, 2 / 3, 0.5 / 2])


def test_weighted_rrf_zero_weight_keeps_the_list_docs_at_zero() -> None:
    ids, scores = fused_row(WeightedRRF(weights={"dense": 1.0, "sparse": 0.0}), DENSE, SPARSE)
    # doc 4 is only in the sparse list: 0/(60+2) = 0, ranked after every dense doc
    assert ids == [3, 1, 2, 4]
    assert scores == pytest.approx([1 / 61, 1 / 62 + 0 / 61, 1 / 63, 0.0])


def test_weighted_rrf_pool() -> None:
    # pool=1: only dense rank 1 (doc 3) and sparse rank 1 (doc 1)
    ids, scores = fused_row(
        WeightedRRF(weights={"dense": 1.0, "sparse": 3.0}, pool=1), DENSE, SPARSE
    )
    assert ids == [1, 3]
    assert scores == pytest.approx([3 / (60 + 1), 1 / (60 + 1)])


def test_weighted_rrf_negative_k_is_an_error() -> None:
    with pytest.raises(SituateError, match="fusion.k=-1"):
        WeightedRRF(k=-1)


@pytest.mark.parametrize("cls", [WeightedRRF, MinMaxSum, ZScoreSum])
@pytest.mark.parametrize(
    ("weights", "match"),
    [
        ({"dense": 1.0}, "needs exactly"),
        ({"dense": 1.0, "sparse": 1.0, "rerank": 1.0}, "needs exactly"),
        ({"dense": -0.5, "sparse": 1.0}, "fusion.weights.dense=-0.5"),
        ({"dense": 1.0, "sparse": float("nan")}, "fusion.weights.sparse"),
        ({"dense": 1.0, "sparse": "heavy"}, "fusion.weights.sparse='heavy'"),
    ],
)
def test_bad_weights_are_errors(cls, weights: dict, match: str) -> None:
    with pytest.raises(SituateError, match=match):
        cls(weights=weights)


def test_weights_accept_any_mapping() -> None:
    from omegaconf import OmegaConf

    fusion = MinMaxSum(weights=OmegaConf.create({"sparse": 1, "dense": "0.25"}))
    assert fusion.weights == (0.25, 1.0)  # in needs order: dense, sparse


# ---------------------------------------------------------------- min-max sum


def test_minmax_sum_default_weights() -> None:
    ids, scores = fused_row(MinMaxSum(), DENSE, SPARSE)
    # dense: doc 3 (0.9-0.1)/(0.9-0.1) = 1, doc 1 (0.5-0.1)/(0.9-0.1) = 0.5, doc 2 0
    # sparse: doc 1 (12-4)/(12-4) = 1, doc 4 0
    # doc 1: 0.5*0.5 + 0.5*1 = 0.75; doc 3: 0.5*1; docs 2 and 4: 0 (tie -> ascending id)
    assert ids == [1, 3, 2, 4]
    assert scores == pytest.approx(
        [
            (0.5 - 0.1) / (0.9 - 0.1) * 0.5 + (12 - 4) / (12 - 4) * 0.5,
            (0.9 - 0.1) / (0.9 - 0.1) * 0.5,
            (0.1 - 0.1) / (0.9 - 0.1) * 0.5,
            (4 - 4) / (12 - 4) * 0.5,
        ]
    )


def test_minmax_sum_custom_weights() -> None:
    ids, scores = fused_row(MinMaxSum(weights={"dense": 0.8, "sparse": 0.2}), DENSE, SPARSE)
    # doc 3: 0.8*1 = 0.8; doc 1: 0.8*0.5 + 0.2*1 = 0.6; docs 2 and 4: 0
    assert ids == [3, 1, 2, 4]
    assert scores == pytest.approx([0.8 * 1, 0.8 * 0.5 + 0.2 * 1, 0.0, 0.0])


def test_minmax_sum_all_equal_scores_normalise_to_one() -> None:
    dense = scored([(5, 0.7), (6, 0.7)])
    sparse = scored([(6, 3.0), (7, 1.0)])
    ids, scores = fused_row(MinMaxSum(), dense, sparse)
    # dense: max == min, so docs 5 and 6 get 1.0 each; sparse: doc 6 1, doc 7 0
    assert ids == [6, 5, 7]
    assert scores == pytest.approx([0.5 * 1.0 + 0.5 * 1, 0.5 * 1.0, 0.5 * 0])


def test_minmax_sum_pool_sets_min_and_max() -> None:
    # pool=2: doc 2 (0.1) drops out of dense, so the dense min becomes 0.5 and doc 1 gets 0 there
    ids, scores = fused_row(MinMaxSum(pool=2), DENSE, SPARSE)
    # doc 1: 0.5*(0.5-0.5)/(0.9-0.5) + 0.5*1 = 0.5; doc 3: 0.5*1 (tie -> id); doc 4: 0
    assert ids == [1, 3, 4]
    assert scores == pytest.approx(
        [(0.5 - 0.5) / (0.9 - 0.5) * 0.5 + 1 * 0.5, (0.9 - 0.5) / (0.9 - 0.5) * 0.5, 0.0]
    )


def test_minmax_is_per_query() -> None:
    dense = scored([(1, 0.9), (2, 0.1)], [(1, 100.0), (2, 50.0), (3, 0.0)])
    sparse = scored([], [], depth=1)
    fused = MinMaxSum().fuse(lists(dense, sparse), depth=3)
    # q0: doc 1 1, doc 2 0; q1: doc 1 1, doc 2 (50-0)/(100-0), doc 3 0
    assert fused.ids.tolist() == [[1, 2, -1], [1, 2, 3]]
    assert fused.scores[0, :2] == pytest.approx([0.5 * 1, 0.5 * 0])
    assert fused.scores[1] == pytest.approx([0.5 * 1, 0.5 * (50 - 0) / (100 - 0), 0.5 * 0])


# ---------------------------------------------------------------- z-score sum

STD_DENSE = ((0.4**2 + 0.0**2 + 0.4**2) / 3) ** 0.5  # population std of 0.9, 0.5, 0.1 (mean 0.5)
STD_SPARSE = ((4.0**2 + 4.0**2) / 2) ** 0.5  # population std of 12, 4 (mean 8) = 4


def test_zscore_sum_default_weights() -> None:
    ids, scores = fused_row(ZScoreSum(), DENSE, SPARSE)
    # dense z: doc 3 +0.4/std = 1.2247, doc 1 0, doc 2 -1.2247; sparse z: doc 1 +1, doc 4 -1
    # doc 3: 0.6124; doc 1: 0 + 0.5; doc 4: -0.5; doc 2: -0.6124 (below the mean is below absent)
    assert ids == [3, 1, 4, 2]
    assert scores == pytest.approx(
        [
            0.5 * (0.9 - 0.5) / STD_DENSE,
            0.5 * (0.5 - 0.5) / STD_DENSE + 0.5 * (12 - 8) / STD_SPARSE,
            0.5 * (4 - 8) / STD_SPARSE,
            0.5 * (0.1 - 0.5) / STD_DENSE,
        ]
    )


def test_zscore_sum_custom_weights() -> None:
    ids, scores = fused_row(ZScoreSum(weights={"dense": 0.2, "sparse": 0.8}), DENSE, SPARSE)
    # doc 1: 0.8*1 = 0.8; doc 3: 0.2*1.2247 = 0.2449; doc 2: -0.2449; doc 4: -0.8
    assert ids == [1, 3, 2, 4]
    assert scores == pytest.approx(
        [
            0.2 * 0 + 0.8 * (12 - 8) / STD_SPARSE,
            0.2 * (0.9 - 0.5) / STD_DENSE,
            0.2 * (0.1 - 0.5) / STD_DENSE,
            0.8 * (4 - 8) / STD_SPARSE,
        ]
    )


def test_zscore_sum_zero_std_gives_zero() -> None:
    dense = scored([(5, 0.7), (6, 0.7)])
    sparse = scored([(6, 3.0), (7, 1.0)])
    ids, scores = fused_row(ZScoreSum(), dense, sparse)
    # dense std 0: z = 0 for docs 5 and 6; sparse (mean 2, std 1): doc 6 +1, doc 7 -1
    assert ids == [6, 5, 7]
    assert scores == pytest.approx([0.5 * 0 + 0.5 * (3 - 2) / 1, 0.5 * 0, 0.5 * (1 - 2) / 1])


def test_zscore_sum_pool() -> None:
    # pool=2: dense is 0.9, 0.5 (mean 0.7, std 0.2): doc 3 +1, doc 1 -1; sparse as before
    ids, scores = fused_row(ZScoreSum(pool=2), DENSE, SPARSE)
    # doc 3: 0.5*1 = 0.5; doc 1: 0.5*(-1) + 0.5*1 = 0; doc 4: 0.5*(-1)
    assert ids == [3, 1, 4]
    assert scores == pytest.approx(
        [0.5 * (0.9 - 0.7) / 0.2, 0.5 * (0.5 - 0.7) / 0.2 + 0.5 * (12 - 8) / 4, 0.5 * (4 - 8) / 4]
    )


# ---------------------------------------------------------------- CombSUM and CombMNZ


def test_comb_sum() -> None:
    ids, scores = fused_row(CombSum(), DENSE, SPARSE)
    # doc 1: (0.5-0.1)/(0.9-0.1) + (12-4)/(12-4) = 1.5; doc 3: 1; docs 2 and 4: 0
    assert ids == [1, 3, 2, 4]
    assert scores == pytest.approx(
        [(0.5 - 0.1) / (0.9 - 0.1) + (12 - 4) / (12 - 4), (0.9 - 0.1) / (0.9 - 0.1), 0.0, 0.0]
    )


# dense min-max: doc 1 1, doc 2 0.6, doc 3 0; sparse: doc 3 1, doc 2 0.7, doc 4 0
MNZ_DENSE = scored([(1, 1.0), (2, 0.6), (3, 0.0)])
MNZ_SPARSE = scored([(3, 10.0), (2, 7.0), (4, 0.0)])


def test_comb_sum_vs_comb_mnz() -> None:
    ids, scores = fused_row(CombSum(), MNZ_DENSE, MNZ_SPARSE)
    # doc 2: 0.6 + 0.7 = 1.3; docs 1 (1) and 3 (0 + 1) tie -> ascending id; doc 4: 0
    assert ids == [2, 1, 3, 4]
    assert scores == pytest.approx([0.6 / 1.0 + 7 / 10, 1.0, 0.0 + 10 / 10, 0.0])
    ids, scores = fused_row(CombMNZ(), MNZ_DENSE, MNZ_SPARSE)
    # times the lists containing the doc: doc 2: 1.3*2; doc 3: 1*2; doc 1: 1*1; doc 4: 0*1
    assert ids == [2, 3, 1, 4]
    assert scores == pytest.approx([(0.6 / 1.0 + 7 / 10) * 2, (0.0 + 10 / 10) * 2, 1.0 * 1, 0.0])


def test_comb_mnz_running_example() -> None:
    ids, scores = fused_row(CombMNZ(), DENSE, SPARSE)
    # doc 1: (0.5 + 1) * 2 = 3; doc 3: 1 * 1; docs 2 and 4: 0
    assert ids == [1, 3, 2, 4]
    assert scores == pytest.approx(
        [((0.5 - 0.1) / (0.9 - 0.1) + (12 - 4) / (12 - 4)) * 2, 1.0 * 1, 0.0, 0.0]
    )


def test_comb_sum_and_comb_mnz_pool() -> None:
    # pool=2: dense 1.0, 0.6 -> doc 1 1, doc 2 0; sparse 10, 7 -> doc 3 1, doc 2 0
    ids, scores = fused_row(CombSum(pool=2), MNZ_DENSE, MNZ_SPARSE)
    assert ids == [1, 3, 2]
    assert scores == pytest.approx([1.0, 1.0, 0.0 + 0.0])
    # doc 2 in both lists: (0 + 0) * 2 = 0; doc 3 is in the sparse top 2 only
    ids, scores = fused_row(CombMNZ(pool=2), MNZ_DENSE, MNZ_SPARSE)
    assert ids == [1, 3, 2]
    assert scores == pytest.approx([1.0 * 1, 1.0 * 1, (0.0 + 0.0) * 2])


# ---------------------------------------------------------------- DBSF

# dense 0.9, 0.5, 0.1: mean 0.5, sample std sqrt((0.4**2 + 0 + 0.4**2) / 2) = 0.4
SD_DENSE = ((0.4**2 + 0.0**2 + 0.4**2) / (3 - 1)) ** 0.5
LO_DENSE, HI_DENSE = 0.5 - 3 * SD_DENSE, 0.5 + 3 * SD_DENSE
# sparse 12, 4: mean 8, sample std sqrt((4**2 + 4**2) / 1) = 5.657
SD_SPARSE = ((4.0**2 + 4.0**2) / (2 - 1)) ** 0.5
LO_SPARSE, HI_SPARSE = 8 - 3 * SD_SPARSE, 8 + 3 * SD_SPARSE


def test_dbsf() -> None:
    ids, scores = fused_row(DBSF(), DENSE, SPARSE)
    # dense: doc 3 (0.9+0.7)/2.4 = 0.667, doc 1 0.5, doc 2 0.333; sparse: doc 1 0.618, doc 4 0.382
    # doc 1: 0.5 + 0.618 = 1.118; doc 3: 0.667; doc 4: 0.382; doc 2: 0.333
    assert ids == [1, 3, 4, 2]
    assert scores == pytest.approx(
        [
            (0.5 - LO_DENSE) / (HI_DENSE - LO_DENSE) + (12 - LO_SPARSE) / (HI_SPARSE - LO_SPARSE),
            (0.9 - LO_DENSE) / (HI_DENSE - LO_DENSE),
            (4 - LO_SPARSE) / (HI_SPARSE - LO_SPARSE),
            (0.1 - LO_DENSE) / (HI_DENSE - LO_DENSE),
        ]
    )
    assert scores[1] == pytest.approx(1.6 / 2.4)


def test_dbsf_clips_to_the_unit_interval() -> None:
    # eleven scores, ten 0.0 and one 1.0: mean 1/11, sample std sqrt(1/11) = 0.3015, so the
    # upper bound 1/11 + 3*0.3015 = 0.9955 lies below 1.0 and doc 0 would get 1.0025 unclipped
    dense = scored([(0, 1.0)] + [(i, 0.0) for i in range(1, 11)])
    mean, sd = 1 / 11, ((10 * (1 / 11) ** 2 + (10 / 11) ** 2) / 10) ** 0.5
    assert sd == pytest.approx((1 / 11) ** 0.5)
    assert (1.0 - (mean - 3 * sd)) / (6 * sd) > 1
    ids, scores = fused_row(DBSF(), dense, scored([], depth=1), depth=11)
    assert ids == list(range(11))
    assert scores[0] == 1.0
    assert scores[1:] == pytest.approx([(0.0 - (mean - 3 * sd)) / (6 * sd)] * 10)


def test_dbsf_zero_std_and_single_score_give_one_half() -> None:
    dense = scored([(5, 0.7), (6, 0.7)])
    sparse = scored([(6, 3.0)])
    ids, scores = fused_row(DBSF(), dense, sparse)
    # dense std 0: 0.5 each; sparse has one score: 0.5
    assert ids == [6, 5]
    assert scores == pytest.approx([0.5 + 0.5, 0.5])


def test_dbsf_pool() -> None:
    # pool=2: dense 0.9, 0.5: mean 0.7, sample std sqrt(0.2**2 * 2 / 1) = 0.2828
    sd = ((0.2**2 + 0.2**2) / 1) ** 0.5
    lo, hi = 0.7 - 3 * sd, 0.7 + 3 * sd
    ids, scores = fused_row(DBSF(pool=2), DENSE, SPARSE)
    # doc 1: 0.382 + 0.618 = 1.0; doc 3: 0.618; doc 4: 0.382
    assert ids == [1, 3, 4]
    assert scores == pytest.approx(
        [
            (0.5 - lo) / (hi - lo) + (12 - LO_SPARSE) / (HI_SPARSE - LO_SPARSE),
            (0.9 - lo) / (hi - lo),
            (4 - LO_SPARSE) / (HI_SPARSE - LO_SPARSE),
        ]
    )


# ---------------------------------------------------------------- edge cases, every method


@pytest.mark.parametrize("name", sorted(METHODS))
def test_both_lists_empty_gives_a_padded_row(name: str) -> None:
    dense = scored([(5, 0.9), (6, 0.2)], [], depth=2)
    sparse = scored([(6, 3.0)], [], depth=2)
    fused = METHODS[name]().fuse(lists(dense, sparse), depth=3)
    assert fused.ids[1].tolist() == [-1, -1, -1]
    assert fused.scores[1].tolist() == [-np.inf, -np.inf, -np.inf]
    assert fused.ids[0, :2].tolist() in ([5, 6], [6, 5])


# dense empty, sparse (2, 5.0), (0, 3.0): mean 4, population std 1, sample std sqrt(2)
ONE_EMPTY = {
    "weighted_rrf": [1 / (60 + 1), 1 / (60 + 2)],
    "minmax_sum": [0.5 * (5 - 3) / (5 - 3), 0.5 * (3 - 3) / (5 - 3)],
    "zscore_sum": [0.5 * (5 - 4) / 1, 0.5 * (3 - 4) / 1],
    "comb_sum": [(5 - 3) / (5 - 3), (3 - 3) / (5 - 3)],
    "comb_mnz": [(5 - 3) / (5 - 3) * 1, (3 - 3) / (5 - 3) * 1],
    "dbsf": [(5 - (4 - 3 * R2)) / (6 * R2), (3 - (4 - 3 * R2)) / (6 * R2)],
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_one_list_empty_uses_the_other_alone(name: str) -> None:
    ids, scores = fused_row(METHODS[name](), scored([], depth=2), scored([(2, 5.0), (0, 3.0)]))
    assert ids == [2, 0]
    assert scores == pytest.approx(ONE_EMPTY[name])


# doc 5: dense best, sparse worst; doc 2 the reverse: every method ties them
TIES = {
    "weighted_rrf": 1 / (60 + 1) + 1 / (60 + 2),
    "minmax_sum": 0.5 * 1 + 0.5 * 0,
    "zscore_sum": 0.5 * 1 + 0.5 * -1,
    "comb_sum": 1 + 0,
    "comb_mnz": (1 + 0) * 2,
    "dbsf": (0.5 + R2 / 12) + (0.5 - R2 / 12),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_ties_broken_by_ascending_id(name: str) -> None:
    dense = scored([(5, 0.8), (2, 0.4)])
    sparse = scored([(2, 9.0), (5, 3.0)])
    ids, scores = fused_row(METHODS[name](), dense, sparse)
    assert ids == [2, 5]
    assert scores == pytest.approx([TIES[name]] * 2)


# dense lists doc 4 twice (0.9 at rank 1, 0.1 at rank 3): it counts once, at 0.9, and the 0.1
# takes no part in the list's min, mean or std; dense is then 4: 0.9, 9: 0.5; sparse is 9: 6.0
DUP_SD = ((0.2**2 + 0.2**2) / 1) ** 0.5  # sample std of 0.9, 0.5
DUPLICATES = {
    "weighted_rrf": ([9, 4], [1 / (60 + 2) + 1 / (60 + 1), 1 / (60 + 1)]),
    # min-max: dense doc 4 1, doc 9 0 (not (0.5-0.1)/(0.9-0.1)); sparse single score: 1.0
    "minmax_sum": ([4, 9], [0.5 * 1, 0.5 * 0 + 0.5 * 1.0]),
    # z: dense doc 4 +1, doc 9 -1 (mean 0.7, std 0.2); sparse single score: 0
    "zscore_sum": ([4, 9], [0.5 * (0.9 - 0.7) / 0.2, 0.5 * (0.5 - 0.7) / 0.2 + 0.5 * 0]),
    "comb_sum": ([4, 9], [1, 0 + 1.0]),
    # doc 4 is in one list (hits 1, not 2); doc 9 in two
    "comb_mnz": ([9, 4], [(0 + 1.0) * 2, 1 * 1]),
    "dbsf": (
        [9, 4],
        [
            (0.5 - (0.7 - 3 * DUP_SD)) / (6 * DUP_SD) + 0.5,
            (0.9 - (0.7 - 3 * DUP_SD)) / (6 * DUP_SD),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_duplicated_id_counted_once_at_its_best_rank_and_score(name: str) -> None:
    dense = scored([(4, 0.9), (9, 0.5), (4, 0.1)])
    sparse = scored([(9, 6.0)])
    ids, scores = fused_row(METHODS[name](), dense, sparse)
    expected_ids, expected_scores = DUPLICATES[name]
    assert ids == expected_ids
    assert scores == pytest.approx(expected_scores)


# doc 8 is the only entry of both lists
SINGLE = {
    "weighted_rrf": 1 / (60 + 1) + 1 / (60 + 1),
    "minmax_sum": 0.5 * 1.0 + 0.5 * 1.0,
    "zscore_sum": 0.5 * 0 + 0.5 * 0,
    "comb_sum": 1.0 + 1.0,
    "comb_mnz": (1.0 + 1.0) * 2,
    "dbsf": 0.5 + 0.5,
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_single_score_lists(name: str) -> None:
    fused = METHODS[name]().fuse(lists(scored([(8, 0.3)]), scored([(8, 7.0)])), depth=3)
    assert fused.ids.tolist() == [[8, -1, -1]]
    assert fused.scores[0, 0] == pytest.approx(SINGLE[name])
    assert fused.scores[0, 1:].tolist() == [-np.inf, -np.inf]


@pytest.mark.parametrize("name", sorted(METHODS))
def test_padding_never_enters_the_arithmetic(name: str) -> None:
    # the same lists padded to depth 8 (id -1, score -inf) fuse exactly as the unpadded ones;
    # with -inf in a min, mean or std every score would be nan or infinite
    padded_dense = scored([(3, 0.9), (1, 0.5), (2, 0.1)], depth=8)
    padded_sparse = scored([(1, 12.0), (4, 4.0)], depth=8)
    assert padded_dense.scores[0, -1] == -np.inf
    ids, scores = fused_row(METHODS[name](), padded_dense, padded_sparse)
    expected_ids, expected_scores = fused_row(METHODS[name](), DENSE, SPARSE)
    assert ids == expected_ids
    assert np.isfinite(scores).all()
    assert scores.tolist() == expected_scores.tolist()


def test_normalisers_ignore_non_finite_scores() -> None:
    # a real id with a non-finite score (no retriever returns one) adds 0; stats skip it
    s = np.array([2.0, -np.inf, 0.0, np.nan])
    assert minmax(s).tolist() == [(2 - 0) / (2 - 0), 0.0, (0 - 0) / (2 - 0), 0.0]
    assert zscore(s).tolist() == [(2 - 1) / 1, 0.0, (0 - 1) / 1, 0.0]
    assert three_sigma(s) == pytest.approx(
        [(2 - (1 - 3 * R2)) / (6 * R2), 0.0, (0 - (1 - 3 * R2)) / (6 * R2), 0.0]
    )
    assert minmax(np.zeros(0)).tolist() == []
