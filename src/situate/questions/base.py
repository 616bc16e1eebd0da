"""The question generator protocol: a passage in, a question with an answer and a verbatim quote out.

``situate questions generate`` builds one :class:`GenerationRequest` per sampled passage and hands
them all to the generator at once (an API generator schedules, caches, prices and caps its calls
like the context stage; the extractive baseline writes by rule). The generator does not resolve
quotes or filter: the command does both, the same way for every generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from situate.datasets.generated import Passage, Provenance
from situate.records import Document


@dataclass(frozen=True)
class GenerationRequest:
    """Write one question about ``passage`` (characters of ``document.text``) with ``strategy``
    (``factual``, ``context_dependent``, ``paraphrase``, ...) in ``language`` (a name such as
    "English" or "Spanish", or "" for the document's own language). ``index`` tells apart two
    questions asked of the same passage."""

    document: Document
    passage: Passage
    strategy: str
    language: str = ""
    index: int = 0

    @property
    def passage_text(self) -> str:
        return self.document.text[self.passage.start : self.passage.end]


@dataclass(frozen=True)
class Proposal:
    """What a generator wrote for one request (``quote`` should be verbatim from the passage),
    or why it wrote nothing usable (``failure``: one line, e.g. an unparsable answer)."""

    request: GenerationRequest
    question: str
    answer: str
    quote: str
    provenance: Provenance
    failure: str | None = None


class QuestionGenerator(Protocol):
    """Writes candidate questions; every field here is read by ``situate questions generate``."""

    name: str  # recorded as ``provenance.generator``: a model name, or "extractive"

    def identity(self) -> dict:
        """Everything that changes what it writes (model, endpoint, prompt hashes): no secrets."""
        ...

    def propose(self, requests: Sequence[GenerationRequest]) -> list[Proposal]:
        """One proposal per request, in the order given (a failed call is a proposal with
        ``failure`` set, so the command counts it instead of losing the rest)."""
        ...
