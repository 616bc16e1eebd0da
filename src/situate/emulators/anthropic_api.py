"""An Anthropic API emulator: the Messages API with prompt caching, token counting and Message
Batches, as the ``anthropic`` SDK (2.x) sends and parses them.

Point the SDK at it with ``anthropic.Anthropic(api_key=KEY, base_url=emulator.url)``.

Authentication and versions
---------------------------
The key comes in ``x-api-key`` or, as SDK 2.x sends it, ``Authorization: Bearer`` (``x-api-key``
wins when both are there); a missing or unknown key is a 401 ``authentication_error``. The
``anthropic-version`` header is required (400 without it). From version ``2026-10-21`` (what
SDK 2.x sends) the sampling parameters ``temperature``, ``top_p`` and ``top_k`` are refused with
400 ``"<name>: Extra inputs are not permitted"``, whatever their value; older versions accept them.

Errors have Anthropic's body ``{"type": "error", "error": {"type", "message"}, "request_id"}``
(``invalid_request_error``, ``authentication_error``, ``not_found_error``, ``rate_limit_error``,
``api_error``, ``overloaded_error`` with status 529) and a ``request-id`` header.

Tokens
------
A block's tokens are :func:`~situate.emulators.textmodel.approx_tokens` of its text (of its JSON
for non-text blocks and tools); a prompt's tokens are the sum over its blocks, with no
formatting overhead. ``count_tokens`` and ``usage`` count the same way, so for any request
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` equals its count.

Prompt caching (as documented by Anthropic)
-------------------------------------------
The prompt is the sequence tools -> system blocks -> message blocks. Every block with
``cache_control`` (``{"type": "ephemeral", "ttl": "5m" | "1h"}``; at most 4, and no ``1h`` after a
``5m``) is a breakpoint; a top-level ``cache_control`` marks the last block. The cache key of a
breakpoint hashes the API key, the model and every block up to and including it (message blocks
also hash the ``thinking`` setting, whose changes invalidate message caches). On a request:

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

Answers
-------
Deterministic: ``"This chunk is from <title>; it covers <terms>."`` where the title is the first
line of the first cached block (its ``<document>`` content when tagged) and the terms the most
distinctive words of the chunk (the last tagged block of the last user message, ``<chunk>`` or
``<excerpt>``, else that message's text), cut at ``max_tokens`` (``stop_reason: "max_tokens"``)
or at a ``stop_sequences`` entry. A judge prompt (``<question>`` and ``<passage>`` blocks) is
answered with a grade 0-3 from word overlap (:func:`~situate.emulators.textmodel.grading_answer`),
a question generator's prompt (a ``<passage>`` and a JSON ``quote`` asked for) with its JSON
object (:func:`~situate.emulators.textmodel.question_answer`).
A final assistant message is a prefill: the answer continues it
and excludes it, as the real API does (a prefill may not end in whitespace; models from Claude
4.6 on refuse prefills: :data:`NO_PREFILL_MODELS`). ``max_tokens: 0`` only warms the cache.

Timing and streaming
--------------------
``ttft`` is the time to first token; with ``output_tokens_per_second`` the answer's tokens then
take ``output_tokens / output_tokens_per_second`` more seconds (None: at once). ``stream: true``
answers server-sent events as the real API does: ``message_start`` (its ``usage`` carries
``input_tokens`` and the cache fields, ``output_tokens`` 1), ``content_block_start``, ``ping``,
``content_block_delta`` (``text_delta``, one per token group, paced by the throughput),
``content_block_stop``, ``message_delta`` (``stop_reason`` and the final cumulative ``usage``)
and ``message_stop``; the cache entries a request writes are published right before its
``message_start`` is sent, so a client that waits for that event knows the entry exists. Tests
can keep streamed answers open between their ``message_start`` and the rest
(:meth:`AnthropicEmulator.hold_streams`): responses that have started and not ended, on events
rather than on a throughput the machine's load could outrun.

Rate limits
-----------
``rpm`` and ``tpm`` (None: none) are the organisation's ceilings per minute of ``clock``:
requests, and input tokens (the whole prompt) plus ``max_tokens``. As Anthropic documents, they
are token buckets: each holds up to a minute's worth and is refilled continuously (``rpm / 60``
a second), not reset at fixed intervals. A request the buckets cannot cover is answered 429
``rate_limit_error`` with ``retry-after`` (whole seconds until they would), as the real API
does; it takes nothing from them.

Message Batches
---------------
``POST /v1/messages/batches`` -> a ``message_batch`` object ``in_progress``; a background thread
waits ``batch_delay`` seconds, then runs the requests one after another through the same cache
(entries published at once; ``usage.service_tier`` is ``"batch"``) and ends the batch with a
``results_url`` (``GET .../results``: JSON Lines, one ``{custom_id, result}`` per request, in an
order other than the requests'). A request whose params are invalid is ``errored``.
``GET``/``DELETE /v1/messages/batches/{id}``, ``POST .../cancel`` and ``GET /v1/messages/batches``
(list) are served too.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import math
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from situate.emulators.server import (
    HANG_SECONDS,
    EmulatorServer,
    Faults,
    Handler,
    Request,
    Response,
    json_response,
)
from situate.emulators.textmodel import (
    approx_tokens,
    grading_answer,
    question_answer,
    situating_answer,
    truncate_tokens,
)

DEFAULT_MIN_CACHEABLE_TOKENS = 1024  # a model the price book has no minimum for
# models that refuse an assistant prefill (Claude 4.6 and later; unknown models accept it)
NO_PREFILL_MODELS = (
    "claude-opus-4-6*",
    "claude-sonnet-4-6*",
    "claude-opus-4-7*",
    "claude-opus-4-8*",
    "claude-sonnet-5*",
    "claude-opus-5*",
    "claude-fable-*",
    "claude-mythos-*",
)
SAMPLING_PARAMS = ("temperature", "top_p", "top_k")
SAMPLING_REMOVED_IN = "2026-10-21"  # anthropic-version from which sampling params are refused
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
MAX_BREAKPOINTS = 4
BATCH_LIFETIME = timedelta(hours=24)
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_ERROR_TYPES = {
    "rate_limit": "rate_limit_error",
    "overloaded": "overloaded_error",
    "server_error": "api_error",
    "not_found": "not_found_error",
    "method_not_allowed": "not_found_error",
    "invalid_json": "invalid_request_error",
}


class APIFailure(Exception):
    """A request the API refuses: status, Anthropic error type and message."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _invalid(message: str) -> APIFailure:
    return APIFailure(400, "invalid_request_error", message)


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


