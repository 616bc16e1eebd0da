"""``conf/judge/``: an LLM grades (question, chunk) pairs, each distinct pair once, priced and capped.

Calls go through :class:`situate.paid.calls.PaidCalls`, as the question generator's do:
every attempt passes the same gate as a context's (rate ceiling, AIMD limit on attempts in
flight, budget reservation, a charge row while it may be billed without its answer kept),
retries are the provider's, and a judgment is committed to the store as soon as it is parsed. ``batch`` sends every pair through the provider's batch API
(half price). The budget covers every judgment the study needs: stored ones count at what they
cost when made, so a rerun with the same cap spends nothing and a higher cap resumes.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from situate.errors import SituateError
from situate.judging.pool import Pair
from situate.judging.prompt import parse_grade, prompt_hash, render
from situate.judging.store import JudgeStore, StoredJudgment
from situate.money.pricing import PriceBook
from situate.paid.budget import Budget
from situate.paid.calls import PaidCalls
from situate.paid.llm import LLMProvider, LLMRequest, LLMResponse
from situate.progress import progress_bar
from situate.stores.base import Stores
from situate.stores.rates import rate_key
from situate.threads import map_on_daemon_threads

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
            ("depth", depth, 1), ("max_tokens", max_tokens, 1),
            ("agreement_pairs", agreement_pairs, 0),
        ):  # fmt: skip
            if value < least:
                raise SituateError(f"judge.{name}={value} must be >= {least}")
        if relevant_from not in (1, 2, 3):
            raise SituateError(f"judge.relevant_from={relevant_from} must be 1, 2 or 3 (a grade)")
        self.llm, self.store, self.pricing = llm, JudgeStore(store, stores), pricing
        self.paid = PaidCalls(
            llm, pricing, self.store.charges, "judge", concurrency, budget_usd, rpm, tpm,
            increase_after,
        )  # fmt: skip
        self.depth, self.relevant_from = depth, relevant_from
        self.max_tokens, self.answer_prefix = max_tokens, answer_prefix
        self.agreement_pairs, self.seed = agreement_pairs, seed
        self.concurrency, self.batch, self.budget_usd = concurrency, batch, budget_usd
        self.prompt_hash = prompt_hash(max_tokens, answer_prefix)
        self._lock = threading.Lock()

    @property
    def budget(self) -> Budget | None:
        """This run's budget (None without ``budget_usd``)."""
        return self.paid.budget

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
        self.paid.open(self._stored_usd(stored), {k for k, _ in todo} | set(stored))
        log.info(
            "judge: %d of %d pairs stored already, %d to judge with %s%s",
            len(stored), len(stored) + len(todo), len(todo), self.llm.model,
            f" at {self.endpoint}" if self.endpoint else "",
        )  # fmt: skip
        if todo:
            pair_of = dict(todo)

            def keep(key: str, response: LLMResponse) -> None:
                self._keep(key, response, run)

            label = f"judging {len(todo)} pairs ({self.llm.model})"
            with progress_bar(
                label, rate_key=rate_key("pairs judged", self.llm.identity())
            ) as advance:
                advance(0, len(todo))
                if self.batch:
                    self.paid.call_batch([(k, self.request(p)) for k, p in todo], keep, advance)
                else:

                    def call(kp: tuple[str, Pair]) -> None:
                        # unless another process stored it meanwhile (Postgres: or is paying for
                        # it now: its answer is waited for, see situate.postgres.store)
                        key, pair = kp
                        with self.store.claim(key, self.endpoint) as peers:
                            if peers is None:
                                self.paid.call(key, self.request(pair), keep)
                            else:
                                with self._lock:
                                    run.judgments[key] = peers
                        advance(1)

                    map_on_daemon_threads(call, todo, self.concurrency)
            run.failures = [(pair_of[k], error) for k, error in self.paid.failures]
        missing = sum(1 for k, _ in todo if k not in run.judgments)
        if self.paid.stopped:
            raise self.paid.budget_error(
                "this study's judgments", f"{missing} pairs are not judged yet"
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
        return self.paid.cost(response)

    def _keep(self, key: str, response: LLMResponse, run: JudgeRun) -> None:
        item = StoredJudgment(
            response.text.strip(), response.usage, response.model, response.batch,
            self.endpoint, grade=parse_grade(response.text, self.answer_prefix),
        )  # fmt: skip
        self.store.put(key, item)  # committed first: a kill after this never pays for it again
        with self._lock:
            run.judgments[key] = item
            run.calls.append(response)
            run.cost_usd += self.cost(response)

    def _stored_usd(self, stored: dict[str, StoredJudgment]) -> float:
        """What the stored judgments cost when made (counted by the budget)."""
        if self.budget_usd is None:
            return 0.0
        price = self.pricing.price(self.llm.model)
        return sum(
            price.call_cost(s.usage, ttl=self.ttl, batch=s.batch).total for s in stored.values()
        )
