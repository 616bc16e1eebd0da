"""Plain records that flow between stages.

Every stage reads and returns these (or numpy arrays); none of them knows about Hydra or MLflow.
Offsets are character offsets into ``Document.text``, end-exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# How the cookbook-style ``pass_at_k`` decides that a gold span was found in a retrieved chunk:
# - "chunk_text": some retrieved chunk's stripped text equals the gold text (the cookbook's own
#   scorer; identical licence-header chunks all count);
# - "answer_text": some retrieved chunk contains the gold text (an extractive answer, DPR-style);
# - "span": some retrieved chunk overlaps the gold span (the same test as recall).
PassMatch = Literal["chunk_text", "answer_text", "span"]


@dataclass(frozen=True)
class Span:
    """A piece of gold evidence: characters ``[start, end)`` of document ``doc_id``."""

    doc_id: str
    start: int
    end: int
    match: PassMatch = "span"

    def overlaps(self, doc_id: str, start: int, end: int) -> bool:
        return self.doc_id == doc_id and start < self.end and self.start < end


@dataclass(frozen=True)
class Page:
    """Page ``number`` (1-based) of a paged source (PDF): characters ``[start, end)`` of its text."""

    number: int
    start: int
    end: int


@dataclass(frozen=True)
class Document:
    doc_id: str
    text: str
    title: str = ""
    source: str = ""  # file the document came from, for error messages
    pages: tuple[Page, ...] = ()  # page spans of a paged source, in order; () when not paged
    title_source: str = ""  # the rule that named it (parsing.titles.SOURCES); "" when not parsed


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    gold: tuple[Span, ...]
    answer: str = ""


@dataclass(frozen=True)
class Chunk:
    """A contiguous piece of a document: ``text == document.text[start:end]``."""

    chunk_id: str
    doc_id: str
    index: int  # position of the chunk within its document, 0-based
    start: int
    end: int
    text: str
    heading_path: tuple[str, ...] = ()
    chunker: str = ""  # name of the chunker that made it (replayed contexts check it)


@dataclass
class Corpus:
    """What a dataset loader returns: documents, questions and, optionally, the dataset's own chunks."""

    name: str
    documents: list[Document]
    questions: list[Question]
    prechunks: list[Chunk] | None = None
    notes: dict[str, int | str] = field(default_factory=dict)  # e.g. {"offsets_repaired": 234}
    questions_source: str = ""  # the file the questions were read from ("" when none)

    def document(self, doc_id: str) -> Document:
        return self._by_id()[doc_id]

    def _by_id(self) -> dict[str, Document]:
        cache = self.__dict__.get("_doc_index")
        if cache is None or len(cache) != len(self.documents):
            cache = {d.doc_id: d for d in self.documents}
            self.__dict__["_doc_index"] = cache
        return cache


@dataclass(frozen=True)
class Usage:
    """Token usage of one call to a paid model, as the provider reports it."""

    input_uncached: int = 0
    cache_write: int = 0
    cache_read: int = 0
    output: int = 0


@dataclass(frozen=True)
class Context:
    """The situating text written for one chunk ("" when the variant adds nothing)."""

    chunk_id: str
    text: str
    usage: Usage = Usage()
