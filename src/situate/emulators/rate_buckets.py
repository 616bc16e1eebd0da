"""An organisation's rate limits as an emulator enforces them: :class:`RateBuckets`, one token
bucket for requests and one for tokens per minute of an injectable clock.

Rate limits
-----------
``rpm`` and ``tpm`` (None: none) are the organisation's ceilings per minute of ``clock``:
requests, and tokens (for the Anthropic emulator: input tokens of the whole prompt plus
``max_tokens``). As Anthropic documents, they are token buckets: each holds up to a minute's
worth and is refilled continuously (``rpm / 60`` a second), not reset at fixed intervals. A
request the buckets cannot cover is answered 429 ``rate_limit_error`` with ``retry-after``
(whole seconds until they would), as the real API does; it takes nothing from them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class RateBuckets:
    """The request and token buckets of one organisation (``rpm``, ``tpm``; None: no limit)."""

    def __init__(
        self, rpm: int | None, tpm: int | None, clock: Callable[[], float] = time.monotonic
    ):
        self.rpm, self.tpm = rpm, tpm
        self.clock = clock
        # the buckets: (requests, tokens) left and when they were last refilled
        self._bucket = [float(rpm or 0), float(tpm or 0), clock()]
        self._lock = threading.Lock()

    def take(self, tokens: int) -> int | None:
        """None if the buckets cover a request of ``tokens`` now (and take it from them), else the
        whole seconds until they would."""
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
