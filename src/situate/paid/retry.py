"""Retries with exponential backoff that honour ``retry-after``: the one path of every paid call.

Every paid call (an LLM completion, an embedding batch, a rerank request) is retried by
:func:`with_retries`: the LLM options call it themselves, embedders and rerankers through
:func:`send` (:class:`situate.paid.adapter.ApiAdapter`).

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
from dataclasses import dataclass
from typing import Protocol, TypeVar

from situate.paid.llm import LLMCallFailed
from situate.paid.ratelimit import AMBIGUOUS, FAILED, OK, RATE_LIMITED
from situate.providers import RATE_LIMIT_STATUS, Retryable

T = TypeVar("T")
log = logging.getLogger(__name__)


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


def with_retries(
    call: Callable[[], T],
    is_retryable: Retryable,
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


@dataclass(frozen=True)
class Retries:
    """How often and how long a paid call is retried (``max_retries`` after the first try; the
    defaults wait at most 0.5 s before the first retry and at most 8 s ever, as the SDKs do)."""

    max_retries: int
    backoff_base: float = 0.5
    backoff_max: float = 8.0


def send(call: Callable[[], T], retryable: Retryable, retries: Retries, gate=None) -> T:
    """``call()`` through :func:`with_retries` with ``gate`` on every attempt.

    A call still failing after the retries raises the vendor's last error (its module turns it
    into one line); an error not worth retrying is raised at once.
    """
    with attempt_gate(gate):
        try:
            result, _ = with_retries(
                call, retryable, retries.max_retries, retries.backoff_base, retries.backoff_max
            )
        except LLMCallFailed as failed:
            raise failed.__cause__ from None
    return result
