"""The chunker protocol."""

from __future__ import annotations

from typing import Protocol

from situate.records import Chunk, Corpus


class Chunker(Protocol):
    """Splits every document of a corpus into chunks.

    Each chunk satisfies ``chunk.text == document.text[chunk.start:chunk.end]``; chunk ids are
    ``f"{doc_id}#{index}"`` unless the dataset ships its own ids (``prechunked``).
    """

    name: str

    def chunk(self, corpus: Corpus) -> list[Chunk]: ...

    def identity(self) -> dict:
        """Everything besides the corpus that decides the chunks (options, the tokenizer's
        bytes): the chunk cache's key names it with the corpus."""
        ...


def chunk_id(doc_id: str, index: int) -> str:
    return f"{doc_id}#{index}"
