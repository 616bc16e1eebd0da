"""The cache schedule of ``context: llm`` (first call alone), simulated over token counts and
priced: the figures ``situate estimate`` prints.

The first call of a document writes the document block (the cached prefix) to the provider's
prompt cache, the document's other calls read it back; every call also sends its chunk block
(chunk + instructions) uncached and gets an answer. A document block under the model's minimum
cacheable length is never cached: every call of that document pays it as uncached input. A call
whose whole prompt exceeds the model's long-prompt threshold pays every rate times the tier's
multiplier. Three figures are computed: with caching, without caching (every prompt token at the
input rate) and with batches (each document's first call alone at full price, the others
through the batch API at its discount, reading the cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from situate.money.pricing import MILLION, ModelPrice
from situate.money.usd import Number, count, number, rate_text, usd

PARTS = ("writes", "reads", "uncached", "output")


@dataclass
class Line:
    """One part of a figure: ``units`` x tokens each x rate = dollars."""

    label: str
    units: Fraction  # documents or calls
    unit_name: str  # "docs" or "calls"
    tokens: Fraction
    rate: Fraction  # USD per Mtok, tier and batch included
    rate_how: str
    each: str | None  # "8,000 tok" when every unit has the same tokens, else None

    @property
    def dollars(self) -> Fraction:
        return self.tokens * self.rate / MILLION

    def text(self) -> str:
        unit = self.unit_name.removesuffix("s") if self.units == 1 else self.unit_name
        if self.each is not None:
            how = f"{count(self.units)} {unit} x {self.each}"
        else:
            how = f"{count(self.units)} {unit}, {count(self.tokens)} tok"
        return f"{self.label}: {how} x {self.rate_how} = {usd(self.dollars)}"


@dataclass
class Figure:
    """A total and the lines it sums."""

    name: str
    lines: list[Line] = field(default_factory=list)

    @property
    def dollars(self) -> Fraction:
        return sum((line.dollars for line in self.lines), Fraction(0))

    @property
    def total(self) -> float:
        return float(self.dollars)

    def part(self, label: str) -> Fraction:
        """Exact dollars of the lines whose label starts with ``label`` (all tiers, batched too)."""
        return sum((x.dollars for x in self.lines if x.label.startswith(label)), Fraction(0))

    def text(self) -> list[str]:
        out = [f"  {line.text()}" for line in self.lines if line.tokens]
        parts = " + ".join(usd(x.dollars) for x in self.lines if x.tokens)
        out.append(f"  {self.name}: {parts} = {usd(self.dollars)}")
        return out


@dataclass
class ScheduledDoc:
    """A document (or ``weight`` identical ones): its cached block and its calls' chunk blocks."""

    doc_id: str
    weight: Fraction
    prefix: int  # tokens of the document block (0: the variant sends no document)
    calls: list[tuple[Fraction, int]]  # (how many calls, uncached tokens each), first call first
    prefix_each: str | None = None  # "8,000 tok" (synthetic mode) for the arithmetic lines
    call_each: str | None = None  # "(800 + 50) tok"


class _Builder:
    """Accumulates the lines of one figure, one per (part, tier)."""

    def __init__(self, name: str, price: ModelPrice, ttl: str):
        self.figure = Figure(name)
        self.price, self.ttl = price, ttl
        self._index: dict[tuple[str, bool, bool], Line] = {}

    def add(
        self,
        part: str,
        units: Fraction,
        tokens_each: Number,
        each: str | None,
        *,
        long: bool,
        batch: bool = False,
        unit_name: str = "calls",
    ) -> None:
        if not units:
            return
        label = {"cache_write": "writes", "cache_read": "reads"}.get(part, part)
        if long:
            label += " (long-prompt tier)"
        if batch:
            label += " (batched)"
        key = (label, long, batch)
        line = self._index.get(key)
        if line is None:
            rate = self.price.rate(part, ttl=self.ttl, long_prompt=long, batch=batch)
            line = Line(label, Fraction(0), unit_name, Fraction(0), rate, self._rate_how(part, long, batch), each)  # fmt: skip
            self._index[key] = line
            self.figure.lines.append(line)
        elif line.each != each:
            line.each = None
        line.units += units
        line.tokens += units * tokens_each

    def _rate_how(self, part: str, long: bool, batch: bool) -> str:
        base = self.price.rate(part, ttl=self.ttl)
        text = f"{rate_text(base)}/Mtok"
        if long:
            text += f" x {number(self.price.long_prompt.multiplier)} (long prompt)"
        if batch:
            text += f" x {number(self.price.batch_discount)} (batch)"
        return text


def simulate(
    price: ModelPrice, docs: Sequence[ScheduledDoc], output_tokens: int, ttl: str, minimum: int
) -> tuple[Figure, Figure, Figure | None, list[str], list[str], Fraction]:
    """The three figures for ``docs``; the ids of documents under the minimum, and of those with
    long-prompt calls; how many cached documents have a single call (a write nobody reads)."""
    cached = _Builder("with caching", price, ttl)
    plain = _Builder("without caching", price, ttl)
    batch = _Builder("with batches", price, ttl) if price.batch_discount is not None else None
    below, long_docs, single = [], [], Fraction(0)
    out_each = f"{count(output_tokens)} tok"
    for d in docs:
        cacheable = d.prefix > 0 and d.prefix >= minimum
        if d.prefix > 0 and not cacheable:
            below.append(d.doc_id)
        if cacheable and sum(n for n, _ in d.calls) == 1:
            single += d.weight
        any_long = False
        for i, (n, uncached) in enumerate(d.calls):
            if not n:
                continue
            calls = d.weight * n
            first = i == 0
            long = price.is_long(d.prefix + uncached)
            any_long = any_long or long
            both = f"({count(d.prefix)} + {d.call_each[1:]}" if d.call_each else None
            # with caching, and with batches (the first call alone at full price)
            for builder, batched in ((cached, False), (batch, not first)):
                if builder is None:
                    continue
                if cacheable:
                    part = "cache_write" if first else "cache_read"
                    builder.add(part, calls, d.prefix, d.prefix_each, long=long, batch=batched,
                                unit_name="docs" if first else "calls")  # fmt: skip
                    builder.add("uncached", calls, uncached, d.call_each, long=long, batch=batched)
                else:
                    builder.add("uncached", calls, d.prefix + uncached, both, long=long, batch=batched)  # fmt: skip
                builder.add("output", calls, output_tokens, out_each, long=long, batch=batched)
            # without caching
            plain.add("uncached", calls, d.prefix + uncached, both, long=long)
            plain.add("output", calls, output_tokens, out_each, long=long)
        if any_long:
            long_docs.append(d.doc_id)
    _order(cached.figure)
    _order(plain.figure)
    if batch is not None:
        _order(batch.figure)
    batched = None if batch is None else batch.figure
    return cached.figure, plain.figure, batched, below, long_docs, single


_ORDER = PARTS


def _order(figure: Figure) -> None:
    figure.lines.sort(
        key=lambda x: ("(batched)" in x.label, _ORDER.index(x.label.split(" ")[0]), x.label)
    )
