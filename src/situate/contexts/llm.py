"""``context: llm``: an LLM writes each chunk's context, with prompt caching and a context store.

Chunks are grouped by document. A document's first call goes alone (it writes the provider's
prompt cache: an entry exists only once the response that wrote it has started), the rest read
the cache; :mod:`situate.paid.schedule` keeps every ``concurrency`` slot busy across
documents (while one document's first call is in flight, the first calls of the next ones and
the reads of documents already written go) and keeps each document's calls within its cache TTL.
Every context is stored as soon as it arrives, keyed by the hash of the rendered prompt (document
and chunk text included), the prompt variant and the model with its generation parameters: a
rerun pays nothing for what is stored, a changed document re-contextualizes only its own chunks,
and an interrupted run resumes where it stopped.

Faults and rate limits. Each attempt (first try or retry, see :mod:`situate.paid.retry`) passes a
per-call gate: the requests/tokens-per-minute ceiling (``rpm``, ``tpm``), then an AIMD limit on
attempts in flight (halved by a 429 or 529, +1 after a run of successes, between 1 and
``concurrency``; :mod:`situate.paid.ratelimit`), and, with a budget, a new reservation when the
previous attempt was ambiguous (no answer: it may have been billed, see
:mod:`situate.paid.budget`).

Kills. A context is committed to the store (one SQLite transaction) as soon as its response is
parsed, before the budget is settled or anything else runs, so the only calls a killed process
can have paid for without keeping the answer are those in flight at that moment: answered by
the server after the kill, or received less than a commit ago (``store_window_ms_max`` in the
stats is the longest such gap of the run). Those cannot be avoided (the Messages API has no
idempotency key, and a lost answer cannot be fetched again), but with a budget they are not
forgotten: each attempt leaves a charge row in the store until it is answered (see
:class:`situate.contexts.store.ContextStore`), and the next run counts the rows a kill left at
their estimates.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from situate.contexts.base import Placement
from situate.contexts.prompts import PromptVariant, RenderedPrompt
from situate.contexts.store import ContextStore, StoredContext
from situate.errors import SituateError
from situate.money.billing import Billed
from situate.money.pricing import PriceBook
from situate.paid.budget import Budget
from situate.paid.calls import CallGate, PaidCalls, request_tokens
from situate.paid.endpoints import legacy_identity
from situate.paid.llm import TTL_SECONDS, LLMProvider, LLMRequest, LLMResponse
from situate.paid.ratelimit import (
    AIMDLimit,
    RateCeiling,
)
from situate.paid.schedule import Schedule
from situate.progress import progress_bar
from situate.records import Chunk, Context, Corpus, Document
from situate.stores.base import Stores
from situate.stores.rates import rate_key

log = logging.getLogger(__name__)


class PaidCallsAttribute:
    """An attribute of an ``LLMContext`` that is its ``PaidCalls``' (``limit``, ``ceiling`` and
    ``budget`` of the last run; ``rpm``, ``tpm`` and the ceilings' ``rate_clock`` and
    ``rate_sleep``, as the next run applies them)."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, context, owner=None):
        return self if context is None else getattr(context.paid, self.name)

    def __set__(self, context, value) -> None:
        setattr(context.paid, self.name, value)


