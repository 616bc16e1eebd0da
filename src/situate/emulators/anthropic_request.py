"""An Anthropic API request as the emulator reads it: its authentication and version
(:func:`authenticate`), its JSON body, the prompt laid out as the prompt cache sees it
(:func:`parse_prompt`: tools -> system blocks -> message blocks, with the cache breakpoints'
keys), and the refusals (:class:`APIFailure`) with Anthropic's error body.

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
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import uuid
from dataclasses import dataclass, field

from situate.emulators.textmodel import approx_tokens
from situate.emulators.wire import Request, Response, json_response

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

# the error kinds the server and the fault injection name -> Anthropic's error types
ERROR_TYPES = {
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


def invalid(message: str) -> APIFailure:
    """A 400 ``invalid_request_error`` saying ``message``."""
    return APIFailure(400, "invalid_request_error", message)


def new_id(prefix: str) -> str:
    """A fresh id as Anthropic writes them (``msg_...``, ``req_...``, ``msgbatch_...``)."""
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def error_object(message: str, kind: str) -> dict:
    """An error in Anthropic's shape; ``kind`` is the server's name or Anthropic's type."""
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(kind, kind), "message": message},
        "request_id": new_id("req"),
    }


def ok(obj, status: int = 200) -> Response:
    """A JSON answer with its ``request-id`` header."""
    return json_response(status, obj, {"request-id": new_id("req")})


def authenticate(req: Request, api_keys: set[str]) -> tuple[str, str]:
    """(key, anthropic-version) of an authenticated request, else raises ``APIFailure``."""
    key = req.headers.get("x-api-key") or req.bearer_token()
    if not key:
        raise APIFailure(401, "authentication_error", "x-api-key header is required")
    if key not in api_keys:
        raise APIFailure(401, "authentication_error", "invalid x-api-key")
    version = req.headers.get("anthropic-version")
    if not version:
        raise invalid("anthropic-version: header is required")
    return key, version


def request_body(req: Request):
    """The request's JSON body, else raises ``APIFailure``."""
    try:
        return req.json()
    except (ValueError, UnicodeDecodeError):
        raise invalid("There was an error parsing the body of your request as JSON") from None


def organisation_salt(key: str) -> str:
    """Caches are per organisation; here, per API key."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


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
            raise invalid(f"{where}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise invalid(f"{where}: Input should be a valid list")
    blocks = []
    for i, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise invalid(f"{where}.{i}: each content block needs a type")
        if block["type"] == "text":
            if not isinstance(block.get("text"), str):
                raise invalid(f"{where}.{i}.text: Field required")
            if not block["text"]:
                raise invalid(f"{where}.{i}: text content blocks must be non-empty")
        blocks.append(block)
    return blocks


def _cache_ttl(control, where: str) -> str:
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise invalid(f"{where}.cache_control.type: Input should be 'ephemeral'")
    ttl = control.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise invalid(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
    return ttl


def _text_of(blocks: list[dict]) -> str:
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text")


def parse_prompt(
    body, version: str, key_salt: str, *, count_only: bool = False, no_prefill=NO_PREFILL_MODELS
) -> Prompt:
    """Validate a Messages API body and lay its prompt out as the cache sees it."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("model: Field required")
    if not model.startswith("claude-"):
        raise APIFailure(404, "not_found_error", f"model: {model}")
    max_tokens = 0
    if not count_only:
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            raise invalid("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            raise invalid("max_tokens: Input should be a non-negative integer")
        if "stream" in body and not isinstance(body["stream"], bool):
            raise invalid("stream: Input should be a valid boolean")
    for name in SAMPLING_PARAMS:
        if name in body:
            if version >= SAMPLING_REMOVED_IN:
                raise invalid(f"{name}: Extra inputs are not permitted")
            value = body[name]
            if name == "temperature" and not (isinstance(value, int | float) and 0 <= value <= 1):
                raise invalid("temperature: Input should be between 0 and 1")
    thinking = body.get("thinking")
    if thinking is not None:
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if kind not in ("enabled", "disabled", "adaptive"):
            raise invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                raise invalid("thinking.enabled.budget_tokens: Input should be >= 1024")
            if not count_only and budget >= max_tokens:
                raise invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
    stops = body.get("stop_sequences") or []
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise invalid("stop_sequences: Input should be a list of non-empty strings")

    # the prompt, in cache order: (section, block)
    seq: list[tuple[str, dict]] = []
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise invalid("tools: Input should be a valid list")
    for tool in tools:
        if not isinstance(tool, dict) or not tool.get("name"):
            raise invalid("tools: each tool needs a name")
        seq.append(("tools", tool))
    system = body.get("system")
    if system is not None and system != "":
        for block in _text_blocks(system, "system"):
            if block.get("type") != "text":
                raise invalid("system: only text blocks are allowed")
            seq.append(("system", block))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise invalid("messages: at least one message is required")
    thinking_salt = json.dumps(thinking, sort_keys=True)
    last_user: list[dict] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        blocks = _text_blocks(message.get("content"), f"messages.{i}.content")
        if message["role"] == "user":
            last_user = blocks
        seq.extend((f"messages:{message['role']}:{thinking_salt}", b) for b in blocks)
    prefill = ""
    if messages[-1]["role"] == "assistant":
        prefill = _text_of(_text_blocks(messages[-1]["content"], "messages"))
        if any(fnmatch.fnmatchcase(model, p) for p in no_prefill):
            raise invalid(
                "This model does not support assistant message prefill. "
                "The conversation must end with a user message."
            )
        if prefill != prefill.rstrip():
            raise invalid("messages: final assistant content cannot end with trailing whitespace")
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
        raise invalid(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(breakpoints)}."
        )
    seen_5m = False
    for bp in breakpoints:
        if bp.ttl == "1h" and seen_5m:
            raise invalid("cache_control: a ttl of '1h' may not come after a ttl of '5m'")
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
