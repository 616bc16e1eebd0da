"""Rate limits: AIMD concurrency backs off on 429s and recovers; rpm/tpm ceilings are honoured."""

from __future__ import annotations

import itertools
import threading

import pytest
from reliability_support import KEY, context, corpus, provider

from conftest import VirtualClock
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.errors import SituateError
from situate.paid.ratelimit import OK, RATE_LIMITED, AIMDLimit, RateCeiling, max_in_window


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def tokens_in_any_window(admitted: list[tuple[float, int]], window: float) -> int:
    return max(
        (sum(n for t2, n in admitted if t <= t2 < t + window) for t, _ in admitted), default=0
    )


# -- AIMD ------------------------------------------------------------------------------------


def test_aimd_halves_once_per_burst_never_below_one_then_recovers():
    limit = AIMDLimit(8, increase_after=2)
    burst = [limit.acquire() for _ in range(8)]  # eight attempts in flight together
    for epoch in burst:
        limit.release(epoch, RATE_LIMITED)
    assert limit.limit == 4 and limit.decreases == 1  # one burst, one halving
    for expected in (2, 1, 1):  # attempts sent after a halving halve again, down to 1
        limit.release(limit.acquire(), RATE_LIMITED)
        assert limit.limit == expected
    assert limit.minimum_seen == 1
    for _ in range(2 * 7):
        limit.release(limit.acquire(), OK)
    assert limit.limit == 8 and limit.increases == 7
    limit.release(limit.acquire(), OK)
    assert limit.limit == 8  # never above the configured concurrency


def test_aimd_blocks_attempts_beyond_the_limit():
    limit = AIMDLimit(2)
    first = limit.acquire()
    limit.release(first, RATE_LIMITED)  # limit 1
    held = limit.acquire()
    entered = threading.Event()

    def second():
        limit.release(limit.acquire(), OK)
        entered.set()

    t = threading.Thread(target=second)
    t.start()
    assert not entered.wait(0.2)  # blocked while one attempt is in flight
    limit.release(held, OK)
    t.join()  # returns once the second attempt got in
    assert entered.is_set()


