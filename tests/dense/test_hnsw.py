"""``dense: hnsw``: exact on a tiny case, saved and loaded, and close to flat on real embeddings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from situate.dense.flat import FlatIndex
from situate.dense.hnsw import HnswIndex
from situate.errors import SituateError

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("SITUATE_DATA_DIR", REPO.parent / "shared" / "data"))
COOKBOOK = DATA_DIR / "cookbook-codebase"
EMBEDDING_CACHE = REPO / "outputs" / "cache" / "embeddings.sqlite"


def unit(*rows: list[float]) -> np.ndarray:
    v = np.array(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# four unit vectors in the plane z = 0 (0, 45, 90 and 180 degrees from the x axis), one along z
VECTORS = unit([1, 0, 0], [1, 1, 0], [0, 1, 0], [-1, 0, 0], [0, 0, 1])


def test_tiny_case_is_exact() -> None:
    index = HnswIndex(M=4, ef_construction=16, ef_search=16)
    index.build(VECTORS)
    queries = unit([1, 0, 0], [0, 1, 1])
    out = index.search(queries, depth=3)
    assert out.ids.dtype == np.int64
    assert out.scores.dtype == np.float64
    # query x: cosines 1 (id 0), cos 45 = 0.7071 (id 1), then 0 (ids 2 and 4 tie)
    assert out.ids[0, :2].tolist() == [0, 1]
    assert out.ids[0, 2] in (2, 4)
    assert out.scores[0] == pytest.approx([1.0, 0.5**0.5, 0.0], abs=1e-6)
    # query (0, 1, 1)/sqrt 2: ids 2 and 4 tie at 1/sqrt 2 = 0.7071, then id 1 at 0.5
    assert sorted(out.ids[1, :2].tolist()) == [2, 4]
    assert out.ids[1, 2] == 1
    assert out.scores[1] == pytest.approx([0.5**0.5, 0.5**0.5, 0.5], abs=1e-6)
    flat = FlatIndex()
    flat.build(VECTORS)
    assert out.scores == pytest.approx(flat.search(queries, depth=3).scores, abs=1e-6)


def test_depth_beyond_the_index_is_cut_to_its_size() -> None:
    index = HnswIndex()
    index.build(VECTORS)
    out = index.search(unit([1, 0, 0]), depth=10)
    assert out.depth == len(VECTORS)
    assert sorted(out.ids[0].tolist()) == [0, 1, 2, 3, 4]
    assert out.ids[0, -1] == 3  # the opposite vector, cosine -1
    assert out.scores[0, -1] == pytest.approx(-1.0, abs=1e-6)


def test_empty_index_returns_no_columns() -> None:
    index = HnswIndex()
    index.build(np.zeros((0, 3), dtype=np.float32))
    out = index.search(unit([1, 0, 0], [0, 1, 0]), depth=5)
    assert (out.n_queries, out.depth) == (2, 0)


def test_missing_neighbours_are_padded_with_minus_one_and_minus_inf() -> None:
    class Short:  # what faiss returns when HNSW finds fewer neighbours than asked for
        ntotal = 5

        def search(self, queries, k):
            ids = np.array([[3, 1, -1]], dtype=np.int64)
            scores = np.array([[0.9, 0.4, -3.4028235e38]], dtype=np.float32)
            return scores, ids

    index = HnswIndex()
    index._index = Short()
    out = index.search(unit([1, 0, 0]), depth=3)
    assert out.ids.tolist() == [[3, 1, -1]]
    assert out.scores[0, 2] == -np.inf
    assert out.scores[0, :2] == pytest.approx([0.9, 0.4])
    ids, _ = out.row(0)
    assert ids.tolist() == [3, 1]


def test_identity_names_every_build_setting() -> None:
    assert HnswIndex(M=16, ef_construction=100, ef_search=64).identity() == {
        "index": "faiss.IndexHNSWFlat",
        "metric": "inner_product",
        "M": 16,
        "efConstruction": 100,
    }
    # efSearch only changes the search, so the same built graph serves every efSearch
    assert HnswIndex().identity() == HnswIndex(ef_search=64).identity()
    assert HnswIndex().identity() != HnswIndex(M=16).identity()
    assert HnswIndex().name == "hnsw"


@pytest.mark.parametrize("key", ["M", "ef_construction", "ef_search"])
def test_non_positive_settings_are_errors(key: str) -> None:
    with pytest.raises(SituateError, match=f"dense.{key}=0"):
        HnswIndex(**{key: 0})


def test_save_and_load_round_trip_and_set_ef_search(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:20] + 0.1 * rng.normal(size=(20, 16)).astype(np.float32)
    built = HnswIndex(M=8, ef_construction=40, ef_search=32)
    built.build(vectors)
    built.save(tmp_path)
    assert (tmp_path / "index.faiss").exists()
    loaded = HnswIndex(M=8, ef_construction=40, ef_search=32)
    loaded.load(tmp_path)
    a, b = built.search(queries, 10), loaded.search(queries, 10)
    assert a.ids.tolist() == b.ids.tolist()
    assert a.scores == pytest.approx(b.scores)
    assert loaded._index.hnsw.efSearch == 32
    assert loaded._index.hnsw.efConstruction == 40
    # efSearch is not taken from the file: the loading index's own setting wins
    other = HnswIndex(M=8, ef_construction=40, ef_search=200)
    other.load(tmp_path)
    assert other._index.hnsw.efSearch == 200


# ---------------------------------------------------------------- recall on real embeddings


def recall_at_10(exact, approx) -> float:
    """Mean over queries of |exact top 10 & approximate top 10| / 10."""
    hits = [len(set(exact.ids[q]) & set(approx.ids[q])) / 10 for q in range(exact.n_queries)]
    return float(np.mean(hits))


def approx_scores(rankings) -> np.ndarray:
    return rankings.scores[rankings.ids >= 0]


@pytest.fixture(scope="module")
def cookbook_vectors() -> tuple[np.ndarray, np.ndarray]:
    """MiniLM (ONNX) vectors of every cookbook chunk and of the 248 evaluation queries.

    They go through the shared content-addressed embedding cache (outputs/cache), so only the
    first run pays for the model (about a minute on two cores).
    """
    chunks_file = COOKBOOK / "codebase_chunks.json"
    if not chunks_file.exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK} (run `situate data fetch cookbook`)")
    from situate.embedding.base import CachedEmbeddings
    from situate.embedding.onnx_minilm import OnnxMiniLMEmbedder
    from situate.stores.sqlite import BlobStore

    docs = json.loads(chunks_file.read_text(encoding="utf-8"))
    texts = [chunk["content"] for doc in docs for chunk in doc["chunks"]]
    with open(COOKBOOK / "evaluation_set.jsonl", encoding="utf-8") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()]
    embed = CachedEmbeddings(OnnxMiniLMEmbedder(), BlobStore(EMBEDDING_CACHE, "embeddings"))
    return embed(texts, "document"), embed(queries, "query")


@pytest.mark.slow
def test_hnsw_recall_at_10_against_flat_on_cookbook_embeddings(cookbook_vectors) -> None:
    documents, queries = cookbook_vectors
    assert documents.shape == (737, 384)
    assert queries.shape == (248, 384)
    flat, hnsw = FlatIndex(), HnswIndex()
    flat.build(documents)
    hnsw.build(documents)
    exact = flat.search(queries, 10)
    recall = recall_at_10(exact, hnsw.search(queries, 10))
    print(f"\nHNSW (M=32, efConstruction=200, efSearch=128) recall@10 vs flat: {recall:.4f}")
    assert recall >= 0.95
    # a much sparser graph searched with a much smaller beam does not do better
    small = HnswIndex(M=4, ef_construction=8, ef_search=1)
    small.build(documents)
    low = small.search(queries, 10)
    small_recall = recall_at_10(exact, low)
    print(
        f"HNSW (M=4, efConstruction=8, efSearch=1) recall@10 vs flat: {small_recall:.4f}, "
        f"{(low.ids < 0).sum()} of {low.ids.size} slots padded"
    )
    assert small_recall <= recall
    # so small a beam may come back short: whatever faiss leaves out is id -1 with score -inf
    assert (np.isneginf(low.scores) == (low.ids < 0)).all()
    assert np.isfinite(approx_scores(hnsw.search(queries, 10))).all()
