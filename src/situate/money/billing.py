"""What a stage was billed for: the record the pipeline and :mod:`situate.money.costs` read.

Every embedder, reranker and contextualizer answers ``billed()``. A stage that pays no provider
says so explicitly by inheriting :class:`Unbilled`; a paid one reports what its provider billed
(embedding tokens, rerank search units, LLM calls), so a paid stage that forgets to count is a
failing test (tests/test_config.py), not a run priced at $0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from situate.records import Usage


class PaidCall(Protocol):
    """A call as the provider billed it: an ``LLMResponse`` (this run) or a ``StoredContext``."""

    usage: Usage
    batch: bool


Calls = Sequence[tuple[str, PaidCall]]  # (doc_id, call)


@dataclass(frozen=True)
class Billed:
    """What a stage's provider billed this process for, and the price-book entry to price it at.

    Parameters
    ----------
    model : str
        The price-book id (``conf/pricing/``); "" for a stage that calls no provider.
    tokens : int
        Embedding input tokens billed (embedders).
    search_units : float
        Rerank searches billed (rerankers).
    calls : sequence of (doc_id, call)
        LLM calls this process paid for (contexts). ``None`` when the stage makes no LLM calls
        at all: zero calls of an LLM context is news (every context came from the store).
    written : sequence of (doc_id, call)
        Each distinct context of the configuration as it was billed when written, by any run;
        empty until every one is stored (``config_*`` is then not reported).
    cache_ttl : str
        The prompt cache lifetime the calls' cache writes are priced at.
    unanswered : int
        LLM calls sent whose answer never came back (in flight when the run was stopped): the
        provider may have billed them, but their usage is unknown, so they are not in ``calls``.
    """

    model: str = ""
    tokens: int = 0
    search_units: float = 0.0
    calls: Calls | None = None
    written: Calls = ()
    cache_ttl: str = "5m"
    unanswered: int = 0


class Unbilled:
    """A stage that pays no provider: local models, rules, files. It declares zero usage."""

    def billed(self) -> Billed:
        return Billed()
