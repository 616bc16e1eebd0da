"""A spending cap for LLM contexts.

Before a call, an upper estimate of its cost is reserved (its document block priced as a cache
write, its prompt as uncached input, ``max_tokens`` of output, tokens estimated at one per three
UTF-8 bytes, which is more than real tokenizers give for text and code); after the call the
reservation is replaced by the real cost from the usage the provider reported. A call whose
reservation would take spending past the cap is not made. The cap covers every context of the
configuration, so contexts already in the store count at what they cost when they were written:
a rerun with the same cap spends nothing more, a rerun with a higher cap resumes.

Retries are priced too. An attempt answered with an HTTP error (429, 529, 500...) was not
processed and costs nothing: its call keeps its reservation for the next attempt. An attempt that
got no answer at all (the connection was reset, or timed out) is *ambiguous*: the server may have
processed and billed it before the connection dropped, and the client cannot tell. Such an
attempt is counted as spent at its reserved estimate (:meth:`Budget.charge_ambiguous`), and the
retry must reserve again; if that reservation would pass the cap, the retry is not sent and the
budget stops. So ``spent`` is an upper bound of what the provider billed, and a run under faults
never passes the cap, whatever its retries. (It may overcount: an emulator's ``reset`` fault,
like many real resets, drops the request before it is processed.)

Possibly billed attempts outlive the run: :class:`situate.contexts.store.ContextStore` writes a
charge row (the attempt's estimate) before each attempt is sent and deletes it once the attempt
is answered with an error or its context is committed. Rows of ambiguous attempts stay, and so
do those of attempts in flight when the process was killed (SIGKILL, power loss: the server
finishes and bills them, their answers are lost); every later run of the configuration counts
them as spent. A kill between a context's commit and the deletion of its row leaves a row too:
counted once more than billed, on the safe side.
"""

from __future__ import annotations

import math
import threading

from situate import threads
from situate.money.pricing import ModelPrice
from situate.paid.llm import LLMRequest
from situate.records import Usage

BYTES_PER_TOKEN = 3  # conservative: Claude and GPT tokenizers average 3.5 to 4.5 bytes a token


def estimated_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


class BudgetExhausted(Exception):
    """A retry whose reservation would pass the cap: the call stops (the budget is stopped)."""


class Budget:
    """Thread-safe reservations against ``limit_usd``."""

    def __init__(
        self, limit_usd: float, price: ModelPrice, ttl: str = "5m", spent_usd: float = 0.0
    ):
        self.limit = float(limit_usd)
        self.price = price
        self.ttl = ttl
        self.spent = float(spent_usd)
        self.reserved = 0.0
        self.refused: float | None = None  # the estimate of the first call refused
        self.ambiguous = 0.0  # USD of ambiguous attempts counted in ``spent``
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # a reservation was settled

    def estimate(self, request: LLMRequest) -> float:
        usage = Usage(
            input_uncached=estimated_tokens(request.prompt + request.answer_prefix),
            cache_write=estimated_tokens(request.document),
            cache_read=0,
            output=request.max_tokens,
        )
        return self.price.call_cost(usage, ttl=self.ttl).total

    def reserve(self, estimate: float, wait: bool = False) -> bool:
        """Hold ``estimate`` if it fits beside what is spent and reserved. With ``wait``, a call
        that would fit once the reservations in flight settle waits for them (they usually
        settle below their estimates) instead of being refused."""
        with self._lock:
            while self.spent + self.reserved + estimate > self.limit:
                if not wait or self.reserved <= 0 or self.spent + estimate > self.limit:
                    if self.refused is None:
                        self.refused = estimate
                    return False
                threads.wait(self._settled)  # in slices: a Ctrl-C is seen
            self.reserved += estimate
            return True

    def settle(self, estimate: float, actual: float) -> None:
        with self._lock:
            self.reserved -= estimate
            self.spent += actual
            self._settled.notify_all()

    def release(self, estimate: float) -> None:
        self.settle(estimate, 0.0)

    def charge_ambiguous(self, estimate: float) -> None:
        """An attempt that may have been billed without an answer: its reservation is spent."""
        with self._lock:
            self.reserved -= estimate
            self.spent += estimate
            self.ambiguous += estimate
            self._settled.notify_all()

    @property
    def stopped(self) -> bool:
        return self.refused is not None
