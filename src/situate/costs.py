"""What a run paid, in USD, from the usage each provider reported and ``conf/pricing/``.

Context cost is the sum of per-call costs (uncached input, cache writes at the call's TTL, cache
reads, output; long-prompt tier; batch discount) of the calls made in this run: contexts served
from the store cost nothing again. Embedding cost prices the tokens an API embedder was billed;
rerank cost prices the searches an API reranker was billed. Local models cost nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from situate.pricing import PriceBook


@dataclass
class RunCosts:
    context: float = 0.0
    embedding_index: float = 0.0
    embedding_query: float = 0.0
    rerank: float = 0.0
    per_document: dict[str, float] = field(default_factory=dict)
    per_call: list[dict] = field(default_factory=list)

    @property
    def total(self) -> float:
        return self.context + self.embedding_index + self.embedding_query + self.rerank

    def metrics(self, document_tokens: int, n_queries: int) -> dict[str, float]:
        out = {
            "cost_usd_context": self.context,
            "cost_usd_embedding": self.embedding_index + self.embedding_query,
            "cost_usd_rerank": self.rerank,
            "cost_usd_total": self.total,
        }
        if document_tokens:
            out["cost_usd_per_mtok_document"] = self.context / document_tokens * 1_000_000
        if n_queries:
            out["cost_usd_per_1k_queries"] = (self.embedding_query + self.rerank) / n_queries * 1000
        return out


def model_of(component) -> str:
    return str(getattr(component, "model", None) or getattr(component, "name", ""))


def context_costs(book: PriceBook, context, costs: RunCosts) -> None:
    """Price every LLM call the context stage made in this run (none for replayed contexts)."""
    calls = getattr(context, "calls", None)
    if not calls:
        return
    llm = context.llm
    price = book.price(model_of(llm))
    ttl = getattr(llm, "cache_ttl", "5m")
    per_doc: dict[str, float] = defaultdict(float)
    for doc_id, response in calls:
        cost = price.call_cost(response.usage, ttl=ttl, batch=response.batch)
        per_doc[doc_id] += cost.total
        costs.per_call.append(
            {
                "doc_id": doc_id,
                "uncached": response.usage.input_uncached,
                "cache_write": response.usage.cache_write,
                "cache_read": response.usage.cache_read,
                "output": response.usage.output,
                "batch": response.batch,
                "tier": cost.tier,
                "usd": cost.total,
            }
        )
    costs.context = sum(per_doc.values())
    costs.per_document = dict(per_doc)


def billed_embedding(book: PriceBook, embedder, tokens: int) -> float:
    return book.price(model_of(embedder)).embedding_cost(tokens) if tokens else 0.0


def billed_rerank(book: PriceBook, reranker) -> float:
    searches = getattr(reranker, "search_units", 0) or 0
    return book.price(model_of(reranker)).rerank_cost(searches) if searches else 0.0
