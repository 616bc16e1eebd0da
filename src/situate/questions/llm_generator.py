"""``question_generator: llm``: an LLM of the ``llm`` group writes each question, cached and priced.

Each request is rendered (:mod:`situate.questions.prompts`) and looked up in the generation store
(:mod:`situate.questions.store`) by (model with endpoint, prompt hash, passage text): stored
answers cost nothing. The others are paid calls (:class:`situate.paid.calls.PaidCalls`, the
judge's: rate ceilings, AIMD concurrency, budget reservations, charge rows, the provider's
retries, each answer committed as it arrives) in the order of :mod:`situate.paid.schedule`:
the ``context_dependent`` requests of one document share its document block, the cached prefix,
so the document's first call goes alone and the others read the cache it wrote (within its TTL);
requests without a document block each go as soon as a slot is free. ``batch`` sends them
through the provider's batch API (half price): a document's first call alone, then the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from situate.datasets.generated import Provenance
from situate.errors import SituateError
from situate.money.pricing import PriceBook
from situate.paid.calls import PaidCalls
from situate.paid.llm import TTL_SECONDS, LLMProvider, LLMRequest, LLMResponse
from situate.paid.schedule import Schedule
from situate.progress import progress_bar
from situate.questions.base import GenerationRequest, Proposal
from situate.questions.prompts import (
    STRATEGIES,
    AnswerError,
    RenderedQuestionPrompt,
    parse_answer,
    render,
    templates_hash,
)
from situate.questions.store import GenerationStore, StoredGeneration
from situate.stores.base import Stores
from situate.stores.keys import content_hash
from situate.stores.rates import rate_key

log = logging.getLogger(__name__)


class LLMQuestionGenerator:
    """Questions written by ``llm``.

    Parameters
    ----------
    llm : LLMProvider
        The model (``conf/llm/``; ``llm.base_url`` points it at an emulator).
    pricing : PriceBook
        Its prices (``conf/pricing/``).
    store : str
        The generation store (SQLite file, or the table's name under ``store=postgres``).
    stores : Stores or None
        The backend of the stores (``conf/store/``); None is SQLite.
    max_tokens : int
        Tokens of each answer (the JSON object).
    concurrency, batch, budget_usd, rpm, tpm, increase_after
        As for ``context=llm`` (:class:`situate.contexts.llm.LLMContext`); the budget covers
        every question of the set, stored ones at what they cost when written.
    """

    def __init__(
        self,
        llm: LLMProvider,
        pricing: PriceBook,
        store: str,
        stores: Stores | None = None,
        max_tokens: int = 300,
        concurrency: int = 4,
        batch: bool = False,
        budget_usd: float | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        increase_after: int = 8,
    ):
        if max_tokens < 16:
            raise SituateError(
                f"question_generator.max_tokens={max_tokens} must be >= 16 (the answer is JSON)"
            )
        self.llm, self.pricing = llm, pricing
        self.store = GenerationStore(store, stores)
        self.paid = PaidCalls(
            llm, pricing, self.store.charges, "question_generator", concurrency, budget_usd,
            rpm, tpm, increase_after,
        )  # fmt: skip
        self.max_tokens, self.concurrency, self.batch = max_tokens, concurrency, batch
        self.name = llm.model
        # what the last propose() did: calls paid, answers from the store, the budget's line
        self.calls: list[LLMResponse] = []
        self.from_store = 0
        self.budget_stop: SituateError | None = None
        self.schedule: Schedule | None = None

    @property
    def endpoint(self) -> str:
        return self.llm.identity().get("endpoint", "")

    @property
    def max_document_chars(self) -> int | None:
        """The longest document a ``context_dependent`` prompt shows whole: the model's window
        less the answer and 2,048 tokens for the instructions and passage, at 2 characters a
        token (real tokenizers give 3 to 4.5 for text and code: on the safe side); None without
        a window."""
        window = getattr(self.llm, "context_window", None)
        return None if not window else max(0, window - self.max_tokens - 2048) * 2

    def identity(self) -> dict:
        return {
            "generator": "llm",
            "llm": self.llm.identity(),
            "templates": templates_hash(),
            "max_tokens": self.max_tokens,
        }

    # -- what is sent -----------------------------------------------------------------------

    def plan(
        self, requests: Sequence[GenerationRequest]
    ) -> tuple[list[RenderedQuestionPrompt], list[str], list[str]]:
        """Each request's rendered prompt, prompt hash and store key (no call is made)."""
        for r in requests:
            if r.strategy not in STRATEGIES:
                raise SituateError(
                    f"questions.mix: strategy {r.strategy!r} is not one of {', '.join(STRATEGIES)}"
                )
        rendered = [render(r, self.max_document_chars) for r in requests]
        hashes = [
            content_hash("question-prompt", p.document, p.prompt, self.max_tokens) for p in rendered
        ]
        identity = self.llm.identity()
        keys = [
            GenerationStore.key(identity, h, r.passage_text)
            for h, r in zip(hashes, requests, strict=True)
        ]
        return rendered, hashes, keys

    def request(self, rendered: RenderedQuestionPrompt) -> LLMRequest:
        return LLMRequest(rendered.document, rendered.prompt, self.max_tokens)

    def stored(self, keys: Sequence[str]) -> dict[str, StoredGeneration]:
        """The stored answers of ``keys`` (spends nothing)."""
        return self.store.get_many(list(dict.fromkeys(keys)), self.endpoint)

    # -- the calls --------------------------------------------------------------------------

    def propose(self, requests: Sequence[GenerationRequest]) -> list[Proposal]:
        rendered, hashes, keys = self.plan(requests)
        stored = self.stored(keys)
        first_row = {k: row for row, k in reversed(list(enumerate(keys)))}
        todo = sorted(row for k, row in first_row.items() if k not in stored)
        self.calls, self.from_store, self.budget_stop = [], len(first_row) - len(todo), None
        self.paid.open(self._stored_usd(stored), set(keys))
        log.info(
            "questions: %d of %d stored already, %d to write with %s%s",
            self.from_store, len(first_row), len(todo), self.llm.model,
            f" at {self.endpoint}" if self.endpoint else "",
        )  # fmt: skip
        paid_now: set[str] = set()

        def keep(key: str, response: LLMResponse) -> None:
            item = StoredGeneration(
                response.text, response.usage, response.model, response.batch, self.endpoint
            )
            self.store.put(key, item)  # committed first: a kill after this never pays again
            stored[key] = item
            paid_now.add(key)
            self.calls.append(response)

        if todo:
            label = f"writing {len(todo)} questions ({self.llm.model})"
            with progress_bar(
                label, rate_key=rate_key("questions written", self.llm.identity())
            ) as advance:
                advance(0, len(todo))
                self._run(todo, requests, rendered, keys, keep, advance)
        if self.paid.stopped:
            missing = sum(1 for k in first_row if k not in stored)
            self.budget_stop = self.paid.budget_error(
                "this question set", f"{missing} questions are not written yet"
            )
        failed = dict(self.paid.failures)
        return [
            self._proposal(r, rendered[i], hashes[i], stored.get(k), k in paid_now, failed.get(k))
            for i, (r, k) in enumerate(zip(requests, keys, strict=True))
        ]

    def _run(self, todo, requests, rendered, keys, keep, advance) -> None:
        """Every row of ``todo`` called once, in the schedule's order."""
        documents: dict[str, list[int]] = {}
        alone: list[int] = []
        for row in todo:
            if rendered[row].document:
                documents.setdefault(requests[row].document.doc_id, []).append(row)
            else:
                alone.append(row)
        if self.batch and alone:
            items = [(keys[r], self.request(rendered[r])) for r in alone]
            self.paid.call_batch(items, keep, advance)
            alone = []
        groups = [(f"document {d}", rows) for d, rows in documents.items()]
        groups += [(f"passage {row}", [row]) for row in alone]

        def send(row: int, started: Callable[[], None], deadline: float | None) -> bool:
            answered = self.paid.call(
                keys[row], self.request(rendered[row]), keep, on_start=started, deadline=deadline
            )
            advance(1)
            return answered is not None

        def send_batch(group: str, rows: list[int]) -> None:
            items = [(keys[r], self.request(rendered[r])) for r in rows]
            self.paid.call_batch(items, keep, advance)

        ttl = getattr(self.llm, "cache_ttl", None)
        self.schedule = Schedule(
            groups,
            slots=lambda: self.paid.limit.limit,
            workers=self.concurrency,
            ttl=TTL_SECONDS.get(ttl) if ttl else None,
            clock=self.paid.rate_clock,
            margin=10.0,
            batch=self.batch,
            rpm=self.paid.rpm,
        )
        self.schedule.run(send, send_batch)

    def _proposal(self, request, rendered, prompt_sha256, stored, paid_now, failure) -> Proposal:
        usage = stored.usage if stored else None
        provenance = Provenance(
            generator=self.name,
            endpoint=self.endpoint,
            prompt_sha256=prompt_sha256,
            input_tokens=(usage.input_uncached + usage.cache_write + usage.cache_read)
            if usage
            else 0,
            output_tokens=usage.output if usage else 0,
            cost_usd=self._cost(stored) if stored else 0.0,
            from_cache=stored is not None and not paid_now,
        )
        if stored is None:
            why = failure or "not written: the budget (question_generator.budget_usd) stopped it"
            return Proposal(request, "", "", "", provenance, failure=why)
        try:
            parsed = parse_answer(stored.text)
        except AnswerError as e:
            return Proposal(request, "", "", "", provenance, failure=f"unparsable answer: {e}")
        return Proposal(request, parsed.question, parsed.answer, parsed.quote, provenance)

    def _cost(self, stored: StoredGeneration) -> float:
        price = self.pricing.price(self.llm.model)
        return price.call_cost(stored.usage, ttl=self.paid.ttl, batch=stored.batch).total

    def _stored_usd(self, stored: dict[str, StoredGeneration]) -> float:
        if self.paid.budget_usd is None:
            return 0.0
        return sum(self._cost(s) for s in stored.values())
