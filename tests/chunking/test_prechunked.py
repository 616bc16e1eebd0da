"""PrechunkedChunker: hands back the dataset's own chunks, or says there are none."""

from __future__ import annotations

import pytest

from situate.chunking.prechunked import PrechunkedChunker
from situate.errors import SituateError
from situate.records import Chunk, Corpus, Document


def test_returns_the_shipped_chunks() -> None:
    doc = Document(doc_id="a", text="alpha beta")
    shipped = [
        Chunk("x-1", "a", 0, 0, 5, "alpha", chunker="prechunked"),
        Chunk("x-2", "a", 1, 6, 10, "beta", chunker="prechunked"),
    ]
    corpus = Corpus(name="shipped", documents=[doc], questions=[], prechunks=shipped)
    chunks = PrechunkedChunker().chunk(corpus)
    assert chunks == shipped
    assert chunks is not shipped
    assert all(c.text == doc.text[c.start : c.end] for c in chunks)
    assert PrechunkedChunker.name == "prechunked"


@pytest.mark.parametrize("prechunks", [None, []])
def test_no_shipped_chunks_is_an_error(prechunks: list[Chunk] | None) -> None:
    corpus = Corpus(name="covid-qa", documents=[], questions=[], prechunks=prechunks)
    with pytest.raises(SituateError) as e:
        PrechunkedChunker().chunk(corpus)
    assert str(e.value) == (
        "covid-qa: this dataset ships no chunks of its own; use chunker=markdown or chunker=fixed, "
        "with context=none or context=heading_path (context=replay, the default, only fits the "
        "chunks its contexts were recorded for)"
    )
