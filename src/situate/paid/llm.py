"""The LLM provider protocol: one request = one chunk's context.

A request has two parts. ``document`` is the stable prefix shared by every chunk of a document
(the whole document, and a glossary if the prompt variant has one): providers cache it (Anthropic's
``cache_control`` block, OpenAI's automatic prefix caching, a local model's KV cache). ``prompt`` is
what differs per chunk (the chunk and the instructions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from situate.records import Usage

# a provider's ``cache_ttl`` -> seconds a prompt cache entry lives after its write
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class LLMRequest:
    document: str
    prompt: str
    max_tokens: int = 150
    system: str = ""
    # text the answer must start with (the local model's hybrid prompt: "This chunk is from ...");
    # providers that support prefill continue it, and the returned text includes it
    answer_prefix: str = ""


@dataclass(frozen=True)
class LLMResponse:
    text: str
    usage: Usage
    model: str
    seconds: float = 0.0
    retries: int = 0
    batch: bool = False
    extra: dict = field(default_factory=dict)  # provider details worth recording (stop reason, ids)


class LLMCallFailed(Exception):
    """A call that still failed after the provider's retries (recorded, retried on the next run)."""

    def __init__(self, message: str, retries: int = 0):
        super().__init__(message)
        self.retries = retries


class LLMProvider(Protocol):
    """Writes a context for one chunk and reports the tokens the call used."""

    name: str  # the provider: "anthropic", "openai", "local"
    model: str  # also its price-book id (conf/pricing/)
    # lifetime of a prompt cache entry the caller chooses ("5m", "1h"; a key of TTL_SECONDS),
    # None where the provider's cache has none to choose (cache writes then priced at "5m")
    cache_ttl: str | None
    # tokens one call may hold, prompt and answer (context: llm windows longer documents)
    context_window: int
    # the environment variable holding the API key; None for a local model (it needs none)
    api_key_env: str | None
    # count_tokens() asks the provider's counting endpoint (exact; needs the API key), where
    # False it estimates (4 characters a token) or loads the model: `situate estimate`'s
    # counter=auto uses it only when True and the key is set
    counting_endpoint: bool

    def identity(self) -> dict:
        """Provider, model and every generation parameter that changes the answer (no secrets)."""
        ...

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One call. A provider with ``signals_start = True`` also takes ``on_start``, a callable
        run when the answer starts (its prompt cache entry exists from then on)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for this model (exact where the provider offers a counter)."""
        ...
