"""The dataset's own chunks, for datasets that ship them."""

from __future__ import annotations

from situate.errors import SituateError
from situate.records import Chunk, Corpus


class PrechunkedChunker:
    """Use the chunks a dataset ships (``Corpus.prechunks``) instead of cutting new ones."""

    name = "prechunked"

    def identity(self) -> dict:
        """No options: the chunks are the corpus's own (``Corpus.prechunks``)."""
        return {"name": self.name}

    def chunk(self, corpus: Corpus) -> list[Chunk]:
        """Return the dataset's own chunks.

        Parameters
        ----------
        corpus
            A corpus loaded by a dataset loader.

        Returns
        -------
        list of Chunk
            ``corpus.prechunks``, as shipped (a new list).

        Raises
        ------
        SituateError
            When the dataset ships no chunks.
        """
        if not corpus.prechunks:
            raise SituateError(
                f"{corpus.name}: this dataset ships no chunks of its own; use chunker=markdown or "
                "chunker=fixed, with context=none or context=heading_path (context=replay, the "
                "default, only fits the chunks its contexts were recorded for)"
            )
        return list(corpus.prechunks)
