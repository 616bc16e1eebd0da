"""Holds for tests: requests kept waiting on events rather than on sleeps, so a test can have
calls in flight whatever the machine's speed. :class:`RequestHolds` keeps requests waiting once
their bytes are in, before they are logged or answered (:meth:`~RequestHolds.hold`,
:meth:`~RequestHolds.release`), counts the requests being handled (:meth:`~RequestHolds.wait_held`,
:meth:`~RequestHolds.wait_idle`) and starts a group of LLM answers together
(:meth:`~RequestHolds.together`, :meth:`~RequestHolds.first_token`); :class:`StreamHold` keeps
streamed answers open after their start. A test can thus kill a client with its calls in flight,
or have the server log and answer a request only after its client died, without sleeping and
hoping. Every wait ends after :data:`HANG_SECONDS` at most: a hang guard, not a speed.
"""

from __future__ import annotations

import contextlib
import threading
import time

HANG_SECONDS = 300.0  # how long the waits of holding tests last before they count as a hang


class RequestHolds:
    """The held and open requests of one server, and its :meth:`together` group."""

    def __init__(self):
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a request was held or ended
        self._hold_after: int | None = None  # None: not holding; else requests still let through
        self._held = 0  # requests waiting in handling()
        self._open = 0  # API requests being handled (held ones included)
        self._together: threading.Barrier | None = None  # see together()
        self._together_left = 0

    def hold(self, after: int = 0) -> None:
        """Let the next ``after`` API requests through, then keep every later one waiting, its bytes
        in but not logged or answered, until :meth:`release`."""
        with self._lock:
            self._hold_after = after
            self._changed.notify_all()

    def release(self) -> None:
        """Let the held requests (and all later ones) go on."""
        with self._lock:
            self._hold_after = None
            self._changed.notify_all()

    def wait_held(self, n: int, timeout: float = HANG_SECONDS) -> bool:
        """Block until ``n`` requests are held; False if ``timeout`` passed first (a hang guard)."""
        with self._lock:
            return self._changed.wait_for(lambda: self._held >= n, timeout)

    def wait_idle(self, timeout: float = HANG_SECONDS) -> bool:
        """Block until no API request is being handled (every one whose bytes are in has been
        answered or reset, none is held); False if ``timeout`` passed first (a hang guard)."""
        with self._lock:
            return self._changed.wait_for(lambda: self._open == 0, timeout)

    def together(self, n: int) -> None:
        """The next ``n`` LLM answers start (first token) together, once all ``n`` requests are read
        and accounted: none of them sees a cache entry another of them writes."""
        with self._lock:
            self._together, self._together_left = threading.Barrier(n), n

    def first_token(self, ttft: float) -> None:
        """An LLM answer's time to first token: ``ttft`` seconds, after the others of a
        :meth:`together` group have arrived when this request is one of them."""
        with self._lock:
            barrier = self._together
            if barrier is not None:
                self._together_left -= 1
                if self._together_left == 0:
                    self._together = None
        if barrier is not None:
            barrier.wait(HANG_SECONDS)
        if ttft > 0:
            time.sleep(ttft)

    @contextlib.contextmanager
    def handling(self):
        """One API request being handled: counted for :meth:`wait_idle`, held if asked."""
        with self._lock:
            self._open += 1
            if self._hold_after is not None and self._hold_after > 0:
                self._hold_after -= 1
            elif self._hold_after is not None:
                self._held += 1
                self._changed.notify_all()
                self._changed.wait_for(lambda: self._hold_after is None)
                self._held -= 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                self._changed.notify_all()


class StreamHold:
    """Streamed answers kept open at a point of their own (:meth:`pause_here`) while held."""

    def __init__(self):
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._held = False
        self._paused = 0  # streams waiting in pause_here()

    def hold(self) -> None:
        """Keep every stream that reaches :meth:`pause_here` waiting there until :meth:`release`."""
        with self._lock:
            self._held = True

    def release(self) -> None:
        """Let the held streams (and all later ones) go on to their end."""
        with self._lock:
            self._held = False
            self._changed.notify_all()

    def wait_held(self, n: int, timeout: float = HANG_SECONDS) -> bool:
        """Block until ``n`` streams wait in :meth:`pause_here`; False if ``timeout`` passed first
        (a hang guard)."""
        with self._lock:
            return self._changed.wait_for(lambda: self._paused >= n, timeout)

    def pause_here(self) -> None:
        """Where a stream waits while held."""
        with self._lock:
            if not self._held:
                return
            self._paused += 1
            self._changed.notify_all()
            self._changed.wait_for(lambda: not self._held)
            self._paused -= 1
