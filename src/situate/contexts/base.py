"""The contextualizer protocol, and how a context is joined to its chunk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Protocol

from situate.errors import SituateError
from situate.money.billing import Billed, Calls, Unbilled
from situate.records import Chunk, Context, Corpus

PLACEMENTS = ("after", "before")
INDEXES = ("dense", "sparse", "rerank")


class Contextualizer(Protocol):
    """Writes one ``Context`` per chunk, in chunk order; every field here is read by the pipeline
    or its execution (:mod:`situate.running.execution`).

    ``stats`` are the last ``contextualize``'s counts and seconds (logged as run metrics);
    ``placement``, ``apply_to`` and ``texts`` come from :class:`Placement`. ``calls``, ``written`` and
    ``failures`` are the last ``contextualize``'s records, which ``execution=ray`` gathers from its
    tasks into the driver's stage (what ``billed()`` then reports); :class:`RuleContext` has none.
    """

    name: str
    # the API endpoint its contexts come from ("" when none does: no context, a rule, a file)
    endpoint: str
    # "before" or "after" the chunk: which end of a text a model's window cuts the context from
    placement: str
    # the text between chunk and context (whitespace: their tokens add up, the pipeline counts
    # them apart)
    separator: str
    apply_to: tuple[str, ...]
    stats: Mapping[str, float]
    # USD this process may spend on calls (None: no cap, or no calls to pay)
    budget_usd: float | None
    # (doc_id, call) of the LLM calls this process paid for; None for a stage that calls no LLM
    calls: Calls | None
    # (doc_id, stored context) of the configuration's contexts as billed when written
    written: Calls
    # (chunk_id, error) of the chunks whose call failed after its retries
    failures: Sequence[tuple[str, str]]

    def identity(self) -> dict:
        """Everything that changes a context or how it joins its chunk (the model with its
        endpoint, the prompt, the rule's options, placement), not how the calls are made."""
        ...

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]: ...

    def texts(self, chunks: list[Chunk], contexts: list[Context], index: str) -> list[str]: ...

    def billed(self) -> Billed:
        """The LLM calls this process paid for and what the configuration's contexts cost."""
        ...


class Placement:
    """Where a context goes relative to its chunk, and which indexes see it.

    Parameters
    ----------
    placement : {"before", "after"}
        ``before`` (the default) puts the context first, where a model's window keeps it;
        ``after`` is the cookbook's ``f"{chunk}\\n\\n{context}"``, whose context a window
        shorter than the text cuts first.
    separator : str
        Text between chunk and context.
    apply_to : sequence of {"dense", "sparse", "rerank"}
        Indexes that get the contextualized text; the others index the plain chunk. The
        replication of Anthropic's table uses ``[dense]`` for "contextual embeddings" and
        ``[dense, sparse]`` for "+ contextual BM25".
    """

    name: str  # the option (each stage sets its own)

    def __init__(
        self,
        placement: str = "before",
        separator: str = "\n\n",
        apply_to: Sequence[str] = ("dense", "sparse", "rerank"),
    ):
        if placement not in PLACEMENTS:
            raise SituateError(
                f"context.placement={placement!r} is not one of {', '.join(PLACEMENTS)}"
            )
        unknown = [a for a in apply_to if a not in INDEXES]
        if unknown:
            raise SituateError(
                f"context.apply_to has unknown index {unknown[0]!r}; valid: {', '.join(INDEXES)}"
            )
        self.placement = placement
        self.separator = separator
        self.apply_to = tuple(apply_to)

    def identity(self) -> dict:
        """The option's name and where its contexts go; a stage adds what changes its contexts."""
        return {
            "context": self.name,
            "placement": self.placement,
            "separator": self.separator,
            "apply_to": list(self.apply_to),
        }

    def texts(self, chunks: list[Chunk], contexts: list[Context], index: str) -> list[str]:
        """The text each chunk is indexed with in ``index`` ("dense", "sparse" or "rerank")."""
        if index not in self.apply_to:
            return [c.text for c in chunks]
        return [self.join(c.text, x.text) for c, x in zip(chunks, contexts, strict=True)]

    def join(self, chunk_text: str, context: str) -> str:
        if not context:
            return chunk_text
        if self.placement == "after":
            return f"{chunk_text}{self.separator}{context}"
        return f"{context}{self.separator}{chunk_text}"


class RuleContext(Placement, Unbilled):
    """A context stage that calls no model (no context, a rule, a recorded file): no endpoint,
    no stats, no budget, no calls, nothing billed."""

    endpoint = ""
    stats: Mapping[str, float] = MappingProxyType({})
    budget_usd = None
    calls = None
    written: Calls = ()
    failures: Sequence[tuple[str, str]] = ()
