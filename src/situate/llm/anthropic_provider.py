"""``llm: claude_*``: Claude through the official ``anthropic`` SDK, with prompt caching.

The document goes in the first content block with ``cache_control`` (TTL 5m or 1h), the chunk and
the instructions in a second block, so every chunk of a document shares one cached prefix. Usage
is recorded as the API reports it: ``input_tokens`` (uncached), ``cache_creation_input_tokens``,
``cache_read_input_tokens``, ``output_tokens``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from situate.errors import SituateError
from situate.llm.base import SdkProvider
from situate.paid.llm import TTL_SECONDS, LLMRequest, LLMResponse
from situate.paid.retry import with_retries
from situate.providers import anthropic as vendor
from situate.records import Usage

TTLS = tuple(TTL_SECONDS)


def sdk_has_sampling_params() -> bool:
    """Whether the installed SDK's ``messages.create`` still takes ``temperature`` (before 2.0)."""
    import inspect

    from anthropic.resources.messages import Messages

    return "temperature" in inspect.signature(Messages.create).parameters


class AnthropicProvider(SdkProvider):
    """Claude Messages API.

    Parameters
    ----------
    model : str
        API model id (``claude-haiku-4-5``).
    temperature : float
        Sampling temperature (0 for reproducible contexts). Sent only with an ``anthropic`` SDK
        that still has sampling parameters (before 2.0, API version 2023-06-01): SDK 2.x sends
        API version 2026-10-21, which refuses ``temperature`` with 400 whatever its value.
    cache_ttl : {"5m", "1h"}
        Lifetime of the cached document prefix.
    min_cacheable_tokens : int
        The model's minimum cacheable prompt length; shorter prefixes are not cached.
    context_window : int
        The model's window in tokens; longer documents are sent as a window around the chunk.
    thinking : str or None
        ``"disabled"`` sends ``thinking={"type": "disabled"}`` (for models that think by default);
        None sends nothing.
    base_url : str or None
        Another endpoint (an emulator: ``http://127.0.0.1:PORT``); None is ``ANTHROPIC_BASE_URL``
        or else ``https://api.anthropic.com``, as the SDK resolves it. The endpoint is part of
        every context's store key (:mod:`situate.paid.endpoints`).
    api_key_env : str
        Environment variable holding the key.
    max_retries, backoff_base, backoff_max : int, float, float
        Retries on 429, 529, 5xx, timeouts and dropped connections, honouring ``retry-after``.
    timeout : float
        Seconds per request.
    batch_poll_seconds : float
        How often a Message Batch is polled.
    """

    name = "anthropic"
    vendor = vendor
    sdk = "anthropic"
    counting_endpoint = True  # count_tokens() is the Messages API's count_tokens endpoint
    signals_start = True  # complete(on_start=...) calls back when the answer starts

    def __init__(
        self,
        model: str,
        temperature: float = 0.0,
        cache_ttl: str = "5m",
        min_cacheable_tokens: int = 1024,
        context_window: int = 200_000,
        thinking: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        max_retries: int = 8,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        timeout: float = 120.0,
        batch_poll_seconds: float = 10.0,
    ):
        if cache_ttl not in TTLS:
            raise SituateError(f"llm.cache_ttl={cache_ttl!r} is not one of {', '.join(TTLS)}")
        self.model = model
        self.temperature = temperature
        self.cache_ttl = cache_ttl
        self.min_cacheable_tokens = min_cacheable_tokens
        self.context_window = context_window
        self.thinking = thinking
        self._connect(base_url, api_key_env, max_retries, backoff_base, backoff_max, timeout)
        self.batch_poll_seconds = batch_poll_seconds
        self._sampling: bool | None = None

    def identity(self) -> dict:
        return {
            "provider": self.name,
            "model": self.model,
            "temperature": self.temperature,
            "thinking": self.thinking,
            "endpoint": self.endpoint,
        }

    def params(self, request: LLMRequest) -> dict:
        """The Messages API request body for ``request``."""
        content = []
        if request.document:
            content.append(
                {
                    "type": "text",
                    "text": request.document,
                    "cache_control": {"type": "ephemeral", "ttl": self.cache_ttl},
                }
            )
        content.append({"type": "text", "text": request.prompt})
        messages = [{"role": "user", "content": content}]
        if request.answer_prefix:
            messages.append({"role": "assistant", "content": request.answer_prefix})
        params = {"model": self.model, "max_tokens": request.max_tokens, "messages": messages}
        if self._sampling is None:
            self._sampling = sdk_has_sampling_params()
        if self._sampling:
            params["temperature"] = self.temperature
        if request.system:
            params["system"] = request.system
        if self.thinking:
            params["thinking"] = {"type": self.thinking}
        return params

    def complete(
        self, request: LLMRequest, on_start: Callable[[], None] | None = None
    ) -> LLMResponse:
        """One call; with ``on_start`` it is streamed and ``on_start()`` runs when the answer's
        ``message_start`` event arrives: the prompt cache entry the call writes exists from then
        on (called again if a retry gets that far)."""
        t = time.perf_counter()

        def attempt():
            if on_start is None:
                return self.client().messages.create(**self.params(request))
            return self._streamed(request, on_start)

        message, retries = with_retries(
            attempt, self._retryable, self.max_retries, self.backoff_base, self.backoff_max
        )
        return self._response(message, request, time.perf_counter() - t, retries, batch=False)

    def _streamed(self, request: LLMRequest, on_start: Callable[[], None]):
        """The final message of a streamed call, calling ``on_start`` at ``message_start``."""
        with self.client().messages.stream(**self.params(request)) as stream:
            for event in stream:
                if event.type == "message_start":
                    on_start()
            return stream.get_final_message()

    def _response(
        self, message, request: LLMRequest, seconds: float, retries: int, batch: bool
    ) -> LLMResponse:
        text = "".join(
            block.text for block in message.content if getattr(block, "type", "") == "text"
        )
        u = message.usage
        usage = Usage(
            input_uncached=u.input_tokens,
            cache_write=u.cache_creation_input_tokens or 0,
            cache_read=u.cache_read_input_tokens or 0,
            output=u.output_tokens,
        )
        extra = {"stop_reason": message.stop_reason, "id": message.id, "cache_ttl": self.cache_ttl}
        return LLMResponse(
            request.answer_prefix + text, usage, message.model, seconds, retries, batch, extra
        )

    def count_tokens(self, text: str) -> int:
        """Exact count from the API's token-counting endpoint (retried like a completion)."""
        result, _ = with_retries(
            lambda: self.client().messages.count_tokens(
                model=self.model, messages=[{"role": "user", "content": text}]
            ),
            self._retryable, self.max_retries, self.backoff_base, self.backoff_max,
        )  # fmt: skip
        return result.input_tokens

    def complete_batch(self, requests: list[LLMRequest]) -> list[LLMResponse | Exception]:
        """Send ``requests`` as one Message Batch (half price), poll until it ends, collect results."""
        t = time.perf_counter()
        client = self.client()
        batch, _ = with_retries(
            lambda: client.messages.batches.create(
                requests=[{"custom_id": f"r{i}", "params": self.params(r)} for i, r in enumerate(requests)]
            ),
            self._retryable, self.max_retries, self.backoff_base, self.backoff_max,
        )  # fmt: skip
        batch_id = batch.id
        while batch.processing_status != "ended":
            time.sleep(self.batch_poll_seconds)
            batch, _ = with_retries(
                lambda: client.messages.batches.retrieve(batch_id),
                self._retryable, self.max_retries, self.backoff_base, self.backoff_max,
            )  # fmt: skip
        out: list[LLMResponse | Exception] = [RuntimeError("missing from batch results")] * len(
            requests
        )
        seconds = time.perf_counter() - t
        entries, _ = with_retries(
            lambda: list(client.messages.batches.results(batch_id)),
            self._retryable, self.max_retries, self.backoff_base, self.backoff_max,
        )  # fmt: skip
        for entry in entries:
            i = int(entry.custom_id[1:])
            if entry.result.type == "succeeded":
                out[i] = self._response(entry.result.message, requests[i], seconds, 0, batch=True)
            else:
                out[i] = RuntimeError(f"batch request {entry.custom_id}: {entry.result.type}")
        return out
