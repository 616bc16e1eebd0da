"""Paid LLM calls, each through one gate, each answer committed before anything else runs.

What every stage that pays a provider per answer does with each call (the judge, the question
generator; the context stage passes the same :class:`CallGate`):

1. reserve the call's upper cost estimate against the budget (:mod:`situate.paid.budget`);
   a call that would pass the cap is not sent;
2. every attempt (first try and each retry of :mod:`situate.paid.retry`) passes the
   :class:`CallGate`: the requests/tokens-per-minute ceiling, the AIMD limit on attempts in flight
   (:mod:`situate.paid.ratelimit`), a new reservation after an ambiguous attempt, and a charge row
   in the store (:class:`situate.stores.base.ChargeRows`) while the attempt may be billed without its
   answer kept;
3. the answer is handed to ``keep`` (which commits it to the stage's store, one transaction), and
   only then is the charge row deleted and the reservation settled at the billed cost.

So a process killed at any moment has paid for nothing it does not either keep or count: the
next run reads the kept answers from the store and counts the charge rows a kill left behind at
their estimates. ``batch`` sends many calls through the provider's batch API (half price): all
reserved up front, each kept as its result arrives.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from situate.errors import SituateError
from situate.money.pricing import PriceBook
from situate.paid.budget import Budget, BudgetExhausted, estimated_tokens
from situate.paid.llm import LLMCallFailed, LLMProvider, LLMRequest, LLMResponse
from situate.paid.ratelimit import (
    AMBIGUOUS,
    FAILED,
    OK,
    RATE_GUARD_SECONDS,
    RATE_LIMITED,
    AIMDLimit,
    RateCeiling,
)
from situate.paid.retry import attempt_gate
from situate.paid.schedule import CacheWindowMissed
from situate.stores.base import ChargeRows
from situate.threads import sibling_storage_fault

Keep = Callable[[str, LLMResponse], None]  # commit one answer (key, response) to the store


class CallGate:
    """What each attempt of one call passes (see :mod:`situate.paid.retry`): the rate ceiling,
    the AIMD limit and, with a budget, a new reservation after an ambiguous attempt and a charge
    row in ``charges`` while the attempt may be billed without its answer kept.

    ``deadline`` (seconds on ``clock``) is the latest start of a cache reader
    (:mod:`situate.paid.schedule`): past it the attempt raises :class:`CacheWindowMissed`
    unsent.
    """

    def __init__(
        self,
        limit: AIMDLimit,
        ceiling: RateCeiling,
        budget: Budget | None,
        charges: ChargeRows,
        key: str,
        tokens: int,
        estimate: float,
        deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.limit, self.ceiling, self.budget = limit, ceiling, budget
        self.clock, self.deadline = clock, deadline
        self.charges, self.key = charges, key
        self.tokens, self.estimate = tokens, estimate
        self.reserved = budget is not None  # the budget holds this call's reservation
        self.charge: str | None = None  # the store row of the attempt in flight
        self.epoch = 0
        self.rate_limited = 0
        self.ambiguous = 0

    def before(self) -> None:
        if (fault := sibling_storage_fault()) is not None:  # its answer could not be kept
            raise fault
        if self.budget is not None and not self.reserved:
            if not self.budget.reserve(self.estimate):
                raise BudgetExhausted
            self.reserved = True
        if not self.ceiling.acquire(self.tokens, until=self.deadline):
            raise CacheWindowMissed  # the document's cache may be gone by the time it fits
        self.epoch = self.limit.acquire()
        if self.deadline is not None and self.clock() > self.deadline:
            self.limit.release(self.epoch, FAILED)  # not sent
            raise CacheWindowMissed
        if self.budget is not None:  # counted by later runs unless this run clears it
            self.charge = self.charges.charge(self.key, self.estimate)

    def after(self, outcome: str) -> None:
        self.limit.release(self.epoch, outcome)
        if outcome == RATE_LIMITED:
            self.rate_limited += 1
        if outcome == AMBIGUOUS:
            self.ambiguous += 1
            if self.budget is not None:
                self.budget.charge_ambiguous(self.estimate)  # may have been billed: row stays
                self.reserved = False
                self.charge = None
        elif outcome != OK:
            self._clear()  # an HTTP error: not billed

    def committed(self) -> None:
        """The answer is stored: its own cost counts from now on, not the attempt's estimate."""
        self._clear()

    def _clear(self) -> None:
        if self.charge is not None:
            self.charges.clear(self.charge)
            self.charge = None

    def release_reservation(self) -> None:
        """The call ended without an answer: hand back the reservation it still holds."""
        if self.budget is not None and self.reserved:
            self.budget.release(self.estimate)
            self.reserved = False


