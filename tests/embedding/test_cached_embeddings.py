"""CachedEmbeddings with a fake, call-counting embedder and a real SQLite BlobStore."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from situate.embedding.base import CachedEmbeddings, normalize
from situate.stores.sqlite import BlobStore


class FakeEmbedder:
    """Vector of a text: [len(text), ord(first char), 1 for queries else 0]; counts what it encodes."""

    name = "fake"

    def __init__(self, version: int = 1):
        self.version = version
        self.calls: list[list[str]] = []

    def identity(self) -> dict:
        return {"provider": "fake", "version": self.version}

    def encode(self, texts: list[str], kind: str) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array(
            [[len(t), ord(t[0]) if t else 0, 1.0 if kind == "query" else 0.0] for t in texts],
            dtype=np.float64,  # CachedEmbeddings stores float32 whatever it gets
        )

    @property
    def n_encoded(self) -> int:
        return sum(len(c) for c in self.calls)


@pytest.fixture
def store(tmp_path: Path) -> BlobStore:
    return BlobStore(tmp_path / "cache.sqlite", "embeddings")


def test_vectors_come_back_in_input_order(store: BlobStore) -> None:
    out = CachedEmbeddings(FakeEmbedder(), store)(["ab", "c"], "document")
    assert out.dtype == np.float32
    assert out.tolist() == [[2, ord("a"), 0], [1, ord("c"), 0]]


def test_only_missing_texts_are_encoded(store: BlobStore) -> None:
    embedder = FakeEmbedder()
    cached = CachedEmbeddings(embedder, store)
    first = cached(["ab", "c"], "document")
    assert embedder.n_encoded == 2
    again = cached(["ab", "c"], "document")
    assert embedder.n_encoded == 2  # second call encodes 0
    np.testing.assert_array_equal(first, again)
    cached(["c", "new", "ab"], "document")
    assert embedder.calls[-1] == ["new"]  # pays for the one missing text
    assert cached.encoded == 3
    assert len(store) == 3


def test_a_second_instance_reuses_the_store(store: BlobStore) -> None:
    CachedEmbeddings(FakeEmbedder(), store)(["ab", "c"], "document")
    embedder = FakeEmbedder()
    CachedEmbeddings(embedder, store)(["ab", "c"], "document")
    assert embedder.calls == []


def test_duplicate_texts_encoded_once(store: BlobStore) -> None:
    embedder = FakeEmbedder()
    out = CachedEmbeddings(embedder, store)(["x", "yy", "x", "x"], "document")
    assert embedder.calls == [["x", "yy"]]
    assert out.shape == (4, 3)
    assert out[0].tolist() == out[2].tolist() == out[3].tolist() == [1, ord("x"), 0]


def test_kind_is_part_of_the_key(store: BlobStore) -> None:
    embedder = FakeEmbedder()
    cached = CachedEmbeddings(embedder, store)
    doc = cached(["hello"], "document")
    query = cached(["hello"], "query")
    assert embedder.calls == [["hello"], ["hello"]]
    assert doc.tolist() == [[5, ord("h"), 0]]
    assert query.tolist() == [[5, ord("h"), 1]]
    assert len(store) == 2


def test_batches_and_progress_totals(store: BlobStore) -> None:
    embedder = FakeEmbedder()
    cached = CachedEmbeddings(embedder, store, batch_size=2)
    cached(["a", "b"], "document")  # 2 cached
    calls: list[tuple[int, int]] = []
    texts = ["a", "b", "c", "d", "e", "c", "f", "g"]  # 7 unique: 2 cached, 5 missing
    cached(texts, "document", progress=lambda advance, total: calls.append((advance, total)))
    # first the cached ones, then batches of 2, 2 and 1
    assert calls == [(2, 7), (2, 7), (2, 7), (1, 7)]
    assert sum(a for a, _ in calls) == 7
    assert embedder.calls[1:] == [["c", "d"], ["e", "f"], ["g"]]
    assert cached.encoded == 2 + 5


def test_progress_when_everything_is_cached(store: BlobStore) -> None:
    cached = CachedEmbeddings(FakeEmbedder(), store)
    cached(["a"], "query")
    calls: list[tuple[int, int]] = []
    cached(["a", "a"], "query", progress=lambda advance, total: calls.append((advance, total)))
    assert calls == [(1, 1)]


def test_changed_identity_reencodes(store: BlobStore) -> None:
    embedder = FakeEmbedder(version=1)
    cached = CachedEmbeddings(embedder, store)
    cached(["ab"], "document")
    embedder.version = 2  # e.g. another model or dimension
    cached(["ab"], "document")
    assert embedder.calls == [["ab"], ["ab"]]
    assert len(store) == 2
    embedder.version = 1
    cached(["ab"], "document")
    assert len(embedder.calls) == 2  # the version-1 vector is still cached


def test_empty_input(store: BlobStore) -> None:
    embedder = FakeEmbedder()
    out = CachedEmbeddings(embedder, store)([], "document")
    assert out.shape == (0, 0)
    assert embedder.calls == []


def test_normalize() -> None:
    # [3, 4] has norm 5; a zero row stays zero
    out = normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[3 / 5, 4 / 5], [0.0, 0.0]], rtol=1e-6)
