"""What every stage option over a paid API shares (``embedder=openai_*``, ``embedder=cohere``,
``reranker=cohere``): its fields, the client and gate built on first use, ``warm_up``,
``billed`` and the one way its requests are sent.

A request goes through :func:`situate.paid.retry.send` with the option's retries and an
:class:`ApiGate`: at most ``rpm`` requests and ``tpm`` estimated tokens a minute (the same
:class:`~situate.paid.ratelimit.RateCeiling` as the LLM stages' gate) and the AIMD limit on
attempts in flight. The vendor module (:mod:`situate.providers`) builds the client, says which
errors are retried and words the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

from situate.money.billing import Billed
from situate.paid.ratelimit import RATE_GUARD_SECONDS, RATE_LIMITED, AIMDLimit, RateCeiling
from situate.paid.retry import Retries, send

T = TypeVar("T")


class ApiGate:
    """The gate of an embedder's or reranker's attempts: at most ``rpm`` requests and ``tpm``
    estimated tokens a minute (:class:`RateCeiling`) and the AIMD limit on attempts in flight
    (:class:`AIMDLimit`, from ``concurrency``). ``tokens`` is set before each call."""

    def __init__(
        self,
        option: str,
        rpm: int | None,
        tpm: int | None,
        concurrency: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.ceiling = RateCeiling(
            rpm, tpm, 60.0 + RATE_GUARD_SECONDS, clock=clock, sleep=sleep, option=option
        )
        self.limit = AIMDLimit(concurrency)
        self.tokens = 0
        self.rate_limited = 0
        self._epoch = 0

    def before(self) -> None:
        self.ceiling.acquire(self.tokens)
        self._epoch = self.limit.acquire()

    def after(self, outcome: str) -> None:
        self.limit.release(self._epoch, outcome)
        if outcome == RATE_LIMITED:
            self.rate_limited += 1


class ApiAdapter:
    """The base of a stage option over a paid API.

    Parameters
    ----------
    vendor : module
        The vendor module (``situate.providers.<vendor>``: ``VENDOR``, ``client``,
        ``retryable``).
    group : str
        The config group of the option (``embedder``, ``reranker``), for its errors.
    model, base_url, api_key_env, max_retries, timeout, rpm, tpm
        The option's own parameters: the model (also its price-book id), the API base URL
        (``None``: the SDK's variable, else the public API; part of every cache key through
        ``endpoint``), the variable the key is read from, retries of a failed request, seconds
        per request and the ceilings (``None``: none).

    ``tokens_used`` and ``search_units`` count what the API billed this instance (tokens
    embedded, rerank searches), ``requests`` the requests answered (each by :meth:`_send`).
    """

    def __init__(
        self,
        vendor: ModuleType,
        group: str,
        model: str,
        base_url: str | None,
        api_key_env: str,
        max_retries: int,
        timeout: float,
        rpm: int | None,
        tpm: int | None,
    ):
        RateCeiling(rpm, tpm, option=group)  # validates both
        self.vendor, self.group = vendor, group
        self.provider = vendor.VENDOR.name
        self.name = model
        self.model = model
        self.base_url = base_url
        self.endpoint = vendor.VENDOR.endpoint(base_url)
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.timeout = timeout
        self.rpm, self.tpm = rpm, tpm
        self.tokens_used = 0
        self.search_units = 0.0
        self.requests = 0
        self._client = None
        self._gate: ApiGate | None = None

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def billed(self) -> Billed:
        """What the API billed this instance."""
        return Billed(model=self.model, tokens=self.tokens_used, search_units=self.search_units)

    def _load(self):
        if self._client is None:
            self._client = self.vendor.client(
                f"{self.group}={self.provider}", self.api_key_env, self.base_url, self.timeout
            )
            self._gate = ApiGate(self.group, self.rpm, self.tpm)
        return self._client

    def _send(self, tokens: int, call: Callable[[], T]) -> T:
        """``call()`` (one request of about ``tokens`` estimated tokens) through
        :func:`~situate.paid.retry.send` with this option's retries and gate; a failure after
        the retries raises the vendor's last error."""
        self._gate.tokens = tokens
        answer = send(call, self.vendor.retryable, Retries(self.max_retries), self._gate)
        self.requests += 1
        return answer