def request_tokens(request: LLMRequest) -> int:
    """Tokens one attempt counts against ``tpm``: estimated input plus ``max_tokens``."""
    text = request.document + request.prompt + request.answer_prefix
    return estimated_tokens(text) + request.max_tokens


class PaidCalls:
    """One stage's paid calls to ``llm``, priced by ``pricing``, charged in ``charges``.

    Parameters
    ----------
    llm : LLMProvider
        The model (``conf/llm/``).
    pricing : PriceBook
        Its prices (``conf/pricing/``).
    charges : ChargeRows
        The charge rows of the stage's store.
    option : str
        The config group whose options these are (``judge``, ``question_generator``), for errors.
    concurrency, budget_usd, rpm, tpm, increase_after
        As for ``context=llm`` (:class:`situate.contexts.llm.LLMContext`).
    """

    def __init__(
        self,
        llm: LLMProvider,
        pricing: PriceBook,
        charges: ChargeRows,
        option: str,
        concurrency: int = 4,
        budget_usd: float | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        increase_after: int = 8,
    ):
        for name, value in (("concurrency", concurrency), ("increase_after", increase_after)):
            if value < 1:
                raise SituateError(f"{option}.{name}={value} must be >= 1")
        RateCeiling(rpm, tpm)  # validates both
        self.llm, self.pricing, self.charges, self.option = llm, pricing, charges, option
        self.concurrency, self.budget_usd = concurrency, budget_usd
        self.rpm, self.tpm, self.increase_after = rpm, tpm, increase_after
        # the ceilings' clock and sleep (tests pass virtual time: see RateCeiling)
        self.rate_clock, self.rate_sleep = time.monotonic, time.sleep
        self.limit: AIMDLimit | None = None
        self.ceiling: RateCeiling | None = None
        self.budget: Budget | None = None
        self.failures: list[tuple[str, str]] = []  # (key, error) of calls failed after retries
        # what this run's calls met, for the stage's stats: every call's gate, the retries of the
        # calls that failed after them, the seconds between an answer and its commit
        self.gates: list[CallGate] = []
        self.failed_retries = 0
        self.store_windows: list[float] = []
        self._lock = threading.Lock()

    @property
    def ttl(self) -> str:
        return getattr(self.llm, "cache_ttl", None) or "5m"

    def cost(self, response: LLMResponse) -> float:
        """USD of one answer, from the usage the provider reported."""
        price = self.pricing.price(self.llm.model)
        return price.call_cost(response.usage, ttl=self.ttl, batch=response.batch).total

    def open(self, stored_usd: float, keys: set[str]) -> None:
        """Start a run: the budget (if any) counts ``stored_usd`` (answers the store holds for this
        run's ``keys``) and the charge rows earlier runs left for them, as spent."""
        self.failures, self.gates, self.store_windows = [], [], []
        self.failed_retries = 0
        self.budget = None
        if self.budget_usd is not None:
            charged, _ = self.charges.charged(keys)
            price = self.pricing.price(self.llm.model)
            self.budget = Budget(self.budget_usd, price, self.ttl, stored_usd + charged)
        self.limit = AIMDLimit(self.concurrency, self.increase_after)
        self.ceiling = RateCeiling(
            self.rpm, self.tpm, 60.0 + RATE_GUARD_SECONDS, clock=self.rate_clock,
            sleep=self.rate_sleep,
        )  # fmt: skip

    @property
    def stopped(self) -> bool:
        """The budget refused a call."""
        return self.budget is not None and self.budget.stopped

    def budget_error(self, spent_on: str, left: str) -> SituateError:
        """The one line a stage raises when the budget stopped it: ``spent_on`` names what the
        cap covers ("this study's judgments"), ``left`` what is not done ("3 pairs are not
        judged yet")."""
        b = self.budget
        return SituateError(
            f"{self.option}: budget reached: ${b.spent:.4f} of {self.option}.budget_usd="
            f"{b.limit:g} spent on {spent_on} and the next call would cost up to "
            f"${b.refused:.4f}; {left}, the others are stored: rerun with a higher "
            f"{self.option}.budget_usd to resume"
        )

    def call(
        self,
        key: str,
        request: LLMRequest,
        keep: Keep,
        on_start: Callable[[], None] | None = None,
        deadline: float | None = None,
    ) -> LLMResponse | None:
        """One call through the gates: the response once ``keep`` has committed it, or None
        (refused by the budget, or failed after retries: then in ``failures``). ``on_start``
        runs when the answer starts (streamed where the provider signals it, else at its end);
        :class:`CacheWindowMissed` if the gates held it past ``deadline`` (nothing was sent)."""
        estimate = self.budget.estimate(request) if self.budget else 0.0
        if self.budget and not self.budget.reserve(estimate, wait=True):
            return None  # not sent: it would break the budget
        gate = CallGate(
            self.limit, self.ceiling, self.budget, self.charges, key, request_tokens(request),
            estimate, deadline, self.rate_clock,
        )  # fmt: skip
        with self._lock:
            self.gates.append(gate)
        try:
            with attempt_gate(gate):
                if on_start is not None and getattr(self.llm, "signals_start", False):
                    response = self.llm.complete(request, on_start=on_start)
                else:
                    response = self.llm.complete(request)
        except BudgetExhausted:  # a retry would pass the cap: the budget has stopped
            return None
        except LLMCallFailed as e:
            with self._lock:
                self.failures.append((key, str(e)))
                self.failed_retries += e.retries
            gate.release_reservation()
            return None
        except BaseException:  # CacheWindowMissed included: the reservation goes back
            gate.release_reservation()
            raise
        received = time.perf_counter()
        keep(key, response)  # committed first: a kill after this never pays for it again
        with self._lock:
            self.store_windows.append(time.perf_counter() - received)
        gate.committed()
        if self.budget:
            self.budget.settle(estimate, self.cost(response))
        if on_start is not None:
            on_start()
        return response

    def call_batch(
        self, items: Sequence[tuple[str, LLMRequest]], keep: Keep, advance=None
    ) -> list[LLMResponse | None]:
        """Every ``(key, request)`` through the provider's batch API; reserved up front (those
        that do not fit are not sent), each result kept as it is read."""
        complete_batch = getattr(self.llm, "complete_batch", None)
        if complete_batch is None:
            raise SituateError(
                f"llm {self.llm.model} ({self.llm.name}) has no batch API; set "
                f"{self.option}.batch=false"
            )
        results: list[LLMResponse | None] = [None] * len(items)
        sendable = list(range(len(items)))
        estimates = [self.budget.estimate(r) if self.budget else 0.0 for _, r in items]
        if self.budget:
            sendable = [i for i in sendable if self.budget.reserve(estimates[i])]
            if advance is not None:
                advance(len(items) - len(sendable))
        if not sendable:
            return results
        answers = complete_batch([items[i][1] for i in sendable])
        for i, result in zip(sendable, answers, strict=True):
            ok = isinstance(result, LLMResponse)
            if ok:
                keep(items[i][0], result)
                results[i] = result
            else:
                with self._lock:
                    self.failures.append((items[i][0], str(result)))
            if self.budget:
                self.budget.settle(estimates[i], self.cost(result) if ok else 0.0)
            if advance is not None:
                advance(1)
        return results
