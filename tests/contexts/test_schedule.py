"""The context schedule (paid/schedule.py) against the Anthropic emulator: documents overlap,
a read never precedes its document's write, calls stay within the cache TTL, a kill resumes."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from test_llm_context import KEY, chunks_of, context, corpus, long_document, provider

from conftest import VirtualClock
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.money.costs import usage_metrics
from situate.records import Corpus


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def test_first_calls_of_every_document_go_while_the_first_is_in_flight(key_env, tmp_path):
    corp, chunks = (
        corpus()
    )  # documents a and b (4 chunks each, cacheable), c (2, below the minimum)
    with AnthropicEmulator(api_key=KEY, ttft=0.02) as emu:
        emu.hold()  # no request is answered, so no document's cache is written yet
        ctx = context(emu, tmp_path, concurrency=4)
        run = threading.Thread(target=ctx.contextualize, args=(corp, chunks))
        run.start()
        try:
            # three requests in flight with no answer started: one per document, none a read
            assert emu.wait_held(3)
        finally:
            emu.release()
        run.join()
    assert len(ctx.calls) == 10
    s = usage_metrics("", ctx.calls)
    assert s["cache_read_share_of_max"] == 1.0  # every read that was possible was made
    writes = [(d, r.usage.cache_write) for d, r in ctx.calls if r.usage.cache_write]
    assert sorted(d for d, _ in writes) == ["a", "b"]  # one write per cacheable document


def test_with_batches_first_calls_overlap_and_each_document_batches_the_rest(key_env, tmp_path):
    corp, chunks = corpus()
    with AnthropicEmulator(api_key=KEY, ttft=0.02) as emu:
        emu.hold()
        ctx = context(emu, tmp_path, concurrency=4, batch=True)
        run = threading.Thread(target=ctx.contextualize, args=(corp, chunks))
        run.start()
        try:
            assert emu.wait_held(3)  # the three documents' first calls at once
        finally:
            emu.release()
        run.join()
        assert len(emu.batches) == 3
    assert sorted(d for d, r in ctx.calls if not r.batch) == ["a", "b", "c"]
    assert sum(1 for _, r in ctx.calls if r.batch) == 7
    assert usage_metrics("", ctx.calls)["cache_read_share_of_max"] == 1.0


def test_a_read_is_sent_after_its_write_started_and_before_it_ended(key_env, tmp_path):
    corp, chunks = corpus()
    with AnthropicEmulator(api_key=KEY, ttft=0.02) as emu:
        # every answer stops after its message_start: started, not ended, until released
        emu.hold_streams()
        ctx = context(emu, tmp_path, concurrency=10)
        ctx.rate_clock = time.time  # the schedule's events on the emulator log's clock
        run = threading.Thread(target=ctx.contextualize, args=(corp, chunks))
        run.start()
        try:
            # all ten calls reach the emulator while no answer has ended: the readers went
            # while their writers' answers were still open (a schedule that waited for the
            # end would leave seven of them unsent, and this would be a hang)
            assert emu.wait_streams_held(10)
            assert emu.calls("/v1/messages") == 10
        finally:
            emu.release_streams()
        run.join()
        sent = [(r.received_at, r.body) for r in emu.requests if r.path == "/v1/messages"]
    events = ctx.schedule.events()
    for doc_id in ("a", "b"):
        (kind, writer_row, written_at), *reads = events[doc_id]
        assert kind == "written" and [k for k, _, _ in reads] == ["read"] * 3
        title = corp.document(doc_id).title
        arrivals = sorted(t for t, body in sent if title in str(body))
        readers_sent = arrivals[1:]
        # not one reader before its writer's answer started
        assert len(readers_sent) == 3 and all(written_at <= t for t in readers_sent)
    assert usage_metrics("", ctx.calls)["cache_read_share_of_max"] == 1.0


def test_no_document_straddles_its_cache_ttl_under_a_slow_rpm(key_env, tmp_path, caplog):
    # one call a minute: a document of 7 chunks cannot be read within one 5-minute window
    doc = long_document("a", "Alpine Glaciers", "ice", paragraphs=7)
    corp, chunks = Corpus("test", [doc], []), chunks_of(doc)
    clock = VirtualClock()
    with AnthropicEmulator(api_key=KEY, ttft=0.0, clock=clock.clock) as emu:
        ctx = context(emu, tmp_path, concurrency=4, rpm=1)
        ctx.rate_clock, ctx.rate_sleep = clock.clock, clock.sleep
        with caplog.at_level(logging.INFO, logger="situate.paid.schedule"):
            ctx.contextualize(corp, chunks)
    window = 300.0 - ctx.ttl_margin
    # the schedule says so before the document starts (6 reads at 1 a minute: 360 s > 300 s),
    # then when it refreshes
    said = [r.getMessage() for r in caplog.records if r.name == "situate.paid.schedule"]
    assert said == [
        "contexts: document a has 7 calls, more than context.rpm=1 lets start within its "
        "300 s cache window: its cache will be refreshed deliberately (a new write) as the "
        "window closes",
        "contexts: a: the rate limits held a call past its cache window (300 s after the "
        "write); refreshing the cache with it alone",
    ]
    # one call per 61 s (the minute and the guard second of the context's rate window)
    assert [t for t, _ in ctx.ceiling.admitted] == [0.0, 61.0, 122.0, 183.0, 244.0, 305.0, 366.0]
    events = ctx.schedule.events()["a"]
    # writes at 0 and 305 (the read due at 305 would come 305 s after the write: past 290 s)
    assert [(k, t) for k, _, t in events if k == "written"] == [
        ("written", 0.0),
        ("written", 305.0),
    ]
    assert ctx.stats["context_cache_refreshes"] == 1
    writes = [t for k, _, t in events if k == "written"]
    for _, _, t in events:
        assert 0 <= t - max(w for w in writes if w <= t) <= window
    # the emulator, on the same clock, saw one write and six reads: reads extend an entry's
    # life, so the deliberate refresh at 305 s found it alive (the window is conservative)
    usage = [r.usage for _, r in ctx.calls]
    assert sum(1 for u in usage if u.cache_write) == 1
    assert sum(1 for u in usage if u.cache_read) == 6


def test_a_kill_mid_schedule_resumes_without_paying_any_stored_context_again(key_env, tmp_path):
    corp, chunks = corpus()
    with AnthropicEmulator(api_key=KEY, ttft=0.02) as emu:
        llm = provider(emu)
        original, answered = llm.complete, []

        def complete(request, on_start=None):
            if len(answered) >= 5:
                raise KeyboardInterrupt  # Ctrl-C with calls in flight
            response = original(request, on_start)
            answered.append(response)
            return response

        llm.complete = complete
        killed = context(emu, tmp_path, llm=llm, concurrency=4)
        with pytest.raises(KeyboardInterrupt):
            killed.contextualize(corp, chunks)
        kept = sum(s is not None for s in killed.lookup(corp, chunks))
        assert 5 <= kept < 10  # the calls in flight at the kill were kept too
        before = emu.calls("/v1/messages")
        resumed = context(emu, tmp_path, concurrency=4)
        contexts = resumed.contextualize(corp, chunks)
        assert len(contexts) == 10 and all(x.text for x in contexts)
        assert emu.calls("/v1/messages") - before == 10 - kept
        billed = emu.stats()["paths"]["/v1/messages"]["billed_keys"]
    assert sorted(billed.values()) == [1] * 10  # every prompt paid once over both runs
    assert resumed.stats["contexts_from_store"] == kept


def test_calls_in_flight_at_ctrl_c_are_reported_unanswered(key_env, tmp_path):
    import os
    import signal

    corp, chunks = corpus()  # three documents: their three first calls go at once
    with AnthropicEmulator(api_key=KEY, ttft=0.02) as emu:
        emu.hold()  # none is answered
        ctx = context(emu, tmp_path, concurrency=4)

        def ctrl_c() -> None:
            if emu.wait_held(3):
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, delivered to this thread

        threading.Thread(target=ctrl_c, daemon=True).start()
        try:
            with pytest.raises(KeyboardInterrupt):
                ctx.contextualize(corp, chunks)
            billed = ctx.billed()
            paid, unanswered = list(billed.calls), billed.unanswered  # before any answer comes
        finally:
            emu.release()
    # no answer came back: nothing to price, but the three calls the provider may bill are named
    assert paid == [] and unanswered == 3
