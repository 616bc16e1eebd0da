"""The OpenAI chat emulator through the real ``openai`` SDK and our ``OpenAIChatProvider``."""

from __future__ import annotations

import threading

import openai
import pytest

from situate.commands.emulate import usage_line
from situate.emulators.fault_injection import Faults
from situate.emulators.openai_chat import OpenAIChatEmulator, PrefixCache
from situate.errors import SituateError
from situate.llm.openai_provider import OpenAIChatProvider
from situate.paid.llm import LLMRequest

KEY = "sk-test-chat-5e8d1f"
MODEL = "gpt-4.1-mini"


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def emu(clock):
    with OpenAIChatEmulator(
        api_key=KEY, ttft=0.02, clock=clock, faults=Faults(retry_after="0")
    ) as e:
        yield e


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def provider(emu, **kw) -> OpenAIChatProvider:
    kw.setdefault("backoff_base", 0.01)
    return OpenAIChatProvider(MODEL, base_url=f"{emu.url}/v1", **kw)


def client(emu) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=f"{emu.url}/v1", max_retries=0)


def document(title: str, words: int = 900) -> str:
    body = " ".join(f"{title.split()[0].lower()}{i % 89} item{i}" for i in range(words))
    return f"<document>\n{title}\n{body}\n</document>"


def chunk_prompt(text: str) -> str:
    return f"<chunk>\n{text}\n</chunk>\nSituate the chunk within the document."


DOC = document("Lisbon Transit Handbook")


def test_same_long_prefix_is_cached_in_128_token_steps(emu, key_env):
    llm = provider(emu)
    r1 = llm.complete(LLMRequest(DOC, chunk_prompt("Tram 28 climbs to Graca.")))
    assert r1.usage.cache_read == 0 and r1.usage.cache_write == 0
    assert r1.usage.input_uncached > 1024
    assert r1.text.startswith("This chunk is from Lisbon Transit Handbook; it covers ")
    assert "tram" in r1.text and "graca" in r1.text
    r2 = llm.complete(LLMRequest(DOC, chunk_prompt("Ferries cross the Tagus to Cacilhas.")))
    cached = r2.usage.cache_read
    assert cached >= 1024 and cached % 128 == 0
    total = r2.usage.input_uncached + cached
    assert total - cached < 128 + 40  # all of the shared document, less the last partial step
    assert r2.usage.cache_write == 0
    # the provider's prompt_cache_key is per document
    body = emu.bodies("/v1/chat/completions")[0]
    assert len(body["prompt_cache_key"]) == 32 and body["max_completion_tokens"] == 150


def test_short_prompts_are_never_cached(emu, key_env):
    llm = provider(emu)
    short = document("Short Note", words=60)
    for _ in range(3):
        r = llm.complete(LLMRequest(short, chunk_prompt("x")))
        assert r.usage.cache_read == 0 and r.usage.input_uncached < 1024


def test_cache_is_per_prompt_cache_key(emu):
    def ask(key: str | None):
        kw = {"prompt_cache_key": key} if key else {}
        return (
            client(emu)
            .chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": DOC + chunk_prompt("z")}], **kw
            )
            .usage.prompt_tokens_details.cached_tokens
        )

    assert ask("doc-a") == 0
    assert ask("doc-a") >= 1024
    assert ask("doc-b") == 0
    assert ask(None) == 0  # the global pool is a pool of its own
    assert ask(None) >= 1024


