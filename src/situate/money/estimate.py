"""``situate estimate``: what contextualizing a corpus will cost, before anything is spent.

The schedule is the one ``context: llm`` runs (first call alone), simulated by
:mod:`situate.money.schedule_simulation`: with caching, without caching and with batches.

Two ways to get the token counts:

* **synthetic shape** (:class:`situate.money.shapes.Shape`): document, chunk, instruction and
  output tokens per call and the corpus's total document tokens, e.g.
  ``conf/estimate/seed_shape.yaml``;
* **corpus**: a real dataset, chunker and prompt variant, its tokens counted by
  :func:`situate.money.tokens.token_counter` (the provider's exact counter when its API key is
  set, else a local tokenizer). Output tokens are not known before the calls: the corpus mode
  takes the prompt variant's ``max_tokens`` (a ceiling) unless told otherwise.

Prices come from ``conf/pricing/`` (:mod:`situate.money.pricing`); every figure comes with the
arithmetic behind it, one text line per part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from situate.errors import SituateError
from situate.money.pricing import MILLION, ModelPrice
from situate.money.schedule_simulation import PARTS, Figure, ScheduledDoc, simulate
from situate.money.shapes import Shape
from situate.money.tokens import token_counter
from situate.money.usd import count, number, usd
from situate.records import Chunk, Corpus


@dataclass
class EstimateResult:
    """What ``estimate`` found: token counts, the three costs, and the arithmetic behind them."""

    model: str
    mode: str  # "synthetic" or "corpus"
    counter: str  # how tokens were counted
    ttl: str
    documents: Fraction
    calls: Fraction
    document_tokens: Fraction  # the documents' own tokens (templates excluded)
    instruction_tokens: int  # per call, the prompt's text around document and chunk
    output_tokens: int  # per call
    tokens: dict[str, Fraction]  # uncached, cache_write, cache_read, output (with caching)
    cached: Figure
    uncached: Figure
    batched: Figure | None
    docs_below_minimum: list[str] = field(default_factory=list)
    docs_long_prompt: list[str] = field(default_factory=list)
    docs_single_call: Fraction = Fraction(0)  # cached documents of one call: a write never read
    docs_windowed: list[str] = field(default_factory=list)
    shape_lines: list[str] = field(default_factory=list)  # how documents and calls were counted
    notes: list[str] = field(default_factory=list)

    @property
    def with_caching(self) -> float:
        return self.cached.total

    @property
    def without_caching(self) -> float:
        return self.uncached.total

    @property
    def with_batches(self) -> float | None:
        return None if self.batched is None else self.batched.total

    @property
    def per_million_document_tokens(self) -> float:
        if not self.document_tokens:
            return 0.0
        return float(self.cached.dollars * MILLION / self.document_tokens)

    def breakdown(self) -> dict[str, float]:
        """Dollars with caching by part: writes, reads, uncached, output."""
        return {p: float(self.cached.part(p)) for p in PARTS}

    def lines(self) -> list[str]:
        """The arithmetic behind every figure, as text."""
        out = list(self.shape_lines)
        out.append("with caching (first call alone writes each document, the others read it):")
        out += self.cached.text()
        out.append("without caching (every prompt token at the input rate):")
        out += self.uncached.text()
        if self.batched is not None:
            out.append("with batches (first call alone at full price, the rest batched, cached):")
            out += self.batched.text()
        return out


def _result(price, docs, output_tokens, ttl, minimum, **kw) -> EstimateResult:
    cached, plain, batched, below, long_docs, single = simulate(
        price, docs, output_tokens, ttl, minimum
    )
    tokens = {"uncached": Fraction(0), "cache_write": Fraction(0), "cache_read": Fraction(0)}
    for line in cached.lines:
        kind = {"writes": "cache_write", "reads": "cache_read"}.get(line.label.split(" ")[0])
        if kind or line.label.startswith("uncached"):
            tokens[kind or "uncached"] += line.tokens
    tokens["output"] = kw["calls"] * output_tokens
    return EstimateResult(
        model=price.model,
        ttl=ttl,
        output_tokens=output_tokens,
        tokens=tokens,
        cached=cached,
        uncached=plain,
        batched=batched,
        docs_below_minimum=below,
        docs_long_prompt=long_docs,
        docs_single_call=single,
        **kw,
    )


# -- synthetic shape ------------------------------------------------------------------------


def estimate_shape(
    price: ModelPrice, shape: Shape, *, ttl: str = "5m", min_cacheable_tokens: int | None = None
) -> EstimateResult:
    """The cost of contextualizing a corpus of the synthetic ``shape`` with ``price``'s model."""
    _chat(price)
    minimum = _minimum(price, min_cacheable_tokens)
    n_docs = Fraction(shape.total_document_tokens, shape.document_tokens)
    per_doc = Fraction(shape.document_tokens, shape.chunk_tokens)
    calls = n_docs * per_doc
    uncached = shape.chunk_tokens + shape.instruction_tokens
    doc = ScheduledDoc(
        doc_id="(every document)",
        weight=n_docs,
        prefix=shape.document_tokens,
        calls=[(Fraction(1), uncached), (per_doc - 1, uncached)],
        prefix_each=f"{count(shape.document_tokens)} tok",
        call_each=f"({count(shape.chunk_tokens)} + {count(shape.instruction_tokens)}) tok",
    )
    shape_lines = [
        f"documents: {count(shape.total_document_tokens)} tok / {count(shape.document_tokens)} "
        f"tok = {count(n_docs)} docs; chunks: {count(shape.document_tokens)} tok / "
        f"{count(shape.chunk_tokens)} tok = {count(per_doc)} per doc; calls: {count(n_docs)} docs "
        f"x {count(per_doc)} = {count(calls)}",
        f"each call: document {count(shape.document_tokens)} tok (cached prefix) + chunk "
        f"{count(shape.chunk_tokens)} tok + instructions {count(shape.instruction_tokens)} tok "
        f"in, {count(shape.output_tokens)} tok out",
    ]
    result = _result(
        price,
        [doc],
        shape.output_tokens,
        ttl,
        minimum,
        mode="synthetic",
        counter="synthetic shape (no counting)",
        documents=n_docs,
        calls=calls,
        document_tokens=Fraction(shape.total_document_tokens),
        instruction_tokens=shape.instruction_tokens,
        shape_lines=shape_lines,
    )
    if result.docs_below_minimum:
        result.docs_below_minimum = [f"all {count(n_docs)} documents"]
    if result.docs_long_prompt:
        result.docs_long_prompt = [f"all {count(n_docs)} documents"]
    _add_notes(result, price, minimum)
    return result


