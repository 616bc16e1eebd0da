"""OpenAI Chat Completions with automatic prompt caching, next to the embeddings endpoint.

:class:`OpenAIChatEmulator` serves ``POST /v1/chat/completions`` as the ``openai`` SDK sends and
parses it, and everything :class:`~situate.emulators.openai_api.OpenAIEmulator` serves
(``POST /v1/embeddings``), on one server: ``openai.OpenAI(api_key=KEY, base_url=f"{url}/v1")``.

Request: ``model``, ``messages`` (``system``/``developer``/``user``/``assistant``/``tool``; content a
string or a list of parts), ``max_completion_tokens`` (or the older ``max_tokens``), ``n``,
``temperature`` (0..2), ``stop``, ``prompt_cache_key``, ``prompt_cache_retention``
(``in_memory`` | ``24h``). ``stream: true`` is refused (400: not emulated). Authentication and
error bodies are the embeddings emulator's.

Tokens: the prompt is serialised as ``<|role|>content<|end|>`` per message and counted with
:func:`~situate.emulators.textmodel.approx_tokens` (4 bytes a token), so a token is 4 bytes of
that serialisation and prefixes compare byte-exactly.

Prompt caching, as OpenAI documents it for automatic caching:

* only prompts of at least 1,024 tokens are cached;
* the cached part of a prompt is the longest prefix it shares with a prompt seen before (exact
  match), counted in 128-token steps: 1,024, 1,152, 1,280... (``cached_tokens`` is 0 below 1,024);
* requests are routed by ``prompt_cache_key`` when given (else one global pool per API key and
  model) together with the hash of the prompt's first 256 tokens: a prefix is shared only within
  a pool;
* an entry exists only once the response that wrote it has started (each response waits
  ``ttft`` seconds first): concurrent requests that arrive before then all miss;
* entries are evicted after ``inactivity_ttl`` seconds without use (default 300: OpenAI says 5 to
  10 minutes, up to an hour off-peak), or ``extended_ttl`` (24 h) with
  ``prompt_cache_retention: "24h"``; expiry reads ``clock`` (injectable).

Writes are free and not reported (``prompt_tokens_details.cache_write_tokens`` stays null).
``usage``: ``prompt_tokens``, ``completion_tokens``, ``total_tokens``,
``prompt_tokens_details: {cached_tokens, audio_tokens}``, ``completion_tokens_details``.

The answer is the same deterministic sentence as the Anthropic emulator's
(:func:`~situate.emulators.textmodel.situating_answer`), cut at ``max_completion_tokens``
(``finish_reason: "length"``) or at a ``stop`` string.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from situate.emulators.fault_injection import Faults
from situate.emulators.openai_api import EMBEDDING_MODELS, OpenAIEmulator
from situate.emulators.server import check_loopback
from situate.emulators.textmodel import (
    approx_tokens,
    question_answer,
    situating_answer,
    truncate_tokens,
)
from situate.emulators.wire import Request, Response, json_response

ROLES = ("system", "developer", "user", "assistant", "tool")
MIN_CACHED_TOKENS = 1024
CACHE_INCREMENT = 128
ROUTING_TOKENS = 256  # requests are routed by a hash of this many leading tokens
BYTES_PER_TOKEN = 4
MAX_ENTRIES_PER_POOL = 256


@dataclass
class _Entry:
    data: bytes
    ttl: float
    last_used: float = 0.0
    visible: bool = False


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (binary search over slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """OpenAI-style automatic prefix cache: pools of prompts, longest shared prefix wins."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        min_tokens: int = MIN_CACHED_TOKENS,
        increment: int = CACHE_INCREMENT,
    ):
        self.clock = clock
        self.min_tokens = min_tokens
        self.increment = increment
        self._pools: dict[tuple, list[_Entry]] = {}
        self._lock = threading.Lock()

    def cached_tokens(self, shared_tokens: int) -> int:
        if shared_tokens < self.min_tokens:
            return 0
        return (
            self.min_tokens + (shared_tokens - self.min_tokens) // self.increment * self.increment
        )

    def account(
        self, pool: tuple, data: bytes, tokens: int, ttl: float
    ) -> tuple[int, _Entry | None]:
        """(cached tokens, the pending entry this prompt of ``tokens`` writes, or None)."""
        route = (*pool, hashlib.sha256(data[: ROUTING_TOKENS * BYTES_PER_TOKEN]).hexdigest())
        with self._lock:
            now = self.clock()
            entries = [
                e for e in self._pools.get(route, []) if not e.visible or now - e.last_used < e.ttl
            ]
            best, shared = None, 0
            for e in entries:
                if e.visible:
                    n = _common_prefix(e.data, data)
                    if n > shared:
                        best, shared = e, n
            cached = self.cached_tokens(shared // BYTES_PER_TOKEN)
            if cached and best is not None:
                best.last_used = now  # eviction counts from the last use
            written = None
            if tokens >= self.min_tokens:
                written = next((e for e in entries if e.data == data), None)
                if written is None:
                    written = _Entry(data, ttl)
                    entries.append(written)
                written.ttl = max(written.ttl, ttl)
            self._pools[route] = entries[-MAX_ENTRIES_PER_POOL:]
        return cached, written

    def publish(self, entry: _Entry | None) -> None:
        if entry is None:
            return
        with self._lock:
            entry.visible = True
            entry.last_used = self.clock()

    def clear(self) -> None:
        with self._lock:
            self._pools.clear()


class OpenAIChatEmulator(OpenAIEmulator):
    """Serves ``POST /v1/chat/completions`` (with automatic prompt caching) and embeddings.

    Parameters
    ----------
    api_key, faults
        As for :class:`~situate.emulators.openai_api.OpenAIEmulator`.
    ttft : float
        Seconds before a response starts (its prompt becomes a cache entry then).
    clock : callable
        Seconds, for cache eviction (``time.monotonic``; tests pass a fake).
    inactivity_ttl, extended_ttl : float
        Seconds an unused entry lives (``in_memory``; ``prompt_cache_retention: "24h"``).
    host, port
        Loopback address and port (0: ephemeral).
    **embedding_limits
        ``max_inputs``, ``max_tokens_per_input``, ``max_tokens_per_request`` of the embeddings.
    """

    name = "openai-emulator"

    def __init__(
        self,
        api_key: str | list[str] = "sk-emulator",
        faults: Faults | None = None,
        ttft: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        inactivity_ttl: float = 300.0,
        extended_ttl: float = 86_400.0,
        host: str = "127.0.0.1",
        port: int = 0,
        **embedding_limits: int,
    ):
        super().__init__(api_key, faults, **embedding_limits)
        check_loopback(host)
        self.host, self.port = host, port
        self.ttft = ttft
        self.cache = PrefixCache(clock)
        self.inactivity_ttl = inactivity_ttl
        self.extended_ttl = extended_ttl
        self.route("POST", "/v1/chat/completions", self._chat)

    def _chat(self, req: Request) -> Response:
        started = time.perf_counter()
        denied = self._authenticate(req)
        if denied:
            return denied
        try:
            body = req.json()
        except (ValueError, UnicodeDecodeError):
            return self._invalid("We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return self._invalid("Invalid type for request body: expected an object.")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return self._invalid("you must provide a model parameter", param="model")
        if model in EMBEDDING_MODELS:
            return self._invalid(
                "This is not a chat model and thus not supported in the v1/chat/completions "
                "endpoint.",
                param="model",
                code="model_not_found",
                status=404,
            )
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return self._invalid(
                "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                param="messages",
            )
        parts, texts = [], []
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ROLES:
                return self._invalid(
                    f"Invalid value for 'messages[{i}].role': expected one of {', '.join(ROLES)}.",
                    param=f"messages[{i}].role",
                )
            text = _content_text(m.get("content"))
            if text is None:
                return self._invalid(
                    f"Invalid 'messages[{i}].content': expected a string or an array of parts.",
                    param=f"messages[{i}].content",
                )
            parts.append(f"<|{m['role']}|>{text}<|end|>")
            texts.append((m["role"], text))
        if body.get("stream"):
            return self._invalid(
                "stream: the emulator answers non-streaming requests only", "stream"
            )
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            return self._invalid(
                f"Invalid 'max_completion_tokens': integer below minimum value. Expected a value "
                f">= 1, but got {limit} instead.",
                param="max_completion_tokens",
                code="integer_below_min_value",
            )
        n = body.get("n") or 1
        if not isinstance(n, int) or not 1 <= n <= 128:
            return self._invalid("Invalid 'n': expected an integer between 1 and 128.", "n")
        temperature = body.get("temperature")
        if temperature is not None and not (
            isinstance(temperature, int | float) and 0 <= temperature <= 2
        ):
            return self._invalid(
                f"Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but "
                f"got {temperature} instead.",
                param="temperature",
            )
        retention = body.get("prompt_cache_retention") or "in_memory"
        if retention not in ("in_memory", "24h"):
            return self._invalid(
                "Invalid value for 'prompt_cache_retention': expected 'in_memory' or '24h'.",
                param="prompt_cache_retention",
            )
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        if not isinstance(stops, list) or not all(isinstance(x, str) and x for x in stops):
            return self._invalid(
                "Invalid 'stop': expected a string or an array of strings.", "stop"
            )

        data = "".join(parts).encode("utf-8")
        prompt_tokens = approx_tokens("".join(parts))
        cache_key = body.get("prompt_cache_key") or ""
        pool = (hashlib.sha256(req.bearer_token().encode()).hexdigest()[:16], model, cache_key)
        ttl = self.extended_ttl if retention == "24h" else self.inactivity_ttl
        cached, written = self.cache.account(pool, data, prompt_tokens, ttl)
        self.first_token(self.ttft)  # the prompt is cached from here on
        self.cache.publish(written)

        users = [t for role, t in texts if role == "user"] or [texts[-1][1]]
        text = question_answer(users[0], users[-1]) or situating_answer(users[0], users[-1])
        finish = "stop"
        for s in stops:
            at = text.find(s)
            if at >= 0:
                text = text[:at]
        if limit is not None:
            cut = truncate_tokens(text, limit)
            if cut != text:
                text, finish = cut, "length"
        completion_tokens = n * approx_tokens(text)
        elapsed_ms = max(1, int(1000 * (time.perf_counter() - started)))
        return json_response(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:29]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": i,
                        "message": {
                            "role": "assistant",
                            "content": text,
                            "refusal": None,
                            "annotations": [],
                        },
                        "logprobs": None,
                        "finish_reason": finish,
                    }
                    for i in range(n)
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                    "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                    "completion_tokens_details": {
                        "reasoning_tokens": 0,
                        "audio_tokens": 0,
                        "accepted_prediction_tokens": 0,
                        "rejected_prediction_tokens": 0,
                    },
                },
                "service_tier": "default",
                "system_fingerprint": "fp_emulator",
            },
            {"openai-model": model, "openai-processing-ms": str(elapsed_ms)},
        )


def _content_text(content) -> str | None:
    """A message's content as text (parts joined; non-text parts as their type), or None."""
    if content is None:
        return ""  # an assistant message with tool calls only
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    out = []
    for part in content:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return None
        if part["type"] == "text":
            if not isinstance(part.get("text"), str):
                return None
            out.append(part["text"])
        else:
            out.append(f"<{part['type']}>")
    return "".join(out)
