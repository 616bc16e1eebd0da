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
    stages = None  # a shape has no corpus to time
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
        stages = run_stages(cfg, llm, len(corpus.documents), len(chunks))
    configured = cfg.llm.get("min_cacheable_tokens")
    if configured is not None and configured != price.min_cacheable_tokens:
        result.notes.append(
            f"llm.min_cacheable_tokens={configured} differs from conf/pricing/'s "
            f"{price.min_cacheable_tokens} for {price.model}; the estimate uses the pricing one"
        )
    render(result)
    if stages is not None:
        render_times(stages)
    return 0


def run_stages(cfg, llm, documents: int, chunks: int) -> list[tuple[str, str, int]]:
    """``(what, rate key, items)`` of a run's long stages on this corpus: its files parsed (a
    folder), its contexts written by ``llm``, its chunks embedded by the configured embedder
    (built, not loaded: its identity names the model and the endpoint the rate was kept for)."""
    from hydra.utils import instantiate

    from situate.stores.rates import rate_key

    stages = []
    if "parsers" in cfg.dataset:  # a folder of files (dataset=folder, generated)
        stages.append((f"parsing {documents:,} files", "files parsed", documents))
    stages.append(
        (f"contexts of {chunks:,} chunks", rate_key("contexts written", llm.identity()), chunks)
    )
    if cfg.get("embedder") is not None:
        embedder = instantiate(cfg.embedder)
        stages.append(
            (f"embedding {chunks:,} texts", rate_key("texts embedded", embedder.identity()), chunks)
        )
    return stages


def render_times(stages: list[tuple[str, str, int]]) -> None:
    """How long each stage takes at the rate this machine last measured for it
    (:mod:`situate.stores.rates`), and their sum; a stage never measured here says so."""
    from rich.table import Table

    from situate.console import console
    from situate.progress import duration
    from situate.stores.rates import rates_path, read_rate

    table = Table(title="time on this machine")
    for column, justify in (("stage", "left"), ("rate", "right"), ("time", "right")):
        table.add_column(column, justify=justify)
    total, unknown = 0.0, []
    for what, key, items in stages:
        rate = read_rate(key)
        if rate is None:
            unknown.append(key)
            table.add_row(what, "not measured here yet", "?")
            continue
        total += rate.seconds(items)
        table.add_row(
            what, f"{rate.per_second:,.1f}/s ({rate.measured})", duration(rate.seconds(items))
        )
    table.add_section()
    table.add_row("[bold]measured stages[/bold]", "", f"[bold]{duration(total)}[/bold]")
    out = console()
    out.print(table)
    out.print(
        f"rates: what earlier runs measured on this machine ({rates_path()}); texts of another "
        "length or another load run at another rate",
        highlight=False,
    )
    if unknown:
        out.print(
            f"not measured here yet: {'; '.join(unknown)} (a run of that stage measures it)",
            highlight=False,
            markup=False,
        )
