"""``conf/judge/``: an LLM grades (question, chunk) pairs, each distinct pair once, priced and capped.

Calls are scheduled like contexts (:mod:`situate.contexts.llm`): every attempt passes the same
gate (rate ceiling, AIMD limit on attempts in flight, budget reservation, a charge row while it
may be billed without its answer kept), retries are the provider's, and a judgment is committed
to the store as soon as it is parsed. ``batch`` sends every pair through the provider's batch API
(half price). The budget covers every judgment the study needs: stored ones count at what they
cost when made, so a rerun with the same cap spends nothing and a higher cap resumes.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from situate.contexts.budget import Budget, BudgetExhausted, estimated_tokens
from situate.contexts.llm import _CallGate
from situate.errors import SituateError
from situate.judging.pool import Pair
from situate.judging.prompt import parse_grade, prompt_hash, render
from situate.judging.store import JudgeStore, StoredJudgment
from situate.llm.base import LLMCallFailed, LLMProvider, LLMRequest, LLMResponse
from situate.llm.ratelimit import RATE_GUARD_SECONDS, AIMDLimit, RateCeiling
from situate.llm.retry import attempt_gate
from situate.pricing import PriceBook
from situate.progress import progress_bar
from situate.store import Stores

log = logging.getLogger(__name__)


@dataclass
class JudgeRun:
    """What one ``judge`` call did: judgments by store key, and what it paid."""

    judgments: dict[str, StoredJudgment]
    calls: list[LLMResponse] = field(default_factory=list)
    from_store: int = 0
    failures: list[tuple[Pair, str]] = field(default_factory=list)
    cost_usd: float = 0.0  # of this run's calls, priced from the usage the provider reported


class Judge:
    """Graded relevance judgments by ``llm``.

    Parameters
    ----------
    llm : LLMProvider
        The judge model (``conf/llm/``; ``llm.base_url`` points it at an emulator).
    store : str
        The judgment store's SQLite file (``store: sqlite``; its table with ``store: postgres``).
    stores : Stores or None
        The backend of the stores (``conf/store/``); None is SQLite.
    pricing : PriceBook
        Prices of the judge model (``conf/pricing/``).
    depth : int
        The pool: the top ``depth`` chunks of every arm per question (not the k of the metrics).
    relevant_from : int
        The lowest grade that counts as relevant for precision and recall (2: partly answers).
    max_tokens : int
        Tokens of the answer: 1 on an API (the digit); a local model may need 2.
    answer_prefix : str
        The start of the answer, written for the model (a local model's ``Grade:``); "" for
        models that refuse prefills.
    agreement_pairs : int
        The stratified sample judged for agreement with gold (0: none).
    concurrency, batch, budget_usd, rpm, tpm, increase_after
        As for ``context=llm`` (:class:`situate.contexts.llm.LLMContext`).
    """

    def __init__(
        self,
        llm: LLMProvider,
        store: str,
        pricing: PriceBook,
        stores: Stores | None = None,
        depth: int = 20,
        relevant_from: int = 2,
        max_tokens: int = 1,
        answer_prefix: str = "",
        agreement_pairs: int = 100,
        seed: int = 0,
        concurrency: int = 4,
        batch: bool = False,
        budget_usd: float | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        increase_after: int = 8,
    ):
        for name, value, least in (
            ("depth", depth, 1), ("max_tokens", max_tokens, 1), ("concurrency", concurrency, 1),
            ("increase_after", increase_after, 1), ("agreement_pairs", agreement_pairs, 0),
        ):  # fmt: skip
            if value < least:
                raise SituateError(f"judge.{name}={value} must be >= {least}")
        if relevant_from not in (1, 2, 3):
            raise SituateError(f"judge.relevant_from={relevant_from} must be 1, 2 or 3 (a grade)")
        RateCeiling(rpm, tpm)  # validates both
        self.llm, self.store, self.pricing = llm, JudgeStore(store, stores), pricing
        self.depth, self.relevant_from = depth, relevant_from
        self.max_tokens, self.answer_prefix = max_tokens, answer_prefix
        self.agreement_pairs, self.seed = agreement_pairs, seed
        self.concurrency, self.batch, self.budget_usd = concurrency, batch, budget_usd
        self.rpm, self.tpm, self.increase_after = rpm, tpm, increase_after
        self.prompt_hash = prompt_hash(max_tokens, answer_prefix)
        # what each attempt's gate reads (see _CallGate)
        self.limit: AIMDLimit | None = None
        self.ceiling: RateCeiling | None = None
        self.budget: Budget | None = None
        self.rate_clock = time.monotonic
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return self.llm.identity().get("endpoint", "")

    @property
    def ttl(self) -> str:
        return getattr(self.llm, "cache_ttl", "5m")

    def key(self, pair: Pair) -> str:
        return JudgeStore.key(self.llm.identity(), self.prompt_hash, pair.question, pair.text)

    def request(self, pair: Pair) -> LLMRequest:
        return LLMRequest(
            "", render(pair.question, pair.text), self.max_tokens, answer_prefix=self.answer_prefix
        )

    def stored(self, pairs: list[Pair]) -> dict[str, StoredJudgment]:
        """The stored judgments of ``pairs`` (spends nothing)."""
        return self.store.get_many(list(dict.fromkeys(self.key(p) for p in pairs)), self.endpoint)

    def judge(self, pairs: list[Pair]) -> JudgeRun:
        """Judge every pair not stored yet; raises a one-line error when the budget stops it or
        some pairs failed after retries (what was judged is stored either way)."""
        keys = [self.key(p) for p in pairs]
        todo = list({k: p for k, p in zip(keys, pairs, strict=True)}.items())
        stored = self.store.get_many([k for k, _ in todo], self.endpoint)
        todo = [(k, p) for k, p in todo if k not in stored]
        run = JudgeRun(stored, from_store=len(stored))
        self.budget = self._budget(stored, {k for k, _ in todo} | set(stored))
        self.limit = AIMDLimit(self.concurrency, self.increase_after)
        self.ceiling = RateCeiling(self.rpm, self.tpm, 60.0 + RATE_GUARD_SECONDS)  # as contexts
        log.info(
            "judge: %d of %d pairs stored already, %d to judge with %s%s",
            len(stored), len(stored) + len(todo), len(todo), self.llm.model,
            f" at {self.endpoint}" if self.endpoint else "",
        )  # fmt: skip
        if todo:
            with progress_bar(f"judging {len(todo)} pairs ({self.llm.model})") as advance:
                advance(0, len(todo))
                if self.batch:
                    self._batch(todo, run, advance)
                else:
                    with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                        list(pool.map(lambda kp: self._call(*kp, run, advance), todo))
        missing = sum(1 for k, _ in todo if k not in run.judgments)
        if self.budget is not None and self.budget.stopped:
            raise SituateError(
                f"judge: budget reached: ${self.budget.spent:.4f} of judge.budget_usd="
                f"{self.budget.limit:g} spent on this study's judgments and the next call would "
                f"cost up to ${self.budget.refused:.4f}; {missing} pairs are not judged yet, the "
                "others are stored: rerun with a higher judge.budget_usd to resume"
            )
        if run.failures:
            pair, error = run.failures[0]
            raise SituateError(
                f"judge: {len(run.failures)} of {len(todo)} pairs failed after retries (first: "
                f"question {pair.qid}, chunk {pair.chunk_id}: {error}); the others are stored: "
                "rerun to retry the failed ones"
            )
        return run

    def cost(self, response: LLMResponse) -> float:
        price = self.pricing.price(self.llm.model)
        return price.call_cost(response.usage, ttl=self.ttl, batch=response.batch).total

    # -- calls ------------------------------------------------------------------------------

    def _tokens(self, request: LLMRequest) -> int:
        return estimated_tokens(request.prompt + request.answer_prefix) + request.max_tokens

    def _call(self, key: str, pair: Pair, run: JudgeRun, advance) -> None:
        """Judge one pair, unless another process stored its judgment meanwhile (Postgres: or is
        paying for it now: its answer is waited for, see :mod:`situate.pgstore`)."""
        with self.store.claim(key, self.endpoint) as peers:
            if peers is not None:
                with self._lock:
                    run.judgments[key] = peers
                advance(1)
                return
            self._send(key, pair, run, advance)

    def _send(self, key: str, pair: Pair, run: JudgeRun, advance) -> None:
        request = self.request(pair)
        estimate = self.budget.estimate(request) if self.budget else 0.0
        if self.budget and not self.budget.reserve(estimate):
            advance(1)
            return
        gate = _CallGate(self, key, self._tokens(request), estimate)
        try:
            with attempt_gate(gate):
                response = self.llm.complete(request)
        except BudgetExhausted:
            advance(1)
            return
        except LLMCallFailed as e:
            with self._lock:
                run.failures.append((pair, str(e)))
            gate.release_reservation()
            advance(1)
            return
        except BaseException:
            gate.release_reservation()
            raise
        self._keep(key, response, run)
        gate.committed()
        if self.budget:
            self.budget.settle(estimate, self.cost(response))
        advance(1)

    def _batch(self, todo: list[tuple[str, Pair]], run: JudgeRun, advance) -> None:
        complete_batch = getattr(self.llm, "complete_batch", None)
        if complete_batch is None:
            raise SituateError(
                f"llm {self.llm.model} ({self.llm.name}) has no batch API; set judge.batch=false"
            )
        requests = [self.request(p) for _, p in todo]
        if self.budget:  # reserve every call up front; those that don't fit are not sent
            estimates = [self.budget.estimate(q) for q in requests]
            sendable = [self.budget.reserve(e) for e in estimates]
            advance(sendable.count(False))
            todo = [t for t, ok in zip(todo, sendable, strict=True) if ok]
            requests = [q for q, ok in zip(requests, sendable, strict=True) if ok]
            estimates = [e for e, ok in zip(estimates, sendable, strict=True) if ok]
        if not todo:
            return
        for i, ((key, pair), result) in enumerate(zip(todo, complete_batch(requests), strict=True)):
            ok = isinstance(result, LLMResponse)
            if self.budget:
                self.budget.settle(estimates[i], self.cost(result) if ok else 0.0)
            if ok:
                self._keep(key, result, run)
            else:
                run.failures.append((pair, str(result)))
            advance(1)

    def _keep(self, key: str, response: LLMResponse, run: JudgeRun) -> None:
        item = StoredJudgment(
            parse_grade(response.text, self.answer_prefix), response.text.strip(),
            response.usage, response.model, response.batch, self.endpoint,
        )  # fmt: skip
        self.store.put(key, item)  # committed first: a kill after this never pays for it again
        with self._lock:
            run.judgments[key] = item
            run.calls.append(response)
            run.cost_usd += self.cost(response)

    def _budget(self, stored: dict[str, StoredJudgment], keys: set[str]) -> Budget | None:
        if self.budget_usd is None:
            return None
        price = self.pricing.price(self.llm.model)
        spent = sum(
            price.call_cost(s.usage, ttl=self.ttl, batch=s.batch).total for s in stored.values()
        )
        charged, _ = self.store.charges.charged(keys)
        return Budget(self.budget_usd, price, self.ttl, spent + charged)
