"""``dense: pgvector`` on a real embedded Postgres: exact scan, HNSW, IVFFlat, halfvec, folders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from situate.dense.pgvector import PgvectorIndex
from situate.errors import SituateError


def unit(*rows: list[float]) -> np.ndarray:
    v = np.array(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# four unit vectors in the plane z = 0: 0, 45, 90 and 180 degrees from the x axis
VECTORS = unit([1, 0, 0], [1, 1, 0], [0, 1, 0], [-1, 0, 0])


def random_unit(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def recall_at(found: np.ndarray, exact: np.ndarray) -> float:
    return float(
        np.mean([len(set(f) & set(e)) / len(e) for f, e in zip(found, exact, strict=True)])
    )


@pytest.mark.parametrize("metric", ["cosine", "inner_product"])
def test_exact_scan_on_four_vectors_is_the_numpy_ranking(pg: dict, metric: str) -> None:
    index = PgvectorIndex(index="exact", metric=metric, **pg)
    index.build(VECTORS)
    out = index.search(unit([1, 0, 0], [0, 1, 0]), depth=4)
    # query x: cosines 1 (id 0), 0.7071 (id 1), 0 (id 2), -1 (id 3)
    assert out.ids.tolist() == [[0, 1, 2, 3], [2, 1, 0, 3]]
    assert out.scores[0] == pytest.approx([1.0, 0.5**0.5, 0.0, -1.0], abs=1e-6)
    # query y: 1 (id 2), 0.7071 (id 1), then ids 0 and 3 tie at 0: the lower id first
    assert out.scores[1] == pytest.approx([1.0, 0.5**0.5, 0.0, 0.0], abs=1e-6)
    queries = random_unit(5, 3, seed=1)
    numpy_order = np.argsort(-(queries @ VECTORS.T), axis=1, kind="stable")[:, :2]
    assert index.search(queries, depth=2).ids.tolist() == numpy_order.tolist()


def test_depth_beyond_the_table_is_cut_to_its_size(pg: dict) -> None:
    index = PgvectorIndex(index="exact", **pg)
    index.build(VECTORS)
    out = index.search(unit([1, 0, 0]), depth=10)
    assert out.depth == 4
    assert out.ids[0].tolist() == [0, 1, 2, 3]


def test_halfvec_scores_agree_with_float32_to_three_digits(pg: dict) -> None:
    vectors = random_unit(200, 16, seed=2)
    queries = random_unit(10, 16, seed=3)
    half = PgvectorIndex(index="exact", vector_type="halfvec", **pg)
    half.build(vectors)
    out = half.search(queries, depth=5)
    exact = np.sort(queries @ vectors.T, axis=1)[:, ::-1][:, :5]
    assert out.scores == pytest.approx(exact, abs=2e-3)  # float16 keeps about 3 digits
    full = PgvectorIndex(index="exact", **pg)
    full.build(vectors)
    assert half.sizes()["table_bytes"] < full.sizes()["table_bytes"]


def test_hnsw_recall_at_10_on_2k_random_vectors(pg: dict) -> None:
    vectors = random_unit(2000, 32, seed=4)
    noisy = vectors[:100] + 0.2 * random_unit(100, 32, seed=5)
    queries = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    index = PgvectorIndex(index="hnsw", m=16, ef_construction=64, ef_search=100, **pg)
    index.build(vectors)
    assert recall_at(index.search(queries, depth=10).ids, exact) >= 0.9
    assert index.sizes()["index_bytes"] > 0


def test_ivfflat_probing_every_list_is_exact(pg: dict) -> None:
    vectors = random_unit(500, 8, seed=6)
    queries = random_unit(20, 8, seed=7)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    index = PgvectorIndex(index="ivfflat", lists=10, probes=10, **pg)
    index.build(vectors)
    assert recall_at(index.search(queries, depth=10).ids, exact) == 1.0


def test_saved_folder_loads_and_rebuilds_a_table_the_server_lacks(pg: dict, tmp_path: Path):
    vectors = random_unit(50, 8, seed=8)
    queries = random_unit(3, 8, seed=9)
    built = PgvectorIndex(index="hnsw", **pg)
    built.build(vectors)
    built.save(tmp_path)
    expected = built.search(queries, depth=5)
    # the same folder on a server (here: a schema) that never saw the table gets it again
    elsewhere = PgvectorIndex(index="hnsw", **{**pg, "schema": pg["schema"] + "_b"})
    elsewhere.load(tmp_path)
    again = elsewhere.search(queries, depth=5)
    assert again.ids.tolist() == expected.ids.tolist()
    assert again.scores == pytest.approx(expected.scores, abs=1e-6)


def test_ef_search_is_query_time_and_shares_the_table(pg: dict) -> None:
    a = PgvectorIndex(index="hnsw", ef_search=40, **pg)
    b = PgvectorIndex(index="hnsw", ef_search=400, **pg)
    assert a.identity() == b.identity()
    a.build(VECTORS)
    b.build(VECTORS)
    assert a.table == b.table


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"index": "ivf"}, "dense.index='ivf' is not one of exact, hnsw, ivfflat"),
        ({"vector_type": "bit"}, "dense.vector_type='bit' is not one of vector, halfvec"),
        ({"metric": "l2"}, "dense.metric='l2' is not one of cosine, inner_product"),
        ({"ef_search": 0}, "dense.ef_search=0 must be a positive integer"),
        ({"listen": "udp"}, "listen='udp' is not one of socket, tcp"),
        ({"maintenance_work_mem": "1GB; DROP"}, "dense.maintenance_work_mem='1GB; DROP' is not a"),
        ({"schema": "My Schema"}, "schema='My Schema' is not a plain Postgres name"),
    ],
)
def test_bad_parameters_are_one_line(kwargs: dict, words: str) -> None:
    with pytest.raises(SituateError, match=words.replace("(", r"\(").replace(")", r"\)")):
        PgvectorIndex(**kwargs)


def test_the_index_is_used_even_on_a_small_table(pg: dict, caplog) -> None:
    vectors = random_unit(300, 8, seed=10)
    # an HNSW scan yields at most ef_search rows; a sequential scan would give all 20
    hnsw = PgvectorIndex(index="hnsw", ef_search=5, **pg)
    hnsw.build(vectors)
    assert (hnsw.search(vectors[:3], depth=20).ids >= 0).sum(axis=1).tolist() == [5, 5, 5]
    assert "ef_search=5 is below the depth asked (20)" in caplog.text
    # IVFFlat probing 1 of 30 lists sees about a thirtieth of the rows, far fewer than 300
    ivf = PgvectorIndex(index="ivfflat", lists=30, probes=1, **pg)
    ivf.build(vectors)
    assert ((ivf.search(vectors[:3], depth=300).ids >= 0).sum(axis=1) < 100).all()
