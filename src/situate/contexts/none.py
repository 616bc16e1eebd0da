"""``context: none``: plain chunks, the baseline."""

from __future__ import annotations

from situate.contexts.base import RuleContext
from situate.records import Chunk, Context, Corpus


class NoContext(RuleContext):
    name = "none"

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        return [Context(c.chunk_id, "") for c in chunks]
