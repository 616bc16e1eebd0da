"""Retries with exponential backoff that honour ``retry-after``, shared by the API providers."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from situate.llm.base import LLMCallFailed

T = TypeVar("T")
log = logging.getLogger(__name__)
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


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
    retries the last error is raised as ``LLMCallFailed`` carrying the retry count.
    """
    attempt = 0
    while True:
        try:
            return call(), attempt
        except Exception as error:  # noqa: BLE001 - the provider decides what is retryable
            retryable, server_wait = is_retryable(error)
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
