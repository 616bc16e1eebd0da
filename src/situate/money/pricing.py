"""``pricing: default``: what a call costs, from prices kept as data in ``conf/pricing/``.

Every rate is USD per million tokens (Mtok), read from YAML and held as an exact fraction (the
decimal written in the file, not its nearest binary float), so sums over thousands of calls stay
exact; dollar amounts are handed out as floats only at the end.

A chat model's call is billed in four parts, as the providers report usage
(:class:`situate.records.Usage`): uncached input, cache writes (5-minute or 1-hour TTL), cache
reads and output. A call whose whole prompt (uncached + written + read) exceeds the model's
``long_prompt.threshold_tokens`` pays every rate times ``long_prompt.multiplier``; a call sent
through a batch API pays every rate times ``batch_discount``; both can apply at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

from situate.errors import SituateError
from situate.money.usd import exact
from situate.records import Usage

PRICING_DIR = Path(__file__).resolve().parents[3] / "conf" / "pricing"
MILLION = 1_000_000
TTLS = ("5m", "1h")
Tier = Literal["standard", "long_prompt"]

_META = ("source", "as_of", "notes")
_CHAT_REQUIRED = (
    "input",
    "cache_write_5m",
    "cache_read",
    "output",
    "min_cacheable_tokens",
    *_META[:2],
)
_CHAT_OPTIONAL = ("cache_write_1h", "long_prompt", "batch_discount", "notes")
_KINDS = {
    # kind: (the key that marks it, required keys, optional keys)
    "embedding": ("embedding", ("embedding", *_META[:2]), ("batch_discount", "notes")),
    "rerank": ("rerank_per_1k_searches", ("rerank_per_1k_searches", *_META[:2]), ("notes",)),
    "chat": ("input", _CHAT_REQUIRED, _CHAT_OPTIONAL),
}


@dataclass(frozen=True)
class CallCost:
    """What one call costs, in USD, by part.

    ``tier`` is ``"long_prompt"`` when the call's prompt exceeded the model's long-prompt
    threshold (every part then carries the multiplier), ``"standard"`` otherwise.
    """

    uncached: float
    cache_write: float
    cache_read: float
    output: float
    total: float
    tier: Tier = "standard"
    batch: bool = False

    @property
    def long_prompt(self) -> bool:
        return self.tier == "long_prompt"


@dataclass(frozen=True)
class LongPrompt:
    threshold_tokens: int
    multiplier: Fraction


@dataclass(frozen=True)
class ModelPrice:
    """The prices of one model (an entry of ``conf/pricing/*.yaml``).

    ``rates`` maps each part (``input``, ``cache_write_5m``, ``cache_write_1h``, ``cache_read``,
    ``output``, ``embedding``, ``rerank_per_1k_searches``) the model has to its exact USD rate.
    """

    model: str
    kind: Literal["chat", "embedding", "rerank"]
    rates: Mapping[str, Fraction]
    source: str
    as_of: str
    long_prompt: LongPrompt | None = None
    batch_discount: Fraction | None = None
    min_cacheable_tokens: int | None = None

    # -- rates ------------------------------------------------------------------------------

    def rate(
        self,
        part: str,
        *,
        ttl: str = "5m",
        long_prompt: bool = False,
        batch: bool = False,
    ) -> Fraction:
        """USD per Mtok of ``part`` (``uncached``/``input``, ``cache_write``, ``cache_read``,
        ``output``, ``embedding``), with the long-prompt multiplier and the batch discount."""
        key = {"uncached": "input", "cache_write": f"cache_write_{ttl}"}.get(part, part)
        if part == "cache_write" and ttl not in TTLS:
            raise SituateError(f"pricing: cache TTL {ttl!r} is not one of {', '.join(TTLS)}")
        rate = self.rates.get(key)
        if rate is None:
            if key == "cache_write_1h":
                raise SituateError(
                    f"pricing: {self.model} has no 1-hour cache TTL (cache_write_1h is null in "
                    f"conf/pricing/); use llm.cache_ttl=5m or add its price"
                )
            raise SituateError(
                f"pricing: {self.model} (kind: {self.kind}) has no {key!r} rate; "
                f"its rates: {', '.join(self.rates)}"
            )
        return rate * self.multiplier(long_prompt=long_prompt, batch=batch)

    def multiplier(self, *, long_prompt: bool = False, batch: bool = False) -> Fraction:
        """The factor on every rate of a call: long-prompt multiplier times batch discount."""
        factor = Fraction(1)
        if long_prompt:
            if self.long_prompt is None:
                raise SituateError(f"pricing: {self.model} has no long-prompt tier")
            factor *= self.long_prompt.multiplier
        if batch:
            if self.batch_discount is None:
                raise SituateError(
                    f"pricing: {self.model} has no batch price (batch_discount is null in "
                    "conf/pricing/); send its calls without batches"
                )
            factor *= self.batch_discount
        return factor

    def is_long(self, prompt_tokens: int | Fraction) -> bool:
        """Whether a call with ``prompt_tokens`` of input falls in the long-prompt tier."""
        return self.long_prompt is not None and prompt_tokens > self.long_prompt.threshold_tokens

    # -- costs ------------------------------------------------------------------------------

    def call_cost(self, usage: Usage, *, ttl: str = "5m", batch: bool = False) -> CallCost:
        """The cost of one chat call that used ``usage`` (its cache writes at ``ttl``)."""
        if self.kind != "chat":
            raise SituateError(f"pricing: {self.model} is not a chat model (kind: {self.kind})")
        prompt = usage.input_uncached + usage.cache_write + usage.cache_read
        long = self.is_long(prompt)
        parts = {
            "uncached": usage.input_uncached,
            "cache_write": usage.cache_write,
            "cache_read": usage.cache_read,
            "output": usage.output,
        }
        dollars = {}
        for part, tokens in parts.items():
            if tokens == 0:  # a part the call didn't use needs no rate (a 1h write on OpenAI)
                dollars[part] = Fraction(0)
                continue
            dollars[part] = (
                tokens * self.rate(part, ttl=ttl, long_prompt=long, batch=batch) / MILLION
            )
        total = sum(dollars.values(), Fraction(0))
        return CallCost(
            **{k: float(v) for k, v in dollars.items()},
            total=float(total),
            tier="long_prompt" if long else "standard",
            batch=batch,
        )

    def embedding_cost(self, tokens: int, *, batch: bool = False) -> float:
        """USD to embed ``tokens`` tokens."""
        return float(tokens * self.rate("embedding", batch=batch) / MILLION)

    def rerank_cost(self, searches: int) -> float:
        """USD for ``searches`` rerank searches (one query over up to 100 documents each)."""
        return float(searches * self.rate("rerank_per_1k_searches") / 1000)


class PriceBook:
    """All known prices (``conf/pricing/default.yaml``), validated when loaded.

    Parameters
    ----------
    models : dict
        Model id -> its entry (see the comments at the top of ``conf/pricing/default.yaml``).
    """

    def __init__(self, models: Mapping):
        models = _plain(models)
        if not isinstance(models, dict) or not models:
            raise SituateError(
                "pricing: `models` must map model ids to their prices; see conf/pricing/default.yaml"
            )
        self.prices = {str(name): _parse(str(name), entry) for name, entry in models.items()}

    def price(self, model: str) -> ModelPrice:
        """The prices of ``model``; a one-line error listing the known models when it has none."""
        found = self.prices.get(model)
        if found is None:
            raise SituateError(
                f"pricing: no price for model {model!r}; known: {', '.join(sorted(self.prices))}; "
                f"add an entry for it to conf/pricing/default.yaml (rates in USD per million tokens, "
                "with source and as_of)"
            )
        return found

    def __contains__(self, model: str) -> bool:
        return model in self.prices

    def __iter__(self):
        return iter(self.prices)


def load_price_book(cfg=None, path: str | Path | None = None) -> PriceBook:
    """The price book of a composed config (``cfg.pricing``), else ``conf/pricing/default.yaml``."""
    node = cfg.get("pricing") if cfg is not None else None
    if node is None:
        from omegaconf import OmegaConf

        file = Path(path) if path else PRICING_DIR / "default.yaml"
        if not file.is_file():
            raise SituateError(f"pricing: {file} not found; restore conf/pricing/default.yaml")
        node = OmegaConf.load(file)
    from hydra.utils import instantiate

    book = instantiate(node)
    if not isinstance(book, PriceBook):
        raise SituateError(
            f"pricing: _target_ must be situate.money.pricing.PriceBook, got {type(book).__name__}"
        )
    return book


# -- validation -----------------------------------------------------------------------------


def _plain(value):
    """An OmegaConf node as plain dicts and lists (anything else unchanged)."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - omegaconf is a dependency
        return value
    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True)
    return value


def _parse(model: str, entry) -> ModelPrice:
    where = f"pricing: model {model!r} (conf/pricing/)"
    if not isinstance(entry, Mapping):
        raise SituateError(f"{where}: expected a mapping of prices, got {type(entry).__name__}")
    kinds = [k for k, (marker, *_rest) in _KINDS.items() if marker in entry]
    if not kinds:
        raise SituateError(
            f"{where}: no rate; give `input` (chat model), `embedding` (embedding model) "
            "or `rerank_per_1k_searches` (reranker)"
        )
    kind = kinds[0]  # embedding and rerank win: their unknown-key check then names `input`
    _, required, optional = _KINDS[kind]
    for key in entry:
        if key not in required and key not in optional:
            raise SituateError(
                f"{where}: unknown field {key!r} for a {kind} model; valid: "
                f"{', '.join((*required, *optional))}"
            )
    for key in required:
        if entry.get(key) is None:
            raise SituateError(f"{where}: missing field {key!r} (a {kind} model needs it)")
    for key in ("source", "as_of"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise SituateError(f"{where}: field {key!r} must be a non-empty string")

    rate_keys = [
        k for k in (*required, *optional) if k not in (*_META, "long_prompt", "batch_discount")
    ]
    rates: dict[str, Fraction] = {}
    for key in rate_keys:
        if key == "min_cacheable_tokens" or entry.get(key) is None:
            continue
        rates[key] = _number(entry[key], where, key)

    long_prompt = None
    if entry.get("long_prompt") is not None:
        lp = entry["long_prompt"]
        if not isinstance(lp, Mapping) or set(lp) != {"threshold_tokens", "multiplier"}:
            raise SituateError(
                f"{where}: field 'long_prompt' must be null or {{threshold_tokens, multiplier}}"
            )
        threshold = _integer(lp["threshold_tokens"], where, "long_prompt.threshold_tokens")
        multiplier = _number(lp["multiplier"], where, "long_prompt.multiplier")
        if threshold <= 0 or multiplier <= 0:
            raise SituateError(f"{where}: long_prompt threshold and multiplier must be > 0")
        long_prompt = LongPrompt(threshold, multiplier)

    batch_discount = None
    if entry.get("batch_discount") is not None:
        batch_discount = _number(entry["batch_discount"], where, "batch_discount")
        if not 0 < batch_discount <= 1:
            raise SituateError(f"{where}: field 'batch_discount' must be in (0, 1], e.g. 0.5")

    minimum = None
    if kind == "chat":
        minimum = _integer(entry["min_cacheable_tokens"], where, "min_cacheable_tokens")
    return ModelPrice(
        model=model,
        kind=kind,
        rates=rates,
        source=entry["source"].strip(),
        as_of=entry["as_of"].strip(),
        long_prompt=long_prompt,
        batch_discount=batch_discount,
        min_cacheable_tokens=minimum,
    )


def _number(value, where: str, key: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise SituateError(f"{where}: field {key!r} must be a number, got {value!r}")
    try:
        number = exact(value)
    except (ValueError, ArithmeticError):
        raise SituateError(f"{where}: field {key!r} must be a number, got {value!r}") from None
    if number < 0:
        raise SituateError(f"{where}: field {key!r} must be >= 0, got {value!r}")
    return number


def _integer(value, where: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SituateError(f"{where}: field {key!r} must be a whole number >= 0, got {value!r}")
    return value
