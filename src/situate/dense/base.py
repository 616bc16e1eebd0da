"""The dense index protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from situate.rankings import Rankings


class DenseIndex(Protocol):
    """Nearest neighbours by inner product over L2-normalised vectors (= cosine similarity)."""

    name: str

    def identity(self) -> dict: ...

    def build(self, vectors: np.ndarray) -> None: ...

    def save(self, folder: Path) -> None: ...

    def load(self, folder: Path) -> None: ...

    def search(self, queries: np.ndarray, depth: int) -> Rankings: ...