# -- a real corpus --------------------------------------------------------------------------


def estimate_corpus(
    price: ModelPrice,
    corpus: Corpus,
    chunks: Sequence[Chunk],
    prompt,
    llm,
    *,
    counter: str = "auto",
    output_tokens: int | None = None,
    ttl: str | None = None,
    min_cacheable_tokens: int | None = None,
    workers: int = 8,
) -> EstimateResult:
    """The cost of contextualizing ``chunks`` of ``corpus`` with ``prompt`` (a PromptVariant) and
    ``llm`` (a provider), counted with ``counter`` (see :data:`situate.money.tokens.COUNTERS`); nothing is spent."""
    _chat(price)
    if not chunks:
        raise SituateError(
            f"estimate: the chunker made no chunk of {corpus.name}; nothing to price"
        )
    ttl = ttl or llm.cache_ttl or "5m"
    minimum = _minimum(price, min_cacheable_tokens)
    out = prompt.max_tokens if output_tokens is None else output_tokens
    count_many, how = token_counter(llm, counter, workers)

    prompt.prepare(corpus.documents)
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    docs = [corpus.document(doc_id) for doc_id in by_doc]
    first = prompt.render(docs[0], by_doc[docs[0].doc_id][0])
    blocks = [prompt.render(d, by_doc[d.doc_id][0]).document for d in docs]
    doc_ids = [d.doc_id for d in docs]
    all_chunks = [c for d in docs for c in by_doc[d.doc_id]]
    counted = count_many(
        [
            *blocks,
            *(c.text for c in all_chunks),
            first.prompt,
            first.answer_prefix,
            docs[0].text if first.document else "",
        ]
    )
    prefix_tokens = counted[: len(docs)]
    chunk_tokens = counted[len(docs) : len(docs) + len(all_chunks)]
    prompt_tokens, answer_tokens, doc0_tokens = counted[len(docs) + len(all_chunks) :]
    # the variant's own text, measured once on the first chunk: around the document in the cached
    # block, around the chunk in the per-call block (the answer prefix is input too)
    instr_doc = max(0, prefix_tokens[0] - doc0_tokens) if first.document else 0
    instr_chunk = max(0, prompt_tokens - chunk_tokens[0]) + answer_tokens
    own_doc_tokens = [max(0, p - instr_doc) for p in prefix_tokens] if first.document else [0]

    window = llm.context_window
    budget = window - out - 1024 if window else None  # as LLMContext windows long documents
    windowed: list[str] = []
    shaped: list[ScheduledDoc] = []
    i = 0
    for doc_id, prefix in zip(doc_ids, prefix_tokens, strict=True):
        n = len(by_doc[doc_id])
        if budget is not None and prefix > budget:
            windowed.append(doc_id)
            prefix = budget
        calls = [(Fraction(1), t + instr_chunk) for t in chunk_tokens[i : i + n]]
        shaped.append(ScheduledDoc(doc_id, Fraction(1), prefix, calls))
        i += n

    result = _result(
        price,
        shaped,
        out,
        ttl,
        minimum,
        mode="corpus",
        counter=how,
        documents=Fraction(len(docs)),
        calls=Fraction(len(all_chunks)),
        document_tokens=Fraction(sum(own_doc_tokens)),
        instruction_tokens=instr_doc + instr_chunk,
        docs_windowed=windowed,
        shape_lines=[
            f"corpus {corpus.name}: {len(docs):,} documents, {len(all_chunks):,} chunks = calls, "
            f"prompt variant {prompt.name}",
            f"per call: document block (cached prefix: document + {instr_doc} tok of template) + "
            f"chunk + {instr_chunk} tok of instructions in, {out} tok out"
            + (" (the prompt's max_tokens: a ceiling)" if output_tokens is None else ""),
        ],
    )
    _add_notes(result, price, minimum)
    if windowed:
        result.notes.append(
            f"{len(windowed)} document(s) exceed the model's window of {window:,} tokens and are "
            f"priced as a window of {budget:,} tokens around each chunk: {_ids(windowed)}"
        )
    if how.startswith("local"):
        result.notes.append(
            "token counts are a local approximation; Claude's newer tokenizer (Claude 4.7 and "
            "later, Haiku 5.5) counts about 30% more tokens for the same text: set the provider's "
            "API key for exact counts"
        )
    result.notes.append(
        "chunks whose context is already in the context store cost nothing on a rerun; this "
        "estimate prices every chunk"
    )
    return result


