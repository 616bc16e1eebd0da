"""``llm: gpt_*``: OpenAI chat models through the official ``openai`` SDK.

OpenAI caches prompt prefixes automatically (prompts of 1,024 tokens or more, in 128-token steps),
so the document goes first and the chunk last, identical across a document's calls; a
``prompt_cache_key`` per document routes its calls to the same cache. Usage: ``prompt_tokens``,
``prompt_tokens_details.cached_tokens`` (read from cache), ``completion_tokens``.
"""

from __future__ import annotations

import hashlib
import time

from situate.llm.base import SdkProvider
from situate.paid.llm import LLMRequest, LLMResponse
from situate.paid.retry import with_retries
from situate.providers import openai as vendor
from situate.records import Usage


class OpenAIChatProvider(SdkProvider):
    """OpenAI Chat Completions.

    Parameters
    ----------
    model : str
        API model id (``gpt-4.1-mini``).
    temperature : float
        Sampling temperature.
    min_cacheable_tokens : int
        Prompts shorter than this are never cached (1,024 for OpenAI).
    context_window : int
        The model's window in tokens.
    base_url : str or None
        Another endpoint (an emulator: ``http://127.0.0.1:PORT/v1``); None is ``OPENAI_BASE_URL``
        or else ``https://api.openai.com/v1``. Part of every context's store key.
    api_key_env : str
        Environment variable holding the key.
    max_retries, backoff_base, backoff_max, timeout
        As for the Anthropic provider.
    """

    name = "openai"
    vendor = vendor
    sdk = "openai"
    counting_endpoint = False  # count_tokens() estimates: Chat Completions has no counter

    def __init__(
        self,
        model: str,
        temperature: float = 0.0,
        min_cacheable_tokens: int = 1024,
        context_window: int = 128_000,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_retries: int = 8,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        timeout: float = 120.0,
    ):
        self.model = model
        self.cache_ttl = None  # the provider's prompt cache has no lifetime to choose
        self.temperature = temperature
        self.min_cacheable_tokens = min_cacheable_tokens
        self.context_window = context_window
        self._connect(base_url, api_key_env, max_retries, backoff_base, backoff_max, timeout)

    def identity(self) -> dict:
        return {
            "provider": self.name,
            "model": self.model,
            "temperature": self.temperature,
            "endpoint": self.endpoint,
        }

    def params(self, request: LLMRequest) -> dict:
        prompt = request.prompt
        if request.answer_prefix:
            prompt += f'\n\nBegin your answer with exactly: "{request.answer_prefix}"'
        content = f"{request.document}\n\n{prompt}" if request.document else prompt
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages.append({"role": "user", "content": content})
        params = {
            "model": self.model,
            "messages": messages,
            "max_completion_tokens": request.max_tokens,
            "temperature": self.temperature,
        }
        if request.document:
            params["prompt_cache_key"] = hashlib.sha256(request.document.encode()).hexdigest()[:32]
        return params

    def complete(self, request: LLMRequest) -> LLMResponse:
        t = time.perf_counter()
        completion, retries = with_retries(
            lambda: self.client().chat.completions.create(**self.params(request)),
            self._retryable, self.max_retries, self.backoff_base, self.backoff_max,
        )  # fmt: skip
        text = completion.choices[0].message.content or ""
        if request.answer_prefix and not text.startswith(request.answer_prefix):
            text = f"{request.answer_prefix} {text}"
        u = completion.usage
        details = u.prompt_tokens_details
        cached = (details.cached_tokens or 0) if details else 0
        written = (getattr(details, "cache_write_tokens", None) or 0) if details else 0
        usage = Usage(
            input_uncached=u.prompt_tokens - cached - written,
            cache_write=written,
            cache_read=cached,
            output=u.completion_tokens,
        )
        extra = {"finish_reason": completion.choices[0].finish_reason, "id": completion.id}
        return LLMResponse(
            text, usage, completion.model, time.perf_counter() - t, retries, False, extra
        )

    def count_tokens(self, text: str) -> int:
        """An estimate (4 characters a token): the Chat Completions API has no counting endpoint."""
        return max(1, len(text) // 4)