def test_concurrent_requests_before_the_first_token_all_miss(emu, key_env):
    emu.together(3)  # no answer starts before the three requests are read
    llm = provider(emu)
    cached = {}

    def call(i: int) -> None:
        cached[i] = llm.complete(LLMRequest(DOC, chunk_prompt(f"part {i}"))).usage.cache_read

    threads = [threading.Thread(target=call, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cached == {0: 0, 1: 0, 2: 0}
    assert llm.complete(LLMRequest(DOC, chunk_prompt("later"))).usage.cache_read >= 1024


def test_entries_expire_after_inactivity(emu, key_env, clock):
    llm = provider(emu)
    llm.complete(LLMRequest(DOC, chunk_prompt("a")))
    clock.advance(290)
    assert llm.complete(LLMRequest(DOC, chunk_prompt("b"))).usage.cache_read >= 1024
    clock.advance(290)  # used 290 s ago: still there
    assert llm.complete(LLMRequest(DOC, chunk_prompt("c"))).usage.cache_read >= 1024
    clock.advance(301)
    assert llm.complete(LLMRequest(DOC, chunk_prompt("d"))).usage.cache_read == 0

    def ask(text: str) -> int:
        return (
            client(emu)
            .chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": document("Other Doc") + chunk_prompt(text)}],
                prompt_cache_retention="24h",
            )
            .usage.prompt_tokens_details.cached_tokens
        )

    ask("first")
    clock.advance(3600)
    assert ask("an hour later") >= 1024


def test_response_shape_and_max_completion_tokens(emu):
    c = client(emu).chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "system", "content": "You situate chunks."},
            {
                "role": "user",
                "content": [{"type": "text", "text": DOC + chunk_prompt("metro lines")}],
            },
        ],
        max_completion_tokens=4,
        n=2,
    )
    assert c.object == "chat.completion" and c.model == MODEL and c.id.startswith("chatcmpl-")
    assert [ch.index for ch in c.choices] == [0, 1]
    assert c.choices[0].finish_reason == "length" and c.choices[0].message.role == "assistant"
    assert c.usage.completion_tokens == 8
    assert c.usage.total_tokens == c.usage.prompt_tokens + c.usage.completion_tokens
    assert c.usage.prompt_tokens_details.audio_tokens == 0
    assert c.usage.completion_tokens_details.reasoning_tokens == 0
    full = client(emu).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": DOC + chunk_prompt("metro lines")}]
    )
    assert full.choices[0].finish_reason == "stop" and "metro" in full.choices[0].message.content


def test_validation_errors(emu):
    with pytest.raises(openai.BadRequestError):
        client(emu).chat.completions.create(model=MODEL, messages=[])
    with pytest.raises(openai.BadRequestError):
        client(emu).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}], temperature=3
        )
    with pytest.raises(openai.NotFoundError):
        client(emu).chat.completions.create(
            model="text-embedding-3-small", messages=[{"role": "user", "content": "x"}]
        )


def test_embeddings_are_served_on_the_same_server(emu):
    e = client(emu).embeddings.create(model="text-embedding-3-small", input=["hello"])
    assert len(e.data) == 1 and len(e.data[0].embedding) == 1536


def test_faults_are_retried_by_the_provider(emu, key_env):
    emu.inject("429_retry_after", "500", "reset")
    r = provider(emu).complete(LLMRequest(DOC, chunk_prompt("a")))
    assert r.retries == 3


def test_wrong_key_names_the_variable(emu, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(SituateError, match="OPENAI_API_KEY"):
        provider(emu).complete(LLMRequest(DOC, chunk_prompt("a")))


def test_prefix_cache_steps():
    cache = PrefixCache()
    assert [cache.cached_tokens(n) for n in (0, 1023, 1024, 1151, 1152, 1300)] == [
        0,
        0,
        1024,
        1024,
        1152,
        1280,
    ]


def test_cli_usage_lines():
    assert usage_line("openai", "http://127.0.0.1:9").startswith(
        "llm.base_url=http://127.0.0.1:9/v1 embedder.base_url=http://127.0.0.1:9/v1"
    )
    assert "export OPENAI_API_KEY=" in usage_line("openai", "http://127.0.0.1:9")
    assert usage_line("cohere", "http://127.0.0.1:9").startswith(
        "embedder.base_url=http://127.0.0.1:9"
    )
    assert "CO_API_KEY" in usage_line("cohere", "http://127.0.0.1:9")
