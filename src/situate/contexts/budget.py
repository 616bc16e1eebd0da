"""A spending cap for LLM contexts.

Before a call, an upper estimate of its cost is reserved (its document block priced as a cache
write, its prompt as uncached input, ``max_tokens`` of output, tokens estimated at one per three
UTF-8 bytes, which is more than real tokenizers give for text and code); after the call the
reservation is replaced by the real cost from the usage the provider reported. A call whose
reservation would take spending past the cap is not made. The cap covers every context of the
configuration, so contexts already in the store count at what they cost when they were written:
a rerun with the same cap spends nothing more, a rerun with a higher cap resumes.
"""

from __future__ import annotations

import math
import threading

from situate.llm.base import LLMRequest
from situate.pricing import ModelPrice
from situate.records import Usage

BYTES_PER_TOKEN = 3  # conservative: Claude and GPT tokenizers average 3.5 to 4.5 bytes a token


def estimated_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


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
        self._lock = threading.Lock()

    def estimate(self, request: LLMRequest) -> float:
        usage = Usage(
            input_uncached=estimated_tokens(request.prompt + request.answer_prefix),
            cache_write=estimated_tokens(request.document),
            cache_read=0,
            output=request.max_tokens,
        )
        return self.price.call_cost(usage, ttl=self.ttl).total

    def reserve(self, estimate: float) -> bool:
        with self._lock:
            if self.spent + self.reserved + estimate > self.limit:
                if self.refused is None:
                    self.refused = estimate
                return False
            self.reserved += estimate
            return True

    def settle(self, estimate: float, actual: float) -> None:
        with self._lock:
            self.reserved -= estimate
            self.spent += actual

    def release(self, estimate: float) -> None:
        self.settle(estimate, 0.0)

    @property
    def stopped(self) -> bool:
        return self.refused is not None
