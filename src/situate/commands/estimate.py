"""``situate estimate [group=option ...]``: print what contextualizing will cost, spending nothing.

* ``situate estimate estimate=seed_shape llm=claude_haiku_5_5``: a synthetic shape
  (``conf/estimate/*.yaml``: document, chunk, instruction and output tokens, total document
  tokens) priced for ``llm``'s model;
* ``situate estimate dataset=cookbook chunker=prechunked prompt=default llm=claude_3_haiku``:
  a real corpus, chunked and rendered with the prompt variant, its tokens counted (the provider's
  exact counter when its API key is set, else a local tokenizer).

Prices come from ``cfg.pricing`` (``conf/pricing/``), or ``conf/pricing/default.yaml`` when the
composed config has no ``pricing`` node.
"""

from __future__ import annotations

USAGE = """\
usage: situate estimate [group=option ...] [key=value ...]

Price contextualizing before spending anything.
  situate estimate estimate=seed_shape llm=claude_haiku_5_5
      a synthetic shape (conf/estimate/seed_shape.yaml) priced for llm's model
  situate estimate dataset=cookbook chunker=prechunked prompt=default llm=claude_3_haiku
      a real corpus: tokens counted with the provider's counter when its API key is set,
      else with a local tokenizer (all-MiniLM-L6-v2 WordPiece, ~0.97x Claude's count)
  situate estimate experiment=cookbook_replication llm=claude_haiku_4_5 --judge
      what `situate judge` will cost on the study's pooled (question, chunk) pairs, with
      llm's model and with Claude Haiku 4.5 and 5.5 (--llms OPTIONS to price others)
  situate estimate dataset=folder dataset.path=docs questions.target=50 --questions
      what `situate questions generate` will cost (questions not stored yet)
Prices: conf/pricing/default.yaml (USD per million tokens, with source and date)."""

CORPUS_OPTIONS = ("counter", "output_tokens")


def corpus_stages(cfg) -> tuple[str, ...]:
    """What an estimate builds: the dataset and chunker of a corpus estimate, nothing of a
    shape's (``estimate=seed_shape``)."""
    from situate.money.shapes import SHAPE_KEYS

    node = cfg.get("estimate")
    shape = node is not None and any(k in node for k in SHAPE_KEYS if k not in CORPUS_OPTIONS)
    return () if shape else ("dataset", "chunker")


def main(args: list[str]) -> int:
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    if "--questions" in args:
        from situate.commands.questions_generate import estimate_main as questions

        return questions([a for a in args if a != "--questions"])
    if "--judge" in args:
        from situate.commands.judge import estimate_main

        return estimate_main([a for a in args if a != "--judge"])
    from situate.config.compose import compose
    from situate.errors import SituateError
    from situate.money.estimate import estimate_corpus, estimate_shape, render
    from situate.money.pricing import load_price_book
    from situate.money.shapes import SHAPE_KEYS, Shape

    cfg = compose(args, uses=corpus_stages)
    price = load_price_book(cfg).price(str(cfg.llm.model))
    ttl = cfg.llm.get("cache_ttl") or "5m"
    node = cfg.get("estimate")
    if node is not None and any(k in node for k in SHAPE_KEYS if k not in CORPUS_OPTIONS):
        result = estimate_shape(price, Shape.from_config(node), ttl=ttl)
    else:
        options = dict(node) if node is not None else {}
        unknown = sorted(set(options) - set(CORPUS_OPTIONS))
        if unknown:
            raise SituateError(
                f"estimate: unknown key(s) {', '.join(unknown)}; a shape needs "
                f"{', '.join(SHAPE_KEYS)}, a corpus estimate takes {', '.join(CORPUS_OPTIONS)}"
            )
        from hydra.utils import instantiate

        corpus = instantiate(cfg.dataset).load()
        chunks = instantiate(cfg.chunker).chunk(corpus)
        prompt = instantiate(cfg.prompt)
        llm = instantiate(cfg.llm)
        result = estimate_corpus(price, corpus, chunks, prompt, llm, ttl=ttl, **options)
    configured = cfg.llm.get("min_cacheable_tokens")
    if configured is not None and configured != price.min_cacheable_tokens:
        result.notes.append(
            f"llm.min_cacheable_tokens={configured} differs from conf/pricing/'s "
            f"{price.min_cacheable_tokens} for {price.model}; the estimate uses the pricing one"
        )
    render(result)
    return 0
