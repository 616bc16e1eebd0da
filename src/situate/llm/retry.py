"""Retries with exponential backoff that honour ``retry-after``, shared by the API providers.

Every attempt (the first try and each retry) can pass through a *gate*: an object with
``before()`` (called before the attempt is sent; it may block, for rate limits, or raise, to stop
the call) and ``after(outcome)`` (called once the attempt ended). The caller that wants one (the
LLM context, for AIMD concurrency, a requests/tokens-per-minute ceiling and the budget) installs
it for the current thread with :func:`attempt_gate`; providers need not know. Outcomes:

``ok``            the attempt succeeded
``rate_limited``  429 or 529: the server asks the client to slow down
``ambiguous``     no HTTP answer at all (connection reset, timeout): the server may have
                  processed, and billed, the request before the connection dropped
``failed``        any other error (an HTTP error status: nothing was billed)
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

from situate.llm.base import LLMCallFailed
from situate.llm.ratelimit import AMBIGUOUS, FAILED, OK, RATE_LIMITED

T = TypeVar("T")
log = logging.getLogger(__name__)
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
RATE_LIMIT_STATUS = frozenset({429, 529})


class AttemptGate(Protocol):
    def before(self) -> None: ...

    def after(self, outcome: str) -> None: ...


_gate: contextvars.ContextVar[AttemptGate | None] = contextvars.ContextVar(
    "situate_attempt_gate", default=None
)


@contextlib.contextmanager
def attempt_gate(gate: AttemptGate | None) -> Iterator[None]:
    """Route the attempts of :func:`with_retries` in this thread through ``gate``."""
    token = _gate.set(gate)
    try:
        yield
    finally:
        _gate.reset(token)


def outcome_of(error: Exception, retryable: bool) -> str:
    """The gate outcome of a failed attempt (from the SDK error's HTTP status, if it has one)."""
    status = getattr(error, "status_code", None)
    if status in RATE_LIMIT_STATUS:
        return RATE_LIMITED
    if status is None and retryable:
        return AMBIGUOUS
    return FAILED


def retry_after_seconds(headers) -> float | None:
    """Seconds from a ``retry-after-ms`` or ``retry-after`` header (seconds form), if any."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def with_retries(
    call: Callable[[], T],
    is_retryable: Callable[[Exception], tuple[bool, float | None]],
    max_retries: int,
    backoff_base: float,
    backoff_max: float,
    on_retry: Callable[[int, float, Exception], None] | None = None,
) -> tuple[T, int]:
    """Run ``call`` until it succeeds; return its result and the number of retries it took.

    ``is_retryable(error)`` says whether to retry and the server's ``retry-after`` in seconds (or
    None). The wait is the server's ``retry-after`` when given, otherwise
    ``min(backoff_max, backoff_base * 2**attempt)`` with full jitter. After ``max_retries``
    retries the last error is raised as ``LLMCallFailed`` carrying the retry count. Each attempt
    passes through the gate installed by :func:`attempt_gate`, if any.
    """
    gate = _gate.get()
    attempt = 0
    while True:
        if gate is not None:
            gate.before()
        try:
            result = call()
        except Exception as error:  # noqa: BLE001 - the provider decides what is retryable
            try:
                retryable, server_wait = is_retryable(error)
            except BaseException:
                if gate is not None:
                    gate.after(FAILED)
                raise
            if gate is not None:
                gate.after(outcome_of(error, retryable))
            if not retryable:
                raise
            if attempt >= max_retries:
                raise LLMCallFailed(f"{type(error).__name__}: {error}", retries=attempt) from error
            wait = (
                server_wait
                if server_wait is not None
                else random.uniform(0, min(backoff_max, backoff_base * 2**attempt))
            )
            if on_retry:
                on_retry(attempt + 1, wait, error)
            log.debug("retry %d in %.2fs after %s", attempt + 1, wait, error)
            time.sleep(wait)
            attempt += 1
            continue
        if gate is not None:
            gate.after(OK)
        return result, attempt
