"""What contexts cost and what a run paid, in USD, from recorded usage and ``conf/pricing/``.

Two families of metrics, named apart:

- ``config_*``: what this configuration's contexts cost, from the usage recorded in the context
  store when each was written (by this run or an earlier, interrupted or identical one). It is
  the same for every run of the configuration, however much of it came from the store.
- ``run_*``: what this process spent: the LLM calls it made, the tokens an API embedder billed
  it and the searches an API reranker billed it. Contexts served from the store cost it nothing;
  a run that fails logs what it had spent before failing.

A call's cost sums uncached input, cache writes at the call's TTL, cache reads and output, with
the long-prompt tier and the batch discount (:meth:`situate.money.pricing.ModelPrice.call_cost`). Local
models cost nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from situate.money.billing import Billed, Calls
from situate.money.pricing import PriceBook
from situate.money.tokens import local_tokens
from situate.records import Corpus, Usage

RUN = "run_"
CONFIG = "config_"
USAGE_FIELDS = ("input_uncached", "cache_write", "cache_read", "output")
# what a configuration's contexts cost when written, and the run's bill (the report reads these)
CONFIG_CONTEXT_COST = f"{CONFIG}cost_usd_context"
RUN_TOTAL_COST = f"{RUN}cost_usd_total"
# contexts at what they cost when written, plus this run's embedding and rerank bills (their
# caches keep no usage: a run that found every vector cached shows those two at 0)
CONFIG_TOTAL_COST = f"{CONFIG}cost_usd_total"


@dataclass
class ContextCosts:
    """USD of a set of context calls, by document and per call."""

    total: float = 0.0
    per_document: dict[str, float] = field(default_factory=dict)
    per_call: list[dict] = field(default_factory=list)


@dataclass
class RunCosts:
    """What this run paid (``run_*``) beside what its configuration's contexts cost (``config_*``)."""

    context: ContextCosts = field(default_factory=ContextCosts)
    # None while the configuration's LLM contexts are not all written (a stopped run): no config_*
    config_context: ContextCosts | None = field(default_factory=ContextCosts)
    embedding_index: float = 0.0
    embedding_query: float = 0.0
    rerank: float = 0.0

    @property
    def total(self) -> float:
        return self.context.total + self.embedding_index + self.embedding_query + self.rerank

    def metrics(self, document_tokens: int = 0, n_queries: int = 0) -> dict[str, float]:
        """``run_cost_usd_*`` and ``config_cost_usd_*`` (the latter once the configuration's
        contexts are known); ``document_tokens`` are those of the configuration's contextualized
        documents, ``n_queries`` those this run answered."""
        billed = self.embedding_index + self.embedding_query + self.rerank
        out = {
            f"{RUN}cost_usd_context": self.context.total,
            f"{RUN}cost_usd_embedding": self.embedding_index + self.embedding_query,
            f"{RUN}cost_usd_rerank": self.rerank,
            RUN_TOTAL_COST: self.total,
        }
        if self.config_context is None:
            return out
        out[CONFIG_CONTEXT_COST] = self.config_context.total
        out[CONFIG_TOTAL_COST] = self.config_context.total + billed
        if document_tokens:
            out[f"{CONFIG}cost_usd_per_mtok_document"] = (
                self.config_context.total / document_tokens * 1_000_000
            )
        if n_queries:
            out[f"{RUN}cost_usd_per_1k_queries"] = (
                (self.embedding_query + self.rerank) / n_queries * 1000
            )
        return out


def context_costs(book: PriceBook, billed: Billed, calls: Calls) -> ContextCosts:
    """Price each ``(doc_id, call)`` at the prices of ``billed.model`` and its cache TTL."""
    costs = ContextCosts()
    if not calls:
        return costs
    price = book.price(billed.model)
    ttl = billed.cache_ttl
    per_doc: dict[str, float] = defaultdict(float)
    for doc_id, call in calls:
        cost = price.call_cost(call.usage, ttl=ttl, batch=call.batch)
        per_doc[doc_id] += cost.total
        costs.per_call.append(
            {
                "doc_id": doc_id,
                "uncached": call.usage.input_uncached,
                "cache_write": call.usage.cache_write,
                "cache_read": call.usage.cache_read,
                "output": call.usage.output,
                "batch": call.batch,
                "tier": cost.tier,
                "usd": cost.total,
            }
        )
    costs.total = sum(per_doc.values())
    costs.per_document = dict(per_doc)
    return costs


