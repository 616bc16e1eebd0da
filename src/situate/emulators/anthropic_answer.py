"""The answer of the Anthropic emulator to a prompt, as the Messages API writes it: the message
object (:func:`answer_message`: its text, stop reason and ``usage``) and, streamed, its
server-sent events (:func:`message_events`).

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
4.6 on refuse prefills: :data:`~situate.emulators.anthropic_request.NO_PREFILL_MODELS`).
``max_tokens: 0`` only warms the cache.

Streaming
---------
``stream: true`` answers server-sent events as the real API does: ``message_start`` (its
``usage`` carries ``input_tokens`` and the cache fields, ``output_tokens`` 1),
``content_block_start``, ``ping``, ``content_block_delta`` (``text_delta``, one per token group,
paced by the throughput), ``content_block_stop``, ``message_delta`` (``stop_reason`` and the
final cumulative ``usage``) and ``message_stop``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

from situate.emulators.anthropic_cache import CacheUsage
from situate.emulators.anthropic_request import Prompt, new_id
from situate.emulators.textmodel import (
    approx_tokens,
    grading_answer,
    question_answer,
    situating_answer,
    truncate_tokens,
)


def answer_message(prompt: Prompt, usage: CacheUsage, tier: str) -> dict:
    """The message object answering ``prompt`` (see the module docstring), with its ``usage``."""
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
        "id": new_id("msg"),
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


def message_events(
    message: dict,
    first_token: Callable[[], None],
    started: Callable[[], None],
    generate: Callable[[int], None],
) -> Iterator[bytes]:
    """The server-sent events of a streamed ``message`` (see the module docstring).

    ``first_token()`` runs before ``message_start`` is sent (the time to first token; the cache
    entries the request writes are published there), ``started()`` once it is flushed (where a
    test may hold the stream), ``generate(tokens)`` before each delta (the time they take)."""

    def event(kind: str, data: dict) -> bytes:
        return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()

    first_token()  # before message_start: the client may rely on it
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield event("message_start", {"type": "message_start", "message": start})
    started()  # message_start is written and flushed by now
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
        generate(approx_tokens(piece) + 1)
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
