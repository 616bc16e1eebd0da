"""What writing a run's replayed contexts cost: an estimate for the report's cost chart and table.

Replayed contexts (``context=replay``) cost nothing in their run, so offline every run of a study
costs $0. They were written once, by the model that ``context.written_by`` names (a ``conf/llm``
and a ``conf/prompt`` option; the cookbook's: Claude 3 Haiku), and the report shows that cost:

* **recorded usage**, when every context used carries the usage its call reported (files written
  by ``situate contexts export`` do): the sum of those calls' prices;
* **counted tokens** otherwise: ``situate estimate``'s schedule over the run's chunks, as prompt
  caching bills it: the first call of a document writes the document block to the cache and the
  document's other calls read it back (a block under the model's minimum cacheable length is
  uncached input in every call); each call's chunk and instructions are uncached input; the
  output is the recorded contexts' own tokens (their mean per call). Tokens are counted with the
  local WordPiece tokenizer (about 0.97x Claude 3 Haiku's count on the cookbook set).

Either is an estimate of a past bill (batch discounts and retries unknown), and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import DictConfig


@dataclass(frozen=True)
class WritingCost:
    """USD to write a run's contexts with ``model``, and how that figure was reached."""

    usd: float
    model: str
    how: str


def writing_cost(run_config: DictConfig) -> WritingCost | None:
    """The estimate for a run's resolved config; None when its contexts name no writer."""
    written_by = (run_config.get("context") or {}).get("written_by")
    if not written_by:
        return None
    from hydra.utils import instantiate

    from situate.config import compose
    from situate.estimate import estimate_corpus
    from situate.pricing import load_price_book
    from situate.records import Usage
    from situate.tokens import token_counter

    writer = compose([f"llm={written_by['llm']}", f"prompt={written_by['prompt']}"])
    price = load_price_book(run_config).price(str(writer.llm.model))
    ttl = writer.llm.get("cache_ttl") or "5m"
    corpus = instantiate(run_config.dataset).load()
    chunks = instantiate(run_config.chunker).chunk(corpus)
    contexts = instantiate(run_config.context).contextualize(corpus, chunks)
    written = [(c, x) for c, x in zip(chunks, contexts, strict=True) if x.text]
    if not written:
        return None
    if all(x.usage != Usage() for _, x in written):
        total = sum(price.call_cost(x.usage, ttl=ttl).total for _, x in written)
        return WritingCost(total, price.model, f"recorded usage of {len(written):,} calls")
    llm = instantiate(writer.llm)
    count, _ = token_counter(llm, "local")
    output = round(sum(count([x.text for _, x in written])) / len(written))
    estimate = estimate_corpus(
        price, corpus, [c for c, _ in written], instantiate(writer.prompt), llm,
        counter="local", output_tokens=output, ttl=ttl,
    )  # fmt: skip
    how = (
        f"counted tokens of {len(written):,} calls (prompt {written_by['prompt']}, local "
        f"WordPiece count, {output} output tokens each: the recorded contexts' mean)"
    )
    return WritingCost(estimate.with_caching, price.model, how)
