"""``context: none``: plain chunks, the baseline."""

from __future__ import annotations

from situate.contexts.base import Placement
from situate.records import Chunk, Context, Corpus


class NoContext(Placement):
    name = "none"
    endpoint = ""

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        return [Context(c.chunk_id, "") for c in chunks]
