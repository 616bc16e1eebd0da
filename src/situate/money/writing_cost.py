"""What writing a run's replayed contexts cost: an estimate for the report's cost chart and table.

Replayed contexts (``context=replay``) cost nothing in their run, so offline every run of a study
costs $0. They were written once, by the model that ``context.written_by`` names (a ``conf/llm``
and a ``conf/prompt`` option; the cookbook's: Claude 3 Haiku), and the report shows that cost:

* **recorded usage** (:func:`recorded_cost`), when every context used carries the usage its call
  reported (files written by ``situate contexts export`` do): the sum of those calls' prices;
* **counted tokens** (:func:`counted_cost`) otherwise: ``situate estimate``'s schedule over the
  run's chunks, as prompt caching bills it: the first call of a document writes the document
  block to the cache and the document's other calls read it back (a block under the model's
  minimum cacheable length is uncached input in every call); each call's chunk and instructions
  are uncached input; the output is the recorded contexts' own tokens (their mean per call).
  Tokens are counted with the local WordPiece tokenizer (about 0.97x Claude 3 Haiku's count on
  the cookbook set).

Either is an estimate of a past bill (batch discounts and retries unknown), and says so. Reading
a run's config to get its contexts is :mod:`situate.study.writing_cost`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from situate.money.estimate import estimate_corpus
from situate.money.pricing import ModelPrice
from situate.money.tokens import token_counter
from situate.records import Chunk, Context, Corpus, Usage

Written = Sequence[tuple[Chunk, Context]]  # the chunks whose context has a text, with it


@dataclass(frozen=True)
class WritingCost:
    """USD to write a run's contexts with ``model``, and how that figure was reached."""

    usd: float
    model: str
    how: str


def recorded_cost(price: ModelPrice, written: Written, ttl: str) -> WritingCost | None:
    """The price of the usage each context recorded; None unless every one recorded its usage."""
    if not all(x.usage != Usage() for _, x in written):
        return None
    total = sum(price.call_cost(x.usage, ttl=ttl).total for _, x in written)
    return WritingCost(total, price.model, f"recorded usage of {len(written):,} calls")


def counted_cost(
    price: ModelPrice, corpus: Corpus, written: Written, prompt, llm, *, ttl: str, prompt_name: str
) -> WritingCost:
    """The estimate of writing ``written`` with ``prompt`` (a PromptVariant, the option
    ``prompt_name``) and ``llm`` (its ``LLMProvider``), tokens counted locally, each call's
    output the recorded contexts' mean."""
    count, _ = token_counter(llm, "local")
    output = round(sum(count([x.text for _, x in written])) / len(written))
    estimate = estimate_corpus(
        price, corpus, [c for c, _ in written], prompt, llm,
        counter="local", output_tokens=output, ttl=ttl,
    )  # fmt: skip
    how = (
        f"counted tokens of {len(written):,} calls (prompt {prompt_name}, local "
        f"WordPiece count, {output} output tokens each: the recorded contexts' mean)"
    )
    return WritingCost(estimate.with_caching, price.model, how)
