"""What LLM contexts cost: per-call prices by hand, the run's total, and the budget cap."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from test_llm_context import KEY, PROMPT, corpus, provider

from situate.contexts.llm import LLMContext
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.fault_injection import Faults
from situate.errors import SituateError
from situate.money.costs import context_costs
from situate.money.pricing import load_price_book

# claude-haiku-5-5, USD per million tokens, typed here from conf/pricing/default.yaml's source
INPUT, WRITE_5M, READ, OUTPUT = (
    Fraction("0.10"),
    Fraction("0.125"),
    Fraction("0.01"),
    Fraction("0.50"),
)


def by_hand(usage) -> Fraction:
    return (
        usage.input_uncached * INPUT
        + usage.cache_write * WRITE_5M
        + usage.cache_read * READ
        + usage.output * OUTPUT
    ) / 1_000_000


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def test_run_cost_is_the_sum_of_hand_priced_calls(key_env, tmp_path: Path):
    book = load_price_book()
    corp, chunks = corpus()
    with AnthropicEmulator(api_key=KEY, ttft=0.02) as emu:
        ctx = LLMContext(PROMPT, provider(emu), str(tmp_path / "c.sqlite"))
        ctx.contextualize(corp, chunks)
    assert len(ctx.calls) == len(chunks)
    costs = context_costs(book, ctx.billed(), ctx.calls)
    expected = sum(by_hand(r.usage) for _, r in ctx.calls)
    assert costs.total == pytest.approx(float(expected), abs=1e-12)
    # the first call of a cacheable document wrote its prefix, the others read it (they are
    # sent once its answer has started, so one of them may be answered, and listed, before it)
    writes = sorted((r.usage.cache_write for d, r in ctx.calls if d == "a"), reverse=True)
    assert writes[0] > 0 and writes[1:] == [0, 0, 0]
    assert costs.per_document["a"] == pytest.approx(
        float(sum(by_hand(r.usage) for d, r in ctx.calls if d == "a"))
    )


@pytest.mark.parametrize("fault_rate", [0.0, 0.3])
def test_budget_is_never_exceeded_and_a_higher_one_resumes(
    key_env, tmp_path: Path, fault_rate: float
):
    book = load_price_book()
    corp, chunks = corpus()
    faults = Faults.uniform(
        fault_rate, kinds=("429_retry_after", "529", "500", "reset"), seed=3, retry_after="0"
    )
    with AnthropicEmulator(api_key=KEY, ttft=0.02, faults=faults) as emu:
        full = LLMContext(PROMPT, provider(emu), str(tmp_path / "full.sqlite"))
        full.contextualize(corp, chunks)
        total = sum(by_hand(r.usage) for _, r in full.calls)
        cap = float(total) / 2
        store = str(tmp_path / "capped.sqlite")
        capped = LLMContext(PROMPT, provider(emu), store, budget_usd=cap, pricing=book)
        with pytest.raises(
            SituateError,
            match=r"budget reached: .* rerun with a higher context.budget_usd to resume",
        ):
            capped.contextualize(corp, chunks)
        spent = sum(by_hand(r.usage) for _, r in capped.calls)
        assert 0 < spent <= cap
        assert capped.budget.spent == pytest.approx(float(spent))
        # some contexts are missing: the configuration's cost is not known (config_* not logged)
        assert capped.billed().written == []
        resumed = LLMContext(PROMPT, provider(emu), store, budget_usd=cap * 4, pricing=book)
        contexts = resumed.contextualize(corp, chunks)
    assert all(x.text for x in contexts)
    assert len(resumed.billed().written) == len(chunks)  # every one written: priced as stored
    assert len(capped.calls) + len(resumed.calls) == len(chunks)  # nothing paid twice
    assert resumed.budget.spent <= cap * 4


def test_budget_needs_prices(tmp_path: Path):
    with pytest.raises(SituateError, match="context.budget_usd needs prices"):
        LLMContext(PROMPT, object(), str(tmp_path / "c.sqlite"), budget_usd=1.0)


def test_run_stats_are_a_function_of_the_calls_alone():
    from situate.contexts.llm import run_stats
    from situate.paid.llm import LLMResponse
    from situate.records import Usage

    timed = {"prefill_seconds": 2.0, "generation_seconds": 1.0, "evaluated_tokens": 100}
    calls = [
        LLMResponse("a", Usage(5, 0, 0, 7), "m", 1.0, 2, False, {}),
        LLMResponse("b", Usage(5, 0, 0, 10), "m", 3.0, 0, False, timed),
    ]
    stats = run_stats(calls, 1, 3, [], None, None, [0.002, 0.004, 0.010], None, {"x": 1.0})
    assert stats == {
        "llm_retries": 5.0,  # 2 + 0 answered, 3 of the failed call
        "contexts_failed": 1.0,
        "llm_rate_limited": 0.0,
        "llm_ambiguous_retries": 0.0,
        "store_window_ms_max": 10.0,
        "store_window_ms_p50": 4.0,
        "llm_prefill_tokens_per_s": 50.0,  # 100 evaluated in 2 s (the untimed call not counted)
        "llm_generation_tokens_per_s": 10.0,  # 10 generated in 1 s
    }  # no budget: what earlier runs left charged is not reported


def test_cache_shares_by_hand_and_no_share_of_max_where_no_read_was_possible() -> None:
    from types import SimpleNamespace

    from situate.money.costs import cache_shares
    from situate.records import Usage

    def call(**usage):
        return SimpleNamespace(usage=Usage(**usage), batch=False)

    # doc a: a 100-token prefix written once and read by 1 of its 2 other calls (50% of max);
    # doc b: below the cache minimum (nothing written or read)
    calls = [
        ("a", call(input_uncached=10, cache_write=100)),
        ("a", call(input_uncached=10, cache_read=100)),
        ("a", call(input_uncached=110)),
        ("b", call(input_uncached=40)),
    ]
    assert cache_shares(calls) == {
        "cache_read_share": 100 / 370,
        "cache_read_share_of_max": 100 / 200,
        "docs_below_cache_minimum": 1.0,
    }
    # no document could be cached: no read was possible, so no share of the maximum (not 0)
    assert cache_shares(calls[3:]) == {"cache_read_share": 0.0, "docs_below_cache_minimum": 1.0}
