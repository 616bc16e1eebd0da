"""The Anthropic emulator through the real ``anthropic`` SDK and our ``AnthropicProvider``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import anthropic
import pytest

from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.anthropic_cache import min_cacheable_tokens
from situate.emulators.fault_injection import Faults
from situate.emulators.textmodel import approx_tokens
from situate.errors import SituateError
from situate.llm.anthropic_provider import AnthropicProvider
from situate.money.pricing import load_price_book
from situate.paid.llm import LLMRequest

KEY = "emulator-key-test-7c1e9b2a4d"
MODEL = "claude-haiku-5-5"  # caches from 512 tokens


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def emu(clock):
    with AnthropicEmulator(
        api_key=KEY, ttft=0.02, clock=clock, faults=Faults(retry_after="0")
    ) as e:
        yield e


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def provider(emu, model: str = MODEL, **kw) -> AnthropicProvider:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("batch_poll_seconds", 0.02)
    return AnthropicProvider(model, base_url=emu.url, **kw)


def client(emu) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=emu.url, max_retries=0)


def document(title: str, words: int = 700) -> str:
    body = " ".join(f"{title.split()[0].lower()}{i % 97} term{i}" for i in range(words))
    return f"<document>\n{title}\n{body}\n</document>"


def chunk_prompt(text: str) -> str:
    return f"Here is the chunk:\n<chunk>\n{text}\n</chunk>\nSituate it within the document."


DOC = document("Kubernetes Scheduling Guide")
DOC_TOKENS = approx_tokens(DOC)


def test_document_is_above_the_minimum():
    assert DOC_TOKENS > 2048


def test_first_call_writes_the_document_and_the_next_reads_it(emu, key_env):
    llm = provider(emu)
    p1 = chunk_prompt("Taints and tolerations keep pods away from tainted nodes.")
    r1 = llm.complete(LLMRequest(DOC, p1))
    assert r1.usage.cache_write == DOC_TOKENS
    assert r1.usage.cache_read == 0
    assert r1.usage.input_uncached == approx_tokens(p1)
    assert r1.text.startswith("This chunk is from Kubernetes Scheduling Guide; it covers ")
    assert "taints" in r1.text and "tolerations" in r1.text
    assert r1.usage.output == approx_tokens(r1.text)
    assert r1.extra["stop_reason"] == "end_turn" and r1.model == MODEL and r1.retries == 0

    p2 = chunk_prompt("Node affinity attracts pods to labelled nodes.")
    r2 = llm.complete(LLMRequest(DOC, p2))
    assert (r2.usage.cache_read, r2.usage.cache_write) == (DOC_TOKENS, 0)
    assert r2.usage.input_uncached == approx_tokens(p2)
    assert "affinity" in r2.text

    other = document("Postgres Vacuum Notes")
    r3 = llm.complete(LLMRequest(other, p2))
    assert (r3.usage.cache_read, r3.usage.cache_write) == (0, approx_tokens(other))
    # what the provider sent: the document block cached, no sampling parameters (SDK 2.x)
    body = emu.bodies("/v1/messages")[0]
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert "temperature" not in body


def test_prefix_below_the_model_minimum_is_never_cached(emu, key_env):
    short = document("Tiny Note", words=40)
    assert approx_tokens(short) < 512
    llm = provider(emu)
    for _ in range(2):
        r = llm.complete(LLMRequest(short, chunk_prompt("tiny")))
        assert (r.usage.cache_write, r.usage.cache_read) == (0, 0)
        assert r.usage.input_uncached == approx_tokens(short) + approx_tokens(chunk_prompt("tiny"))
    # the same 2,000-token prefix: too short for Haiku 4.5 (4,096), long enough for Haiku 5.5
    mid = document("Mid Doc", words=420)
    assert 1024 < approx_tokens(mid) < 4096
    r = provider(emu, "claude-haiku-4-5").complete(LLMRequest(mid, chunk_prompt("x")))
    assert r.usage.cache_write == 0
    r = provider(emu, "claude-sonnet-4-6").complete(LLMRequest(mid, chunk_prompt("x")))
    assert r.usage.cache_write == approx_tokens(mid)


def test_minimums_are_the_price_books_and_overrides_win():
    book = load_price_book()
    for model in ("claude-haiku-5-5", "claude-haiku-4-5", "claude-3-haiku-20240307"):
        assert min_cacheable_tokens(model) == book.price(model).min_cacheable_tokens
    assert min_cacheable_tokens("claude-haiku-5-5") == 512
    assert min_cacheable_tokens("claude-haiku-4-5-20251001") == 4096  # a dated snapshot
    assert min_cacheable_tokens("claude-3-haiku-20240307") == 2048
    assert min_cacheable_tokens("claude-sonnet-4-5") == 1024  # not priced: the default
    assert min_cacheable_tokens("claude-unknown") == 1024
    assert min_cacheable_tokens("claude-opus-4-1", {"claude-opus-4-1": 1024}) == 1024


def test_5m_ttl_expires_and_reads_refresh_it(emu, key_env, clock):
    llm = provider(emu)
    assert llm.complete(LLMRequest(DOC, chunk_prompt("a"))).usage.cache_write == DOC_TOKENS
    clock.advance(299)
    assert llm.complete(LLMRequest(DOC, chunk_prompt("b"))).usage.cache_read == DOC_TOKENS
    clock.advance(299)  # 598 s after the write, 299 after the last read: still there
    assert llm.complete(LLMRequest(DOC, chunk_prompt("c"))).usage.cache_read == DOC_TOKENS
    clock.advance(301)
    r = llm.complete(LLMRequest(DOC, chunk_prompt("d")))
    assert (r.usage.cache_read, r.usage.cache_write) == (0, DOC_TOKENS)


def test_1h_ttl_is_accounted_apart(emu, key_env, clock):
    llm = provider(emu, cache_ttl="1h")
    params = llm.params(LLMRequest(DOC, chunk_prompt("a")))
    u = client(emu).messages.create(**params).usage
    assert u.cache_creation_input_tokens == DOC_TOKENS
    assert u.cache_creation.ephemeral_1h_input_tokens == DOC_TOKENS
    assert u.cache_creation.ephemeral_5m_input_tokens == 0
    assert u.service_tier == "standard"
    clock.advance(3000)
    assert llm.complete(LLMRequest(DOC, chunk_prompt("b"))).usage.cache_read == DOC_TOKENS
    clock.advance(3601)
    assert llm.complete(LLMRequest(DOC, chunk_prompt("c"))).usage.cache_write == DOC_TOKENS


def test_system_and_document_breakpoints_split_by_ttl(emu):
    system = [
        {
            "type": "text",
            "text": "You situate chunks. " * 200,
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        }
    ]
    sys_tokens = approx_tokens(system[0]["text"])

    def ask(doc: str):
        return (
            client(emu)
            .messages.create(
                model=MODEL,
                max_tokens=50,
                system=system,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": doc, "cache_control": {"type": "ephemeral"}},
                            {"type": "text", "text": chunk_prompt("x")},
                        ],
                    }
                ],
            )
            .usage
        )

    u = ask(DOC)
    assert u.cache_creation.ephemeral_1h_input_tokens == sys_tokens
    assert u.cache_creation.ephemeral_5m_input_tokens == DOC_TOKENS
    other = document("Other Doc")
    u = ask(other)  # the system prompt is read, the new document written
    assert u.cache_read_input_tokens == sys_tokens
    assert u.cache_creation_input_tokens == approx_tokens(other)
    assert u.cache_creation.ephemeral_1h_input_tokens == 0


def test_concurrent_requests_before_the_first_token_each_write(emu, key_env):
    emu.together(2)  # neither answer starts before both requests are read
    llm = provider(emu)
    results = {}

    def call(i: int) -> None:
        results[i] = llm.complete(LLMRequest(DOC, chunk_prompt(f"part {i}")))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[i].usage.cache_write for i in range(2)] == [DOC_TOKENS, DOC_TOKENS]
    assert [results[i].usage.cache_read for i in range(2)] == [0, 0]
    r = llm.complete(LLMRequest(DOC, chunk_prompt("after")))
    assert (r.usage.cache_read, r.usage.cache_write) == (DOC_TOKENS, 0)


def test_prefill_is_continued_and_excluded(emu, key_env):
    prefill = "This chunk is from Kubernetes Scheduling Guide; it covers"
    m = client(emu).messages.create(
        model=MODEL,
        max_tokens=100,
        messages=[
            {"role": "user", "content": DOC + "\n" + chunk_prompt("Pod priority and preemption.")},
            {"role": "assistant", "content": prefill},
        ],
    )
    text = m.content[0].text
    assert not text.startswith("This chunk") and text.startswith(" ")
    assert "preemption" in text and (prefill + text).endswith(".")
    # our provider returns the prefix and its continuation
    r = provider(emu).complete(
        LLMRequest(DOC, chunk_prompt("Pod priority."), answer_prefix="It covers")
    )
    assert r.text.startswith("It covers ") and "priority" in r.text
    with pytest.raises(anthropic.BadRequestError, match="trailing whitespace"):
        client(emu).messages.create(
            model=MODEL,
            max_tokens=10,
            messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "It "}],
        )
    with pytest.raises(
        anthropic.BadRequestError, match="does not support assistant message prefill"
    ):
        client(emu).messages.create(
            model="claude-opus-4-6",
            max_tokens=10,
            messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "It"}],
        )


def test_max_tokens_cuts_the_answer(emu):
    m = client(emu).messages.create(
        model=MODEL, max_tokens=3, messages=[{"role": "user", "content": DOC + chunk_prompt("x y")}]
    )
    assert m.stop_reason == "max_tokens" and m.usage.output_tokens == 3
    warm = client(emu).messages.create(
        model=MODEL,
        max_tokens=0,
        messages=[
            {
                "role": "user",
                "content": [{"type": "text", "text": DOC, "cache_control": {"type": "ephemeral"}}],
            }
        ],
    )
    assert warm.content == [] and warm.usage.output_tokens == 0
    assert warm.usage.cache_creation_input_tokens == DOC_TOKENS


def test_count_tokens_matches_usage(emu, key_env):
    llm = provider(emu)
    assert llm.count_tokens("hello world, how are you") == approx_tokens("hello world, how are you")
    params = llm.params(LLMRequest(DOC, chunk_prompt("q")))
    counted = client(emu).messages.count_tokens(model=MODEL, messages=params["messages"])
    u = client(emu).messages.create(**params).usage
    assert counted.input_tokens == (
        u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
    )


def test_batches_through_the_provider(emu, key_env):
    llm = provider(emu)
    first = llm.complete(LLMRequest(DOC, chunk_prompt("first")))  # the first call alone
    assert first.usage.cache_write == DOC_TOKENS
    requests = [LLMRequest(DOC, chunk_prompt(f"chunk number {i} about word{i}")) for i in range(3)]
    out = llm.complete_batch(requests)
    assert all(r.batch for r in out)
    assert [r.usage.cache_read for r in out] == [DOC_TOKENS] * 3
    assert [r.usage.cache_write for r in out] == [0, 0, 0]
    assert [f"word{i}" in r.text for i, r in enumerate(out)] == [True] * 3
    # the batch object and results as the SDK parses them
    (batch_id,) = emu.batches
    batch = client(emu).messages.batches.retrieve(batch_id)
    assert batch.processing_status == "ended" and batch.request_counts.succeeded == 3
    assert batch.results_url.endswith(f"/v1/messages/batches/{batch_id}/results")
    results = list(client(emu).messages.batches.results(batch_id))
    assert sorted(r.custom_id for r in results) == ["r0", "r1", "r2"]
    assert [r.custom_id for r in results] != ["r0", "r1", "r2"]  # not in request order
    assert {r.result.message.usage.service_tier for r in results} == {"batch"}


def test_batch_errors_and_lifecycle(emu):
    c = client(emu)
    emu.batch_delay = 0.3
    batch = c.messages.batches.create(
        requests=[
            {
                "custom_id": "ok",
                "params": {
                    "model": MODEL,
                    "max_tokens": 20,
                    "messages": [{"role": "user", "content": "hi"}],
                },
            },
            {
                "custom_id": "bad",
                "params": {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
            },
        ]
    )
    assert batch.processing_status == "in_progress" and batch.results_url is None
    assert batch.request_counts.processing == 2
    with pytest.raises(anthropic.BadRequestError):
        c.get(f"/v1/messages/batches/{batch.id}/results", cast_to=object)
    assert emu.wait_for_batches()
    results = {r.custom_id: r.result for r in c.messages.batches.results(batch.id)}
    assert results["ok"].type == "succeeded"
    assert results["bad"].type == "errored"
    assert results["bad"].error.error.type == "invalid_request_error"
    assert "max_tokens" in results["bad"].error.error.message
    assert [b.id for b in c.messages.batches.list()] == [batch.id]
    assert c.messages.batches.delete(batch.id).type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError):
        c.messages.batches.retrieve(batch.id)
    with pytest.raises(anthropic.BadRequestError, match="custom_id"):
        c.messages.batches.create(
            requests=[
                {"custom_id": "a b", "params": {"model": MODEL, "max_tokens": 1, "messages": []}}
            ]
        )


def test_429_with_retry_after_is_retried_and_counted(emu, key_env):
    llm = provider(emu)
    emu.inject("429_retry_after")
    r = llm.complete(LLMRequest(DOC, chunk_prompt("a")))
    assert r.retries == 1
    assert [rec.fault for rec in emu.requests] == ["429_retry_after", None]
    emu.inject("529", "500", "reset")
    r = llm.complete(LLMRequest(DOC, chunk_prompt("b")))
    assert r.retries == 3 and r.usage.cache_read == DOC_TOKENS


def test_fault_bodies_are_anthropic_errors(emu):
    emu.inject("529", "429_retry_after")
    with pytest.raises(anthropic.OverloadedError) as e:
        client(emu).messages.create(
            model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    assert e.value.type == "overloaded_error" and e.value.request_id.startswith("req_")
    with pytest.raises(anthropic.RateLimitError) as e:
        client(emu).messages.create(
            model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    assert e.value.type == "rate_limit_error"
    assert e.value.response.headers["retry-after"] == "0"


def test_wrong_key_is_a_one_line_error_naming_the_variable(emu, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    with pytest.raises(SituateError) as e:
        provider(emu).complete(LLMRequest(DOC, chunk_prompt("a")))
    message = str(e.value)
    assert "ANTHROPIC_API_KEY" in message and "401" in message and "\n" not in message
    assert "sk-ant-wrong" not in message
    assert emu.calls("/v1/messages") == 1  # not retried
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(SituateError, match="ANTHROPIC_API_KEY"):
        provider(emu).complete(LLMRequest(DOC, chunk_prompt("a")))


def raw(emu, path: str, body: dict | None, headers: dict[str, str], method: str = "POST"):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{emu.url}{path}",
        data=data,
        method=method,
        headers={"content-type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def test_wire_details_auth_version_and_sampling_parameters(emu):
    body = {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    status, headers, err = raw(emu, "/v1/messages", body, {"anthropic-version": "2023-06-01"})
    assert status == 401 and err["type"] == "error"
    assert err["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }
    assert headers["request-id"] == err["request_id"]
    status, _, msg = raw(
        emu, "/v1/messages", body, {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    )
    assert status == 200 and msg["type"] == "message" and msg["role"] == "assistant"
    assert set(msg["usage"]) >= {
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
        "cache_creation",
    }
    status, _, err = raw(emu, "/v1/messages", body, {"x-api-key": KEY})
    assert status == 400 and "anthropic-version" in err["error"]["message"]
    hot = {**body, "temperature": 0.0}
    assert (
        raw(emu, "/v1/messages", hot, {"x-api-key": KEY, "anthropic-version": "2023-06-01"})[0]
        == 200
    )
    status, _, err = raw(
        emu, "/v1/messages", hot, {"x-api-key": KEY, "anthropic-version": "2026-10-21"}
    )
    assert (
        status == 400 and err["error"]["message"] == "temperature: Extra inputs are not permitted"
    )
    status, _, err = raw(
        emu,
        "/v1/messages",
        {**body, "model": "gpt-4o"},
        {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
    )
    assert status == 404 and err["error"]["type"] == "not_found_error"
    five = [
        {"type": "text", "text": f"b{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)
    ]
    status, _, err = raw(
        emu,
        "/v1/messages",
        {**body, "messages": [{"role": "user", "content": five}]},
        {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
    )
    assert status == 400 and "maximum of 4 blocks" in err["error"]["message"]
    status, _, err = raw(emu, "/v1/nowhere", body, {"x-api-key": KEY})
    assert status == 404 and err["error"]["type"] == "not_found_error"


def test_top_level_cache_control_marks_the_last_block(emu):
    u = (
        client(emu)
        .messages.create(
            model=MODEL,
            max_tokens=5,
            cache_control={"type": "ephemeral"},
            messages=[{"role": "user", "content": DOC}],
        )
        .usage
    )
    assert u.cache_creation_input_tokens == DOC_TOKENS and u.input_tokens == 0


def test_cli_serves_until_interrupted():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from situate.commands.emulate import main; sys.exit(main(sys.argv[1:]))",
            "anthropic",
            "--ttft",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("llm.base_url=http://127.0.0.1:")
        assert "export ANTHROPIC_API_KEY=" in line
        url = line.split()[0].split("=", 1)[1]
        key = line.rsplit("=", 1)[1]
        m = anthropic.Anthropic(api_key=key, base_url=url, max_retries=0).messages.create(
            model=MODEL,
            max_tokens=20,
            messages=[{"role": "user", "content": "<chunk>zebra crossing</chunk>"}],
        )
        assert "zebra" in m.content[0].text
    finally:
        proc.terminate()
        assert proc.wait(timeout=120) == 0  # a hang guard: it ends as soon as the emulator stops


def test_cli_refuses_a_non_loopback_host(capsys):
    from situate.commands.emulate import main

    assert main(["anthropic", "--host", "0.0.0.0"]) == 2
    assert "loopback" in capsys.readouterr().err
    assert main(["openai", "--fault-rate", "2"]) == 2


def test_cli_takes_a_providers_timing_and_refuses_it_where_an_emulator_has_none(capsys):
    from situate.commands.emulate import build, main, parse, timing_options

    args = parse(["anthropic", "--ttft", "0.4", "--output-tokens-per-second", "150",
                  "--rpm", "50", "--tpm", "40000"])  # fmt: skip
    server = build("anthropic", Faults(), args.ttft, "127.0.0.1", 0, **timing_options(args))
    limits = server.rate_buckets
    assert (server.ttft, server.output_tokens_per_second, limits.rpm, limits.tpm) == (
        0.4, 150.0, 50, 40000,
    )  # fmt: skip
    plain = build(
        "anthropic", Faults(), 0.2, "127.0.0.1", 0, **timing_options(parse(["anthropic"]))
    )
    limits = plain.rate_buckets
    assert (plain.output_tokens_per_second, limits.rpm, limits.tpm) == (None, None, None)
    assert main(["openai", "--rpm", "5"]) == 2
    assert capsys.readouterr().err == (
        "situate emulate: --rpm is not an option of OpenAIChatEmulator\n"
    )
    assert main(["anthropic", "--output-tokens-per-second", "0"]) == 2
    assert "--output-tokens-per-second 0.0 must be > 0" in capsys.readouterr().err


def test_streamed_answer_has_the_real_event_shapes_and_the_same_usage(emu, key_env):
    body = {
        "model": MODEL,
        "max_tokens": 60,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": DOC, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": chunk_prompt("Pod priority preempts pods.")},
                ],
            }
        ],
    }
    events = list(client(emu).messages.create(**body, stream=True))
    kinds = [e.type for e in events]
    assert kinds[:3] == ["message_start", "content_block_start", "content_block_delta"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    start = events[0].message.usage
    assert (start.cache_creation_input_tokens, start.cache_read_input_tokens) == (DOC_TOKENS, 0)
    assert start.output_tokens == 1 and events[0].message.content == []
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    final = events[-2]
    assert final.delta.stop_reason == "end_turn" and final.usage.output_tokens == approx_tokens(
        text
    )
    plain = client(emu).messages.create(**body)  # the same prompt, not streamed: a cache read
    assert plain.content[0].text == text
    assert (plain.usage.cache_read_input_tokens, plain.usage.cache_creation_input_tokens) == (
        DOC_TOKENS,
        0,
    )
    # the streamed answer is billed with its final usage
    billed = emu.stats()["paths"]["/v1/messages"]["billed_usage"]
    assert billed["cache_creation_input_tokens"] == DOC_TOKENS
    assert billed["output_tokens"] == 2 * approx_tokens(text)


def test_provider_calls_on_start_when_the_streamed_answer_starts(emu, key_env):
    llm = provider(emu)
    starts = []
    r = llm.complete(
        LLMRequest(DOC, chunk_prompt("Quotas cap namespaces.")), on_start=lambda: starts.append(1)
    )
    assert starts == [1]
    assert r.usage.cache_write == DOC_TOKENS and r.text.startswith("This chunk is from Kubernetes")
    assert emu.bodies("/v1/messages")[0]["stream"] is True


def test_rpm_and_tpm_ceilings_answer_429_with_retry_after(key_env, clock):
    with AnthropicEmulator(api_key=KEY, ttft=0.0, clock=clock, rpm=2) as emu:
        c = client(emu)
        ask = {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        c.messages.create(**ask)  # the bucket: 2 requests, refilled at one per 30 s
        clock.advance(20)
        c.messages.create(**ask)  # 2 - 1 + 2/3 - 1 = 2/3 left
        with pytest.raises(anthropic.RateLimitError) as e:
            c.messages.create(**ask)
        assert e.value.response.headers["retry-after"] == "10"  # 1/3 more takes 10 s
        clock.advance(11)
        c.messages.create(**ask)  # room again: the refused one took nothing
    with AnthropicEmulator(api_key=KEY, ttft=0.0, clock=clock, tpm=25) as emu:
        c = client(emu)
        c.messages.create(**ask)  # "hi" is 1 token, plus max_tokens 10
        c.messages.create(**ask)
        with pytest.raises(anthropic.RateLimitError):
            c.messages.create(**ask)
