"""Prices as data (conf/pricing/default.yaml) and what a call costs, against hand arithmetic."""

from __future__ import annotations

from fractions import Fraction

import pytest
from omegaconf import OmegaConf

from conftest import options
from situate.config.compose import CONF_DIR
from situate.errors import SituateError
from situate.money.pricing import PriceBook, load_price_book
from situate.money.usd import exact
from situate.records import Usage

TOL = 1e-12


@pytest.fixture(scope="module")
def book() -> PriceBook:
    return load_price_book()


def chat_entry(**changes) -> dict:
    entry = {
        "input": 1.0,
        "cache_write_5m": 1.25,
        "cache_read": 0.1,
        "output": 5.0,
        "min_cacheable_tokens": 1024,
        "source": "test",
        "as_of": "2026-11-30",
    }
    entry.update(changes)
    return {k: v for k, v in entry.items() if v != "DROP"}


# ---------------------------------------------------------------- the rates in the file


@pytest.mark.parametrize(
    ("model", "rates", "minimum"),
    [
        (
            "claude-haiku-5-5",
            {"input": "0.10", "cache_write_5m": "0.125", "cache_write_1h": "0.20",
             "cache_read": "0.01", "output": "0.50"},
            512,
        ),
        (
            "claude-haiku-4-5",
            {"input": "1", "cache_write_5m": "1.25", "cache_write_1h": "2",
             "cache_read": "0.10", "output": "5"},
            4096,
        ),
        (
            "claude-3-haiku-20240307",
            {"input": "0.25", "cache_write_5m": "0.30", "cache_write_1h": "0.50",
             "cache_read": "0.03", "output": "1.25"},
            2048,
        ),
    ],
)  # fmt: skip
def test_every_rate_of_the_claude_models(book, model, rates, minimum):
    price = book.price(model)
    assert price.kind == "chat"
    assert dict(price.rates) == {k: Fraction(v) for k, v in rates.items()}
    assert price.min_cacheable_tokens == minimum
    assert price.batch_discount == Fraction(1, 2)
    assert price.source and price.as_of
    assert price.rate("uncached") == Fraction(rates["input"])
    assert price.rate("cache_write") == Fraction(rates["cache_write_5m"])
    assert price.rate("cache_write", ttl="1h") == Fraction(rates["cache_write_1h"])
    assert price.rate("cache_read") == Fraction(rates["cache_read"])
    assert price.rate("output") == Fraction(rates["output"])


def test_write_multiples_as_published(book):
    for model in ("claude-haiku-5-5", "claude-haiku-4-5"):
        p = book.price(model)
        assert p.rates["cache_write_5m"] == p.rates["input"] * Fraction(5, 4)
        assert p.rates["cache_write_1h"] == p.rates["input"] * 2
        assert p.rates["cache_read"] == p.rates["input"] / 10
    old = book.price("claude-3-haiku-20240307")
    assert old.rates["cache_write_5m"] == old.rates["input"] * Fraction(6, 5)  # 1.2x, not 1.25x


def test_long_prompt_tier_only_on_haiku_5_5(book):
    lp = book.price("claude-haiku-5-5").long_prompt
    assert (lp.threshold_tokens, lp.multiplier) == (100_000, 5)
    assert book.price("claude-haiku-4-5").long_prompt is None


def test_openai_and_embedding_and_rerank_entries(book):
    mini = book.price("gpt-4.1-mini")
    assert mini.rates["input"] == Fraction("0.40")
    assert mini.rates["cache_write_5m"] == mini.rates["input"]  # writes cost the input rate
    assert mini.rates["cache_read"] == Fraction("0.10")
    assert mini.rates["output"] == Fraction("1.60")
    assert mini.min_cacheable_tokens == 1024
    assert abs(book.price("text-embedding-3-small").embedding_cost(1_000_000) - 0.02) < TOL
    assert abs(book.price("text-embedding-3-large").embedding_cost(2_500_000) - 0.325) < TOL
    assert abs(book.price("embed-english-v3.0").embedding_cost(1_000_000) - 0.10) < TOL
    assert abs(book.price("text-embedding-3-small").embedding_cost(10**6, batch=True) - 0.01) < TOL
    rerank = book.price("rerank-english-v3.0")
    assert abs(rerank.rerank_cost(1000) - 2.0) < TOL
    assert abs(rerank.rerank_cost(248) - 0.496) < TOL


def test_exact_reads_floats_as_their_decimal():
    assert exact(0.1) == Fraction(1, 10)
    assert exact(0.125) == Fraction(1, 8)
    assert exact("0.03") == Fraction(3, 100)


# ---------------------------------------------------------------- a call's cost


def test_call_cost_from_usage(book):
    cost = book.price("claude-haiku-4-5").call_cost(
        Usage(input_uncached=1000, cache_write=2000, cache_read=3000, output=400)
    )
    # 1000 x $1 + 2000 x $1.25 + 3000 x $0.10 + 400 x $5, per million
    assert abs(cost.uncached - 0.001) < TOL
    assert abs(cost.cache_write - 0.0025) < TOL
    assert abs(cost.cache_read - 0.0003) < TOL
    assert abs(cost.output - 0.002) < TOL
    assert abs(cost.total - 0.0058) < TOL
    assert cost.tier == "standard" and not cost.long_prompt and not cost.batch


