"""Why a context was paid twice: each cause ``make reliability`` reports, reproduced on purpose
(no timing: the emulator holds requests, the client dies at a planted point), and the case that
used to be misread, a request the emulator read only after its client was killed."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
from reliability_support import (
    HANG,
    KEY,
    context,
    contextualizing_child,
    corpus,
    harness,
    killed_itself,
)

from situate.emulators.anthropic_api import AnthropicEmulator
from situate.money.pricing import load_price_book


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def run(started: float, ended: float, killed_at: float | None = None) -> dict:
    return {"started": started, "ended": ended, "killed_at": killed_at}


def billed(key: str, received: float, answered: float, fault=None, gone=False) -> dict:
    return {
        "path": "/v1/messages",
        "keys": [key],
        "received_at": received,
        "answered_at": answered,
        "fault": fault,
        "client_gone": gone,
    }


def causes(emu: AnthropicEmulator, runs: list[dict]) -> tuple[dict[str, int], list[float]]:
    return harness.repayment_causes(emu.stats(log=True)["billed_log"], runs)


def expected(**counts: int) -> dict[str, int]:
    return {**dict.fromkeys(harness.CAUSES, 0), **counts}


# -- the classification, on a hand-made log ----------------------------------------------------


def test_each_billed_answer_but_the_kept_one_gets_its_cause():
    runs = [run(0, 10.2, killed_at=10.0), run(11, 40, killed_at=39.0), run(41, 50)]
    log = [
        # run 0 was killed at 10.0 with this call sent; the emulator read it at 10.1 (a busy
        # machine), answered a closed connection, and run 1 paid again. The old split compared
        # it with the *next* kill (39.0): "answered 28.89 s before the kill"
        billed("late", 10.1, 10.11, gone=True),
        billed("late", 24.3, 24.31),
        billed("flight", 9.9, 10.05, gone=True),  # read before the kill, answered after it
        billed("flight", 12.0, 12.01),
        billed("commit", 9.95, 9.998),  # sent to run 0, alive, 2 ms before its kill
        billed("commit", 12.1, 12.11),
        billed("reset", 13.0, 13.01, fault="reset_after"),  # billed, then the socket dropped
        billed("reset", 13.5, 13.51),
        billed("twice", 42.0, 42.01),  # run 2 was never killed and got it: paid again for nothing
        billed("twice", 43.0, 43.01),
        billed("timeout", 44.0, 45.0, gone=True),  # run 2's client gave up waiting
        billed("timeout", 46.0, 46.01),
        billed("once", 14.0, 14.01),
    ]
    counts, gaps = harness.repayment_causes(log, runs)
    assert counts == expected(
        in_flight_at_kill=2, killed_before_commit=1, reset_after_billing=1, avoidable=2
    )
    assert gaps == [pytest.approx(0.002)]


# -- each cause, end to end against the emulator -----------------------------------------------


def killed_with_calls_in_flight(emu: AnthropicEmulator, store, in_flight: int) -> dict:
    """A contextualizing process killed while the emulator holds ``in_flight`` of its calls
    unread; the emulator reads them after the kill. Returns the run's record."""
    emu.hold(after=1)  # the document's first call is answered, the next ones stay in flight
    started = time.time()
    proc = contextualizing_child(emu, store, (8,))
    assert emu.wait_held(in_flight), "the child never had its calls in flight"
    killed_at = time.time()
    proc.kill()
    assert killed_itself(proc)
    ended = time.time()
    emu.release()
    assert emu.wait_idle()
    return run(started, ended, killed_at)


@pytest.mark.slow
def test_calls_read_after_their_client_was_killed_are_in_flight_at_the_kill(key_env, tmp_path):
    store = tmp_path / "contexts.sqlite"
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        first = killed_with_calls_in_flight(emu, store, 4)
        late = [r for r in emu.requests if r.received_at > first["killed_at"]]
        assert len(late) == 4 and all(r.billed and r.client_gone for r in late)
        # the next run pays them again, then is killed too, long after its answers: the kill
        # the old split measured those four against
        started = time.time()
        proc = contextualizing_child(
            emu, store, (8,), after='print("done", flush=True); sys.stdin.read()',
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout.readline() == "done\n"
        killed_at = time.time()
        proc.kill()
        assert proc.wait(HANG) == -signal.SIGKILL
        second = run(started, time.time(), killed_at)
        counts, gaps = causes(emu, [first, second])
    assert counts == expected(in_flight_at_kill=4) and gaps == []


@pytest.mark.slow
def test_an_answer_received_and_killed_before_its_commit(key_env, tmp_path):
    store = tmp_path / "contexts.sqlite"
    corp, chunks = corpus((8,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        started = time.time()
        proc = contextualizing_child(
            emu, store, (8,),
            before="import os, signal\n"
            "from situate.contexts.store import ContextStore\n"
            "ContextStore.put = lambda *_: os.kill(os.getpid(), signal.SIGKILL)\n",
            concurrency=1,  # one slot: no read goes while the first call's answer streams in
        )  # fmt: skip
        assert killed_itself(proc)  # with the first answer in hand, before storing it
        died = time.time()  # at the latest
        assert [(r.billed, r.client_gone) for r in emu.requests] == [(True, False)]
        ctx = context(emu, store, concurrency=4, budget_usd=1.0, pricing=load_price_book())
        rerun = time.time()
        ctx.contextualize(corp, chunks)
        counts, gaps = causes(emu, [run(started, died, died), run(rerun, time.time())])
    assert counts == expected(killed_before_commit=1)
    assert len(gaps) == 1 and gaps[0] > 0
    assert len(ctx.calls) == 8  # the lost answer paid again, and the seven never asked
    assert ctx.stats["budget_earlier_unanswered_attempts"] == 1  # and counted by the budget


def test_a_connection_dropped_after_billing_is_paid_again_by_the_retry(key_env, tmp_path):
    corp, chunks = corpus((3,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        emu.inject("reset_after")
        ctx = context(emu, tmp_path / "c.sqlite", budget_usd=1.0, pricing=load_price_book())
        started = time.time()
        ctx.contextualize(corp, chunks)
        counts, _ = causes(emu, [run(started, time.time())])
    assert counts == expected(reset_after_billing=1)
    assert ctx.stats["llm_ambiguous_retries"] == 1
    assert ctx.stats["budget_ambiguous_usd"] > 0  # the budget counts what it may have cost


def test_a_client_that_forgets_what_it_was_sent_pays_avoidably(key_env, tmp_path):
    corp, chunks = corpus((3,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        runs = []
        for store in ("one.sqlite", "two.sqlite"):  # the second run cannot see the first's store
            started = time.time()
            context(emu, tmp_path / store).contextualize(corp, chunks)
            runs.append(run(started, time.time()))
        counts, _ = causes(emu, runs)
    assert counts == expected(avoidable=3)
