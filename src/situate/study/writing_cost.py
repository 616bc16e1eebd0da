"""What writing a run's replayed contexts cost, from the run's resolved config: its corpus,
chunks and replayed contexts built again, the writer (``context.written_by``: a ``conf/llm`` and
a ``conf/prompt`` option) composed, priced by :mod:`situate.money.writing_cost`."""

from __future__ import annotations

from omegaconf import DictConfig

from situate.money.writing_cost import WritingCost


def writing_cost(run_config: DictConfig) -> WritingCost | None:
    """The estimate for a run's resolved config; None when its contexts name no writer."""
    written_by = (run_config.get("context") or {}).get("written_by")
    if not written_by:
        return None
    from hydra.utils import instantiate

    from situate.config.compose import compose, current_targets
    from situate.money.pricing import load_price_book
    from situate.money.writing_cost import counted_cost, recorded_cost

    run_config = current_targets(run_config)  # a study recorded before a class moved
    writer = compose([f"llm={written_by['llm']}", f"prompt={written_by['prompt']}"])
    price = load_price_book(run_config).price(str(writer.llm.model))
    ttl = writer.llm.get("cache_ttl") or "5m"
    corpus = instantiate(run_config.dataset).load()
    chunks = instantiate(run_config.chunker).chunk(corpus)
    contexts = instantiate(run_config.context).contextualize(corpus, chunks)
    written = [(c, x) for c, x in zip(chunks, contexts, strict=True) if x.text]
    if not written:
        return None
    return recorded_cost(price, written, ttl) or counted_cost(
        price, corpus, written, instantiate(writer.prompt), instantiate(writer.llm),
        ttl=ttl, prompt_name=written_by["prompt"],
    )  # fmt: skip