# -- dispatch -------------------------------------------------------------------------------


def estimate(
    price: ModelPrice,
    *,
    shape: Shape | None = None,
    corpus: Corpus | None = None,
    chunks: Sequence[Chunk] | None = None,
    prompt=None,
    llm=None,
    **options,
) -> EstimateResult:
    """:func:`estimate_shape` when ``shape`` is given, else :func:`estimate_corpus`."""
    if shape is not None:
        return estimate_shape(price, shape, **options)
    if corpus is None or chunks is None or prompt is None or llm is None:
        raise SituateError("estimate: give a shape, or a corpus with its chunks, prompt and llm")
    return estimate_corpus(price, corpus, chunks, prompt, llm, **options)


# -- notes, formatting, rendering -----------------------------------------------------------


def _chat(price: ModelPrice) -> None:
    if price.kind != "chat":
        raise SituateError(
            f"estimate: {price.model} is not a chat model (kind: {price.kind}); pick a chat model with llm=..."
        )


def _minimum(price: ModelPrice, override: int | None) -> int:
    if override is not None:
        return override
    return price.min_cacheable_tokens or 0


def _add_notes(result: EstimateResult, price: ModelPrice, minimum: int) -> None:
    if result.docs_below_minimum:
        result.notes.append(
            f"{len(result.docs_below_minimum)} document(s) under {price.model}'s minimum "
            f"cacheable prefix of {minimum:,} tokens: never cached, every call pays the document "
            f"as uncached input: {_ids(result.docs_below_minimum)}"
        )
    if result.docs_long_prompt:
        lp = price.long_prompt
        result.notes.append(
            f"{len(result.docs_long_prompt)} document(s) with calls over {lp.threshold_tokens:,} "
            f"prompt tokens, priced at the long-prompt tier (every rate x "
            f"{number(lp.multiplier)}): {_ids(result.docs_long_prompt)}"
        )
    if result.docs_single_call:
        result.notes.append(
            f"{count(result.docs_single_call)} document(s) with a single chunk: the cache write "
            "of their only call is never read"
        )
    if result.batched is None:
        result.notes.append(f"{price.model} has no batch price in conf/pricing/")
    result.notes.append(f"prices: {price.source} (as of {price.as_of})")


