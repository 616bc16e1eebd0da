"""The sparse engine protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from situate.errors import SituateError
from situate.rankings import Rankings


class SparseEngine(Protocol):
    """A lexical index over chunk texts; ids in results are positions in the indexed list.

    An engine with ``separate_context = True`` indexes each chunk's context in a field of its
    own: ``build`` then gets the plain chunk texts and the contexts apart. Otherwise ``build``
    gets the texts as the context config joined them, and ``contexts`` is None.
    """

    name: str
    separate_context: bool

    def identity(self) -> dict:
        """Everything that changes the index or its scores (engine, k1, b, analyzer...)."""
        ...

    def build(self, texts: list[str], contexts: list[str] | None = None) -> None: ...

    def save(self, folder: Path) -> None: ...

    def load(self, folder: Path) -> None: ...

    def search(self, queries: list[str], depth: int) -> Rankings: ...


def paired_contexts(
    engine: str, texts: list[str], contexts: list[str] | None, context_field: bool
) -> list[str] | None:
    """The contexts an engine with a ``context_field`` option indexes apart: ``contexts`` (one
    per text) with it, None without it (the texts already hold their contexts)."""
    if contexts is not None and len(contexts) != len(texts):
        raise SituateError(
            f"sparse={engine}: {len(contexts)} contexts for {len(texts)} chunk texts; "
            "they must pair up one to one"
        )
    return contexts if context_field else None