def usage_metrics(prefix: str, calls: Calls) -> dict[str, float]:
    """``<prefix>llm_calls``, ``<prefix>tokens_*`` and, when there were calls, their cache
    shares (no call has no share: it is left out rather than logged as 0)."""
    out = {f"{prefix}llm_calls": float(len(calls))}
    for name in USAGE_FIELDS:
        out[f"{prefix}tokens_{name}"] = float(sum(getattr(c.usage, name) for _, c in calls))
    if calls:
        out.update({f"{prefix}{k}": v for k, v in cache_shares(calls).items()})
    return out


def cache_shares(calls: Calls) -> dict[str, float]:
    """``cache_read_share`` = cache reads / all input tokens; ``cache_read_share_of_max`` = cache
    reads / the physical maximum (each document's prefix written once and read by each of its
    other calls), over documents whose prefix was cacheable; ``docs_below_cache_minimum`` counts
    documents none of whose calls wrote or read the cache."""
    by_doc: dict[str, list[Usage]] = defaultdict(list)
    for doc_id, call in calls:
        by_doc[doc_id].append(call.usage)
    reads = sum(u.cache_read for usages in by_doc.values() for u in usages)
    total_input = sum(
        u.input_uncached + u.cache_write + u.cache_read
        for usages in by_doc.values()
        for u in usages
    )
    maximum, below = 0, 0
    for usages in by_doc.values():
        prefix = max(u.cache_write + u.cache_read for u in usages)
        if prefix == 0:
            below += 1
            continue
        maximum += prefix * (len(usages) - 1)
    shares = {
        "cache_read_share": reads / total_input if total_input else 0.0,
        "docs_below_cache_minimum": float(below),
    }
    if maximum:
        shares["cache_read_share_of_max"] = reads / maximum
    return shares


def billed_embedding(book: PriceBook, billed: Billed, tokens: int) -> float:
    """USD of ``tokens`` embedding tokens at the prices of ``billed.model``."""
    return book.price(billed.model).embedding_cost(tokens) if tokens else 0.0


def billed_rerank(book: PriceBook, billed: Billed) -> float:
    """USD of the searches a reranker reported in ``billed``."""
    searches = billed.search_units
    return book.price(billed.model).rerank_cost(searches) if searches else 0.0


def run_costs(
    book: PriceBook, context: Billed, embedder: Billed, reranker: Billed, index_tokens: int | None
) -> RunCosts:
    """USD a run has paid so far, by stage, and what its configuration's contexts cost, from what
    its stages were billed for; ``index_tokens``: the embedder's tokens billed once its indexes
    were built (the rest are the queries'), None before (all of them the index's)."""
    tokens = embedder.tokens
    index_tokens = tokens if index_tokens is None else index_tokens
    # an LLM context stopped before writing every context: what they cost is not known yet
    unknown = context.calls is not None and not context.written
    return RunCosts(
        context=context_costs(book, context, context.calls or ()),
        config_context=None if unknown else context_costs(book, context, context.written),
        embedding_index=billed_embedding(book, embedder, index_tokens),
        embedding_query=billed_embedding(book, embedder, tokens - index_tokens),
        rerank=billed_rerank(book, reranker),
    )


def spent_metrics(
    context: Billed, costs: RunCosts | None, corpus: Corpus | None = None
) -> dict[str, float]:
    """``run_*`` (what a process has paid so far: read after a failure too) and ``config_*``
    (what the configuration's contexts cost when written, once they all are), from the context's
    bill ``context`` and the run's ``costs`` (None without a price book); with the ``corpus``,
    also the cost per million document tokens and per thousand queries."""
    out: dict[str, float] = {}
    if context.calls is not None:  # an LLM context: zero calls is news (all from the store)
        out.update(usage_metrics(RUN, context.calls))
        if context.unanswered:  # stopped with calls in flight: maybe billed, usage unknown
            out[f"{RUN}llm_calls_unanswered"] = float(context.unanswered)
        if context.written:
            out.update(usage_metrics(CONFIG, context.written))
    if costs is not None and corpus is not None:
        out.update(costs.metrics(document_tokens(corpus, costs), len(corpus.questions)))
    elif costs is not None:
        out.update(costs.metrics())
    return out


def document_tokens(corpus: Corpus, costs: RunCosts) -> int:
    """Tokens of the documents of the configuration's LLM contexts (local WordPiece count)."""
    if costs.config_context is None or not costs.config_context.per_document:
        return 0
    return local_tokens([corpus.document(d).text for d in costs.config_context.per_document])
