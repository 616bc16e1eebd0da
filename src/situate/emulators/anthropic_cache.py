"""The Anthropic emulator's prompt cache: entries by breakpoint key with their TTLs
(:class:`PromptCache`), what a request reads, writes and pays plain (:class:`CacheUsage`), and the
models' minimum cacheable lengths (:func:`min_cacheable_tokens`).

Prompt caching (as documented by Anthropic)
-------------------------------------------
The prompt is the sequence tools -> system blocks -> message blocks. Every block with
``cache_control`` (``{"type": "ephemeral", "ttl": "5m" | "1h"}``; at most 4, and no ``1h`` after a
``5m``) is a breakpoint; a top-level ``cache_control`` marks the last block. The cache key of a
breakpoint hashes the API key, the model and every block up to and including it (message blocks
also hash the ``thinking`` setting, whose changes invalidate message caches;
:func:`~situate.emulators.anthropic_request.parse_prompt` lays this out). On a request:

* the longest breakpoint whose entry exists and has not expired is a hit:
  ``cache_read_input_tokens`` = its prefix's tokens, and its TTL is refreshed;
* the tokens between the hit (or the start) and the last breakpoint are written
  (``cache_creation_input_tokens``, split by the TTL of the breakpoint that ends each segment in
  ``usage.cache_creation``) when the last breakpoint's prefix reaches the model's minimum
  cacheable length; each breakpoint at or above the minimum gets an entry. Below the minimum
  nothing is cached and those tokens are plain input;
* ``input_tokens`` = the rest: tokens after the last breakpoint, plus an uncacheable prefix.

An entry becomes visible only once the response that wrote it has started: each response waits
``ttft`` seconds (time to first token) before its entries are published and it is answered.
Requests that arrive in the meantime miss and each pay the write again; that is why a document's
first call should go alone. Expiry uses ``clock`` (injectable, seconds): an entry lives its TTL
(5 minutes or 1 hour) from the last response that wrote or read it.

Minimum cacheable lengths are the price book's (``min_cacheable_tokens`` in ``conf/pricing/``,
read as the cost code reads it, through the vendor record:
:meth:`situate.providers.Vendor.cache_minimums`; a dated snapshot ``<id>-YYYYMMDD`` has its id's;
1,024 for a model the price book lacks), with per-emulator overrides.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from situate.emulators.anthropic_request import TTL_SECONDS, Prompt

DEFAULT_MIN_CACHEABLE_TOKENS = 1024  # a model the price book has no minimum for


@functools.cache
def priced_minimums() -> dict[str, int]:
    """Price-book id -> minimum cacheable prompt length, of Anthropic's priced models."""
    from situate.providers.anthropic import VENDOR

    return VENDOR.cache_minimums()


def min_cacheable_tokens(model: str, overrides: dict[str, int] | None = None) -> int:
    """The model's minimum cacheable prompt length: ``overrides`` (exact names or patterns) first,
    then the price book's (:func:`priced_minimums`; a dated snapshot ``<id>-YYYYMMDD`` has its
    id's), else 1,024."""
    for pattern, tokens in (overrides or {}).items():
        if fnmatch.fnmatchcase(model, pattern):
            return tokens
    for priced, tokens in priced_minimums().items():
        if model == priced or re.fullmatch(re.escape(priced) + r"-\d{8}", model):
            return tokens
    return DEFAULT_MIN_CACHEABLE_TOKENS


@dataclass
class CacheEntry:
    tokens: int
    ttl: float  # seconds
    expires_at: float = 0.0
    visible: bool = False  # published once the response that wrote it has started


@dataclass
class CacheUsage:
    read: int = 0
    written: dict[str, int] = field(default_factory=lambda: {"5m": 0, "1h": 0})
    uncached: int = 0

    @property
    def creation(self) -> int:
        return sum(self.written.values())


class PromptCache:
    """Breakpoint entries by key, with TTLs on an injectable clock and TTFT visibility."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._entries: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()

    def _live(self, key: str, now: float) -> CacheEntry | None:
        entry = self._entries.get(key)
        return entry if entry is not None and entry.visible and now < entry.expires_at else None

    def account(self, prompt: Prompt, minimum: int) -> tuple[CacheUsage, list[CacheEntry]]:
        """Usage of ``prompt``; refreshes the hit and returns the entries it writes (pending)."""
        usage, written = CacheUsage(), []
        with self._lock:
            now = self.clock()
            hit_end = 0
            for bp in reversed(prompt.breakpoints):
                entry = self._live(bp.key, now)
                if entry is not None:
                    entry.expires_at = now + entry.ttl  # refreshed on every read
                    hit_end = bp.end
                    break
            usage.read = hit_end
            last = prompt.breakpoints[-1] if prompt.breakpoints else None
            if last is not None and last.end >= minimum and last.end > hit_end:
                start = hit_end
                for bp in prompt.breakpoints:
                    if bp.end <= hit_end:
                        continue
                    usage.written[bp.ttl] += bp.end - start
                    start = bp.end
                    if bp.end >= minimum:
                        entry = self._entries.get(bp.key)
                        if entry is None or (entry.visible and now >= entry.expires_at):
                            entry = CacheEntry(bp.end, TTL_SECONDS[bp.ttl])
                            self._entries[bp.key] = entry
                        written.append(entry)
            usage.uncached = prompt.total - usage.read - usage.creation
            if len(self._entries) > 50_000:
                self._prune(now)
        return usage, written

    def publish(self, entries: list[CacheEntry]) -> None:
        """The writing response has started: its entries become visible, their TTL starts."""
        with self._lock:
            now = self.clock()
            for entry in entries:
                entry.visible = True
                entry.expires_at = max(entry.expires_at, now + entry.ttl)

    def _prune(self, now: float) -> None:
        for key in [k for k, e in self._entries.items() if e.visible and now >= e.expires_at]:
            del self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            now = self.clock()
            return sum(1 for e in self._entries.values() if e.visible and now < e.expires_at)
