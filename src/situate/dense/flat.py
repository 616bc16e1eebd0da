"""``dense: flat``: exact search with faiss ``IndexFlatIP`` on normalised vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from situate.rankings import Rankings


class FlatIndex:
    """Exact inner-product search (every vector compared with every query)."""

    name = "flat"

    def __init__(self, threads: int = 2):
        self.threads = threads
        self._index = None

    def identity(self) -> dict:
        return {"index": "faiss.IndexFlatIP"}

    def build(self, vectors: np.ndarray) -> None:
        import faiss

        faiss.omp_set_num_threads(self.threads)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._index = faiss.IndexFlatIP(vectors.shape[1])
        self._index.add(vectors)

    def save(self, folder: Path) -> None:
        import faiss

        faiss.write_index(self._index, str(folder / "index.faiss"))

    def load(self, folder: Path) -> None:
        import faiss

        faiss.omp_set_num_threads(self.threads)
        self._index = faiss.read_index(str(folder / "index.faiss"))

    def search(self, queries: np.ndarray, depth: int) -> Rankings:
        depth = min(depth, self._index.ntotal)
        scores, ids = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), depth)
        return Rankings(
            ids.astype(np.int64), np.where(ids >= 0, scores, -np.inf).astype(np.float64)
        )
