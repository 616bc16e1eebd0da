"""The sparse engine protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from situate.rankings import Rankings


class SparseEngine(Protocol):
    """A lexical index over chunk texts; ids in results are positions in the indexed list."""

    name: str

    def identity(self) -> dict:
        """Everything that changes the index or its scores (engine, k1, b, analyzer...)."""
        ...

    def build(self, texts: list[str]) -> None: ...

    def save(self, folder: Path) -> None: ...

    def load(self, folder: Path) -> None: ...

    def search(self, queries: list[str], depth: int) -> Rankings: ...
