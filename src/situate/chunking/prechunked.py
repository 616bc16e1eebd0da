"""The dataset's own chunks, for datasets that ship them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from situate.errors import SituateError
from situate.records import Chunk, Corpus

if TYPE_CHECKING:
    from situate.config.preflight import RunView

NO_CHUNKS_FIX = (
    "use chunker=markdown or chunker=fixed, with context=none or context=heading_path "
    "(context=replay, the default, only fits the chunks its contexts were recorded for)"
)


class PrechunkedChunker:
    """Use the chunks a dataset ships (``Corpus.prechunks``) instead of cutting new ones."""

    name = "prechunked"

    def identity(self) -> dict:
        """No options: the chunks are the corpus's own (``Corpus.prechunks``)."""
        return {"name": self.name}

    @classmethod
    def preflight(cls, params: Mapping[str, Any], run: RunView) -> None:
        """Refuse a dataset that ships no chunks (its class says so: ``ships_chunks(params)``)
        before a document of it is read."""
        dataset = run.target("dataset")
        ships = getattr(dataset, "ships_chunks", None)
        if dataset is not None and (ships is None or not ships(run.params("dataset"))):
            raise SituateError(
                f"chunker=prechunked: dataset={run.option('dataset') or dataset.__name__} ships "
                f"no chunks of its own; {NO_CHUNKS_FIX}"
            )

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
                f"{corpus.name}: this dataset ships no chunks of its own; {NO_CHUNKS_FIX}"
            )
        return list(corpus.prechunks)