class LLMContext(Placement):
    """Contexts written by ``llm`` from ``prompt``.

    Over 250 lines: the protocol it fills reads 11 members, and ``contextualize`` keeps a
    paid call's plan, cache lookup, schedule and keeping in one place that an audit can follow.

    Parameters
    ----------
    prompt : PromptVariant
        The prompt variant (``conf/prompt/``).
    llm : LLMProvider
        The model (``conf/llm/``), with its minimum cacheable prompt length and context window.
    store : str
        The context store's SQLite file (``store: sqlite``; its table with ``store: postgres``).
    stores : Stores or None
        The backend of every store (``conf/store/``: SQLite files, or tables of a Postgres server
        shared by processes that then never pay twice for one context); None is SQLite.
    unverified : {"refuse", "adopt", "ignore"}
        What to do with contexts this run needs that an older situate stored without the
        endpoint that wrote them (:mod:`situate.paid.endpoints`; ``unverified_cache`` in config.yaml).
    concurrency : int
        Calls in flight at once, across documents (see :mod:`situate.paid.schedule`).
    first_call_alone : bool
        Send a document's first call alone so the others read the cache it writes. False fires
        every call of a document at once (each may then pay a cache write).
    batch : bool
        Send a document's first call alone, the rest through the provider's batch API (half price,
        asynchronous) as soon as the first call's answer has started; documents overlap.
    budget_usd : float or None
        Spending cap for this configuration's contexts (see :mod:`situate.paid.budget`).
    rpm, tpm : int or None
        Ceiling of attempts (requests, retries included) and of estimated tokens (input and
        ``max_tokens`` of output) in any 60 seconds; None is no ceiling.
    increase_after : int
        Successful attempts in a row after which the AIMD limit on attempts in flight grows by 1.
    """

    name = "llm"

    def __init__(
        self,
        prompt: PromptVariant,
        llm: LLMProvider,
        store: str,
        unverified: str = "refuse",
        stores: Stores | None = None,
        concurrency: int = 4,
        first_call_alone: bool = True,
        batch: bool = False,
        budget_usd: float | None = None,
        pricing: PriceBook | None = None,
        placement: str = "before",
        separator: str = "\n\n",
        apply_to: Sequence[str] = ("dense", "sparse", "rerank"),
        rpm: int | None = None,
        tpm: int | None = None,
        increase_after: int = 8,
    ):
        super().__init__(placement, separator, apply_to)
        if budget_usd is not None and pricing is None:
            raise SituateError(
                "context.budget_usd needs prices: keep `pricing` in the config (conf/pricing/)"
            )
        self.store = ContextStore(store, stores)
        # each call through the budget, the rate ceilings and the AIMD limit (validates them)
        self.paid = PaidCalls(
            llm, pricing, self.store.charges, "context", concurrency, budget_usd, rpm, tpm,
            increase_after,
        )  # fmt: skip
        self.increase_after = increase_after
        # seconds kept free at the end of a document's cache window (see paid.schedule)
        self.ttl_margin = 10.0
        self.schedule: Schedule | None = None
        self.prompt = prompt
        self.llm = llm
        self.unverified = unverified
        self.budget_usd = budget_usd
        self.pricing = pricing
        self.concurrency = concurrency
        self.first_call_alone = first_call_alone
        self.batch = batch
        self.calls: list[tuple[str, LLMResponse]] = []  # (doc_id, response) paid in this run
        # (doc_id, stored) for each distinct context of the configuration, by whichever run wrote
        # it; empty until every one is stored (a stopped run's configuration has no cost yet)
        self.written: list[tuple[str, StoredContext]] = []
        self.failures: list[tuple[str, str]] = []  # (chunk_id, error)
        self.stats: dict[str, float] = {}
        self._lock = threading.Lock()

    # the run's paid calls hold these (tests set the clocks and ceilings on the context)
    limit, ceiling, budget = PaidCallsAttribute(), PaidCallsAttribute(), PaidCallsAttribute()
    rpm, tpm = PaidCallsAttribute(), PaidCallsAttribute()
    rate_clock, rate_sleep = PaidCallsAttribute(), PaidCallsAttribute()

    @property
    def endpoint(self) -> str:
        """The API endpoint that writes this run's contexts ("" for a local model)."""
        return self.llm.identity().get("endpoint", "")

    def identity(self) -> dict:
        """The prompt and the model (endpoint included): concurrency, batching, ceilings and
        the budget change how the contexts are bought, not what they say."""
        return {**super().identity(), "prompt": self.prompt.identity(), "llm": self.llm.identity()}

    def billed(self) -> Billed:
        """This run's calls and the configuration's contexts as written, at the model's prices."""
        return Billed(
            model=self.llm.model,
            calls=self.calls,
            written=self.written,
            cache_ttl=self.llm.cache_ttl or "5m",
            unanswered=0 if self.schedule is None else self.schedule.in_flight,
        )

    def _cut_by_max_tokens(self, contexts: list[StoredContext]) -> dict[str, float]:
        """``contexts_cut_by_max_tokens``: contexts whose answer ran into ``prompt.max_tokens``
        (an answer that long stopped at the limit, mid-sentence: stop reason ``max_tokens``,
        ``length``), said in one line with the fix."""
        if not contexts:
            return {}
        cut = sum(1 for x in contexts if x.usage.output >= self.prompt.max_tokens)
        if cut:
            log.warning(
                "context: %d of %d contexts stopped at prompt.max_tokens=%d, cut mid-sentence; "
                "raise prompt.max_tokens (their chunks are contextualized again)",
                cut, len(contexts), self.prompt.max_tokens,
            )  # fmt: skip
        return {
            "contexts_cut_by_max_tokens": float(cut),
            "contexts_cut_by_max_tokens_share": cut / len(contexts),
        }

    def plan(
        self, corpus: Corpus, chunks: list[Chunk]
    ) -> tuple[dict[str, list[int]], dict, list[RenderedPrompt], list[str]]:
        """Group chunks by document, render every prompt and its store key (no call is made)."""
        self.prompt.prepare(corpus.documents)
        by_doc: dict[str, list[int]] = defaultdict(list)
        for row, c in enumerate(chunks):
            by_doc[c.doc_id].append(row)
        windows = {
            doc_id: self._document_text(corpus.document(doc_id), [chunks[r] for r in rows])
            for doc_id, rows in by_doc.items()
        }
        rendered = [
            self.prompt.render(corpus.document(c.doc_id), c, windows[c.doc_id].get(c.index))
            for c in chunks
        ]
        keys = [ContextStore.key(r, self.prompt, self.llm) for r in rendered]
        return by_doc, windows, rendered, keys

    def lookup(self, corpus: Corpus, chunks: list[Chunk]) -> list[StoredContext | None]:
        """The stored context of each chunk, None where none is stored (spends nothing)."""
        *_, keys = self.plan(corpus, chunks)
        stored = self.store.get_many(list(dict.fromkeys(keys)), self.endpoint)
        return [stored.get(k) for k in keys]

    def _stored(self, rendered: list[RenderedPrompt], keys: list[str]) -> dict[str, StoredContext]:
        """The stored contexts of ``keys``, with those an older situate stored without their
        endpoint acted on by ``unverified`` (refused before anything is paid, by default)."""
        stored = self.store.get_many(list(dict.fromkeys(keys)), self.endpoint)
        legacy = legacy_identity(self.llm.identity())
        if legacy is not None:
            legacy_of = {
                k: ContextStore.key(r, self.prompt, self.llm, legacy)
                for r, k in zip(rendered, keys, strict=True)
                if k not in stored
            }
            stored.update(
                self.store.recover_unverified(
                    legacy_of, self.unverified, self.llm.model, self.endpoint
                )
            )
        return stored

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        self.calls, self.failures, self.stats = [], [], {}  # this run's, not a previous run's
        self.written = []
        self.schedule = None
        by_doc, windows, rendered, keys = self.plan(corpus, chunks)
        stored = self._stored(rendered, keys)
        earlier = self._open(stored, set(keys))
        first_row_of_key = {k: row for row, k in reversed(list(enumerate(keys)))}
        todo = sorted(
            row for k, row in first_row_of_key.items() if k not in stored
        )  # identical prompts: one call
        for row in todo:  # a call that could never fit under context.tpm: say so before paying
            self.ceiling.check(self._tokens(self._request(rendered[row])))
        log.info(
            "contexts: %d of %d stored already, %d to write with %s%s",
            len(chunks) - len(todo),
            len(chunks),
            len(todo),
            self.llm.model,
            f" at {self.endpoint}" if self.endpoint else "",
        )
        t = time.perf_counter()
        if todo:
            client = getattr(self.llm, "client", None)
            if callable(client):  # the SDK built once, here: not by the first calls, after the
                client()  # rate ceiling admitted them (a burst that would reach the API late)
            todo_rows = set(todo)
            ttl = self.llm.cache_ttl
            self.schedule = Schedule(
                [(d, [r for r in rows if r in todo_rows]) for d, rows in by_doc.items()],
                slots=lambda: self.limit.limit,
                workers=self.concurrency,
                ttl=TTL_SECONDS.get(ttl) if ttl else None,
                clock=self.rate_clock,
                margin=self.ttl_margin,
                first_call_alone=self.first_call_alone,
                batch=self.batch,
                rpm=self.rpm,
            )
            label = f"contextualizing {len(todo)} chunks ({self.llm.model})"
            with progress_bar(
                label, rate_key=rate_key("contexts written", self.llm.identity())
            ) as advance:
                advance(0, len(todo))
                doc_of = {row: d for d, rows in by_doc.items() for row in rows}

                def send(row: int, started: Callable[[], None], deadline: float | None) -> bool:
                    return self._call(
                        doc_of[row], row, chunks, rendered, keys, stored, advance, started, deadline
                    )

                def send_batch(doc_id: str, rows: list[int]) -> None:
                    self._batch(doc_id, rows, rendered, keys, stored, advance)

                self.schedule.run(send, send_batch)
        chunk_of = {keys[row]: chunks[row].chunk_id for row in todo}
        self.failures = [(chunk_of[key], error) for key, error in self.paid.failures]
        refreshes = (
            {} if self.schedule is None else {"context_cache_refreshes": self.schedule.refreshes}
        )
        self.stats = {
            "contexts_from_store": float(len(chunks) - len(todo)),
            "docs_windowed": float(sum(1 for w in windows.values() if w)),
            "contextualize_seconds": time.perf_counter() - t,
            **{name: float(value) for name, value in refreshes.items()},
            **run_stats(
                [r for _, r in self.calls], len(self.failures), self.paid.failed_retries,
                self.paid.gates, self.limit, self.ceiling, self.paid.store_windows, self.budget,
                earlier,
            ),
        }  # fmt: skip
        missing = sum(1 for k in set(keys) if k not in stored)
        self.stats.update(self._cut_by_max_tokens([stored[k] for k in keys if k in stored]))
        # config_* prices the configuration's contexts: none while any of them is missing
        self.written = (
            []
            if missing
            else [
                (chunks[row].doc_id, stored[k])
                for k, row in sorted(first_row_of_key.items(), key=lambda kv: kv[1])
            ]
        )
        if self.budget is not None:
            self.stats["budget_spent_usd"] = self.budget.spent
            if self.budget.stopped:
                self.stats["budget_stopped"] = 1.0
                raise SituateError(
                    f"context: budget reached: ${self.budget.spent:.4f} of context.budget_usd="
                    f"{self.budget.limit:g} spent on this configuration's contexts and the next call "
                    f"would cost up to ${self.budget.refused:.4f}; {missing} chunks have no context yet, "
                    f"the {len(set(keys)) - missing} written are stored: rerun with a higher "
                    "context.budget_usd to resume"
                )
        if self.failures:
            chunk_id, error = self.failures[0]
            raise SituateError(
                f"context: {len(self.failures)} of {len(chunks)} chunks failed after retries "
                f"(first: {chunk_id}: {error}); the {len(chunks) - len(self.failures)} others are stored "
                "and a rerun makes no call for them; rerun to retry the failed ones"
            )
        return [
            Context(c.chunk_id, stored[k].text, stored[k].usage)
            for c, k in zip(chunks, keys, strict=True)
        ]

    # -- scheduling -------------------------------------------------------------------------

    def _request(self, r: RenderedPrompt) -> LLMRequest:
        return LLMRequest(
            r.document, r.prompt, self.prompt.max_tokens, answer_prefix=r.answer_prefix
        )

    _tokens = staticmethod(request_tokens)

    def _call(
        self, doc_id, row, chunks, rendered, keys, stored, advance, started, deadline
    ) -> bool:
        """One chunk's call through the gates; True if its context was stored. ``started()``
        runs when the answer starts (streamed where the provider can say so, else once it ends);
        ``CacheWindowMissed`` if the gates held it past ``deadline`` (nothing was sent). The key
        is claimed in the store first: a context another process stored meanwhile (Postgres: or
        is paying for now) is taken as it is, and nothing is sent."""
        with self.store.claim(keys[row], self.endpoint) as peers:
            if peers is not None:
                with self._lock:
                    stored[keys[row]] = peers
                started()
                advance(1)
                return True
            return self._send(
                doc_id, row, chunks, rendered, keys, stored, advance, started, deadline
            )

    def _send(
        self, doc_id, row, chunks, rendered, keys, stored, advance, started, deadline
    ) -> bool:
        def keep(key: str, response: LLMResponse) -> None:
            self._keep(doc_id, key, response, stored)

        request = self._request(rendered[row])
        answered = self.paid.call(keys[row], request, keep, started, deadline) is not None
        advance(1)  # answered, refused by the budget or failed after retries
        return answered

    def _batch(self, doc_id, rows, rendered, keys, stored, advance) -> None:
        def keep(key: str, response: LLMResponse) -> None:
            self._keep(doc_id, key, response, stored)

        self.paid.call_batch([(keys[r], self._request(rendered[r])) for r in rows], keep, advance)

    def _keep(self, doc_id: str, key: str, response: LLMResponse, stored: dict) -> None:
        item = StoredContext(
            response.text.strip(), response.usage, response.model, self.prompt.name,
            response.seconds, response.retries, response.batch, self.endpoint,
        )  # fmt: skip
        self.store.put(key, item)  # committed first: a kill after this never pays for it again
        with self._lock:
            stored[key] = item
            self.calls.append((doc_id, response))

    # -- the budget -------------------------------------------------------------------------

    def _open(self, stored: dict[str, StoredContext], keys: set[str]) -> dict[str, float]:
        """Start this run's paid calls: the budget (if any) counts the stored contexts at what
        they cost when written and the attempts of earlier runs that may have been billed
        without an answer at their estimate; returns what those earlier attempts were."""
        if self.budget_usd is None:
            self.paid.open(0.0, keys)
            return {}
        price = self.pricing.price(self.llm.model)
        ttl = self.llm.cache_ttl or "5m"
        spent = sum(price.call_cost(s.usage, ttl=ttl, batch=s.batch).total for s in stored.values())
        self.paid.open(spent, keys)
        charged, attempts = self.store.charges.charged(keys)
        return {
            "budget_earlier_unanswered_usd": charged,
            "budget_earlier_unanswered_attempts": float(attempts),
        }

    # -- documents longer than the window ---------------------------------------------------

    def _document_text(self, doc: Document, chunks: list[Chunk]) -> dict[int, str]:
        """Per chunk index, a window of the document when the whole one exceeds the model's window."""
        window = getattr(self.llm, "context_window", None)
        if not window or not self.prompt.document_template:
            return {}
        budget = window - self.prompt.max_tokens - 1024  # room for instructions, chunk and answer
        if len(doc.text) // 2 <= budget:  # even at 2 characters a token it fits: no need to count
            return {}
        tokens = self.llm.count_tokens(doc.text)
        if tokens <= budget:
            return {}
        chars = int(len(doc.text) * budget / tokens)
        out = {}
        for c in chunks:
            middle = (c.start + c.end) // 2
            start = max(0, min(middle - chars // 2, len(doc.text) - chars))
            out[c.index] = doc.text[start : start + chars]
        return out


def run_stats(
    calls: list[LLMResponse],
    failed: int,
    failed_retries: int,
    gates: list[CallGate],
    limit: AIMDLimit | None,
    ceiling: RateCeiling | None,
    store_windows: list[float],
    budget: Budget | None,
    earlier: dict[str, float],
) -> dict[str, float]:
    """What a run of the context stage paid and met, from its calls alone: retries (``failed``
    calls' ``failed_retries`` included), the gates' rate-limited and ambiguous attempts, the AIMD
    concurrency, rate ceiling waits, the commit gaps (``store_windows``), the budget's ambiguous
    spending and what ``earlier`` runs left charged, and throughput."""
    stats = {
        "llm_retries": float(sum(r.retries for r in calls) + failed_retries),
        "contexts_failed": float(failed),
        "llm_rate_limited": float(sum(g.rate_limited for g in gates)),
        "llm_ambiguous_retries": float(sum(g.ambiguous for g in gates)),
    }
    if limit is not None:
        stats["concurrency_min"] = float(limit.minimum_seen)
        stats["concurrency_final"] = float(limit.limit)
        stats["concurrency_decreases"] = float(limit.decreases)
    if ceiling is not None and ceiling.active:
        stats["rate_wait_seconds"] = ceiling.waited
    if store_windows:
        stats["store_window_ms_max"] = 1000 * max(store_windows)
        stats["store_window_ms_p50"] = 1000 * float(np.median(store_windows))
    if budget is not None:
        stats["budget_ambiguous_usd"] = budget.ambiguous
        stats.update(earlier)
    stats.update(throughput(calls))
    return stats


def throughput(responses: list[LLMResponse]) -> dict[str, float]:
    """Prefill and generation tokens per second, where the provider measures them (a local model):
    all tokens evaluated / all prefill seconds, all generated / all generation seconds."""
    timed = [r for r in responses if "prefill_seconds" in r.extra]
    if not timed:
        return {}
    prefill_s = sum(r.extra["prefill_seconds"] for r in timed)
    generation_s = sum(r.extra["generation_seconds"] for r in timed)
    out = {}
    if prefill_s:
        out["llm_prefill_tokens_per_s"] = (
            sum(r.extra["evaluated_tokens"] for r in timed) / prefill_s
        )
    if generation_s:
        out["llm_generation_tokens_per_s"] = sum(r.usage.output for r in timed) / generation_s
    return out
