"""The budget under 20% faults: what the server billed never passes the cap, retries included,
even when connections drop after the server did (and billed) the work."""

from __future__ import annotations

import pytest
from reliability_support import KEY, MODEL, context, corpus

from situate.contexts.llm import LLMContext
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.fault_injection import Faults
from situate.errors import SituateError
from situate.money.pricing import load_price_book
from situate.records import Usage

KINDS = {
    "http_errors_and_resets": ("429", "429_retry_after", "529", "500", "reset", "slow"),
    "resets_after_billing": ("reset_after",),  # processed, billed, then the connection drops
}


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def billed_usd(emu: AnthropicEmulator) -> float:
    """Every 2xx answer the emulator computed, delivered or not, priced."""
    price = load_price_book().price(MODEL)
    total = 0.0
    for r in emu.requests:
        if r.billed and r.path == "/v1/messages":
            u = r.usage
            usage = Usage(
                u["input_tokens"],
                u["cache_creation_input_tokens"],
                u["cache_read_input_tokens"],
                u["output_tokens"],
            )
            total += price.call_cost(usage, ttl="5m").total
    return total


def capped(emu, store, cap) -> LLMContext:
    return context(emu, store, budget_usd=cap, pricing=load_price_book())


@pytest.mark.parametrize("kinds", list(KINDS), ids=list(KINDS))
def test_billed_never_passes_the_cap_at_20_percent_faults(key_env, tmp_path, kinds):
    corp, chunks = corpus((6, 6, 6, 6))
    with AnthropicEmulator(api_key=KEY, ttft=0.01) as clean:
        context(clean, tmp_path / "full.sqlite").contextualize(corp, chunks)
        # two thirds of what every context costs (the schedule writes the four documents' caches
        # first: with half, three writes use the cap)
        cap = billed_usd(clean) * 2 / 3
    faults = Faults.uniform(0.2, KINDS[kinds], seed=3, retry_after="0", slow_seconds=0.01)
    with AnthropicEmulator(api_key=KEY, ttft=0.01, faults=faults) as emu:
        store = tmp_path / "capped.sqlite"
        first = capped(emu, store, cap)
        with pytest.raises(SituateError, match="budget reached"):
            first.contextualize(corp, chunks)
        paid_first = billed_usd(emu)
        assert 0 < paid_first <= first.budget.spent <= cap  # spent: an upper bound of billed
        retried = sum(1 for r in emu.requests if r.fault and r.fault != "slow")
        assert retried > 0, [r.fault for r in emu.requests]
        if kinds == "resets_after_billing":
            assert first.stats["llm_ambiguous_retries"] > 0
            assert first.budget.ambiguous > 0
            assert first.stats["budget_ambiguous_usd"] == first.budget.ambiguous

        emu.clear()  # the same cap again: what may have been billed is remembered
        again = capped(emu, store, cap)
        with pytest.raises(SituateError, match="budget reached"):
            again.contextualize(corp, chunks)
        assert again.budget.spent >= first.budget.spent - 1e-12
        assert paid_first + billed_usd(emu) <= again.budget.spent + 1e-12  # sums in another order
        assert again.budget.spent <= cap

        paid = paid_first + billed_usd(emu)
        emu.clear()  # a higher cap resumes and finishes
        resumed = capped(emu, store, cap * 20)
        contexts = resumed.contextualize(corp, chunks)
        assert all(x.text for x in contexts)
        assert paid + billed_usd(emu) <= resumed.budget.spent <= cap * 20


def test_ambiguous_attempts_are_charged_and_the_retry_reserves_again(key_env, tmp_path):
    corp, chunks = corpus((2,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        probe = capped(emu, tmp_path / "probe.sqlite", 1.0)
        request = probe._request(probe.plan(corp, chunks)[2][0])
        probe._open({}, set())  # the budget of a run that finds nothing stored
        estimate = probe.budget.estimate(request)

        # room for the first attempt and one more: the reset eats one reservation, the retry
        # takes the other; the second chunk finds no room left
        ctx = capped(emu, tmp_path / "c.sqlite", 2.5 * estimate)
        emu.inject("reset_after")
        with pytest.raises(SituateError, match="budget reached"):
            ctx.contextualize(corp, chunks)
        assert ctx.stats["llm_ambiguous_retries"] == 1
        assert ctx.budget.ambiguous == pytest.approx(estimate)
        assert emu.calls("/v1/messages") == 2  # the reset one and its retry
        assert billed_usd(emu) <= ctx.budget.spent <= 2.5 * estimate
        # the charge of the reset attempt stays in the store for later runs
        assert ctx.store.charges.charged({k for k in ctx.plan(corp, chunks)[3]})[1] == 1

        # a cap with room for the first attempt only: the retry after the reset is not sent
        emu.clear()
        tight = capped(emu, tmp_path / "t.sqlite", 1.5 * estimate)
        emu.inject("reset")
        with pytest.raises(SituateError, match="budget reached"):
            tight.contextualize(corp, chunks)
        assert emu.calls("/v1/messages") == 1
        assert tight.budget.spent == pytest.approx(estimate) and tight.budget.reserved == 0