def _now_iso(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


# -- the prompt -----------------------------------------------------------------------------


@dataclass
class Breakpoint:
    end: int  # tokens of the prefix up to and including the block
    key: str
    ttl: str


@dataclass
class Prompt:
    """A request as the cache and the answer see it."""

    model: str
    max_tokens: int
    total: int  # input tokens of the whole prompt
    breakpoints: list[Breakpoint]
    document: str  # the block the answer names (first cached text block)
    request: str  # the block holding the chunk (last user message)
    prefill: str
    stop_sequences: list[str] = field(default_factory=list)


def _canonical(block: dict) -> str:
    return json.dumps(
        {k: v for k, v in block.items() if k != "cache_control"},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _block_tokens(block: dict) -> int:
    if block.get("type") == "text":
        return approx_tokens(block["text"])
    return approx_tokens(_canonical(block))


def _text_blocks(content, where: str) -> list[dict]:
    """``content`` (a string or a list of blocks) as a list of validated blocks."""
    if isinstance(content, str):
        if not content:
            raise _invalid(f"{where}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise _invalid(f"{where}: Input should be a valid list")
    blocks = []
    for i, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _invalid(f"{where}.{i}: each content block needs a type")
        if block["type"] == "text":
            if not isinstance(block.get("text"), str):
                raise _invalid(f"{where}.{i}.text: Field required")
            if not block["text"]:
                raise _invalid(f"{where}.{i}: text content blocks must be non-empty")
        blocks.append(block)
    return blocks


def _cache_ttl(control, where: str) -> str:
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise _invalid(f"{where}.cache_control.type: Input should be 'ephemeral'")
    ttl = control.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise _invalid(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
    return ttl


def _text_of(blocks: list[dict]) -> str:
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text")


def parse_prompt(
    body, version: str, key_salt: str, *, count_only: bool = False, no_prefill=NO_PREFILL_MODELS
) -> Prompt:
    """Validate a Messages API body and lay its prompt out as the cache sees it."""
    if not isinstance(body, dict):
        raise _invalid("The request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model: Field required")
    if not model.startswith("claude-"):
        raise APIFailure(404, "not_found_error", f"model: {model}")
    max_tokens = 0
    if not count_only:
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            raise _invalid("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            raise _invalid("max_tokens: Input should be a non-negative integer")
        if "stream" in body and not isinstance(body["stream"], bool):
            raise _invalid("stream: Input should be a valid boolean")
    for name in SAMPLING_PARAMS:
        if name in body:
            if version >= SAMPLING_REMOVED_IN:
                raise _invalid(f"{name}: Extra inputs are not permitted")
            value = body[name]
            if name == "temperature" and not (isinstance(value, int | float) and 0 <= value <= 1):
                raise _invalid("temperature: Input should be between 0 and 1")
    thinking = body.get("thinking")
    if thinking is not None:
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if kind not in ("enabled", "disabled", "adaptive"):
            raise _invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                raise _invalid("thinking.enabled.budget_tokens: Input should be >= 1024")
            if not count_only and budget >= max_tokens:
                raise _invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
    stops = body.get("stop_sequences") or []
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise _invalid("stop_sequences: Input should be a list of non-empty strings")

    # the prompt, in cache order: (section, block)
    seq: list[tuple[str, dict]] = []
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise _invalid("tools: Input should be a valid list")
    for tool in tools:
        if not isinstance(tool, dict) or not tool.get("name"):
            raise _invalid("tools: each tool needs a name")
        seq.append(("tools", tool))
    system = body.get("system")
    if system is not None and system != "":
        for block in _text_blocks(system, "system"):
            if block.get("type") != "text":
                raise _invalid("system: only text blocks are allowed")
            seq.append(("system", block))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages: at least one message is required")
    thinking_salt = json.dumps(thinking, sort_keys=True)
    last_user: list[dict] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise _invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        blocks = _text_blocks(message.get("content"), f"messages.{i}.content")
        if message["role"] == "user":
            last_user = blocks
        seq.extend((f"messages:{message['role']}:{thinking_salt}", b) for b in blocks)
    prefill = ""
    if messages[-1]["role"] == "assistant":
        prefill = _text_of(_text_blocks(messages[-1]["content"], "messages"))
        if any(fnmatch.fnmatchcase(model, p) for p in no_prefill):
            raise _invalid(
                "This model does not support assistant message prefill. "
                "The conversation must end with a user message."
            )
        if prefill != prefill.rstrip():
            raise _invalid("messages: final assistant content cannot end with trailing whitespace")
    if body.get("cache_control") is not None and seq:
        _cache_ttl(body["cache_control"], "cache_control")
        section, last = seq[-1]
        if last.get("cache_control") is None:
            seq[-1] = (section, {**last, "cache_control": body["cache_control"]})

    h = hashlib.sha256(f"{key_salt}\x00{model}\x00".encode())
    total, breakpoints, document = 0, [], None
    for section, block in seq:
        total += _block_tokens(block)
        h.update(f"{section}\x00{_canonical(block)}\x00".encode())
        if block.get("cache_control") is not None:
            ttl = _cache_ttl(block["cache_control"], section.split(":")[0])
            breakpoints.append(Breakpoint(total, h.copy().hexdigest(), ttl))
            if document is None and block.get("type") == "text":
                document = block["text"]
    if len(breakpoints) > MAX_BREAKPOINTS:
        raise _invalid(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(breakpoints)}."
        )
    seen_5m = False
    for bp in breakpoints:
        if bp.ttl == "1h" and seen_5m:
            raise _invalid("cache_control: a ttl of '1h' may not come after a ttl of '5m'")
        seen_5m = seen_5m or bp.ttl == "5m"
    rest = [b for b in last_user if b.get("text") != document] or last_user
    return Prompt(
        model=model,
        max_tokens=max_tokens,
        total=total,
        breakpoints=breakpoints,
        document=document if document is not None else _text_of(last_user),
        request=_text_of(rest),
        prefill=prefill,
        stop_sequences=stops,
    )


# -- the cache ------------------------------------------------------------------------------


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


# -- batches --------------------------------------------------------------------------------


@dataclass
class Batch:
    id: str
    requests: list[dict]
    version: str
    key_salt: str
    created_at: datetime
    status: str = "in_progress"
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    counts: dict[str, int] = field(default_factory=dict)
    results: list[dict] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class AnthropicEmulator(EmulatorServer):
    """Serves the Messages API (with prompt caching), token counting and Message Batches.

    Parameters
    ----------
    api_key : str or list of str
        Keys that authenticate.
    faults : Faults or None
        Random fault injection (see :mod:`situate.emulators.server`).
    ttft : float
        Seconds before a response starts (its cache entries become visible then).
    output_tokens_per_second : float or None
        Generation speed after the first token (None: the whole answer at once).
    rpm, tpm : int or None
        Rate limits per 60 seconds of ``clock`` (requests; input tokens plus ``max_tokens``).
    clock : callable
        Seconds, for cache expiry (``time.monotonic``; tests pass a fake to advance time).
    min_cacheable_tokens : dict or None
        Overrides of the price book's minimums (model name or pattern -> tokens).
    batch_delay : float
        Seconds a batch stays ``in_progress`` before its requests run.
    """

    name = "anthropic-emulator"

    def __init__(
        self,
        api_key: str | list[str] = "sk-ant-emulator",
        faults: Faults | None = None,
        ttft: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        min_cacheable_tokens: dict[str, int] | None = None,
        batch_delay: float = 0.0,
        output_tokens_per_second: float | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        super().__init__(faults, host, port)
        if output_tokens_per_second is not None and output_tokens_per_second <= 0:
            raise ValueError("output_tokens_per_second must be > 0 or None")
        self.api_keys = {api_key} if isinstance(api_key, str) else set(api_key)
        self.ttft = ttft
        self.output_tokens_per_second = output_tokens_per_second
        self.rpm, self.tpm = rpm, tpm
        self.clock = clock
        # the rate buckets: (requests, tokens) left and when they were last refilled
        self._bucket = [float(rpm or 0), float(tpm or 0), clock()]
        self.cache = PromptCache(clock)
        self.min_overrides = dict(min_cacheable_tokens or {})
        self.batch_delay = batch_delay
        self.batches: dict[str, Batch] = {}
        self._streams_held = False  # see hold_streams()
        self._streams_paused = 0
        for method, path, handler in (
            ("POST", "/v1/messages", self._messages),
            ("POST", "/v1/messages/count_tokens", self._count_tokens),
            ("POST", "/v1/messages/batches", self._batch_create),
            ("GET", "/v1/messages/batches", self._batch_list),
            ("GET", "/v1/messages/batches/{batch_id}", self._batch_retrieve),
            ("DELETE", "/v1/messages/batches/{batch_id}", self._batch_delete),
            ("POST", "/v1/messages/batches/{batch_id}/cancel", self._batch_cancel),
            ("GET", "/v1/messages/batches/{batch_id}/results", self._batch_results),
        ):
            self.route(method, path, self._answering(handler))

    def min_cacheable_tokens(self, model: str) -> int:
        return min_cacheable_tokens(model, self.min_overrides)

    # errors in Anthropic's shape -----------------------------------------------------------
    def error_body(self, status: int, message: str, kind: str) -> dict:
        return {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(kind, kind), "message": message},
            "request_id": _new_id("req"),
        }

    def error(
        self, status: int, message: str, kind: str, headers: dict[str, str] | None = None
    ) -> Response:
        body = self.error_body(status, message, kind)
        return json_response(status, body, {"request-id": body["request_id"], **(headers or {})})

    def _fail(self, failure: APIFailure) -> Response:
        return self.error(failure.status, failure.message, failure.kind)

    def _answering(self, handler: Handler) -> Handler:
        """``handler`` with a refusal it raises (:class:`APIFailure`) answered as the API
        words it."""

        def answer(req: Request) -> Response:
            try:
                return handler(req)
            except APIFailure as failure:
                return self._fail(failure)

        return answer

    @staticmethod
    def _ok(obj, status: int = 200) -> Response:
        return json_response(status, obj, {"request-id": _new_id("req")})

    def _begin(self, req: Request) -> tuple[str, str]:
        """(key, anthropic-version) of an authenticated request, else raises ``APIFailure``."""
        key = req.headers.get("x-api-key") or req.bearer_token()
        if not key:
            raise APIFailure(401, "authentication_error", "x-api-key header is required")
        if key not in self.api_keys:
            raise APIFailure(401, "authentication_error", "invalid x-api-key")
        version = req.headers.get("anthropic-version")
        if not version:
            raise _invalid("anthropic-version: header is required")
        return key, version

    @staticmethod
    def _body(req: Request):
        try:
            return req.json()
        except (ValueError, UnicodeDecodeError):
            raise _invalid("There was an error parsing the body of your request as JSON") from None

    @staticmethod
    def _salt(key: str) -> str:
        """Caches are per organisation; here, per API key."""
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    # POST /v1/messages ---------------------------------------------------------------------
    def _messages(self, req: Request) -> Response:
        key, version = self._begin(req)
        body = self._body(req)
        prompt = parse_prompt(body, version, self._salt(key))
        wait = self._rate_wait(prompt.total + prompt.max_tokens)
        if wait is not None:
            return self.error(
                429,
                "This request would exceed the rate limit for your organization",
                "rate_limit",
                {"retry-after": str(wait)},
            )
        usage, written = self.cache.account(prompt, self.min_cacheable_tokens(prompt.model))
        message = self._message(prompt, usage, "standard")
        if body.get("stream"):
            return Response(
                200,
                headers={"request-id": _new_id("req")},
                content_type="text/event-stream",
                stream=self._events(message, written),
                usage=message["usage"],
            )
        self.first_token(self.ttft)  # the entries exist from here on
        self.cache.publish(written)
        self._generate(message["usage"]["output_tokens"])
        return self._ok(message)

    def _rate_wait(self, tokens: int) -> int | None:
        """None if the rate buckets cover a request of ``tokens`` now (and take it from them),
        else the whole seconds until they would."""
        if self.rpm is None and self.tpm is None:
            return None
        with self._lock:
            now = self.clock()
            last = self._bucket[2]
            limits = [(0, self.rpm, 1), (1, self.tpm, tokens)]
            wait = 0.0
            for i, limit, need in limits:
                if limit is None:
                    continue
                left = min(float(limit), self._bucket[i] + (now - last) * limit / 60.0)
                self._bucket[i] = left
                if left < need:
                    wait = max(wait, (need - left) * 60.0 / limit)
            self._bucket[2] = now
            if wait > 0:
                return max(1, math.ceil(wait - 1e-9))  # not 11 s for 10 s and a rounding error
            for i, limit, need in limits:
                if limit is not None:
                    self._bucket[i] -= need
            return None

    # holding streams (tests) ---------------------------------------------------------------
    def hold_streams(self) -> None:
        """Keep every streamed answer open after its ``message_start`` (sent: its cache entries
        exist, the client knows it started) until :meth:`release_streams`."""
        with self._lock:
            self._streams_held = True

    def release_streams(self) -> None:
        """Let the held streams (and all later ones) go on to their end."""
        with self._lock:
            self._streams_held = False
            self._changed.notify_all()

    def wait_streams_held(self, n: int, timeout: float = HANG_SECONDS) -> bool:
        """Block until ``n`` streams are held after their start; False if ``timeout`` passed
        first (a hang guard)."""
        with self._lock:
            return self._changed.wait_for(lambda: self._streams_paused >= n, timeout)

    def _stream_held(self) -> None:
        """Where a streamed answer waits while :meth:`hold_streams` is on."""
        with self._lock:
            if not self._streams_held:
                return
            self._streams_paused += 1
            self._changed.notify_all()
            self._changed.wait_for(lambda: not self._streams_held)
            self._streams_paused -= 1

    def _generate(self, output_tokens: int) -> None:
        """The time the answer's tokens take after the first one."""
        if self.output_tokens_per_second and output_tokens > 1:
            time.sleep((output_tokens - 1) / self.output_tokens_per_second)

    def _events(self, message: dict, written: list[CacheEntry]):
        """The server-sent events of a streamed ``message`` (see the module docstring)."""

        def event(kind: str, data: dict) -> bytes:
            return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

        self.first_token(self.ttft)
        self.cache.publish(written)  # before message_start: the client may rely on it
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
        start["usage"] = {**usage, "output_tokens": 1}
        yield event("message_start", {"type": "message_start", "message": start})
        self._stream_held()  # message_start is written and flushed by now
        text = message["content"][0]["text"] if message["content"] else ""
        yield event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        yield event("ping", {"type": "ping"})
        pieces = re.findall(r"\S+\s*|\s+", text)
        step = max(1, len(pieces) // 8)  # a few deltas, paced by the throughput
        for i in range(0, len(pieces), step):
            piece = "".join(pieces[i : i + step])
            self._generate(approx_tokens(piece) + 1)
            yield event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        yield event("content_block_stop", {"type": "content_block_stop", "index": 0})
        final = {
            k: usage[k]
            for k in (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            )
        }
        yield event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": message["stop_reason"],
                    "stop_sequence": message["stop_sequence"],
                },
                "usage": final,
            },
        )
        yield event("message_stop", {"type": "message_stop"})

    def _message(self, prompt: Prompt, usage: CacheUsage, tier: str) -> dict:
        text = grading_answer(prompt.request)  # a judge prompt: the grade
        if text is None:  # a question generator's prompt: its JSON
            text = question_answer(prompt.document, prompt.request)
        if text is None:
            text = situating_answer(prompt.document, prompt.request, prompt.prefill)
        stop_reason, stop_sequence = "end_turn", None
        for s in prompt.stop_sequences:
            at = text.find(s)
            if at >= 0:
                text, stop_reason, stop_sequence = text[:at], "stop_sequence", s
        cut = truncate_tokens(text, prompt.max_tokens) if prompt.max_tokens > 0 else ""
        if cut != text:
            text, stop_reason, stop_sequence = cut, "max_tokens", None
        return {
            "id": _new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": prompt.model,
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": {
                "input_tokens": usage.uncached,
                "cache_creation_input_tokens": usage.creation,
                "cache_read_input_tokens": usage.read,
                "output_tokens": approx_tokens(text),
                "cache_creation": {
                    "ephemeral_5m_input_tokens": usage.written["5m"],
                    "ephemeral_1h_input_tokens": usage.written["1h"],
                },
                "service_tier": tier,
            },
        }

    # POST /v1/messages/count_tokens --------------------------------------------------------
    def _count_tokens(self, req: Request) -> Response:
        key, version = self._begin(req)
        prompt = parse_prompt(self._body(req), version, self._salt(key), count_only=True)
        return self._ok({"input_tokens": prompt.total})

    # Message Batches -----------------------------------------------------------------------
    def _batch_object(self, batch: Batch) -> dict:
        n = len(batch.requests)
        counts = batch.counts or {
            "processing": n,
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        }
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "ended_at": _now_iso(batch.ended_at) if batch.ended_at else None,
            "created_at": _now_iso(batch.created_at),
            "expires_at": _now_iso(batch.created_at + BATCH_LIFETIME),
            "archived_at": None,
            "cancel_initiated_at": (
                _now_iso(batch.cancel_initiated_at) if batch.cancel_initiated_at else None
            ),
            "results_url": f"{self.url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _batch_create(self, req: Request) -> Response:
        key, version = self._begin(req)
        body = self._body(req)
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise _invalid("requests: List should have at least 1 item")
        if len(requests) > 100_000:
            raise _invalid("requests: List should have at most 100000 items")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            cid = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(cid, str) or not _CUSTOM_ID.match(cid):
                raise _invalid(
                    f"requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )
            if cid in seen:
                raise _invalid(f"Duplicate custom_id {cid!r}: custom_id must be unique")
            seen.add(cid)
            if not isinstance(item.get("params"), dict):
                raise _invalid(f"requests.{i}.params: Field required")
        batch = Batch(_new_id("msgbatch"), requests, version, self._salt(key), datetime.now(UTC))
        with self._lock:
            self.batches[batch.id] = batch
        threading.Thread(target=self._run_batch, args=(batch,), daemon=True).start()
        return self._ok(self._batch_object(batch))

    def _run_batch(self, batch: Batch) -> None:
        if self.batch_delay > 0:
            time.sleep(self.batch_delay)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        results = []
        for item in batch.requests:
            if batch.status == "canceling":
                result: dict = {"type": "canceled"}
            else:
                try:
                    prompt = parse_prompt(item["params"], batch.version, batch.key_salt)
                    usage, written = self.cache.account(
                        prompt, self.min_cacheable_tokens(prompt.model)
                    )
                    self.cache.publish(written)
                    result = {"type": "succeeded", "message": self._message(prompt, usage, "batch")}
                except APIFailure as failure:
                    result = {
                        "type": "errored",
                        "error": {
                            "type": "error",
                            "error": {"type": failure.kind, "message": failure.message},
                            "request_id": None,
                        },
                    }
            counts[result["type"]] += 1
            results.append({"custom_id": item["custom_id"], "result": result})
        # results come in an order of their own, as the real API warns
        results.sort(key=lambda r: hashlib.sha256(r["custom_id"].encode()).hexdigest())
        with self._lock:
            batch.results, batch.counts = results, counts
            batch.status, batch.ended_at = "ended", datetime.now(UTC)
        batch.done.set()

    def _batch(self, req: Request) -> Batch:
        self._begin(req)
        batch = self.batches.get(req.params["batch_id"])
        if batch is None:
            raise APIFailure(
                404, "not_found_error", f"message_batch: {req.params['batch_id']} not found"
            )
        return batch

    def _batch_retrieve(self, req: Request) -> Response:
        batch = self._batch(req)
        with self._lock:
            return self._ok(self._batch_object(batch))

    def _batch_cancel(self, req: Request) -> Response:
        batch = self._batch(req)
        with self._lock:
            if batch.status == "in_progress":
                batch.status = "canceling"
                batch.cancel_initiated_at = datetime.now(UTC)
            return self._ok(self._batch_object(batch))

    def _batch_delete(self, req: Request) -> Response:
        batch = self._batch(req)
        if batch.status != "ended":
            raise _invalid(f"Batch {batch.id} cannot be deleted while processing; cancel it first")
        with self._lock:
            self.batches.pop(batch.id, None)
        return self._ok({"id": batch.id, "type": "message_batch_deleted"})

    def _batch_list(self, req: Request) -> Response:
        self._begin(req)
        try:
            limit = max(1, min(1000, int((req.query.get("limit") or ["20"])[0])))
        except ValueError:
            return self._fail(_invalid("limit: Input should be a valid integer"))
        with self._lock:
            data = [self._batch_object(b) for b in reversed(list(self.batches.values()))][:limit]
        return self._ok(
            {
                "data": data,
                "has_more": len(self.batches) > limit,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    def _batch_results(self, req: Request) -> Response:
        batch = self._batch(req)
        if batch.status != "ended":
            raise _invalid(f"Batch {batch.id} has not finished processing; no results yet")
        lines = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in batch.results)
        return Response(
            200, lines.encode("utf-8"), {"request-id": _new_id("req")}, "application/x-jsonl"
        )

    def wait_for_batches(self, timeout: float = HANG_SECONDS) -> bool:
        """Block until every batch has ended; False if ``timeout`` passed first (a hang guard,
        not a speed: tests)."""
        deadline = time.monotonic() + timeout
        for batch in list(self.batches.values()):
            if not batch.done.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True