def test_a_document_over_100k_tokens_is_priced_at_the_5x_tier(book):
    price = book.price("claude-haiku-5-5")
    cost = price.call_cost(Usage(input_uncached=850, cache_write=120_000, output=100))
    # every rate x5: 850 x $0.50 + 120,000 x $0.625 + 100 x $2.50, per million
    assert cost.tier == "long_prompt" and cost.long_prompt
    assert abs(cost.uncached - 0.000425) < TOL
    assert abs(cost.cache_write - 0.075) < TOL
    assert abs(cost.output - 0.00025) < TOL
    assert abs(cost.total - 0.075675) < TOL
    # reads count toward the prompt too
    read = price.call_cost(Usage(input_uncached=850, cache_read=120_000, output=100))
    assert read.tier == "long_prompt"
    assert abs(read.cache_read - 120_000 * 0.05 / 1e6) < TOL
    # exactly at the threshold is not over it
    edge = price.call_cost(Usage(input_uncached=0, cache_read=100_000, output=100))
    assert edge.tier == "standard"
    assert abs(edge.total - (100_000 * 0.01 + 100 * 0.50) / 1e6) < TOL


def test_a_batch_is_priced_at_half(book):
    price = book.price("claude-haiku-4-5")
    usage = Usage(input_uncached=1000, cache_read=8000, output=100)
    full = price.call_cost(usage)
    half = price.call_cost(usage, batch=True)
    assert abs(full.total - 0.0023) < TOL  # 1000 x $1 + 8000 x $0.10 + 100 x $5
    assert abs(half.total - 0.00115) < TOL
    assert half.batch
    # batch and long tier stack: x5 x0.5
    long = book.price("claude-haiku-5-5").call_cost(Usage(200_000, 0, 0, 0), batch=True)
    assert abs(long.total - 200_000 * 0.10 * 5 * 0.5 / 1e6) < TOL


def test_1h_ttl_writes(book):
    usage = Usage(cache_write=10_000)
    assert abs(book.price("claude-haiku-5-5").call_cost(usage, ttl="1h").total - 0.002) < TOL
    assert abs(book.price("claude-haiku-5-5").call_cost(usage).total - 0.00125) < TOL
    assert abs(book.price("claude-haiku-4-5").call_cost(usage, ttl="1h").total - 0.02) < TOL
    assert abs(book.price("claude-3-haiku-20240307").call_cost(usage, ttl="1h").total - 0.005) < TOL
    with pytest.raises(SituateError, match="gpt-4.1-mini has no 1-hour cache TTL"):
        book.price("gpt-4.1-mini").call_cost(usage, ttl="1h")
    with pytest.raises(SituateError, match="not one of 5m, 1h"):
        book.price("claude-haiku-5-5").call_cost(usage, ttl="10m")


# ---------------------------------------------------------------- errors


def test_unknown_model_lists_the_known_ones(book):
    with pytest.raises(SituateError) as e:
        book.price("claude-opus-9")
    message = str(e.value)
    assert "no price for model 'claude-opus-9'" in message
    assert "claude-haiku-5-5" in message and "gpt-4.1-mini" in message
    assert "conf/pricing/" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (chat_entry(output="DROP"), "missing field 'output'"),
        (chat_entry(ouput=5.0), "unknown field 'ouput'"),
        (chat_entry(source="DROP"), "missing field 'source'"),
        (chat_entry(input=-1), "field 'input' must be >= 0"),
        (chat_entry(input="cheap"), "field 'input' must be a number"),
        (chat_entry(input=True), "field 'input' must be a number"),
        (chat_entry(long_prompt={"threshold_tokens": 10}), "field 'long_prompt' must be null"),
        (chat_entry(batch_discount=2), "field 'batch_discount' must be in (0, 1]"),
        (chat_entry(min_cacheable_tokens=1.5), "field 'min_cacheable_tokens' must be a whole"),
        ({"embedding": 0.02, "input": 1, "source": "s", "as_of": "d"}, "unknown field 'input'"),
        ({"source": "s", "as_of": "d"}, "no rate"),
        ("0.10", "expected a mapping"),
    ],
)
def test_malformed_entries_name_the_model_and_field(entry, fragment):
    with pytest.raises(SituateError) as e:
        PriceBook({"my-model": entry})
    assert "model 'my-model'" in str(e.value)
    assert fragment in str(e.value)


def test_an_entry_of_your_own_prices_a_call():
    book = PriceBook({"my-model": chat_entry(cache_write_1h=None)})
    cost = book.price("my-model").call_cost(Usage(1_000_000, 0, 0, 0))
    assert cost.total == 1.0
    with pytest.raises(SituateError, match="has no 1-hour cache TTL"):
        book.price("my-model").call_cost(Usage(cache_write=1), ttl="1h")


def test_price_book_from_a_composed_config():
    from situate.config.compose import compose

    cfg = compose(["pricing=default"])
    book = load_price_book(cfg)
    assert "claude-haiku-5-5" in book
    assert book.price("claude-haiku-5-5").rates["input"] == Fraction(1, 10)


def test_usd_is_one_rule_four_significant_digits_and_never_fewer_than_cents():
    from fractions import Fraction

    from situate.money.usd import usd

    assert usd(Fraction("0.38375")) == "$0.3838"  # half up
    assert usd(0.09) == "$0.09000"  # the same precision as its neighbours, not "$0.09"
    assert usd(0.10625) == "$0.1063"
    assert usd(1.4364376) == "$1.436"
    assert usd(1234.5678) == "$1,234.57"  # cents stay
    assert usd(0.000975) == "$0.0009750"
    assert usd(0.99996) == "$1.000"  # rounding carries: still 4 digits
    assert usd(0) == "$0"


@pytest.mark.parametrize("option", options("llm"))
def test_every_llm_option_has_a_price(book, option):
    # a model without an entry stops `situate questions generate` after its calls are made
    model = OmegaConf.load(CONF_DIR / "llm" / f"{option}.yaml").model
    assert model in book, f"conf/llm/{option}.yaml: model {model} has no entry in conf/pricing"
