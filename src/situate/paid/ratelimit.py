"""Client-side rate limiting for LLM calls: AIMD concurrency and a requests/tokens-per-minute ceiling.

Both act per *attempt* (the first try of a call and each retry), through the gate that
:func:`situate.paid.retry.with_retries` consults (:func:`situate.paid.retry.attempt_gate`):

- :class:`AIMDLimit` (additive increase, multiplicative decrease) caps the attempts in flight.
  A rate-limited answer (429, or Anthropic's 529 "overloaded") halves the cap, never below 1; a
  run of ``increase_after`` successes raises it by 1, never above the configured concurrency.
  Rate-limited answers to attempts sent *before* the last halving do not halve it again, so one
  burst of 429s from calls that were in flight together halves it once, as TCP does per
  round trip; attempts sent after it halve it again if the server still refuses them.
- :class:`RateCeiling` admits an attempt only if, counting it, the attempts of the last
  ``window`` seconds (60) number at most ``rpm`` and their estimated tokens at most ``tpm``.
  It is a token bucket whose tokens come back exactly one window after they were spent, so *no*
  60-second window, wherever it starts, holds more than the ceiling: stricter than a bucket that
  refills continuously (which lets a full bucket's burst plus a minute of refill through), and
  within what a provider's own bucket allows. Tokens are estimated as the budget estimates them
  (:func:`situate.paid.budget.estimated_tokens`: one per three UTF-8 bytes of the document,
  prompt and answer prefix) plus ``max_tokens`` of output; every attempt counts, retries
  included, at its estimate.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import deque
from collections.abc import Callable

from situate import threads
from situate.errors import SituateError

RATE_LIMITED, AMBIGUOUS, OK, FAILED = "rate_limited", "ambiguous", "ok", "failed"
# seconds the LLM context adds to the ceilings' 60-second window: an attempt admitted exactly a
# minute after another may reach the provider sooner after it than it left (jitter), and a
# provider counting a strict minute would refuse it; 1/61 of the rate is the price
RATE_GUARD_SECONDS = 1.0


class AIMDLimit:
    """Attempts in flight, at most ``limit`` (which moves between 1 and ``maximum``).

    Parameters
    ----------
    maximum : int
        The ceiling (``context.concurrency``); the limit starts there.
    increase_after : int
        Successes in a row (since the last change) that raise the limit by 1.
    """

    def __init__(self, maximum: int, increase_after: int = 8):
        if maximum < 1 or increase_after < 1:
            raise ValueError("AIMDLimit: maximum and increase_after must be >= 1")
        self.maximum = maximum
        self.increase_after = increase_after
        self.limit = maximum
        self.in_flight = 0
        self.epoch = 0  # bumped at each decrease
        self.successes = 0
        self.minimum_seen = maximum
        self.decreases = 0
        self.increases = 0
        self.history = [maximum]  # the limit after each change
        self._cond = threading.Condition()

    def acquire(self) -> int:
        """Block until an attempt may start; returns the epoch it starts in."""
        with self._cond:
            while self.in_flight >= self.limit:
                threads.wait(self._cond)  # in slices: a Ctrl-C is seen
            self.in_flight += 1
            return self.epoch

    def release(self, epoch: int, outcome: str) -> None:
        """The attempt started in ``epoch`` ended with ``outcome`` (``ok``, ``rate_limited``...)."""
        with self._cond:
            self.in_flight -= 1
            if outcome == RATE_LIMITED:
                if epoch == self.epoch:  # not a straggler of a burst already answered
                    self.limit = max(1, self.limit // 2)
                    self.minimum_seen = min(self.minimum_seen, self.limit)
                    self.epoch += 1
                    self.decreases += 1
                    self.history.append(self.limit)
                self.successes = 0
            elif outcome == OK:
                self.successes += 1
                if self.successes >= self.increase_after and self.limit < self.maximum:
                    self.limit += 1
                    self.increases += 1
                    self.successes = 0
                    self.history.append(self.limit)
            self._cond.notify_all()


class RateCeiling:
    """At most ``rpm`` attempts and ``tpm`` estimated tokens in any ``window`` seconds.

    ``None`` for either is no ceiling of that kind. ``clock`` and ``sleep`` are injectable (a fake
    clock in tests). ``admitted`` keeps the (time, tokens) of every attempt admitted, for checks.
    """

    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        option: str = "context",
    ):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and value < 1:
                raise SituateError(f"{option}.{name}={value} must be >= 1 or null (no ceiling)")
        self.option = option
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self.clock, self.sleep = clock, sleep
        self._recent: deque[tuple[float, int]] = deque()  # admitted within the last window
        self._tokens = 0
        self.admitted: list[tuple[float, int]] = []
        self.waited = 0.0  # seconds attempts spent waiting for room
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def check(self, tokens: int) -> None:
        """``SituateError`` if one attempt of ``tokens`` could never fit under ``tpm``."""
        if self.tpm is not None and tokens > self.tpm:
            raise SituateError(
                f"{self.option}.tpm={self.tpm}: one call is estimated at {tokens} tokens "
                "(one token per 3 bytes of what it sends, plus max_tokens), more than a minute "
                f"allows; raise {self.option}.tpm or set it to null"
            )

    def acquire(self, tokens: int, until: float | None = None) -> bool:
        """Block until an attempt of ``tokens`` fits, then count it and return True; with
        ``until`` (a time on ``clock``), return False without counting it as soon as it is
        clear that it cannot fit by then."""
        if not self.active:
            return until is None or self.clock() <= until
        self.check(tokens)
        while True:
            with self._lock:
                now = self.clock()
                if until is not None and now > until:
                    return False
                while self._recent and self._recent[0][0] <= now - self.window:
                    self._tokens -= self._recent.popleft()[1]
                fits = (self.rpm is None or len(self._recent) < self.rpm) and (
                    self.tpm is None or self._tokens + tokens <= self.tpm
                )
                if fits:
                    self._recent.append((now, tokens))
                    self._tokens += tokens
                    self.admitted.append((now, tokens))
                    return True
                wait = self._wait_for(tokens, now)
                if until is not None and now + wait > until:
                    return False
            self.waited += wait
            self.sleep(wait)

    def _wait_for(self, tokens: int, now: float) -> float:
        """Seconds until enough of the window's attempts expire for ``tokens`` to fit."""
        expire = [t + self.window - now for t, _ in self._recent]
        need = 0
        if self.rpm is not None and len(self._recent) >= self.rpm:
            need = len(self._recent) - self.rpm + 1
        if self.tpm is not None and self._tokens + tokens > self.tpm:
            freed, excess = 0, self._tokens + tokens - self.tpm
            for i, (_, n) in enumerate(self._recent):
                freed += n
                if freed >= excess:
                    need = max(need, i + 1)
                    break
        return max(1e-3, expire[need - 1]) if need else 1e-3


def max_in_window(times: list[float], window: float) -> int:
    """The most ``times`` (sorted or not) inside any half-open window ``[t, t + window)``."""
    times = sorted(times)
    return max(
        (bisect.bisect_left(times, t + window) - i for i, t in enumerate(times)),
        default=0,
    )