def _ids(ids: list[str], limit: int = 8) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def render(result: EstimateResult) -> None:
    """Print ``result`` as a table, then the arithmetic lines and the notes."""
    from rich.table import Table

    from situate.console import console

    out = console()
    title = (
        f"estimate: {result.model}, {count(result.documents)} documents, "
        f"{count(result.calls)} calls ({result.mode})"
    )
    table = Table(title=title)
    table.add_column("", justify="left")
    table.add_column("tokens", justify="right")
    table.add_column("USD", justify="right")
    t = result.tokens
    for label, kind, part in (
        (f"cache writes ({result.ttl})", "cache_write", "writes"),
        ("cache reads", "cache_read", "reads"),
        ("uncached input", "uncached", "uncached"),
        ("output", "output", "output"),
    ):
        table.add_row(label, count(t[kind]), usd(result.cached.part(part)))
    table.add_section()
    table.add_row("[bold]with caching[/bold]", "", f"[bold]{usd(result.cached.dollars)}[/bold]")
    table.add_row("without caching", "", usd(result.uncached.dollars))
    if result.batched is not None:
        table.add_row("with batches", "", usd(result.batched.dollars))
    if result.document_tokens:
        per_million = result.cached.dollars * MILLION / result.document_tokens
        table.add_row("with caching, per million document tokens", "", usd(per_million))
    out.print(table)
    out.print(f"tokens counted with: {result.counter}", highlight=False)
    for line in result.lines():
        out.print(line, highlight=False, markup=False)
    for note in result.notes:
        out.print(f"note: {note}", highlight=False, markup=False)


# -- calls already rendered (the question generator) ----------------------------------------


def estimate_calls(
    price: ModelPrice,
    groups: Sequence[tuple[str, int, list[int]]],
    *,
    output_tokens: int,
    counter: str,
    shape_lines: list[str],
    ttl: str = "5m",
    min_cacheable_tokens: int | None = None,
) -> EstimateResult:
    """The cost of calls already counted: ``groups`` of ``(name, document block tokens, [prompt
    tokens of each call])``, each group's calls sharing its document block (0: none, every call
    uncached) in the first-call-alone schedule; ``output_tokens`` per call (a ceiling). A group
    without a document block has no first call to wait for: with batches, all its calls are
    batched."""
    _chat(price)
    minimum = _minimum(price, min_cacheable_tokens)
    docs = [
        ScheduledDoc(
            name,
            Fraction(1),
            prefix,
            ([] if prefix else [(Fraction(0), 0)]) + [(Fraction(1), t) for t in calls],
        )  # fmt: skip
        for name, prefix, calls in groups
        if calls
    ]
    result = _result(
        price,
        docs,
        output_tokens,
        ttl,
        minimum,
        mode="calls",
        counter=counter,
        documents=Fraction(sum(1 for _, prefix, calls in groups if prefix and calls)),
        calls=Fraction(sum(len(calls) for _, _, calls in groups)),
        document_tokens=Fraction(sum(prefix for _, prefix, calls in groups if calls)),
        instruction_tokens=0,
        shape_lines=shape_lines,
    )
    _add_notes(result, price, minimum)
    return result
