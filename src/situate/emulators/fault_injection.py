"""Fault injection for the emulators: :class:`Faults` (per kind, the probability that a routed
request is answered with that fault instead of the real answer) and :class:`FaultInjector`, which
draws one fault or none per request and words the answer of a fault as the provider does.

One seeded draw per request, so a run is reproducible when requests arrive in the same order;
:meth:`FaultInjector.inject` queues faults for the next requests, whatever the rates. Kinds:

``429``             too many requests, no ``retry-after`` (the client backs off on its own)
``429_retry_after`` too many requests with ``retry-after: <Faults.retry_after>``
``529``             overloaded (Anthropic's status; other providers never send it)
``500``             internal server error
``reset``           the socket is closed with a TCP reset and no response at all
``slow``            the real answer, after sleeping ``Faults.slow_seconds``

and one more kind, never part of :data:`FAULT_KINDS` (so never drawn unless asked for):

``reset_after``     the request is processed (and billed: caches written, usage counted), then
                    the socket is reset before the answer is sent: what a client sees when a
                    connection drops after the server did the work

Unrouted paths (404/405) never get faults (:mod:`situate.emulators.server` draws only for
routed ones).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

from situate.emulators.wire import Response

FAULT_KINDS = ("429", "429_retry_after", "529", "500", "reset", "slow")
EXTRA_FAULT_KINDS = ("reset_after",)  # drawn only when asked for (see the module docstring)
ALL_FAULT_KINDS = FAULT_KINDS + EXTRA_FAULT_KINDS


@dataclass
class Faults:
    """Per-kind fault probabilities (each 0..1, summing to at most 1); all off by default."""

    rate_429: float = 0.0
    rate_429_retry_after: float = 0.0
    rate_529: float = 0.0
    rate_500: float = 0.0
    rate_reset: float = 0.0
    rate_slow: float = 0.0
    rate_reset_after: float = 0.0
    seed: int = 0
    retry_after: str = "1"  # value of the retry-after header (seconds, as the APIs send it)
    slow_seconds: float = 1.0

    def rates(self) -> list[tuple[str, float]]:
        pairs = [
            ("429", self.rate_429),
            ("429_retry_after", self.rate_429_retry_after),
            ("529", self.rate_529),
            ("500", self.rate_500),
            ("reset", self.rate_reset),
            ("slow", self.rate_slow),
            ("reset_after", self.rate_reset_after),  # last: the draws of the others stay put
        ]
        for kind, rate in pairs:
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate {kind}={rate} must be within 0..1")
        if sum(r for _, r in pairs) > 1.0 + 1e-9:
            raise ValueError("fault rates must sum to at most 1")
        return pairs

    @classmethod
    def uniform(cls, rate: float, kinds: tuple[str, ...] = FAULT_KINDS, **kw) -> Faults:
        """``rate`` split evenly over ``kinds``."""
        _check_kinds(kinds)
        each = rate / len(kinds)
        return cls(**{f"rate_{k}": each for k in kinds}, **kw)


def _check_kinds(kinds) -> None:
    unknown = set(kinds) - set(ALL_FAULT_KINDS)
    if unknown:
        raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {ALL_FAULT_KINDS}")


# an emulator's error answer in its provider's shape: (status, message, kind, headers)
ErrorAnswer = Callable[..., Response]


class FaultInjector:
    """The faults of one server: the queued ones first, else one seeded draw at ``faults``'
    rates per routed request."""

    def __init__(self, faults: Faults | None = None):
        self.faults = faults or Faults()
        self.faults.rates()  # validate now
        self._rng = random.Random(self.faults.seed)
        self._queued: list[str] = []
        self._lock = threading.Lock()

    def inject(self, *kinds: str) -> None:
        """Answer the next ``len(kinds)`` routed requests with these faults, in order."""
        _check_kinds(kinds)
        with self._lock:
            self._queued.extend(kinds)

    def draw(self) -> str | None:
        """The fault of the next routed request, or None for the real answer."""
        with self._lock:
            if self._queued:
                return self._queued.pop(0)
            u = self._rng.random()
        acc = 0.0
        for kind, rate in self.faults.rates():
            acc += rate
            if u < acc:
                return kind
        return None

    def clear(self) -> None:
        """Forget the queued faults."""
        with self._lock:
            self._queued.clear()

    def answer(self, kind: str, error: ErrorAnswer) -> Response:
        """The answer of an HTTP fault, worded by ``error`` (the provider's error answer)."""
        if kind == "429":
            return error(429, "Rate limit reached; please try again later.", "rate_limit")
        if kind == "429_retry_after":
            return error(
                429,
                "Rate limit reached; please try again later.",
                "rate_limit",
                {"retry-after": self.faults.retry_after},
            )
        if kind == "529":
            return error(529, "Overloaded", "overloaded")
        if kind == "500":
            return error(
                500, "The server had an error while processing your request.", "server_error"
            )
        raise ValueError(kind)