def test_concurrency_drops_after_a_burst_of_429s_and_recovers(key_env, tmp_path):
    corp, chunks = corpus((24,))
    with AnthropicEmulator(api_key=KEY, ttft=0.03) as emu:
        llm = provider(emu)
        sent = itertools.count(1)
        original = llm.complete

        def complete(request, on_start=None):
            if next(sent) == 6:  # mid-run, a burst of rate limits
                # at most 8 attempts (the limit) were sent before the first halving, so the
                # ninth 429 answers one sent after it: a second halving, whatever the timing
                emu.inject(*["429"] * 9)
            return original(request, on_start)

        llm.complete = complete
        ctx = context(emu, tmp_path / "c.sqlite", llm=llm, concurrency=8, increase_after=2)
        contexts = ctx.contextualize(corp, chunks)
        assert all(x.text for x in contexts)
        s = ctx.stats
        assert s["llm_rate_limited"] == 9 == sum(1 for r in emu.requests if r.fault == "429")
        assert s["concurrency_decreases"] >= 2
        assert s["concurrency_min"] <= 2  # from 8
        assert s["concurrency_final"] > s["concurrency_min"]  # won back
        # the limit's path: down from 8 by halvings, then back up one by one
        history = ctx.limit.history
        steps = list(zip(history, history[1:], strict=False))
        downs = [i for i, (a, b) in enumerate(steps) if b <= a]
        assert history[0] == 8 and min(history) == s["concurrency_min"]
        assert all(b == max(1, a // 2) for a, b in steps if b <= a)  # every decrease halves
        assert all(b == a + 1 for a, b in steps[downs[-1] + 1 :])  # then +1 at a time
        assert history[-1] == s["concurrency_final"]


# -- requests and tokens per minute ----------------------------------------------------------


def test_ceiling_with_a_fake_clock_never_exceeds_rpm_in_any_window():
    clock = VirtualClock()
    ceiling = RateCeiling(rpm=5, clock=clock.clock, sleep=clock.sleep)
    for _ in range(23):
        ceiling.acquire(10)
    times = [t for t, _ in ceiling.admitted]
    assert max_in_window(times, 60.0) == 5
    assert times[:6] == [0.0] * 5 + [60.0]  # the sixth waits for the first to leave the window
    assert times[-1] == pytest.approx(240.0)
    assert ceiling.waited == pytest.approx(240.0)


def test_ceiling_with_a_fake_clock_never_exceeds_tpm_in_any_window():
    clock = VirtualClock()
    ceiling = RateCeiling(tpm=100, clock=clock.clock, sleep=clock.sleep)
    for n in (40, 40, 40, 30, 90, 10, 60, 60, 5):
        ceiling.acquire(n)
        clock.now += 7.0  # calls keep arriving
    assert tokens_in_any_window(ceiling.admitted, 60.0) <= 100
    assert len(ceiling.admitted) == 9
    with pytest.raises(SituateError, match="context.tpm=100: one call is estimated at 101"):
        ceiling.acquire(101)
    with pytest.raises(SituateError, match="context.rpm=0"):
        RateCeiling(rpm=0)


def test_rpm_is_honoured_against_the_emulator_retries_included(key_env, tmp_path):
    corp, chunks = corpus((6, 6))
    clock = VirtualClock()
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        emu.inject("500", "429")  # the first call is retried twice
        ctx = context(emu, tmp_path / "c.sqlite", concurrency=4, rpm=4)
        ctx.rate_clock, ctx.rate_sleep = clock.clock, clock.sleep
        contexts = ctx.contextualize(corp, chunks)
    assert all(x.text for x in contexts)
    assert [r.fault for r in emu.requests[:3]] == ["500", "429", None]
    admitted = [t for t, _ in ctx.ceiling.admitted]
    assert len(admitted) == emu.calls("/v1/messages") == 14  # 12 calls and 2 retries
    # the first minute: document 1's first call (three attempts) and document 2's, sent while
    # document 1's was in flight; then the ten reads, four a minute
    # the context's window is the minute and a guard second (RATE_GUARD_SECONDS)
    assert admitted == [0.0] * 4 + [61.0] * 4 + [122.0] * 4 + [183.0] * 2
    assert max_in_window(admitted, 61.0) == 4
    assert ctx.stats["rate_wait_seconds"] >= 183.0  # virtual time moves only by waiting


def test_tpm_is_honoured_against_the_emulator(key_env, tmp_path):
    corp, chunks = corpus((5,))
    clock = VirtualClock()
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        ctx = context(emu, tmp_path / "c.sqlite", concurrency=4)
        per_call = [ctx._tokens(ctx._request(r)) for r in ctx.plan(corp, chunks)[2]]
        assert 3 * min(per_call) > 2 * max(per_call) + 10  # so two calls fit a window, not three
        ctx.tpm = 2 * max(per_call) + 10
        ctx.rate_clock, ctx.rate_sleep = clock.clock, clock.sleep
        ctx.contextualize(corp, chunks)
    assert emu.calls("/v1/messages") == 5
    assert tokens_in_any_window(ctx.ceiling.admitted, 60.0) <= ctx.tpm
    assert [t for t, _ in ctx.ceiling.admitted] == [0.0, 0.0, 61.0, 61.0, 122.0]


def test_a_call_larger_than_tpm_fails_before_any_request(key_env, tmp_path):
    corp, chunks = corpus((3,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        ctx = context(emu, tmp_path / "c.sqlite", tpm=100)
        with pytest.raises(SituateError, match=r"context.tpm=100: one call is estimated at \d+"):
            ctx.contextualize(corp, chunks)
        assert emu.calls() == 0
