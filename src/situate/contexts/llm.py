"""``context: llm``: an LLM writes each chunk's context, with prompt caching and a context store.

Chunks are grouped by document and documents go one after another. Within a document the first
call goes alone (it writes the provider's prompt cache: an entry exists only once the response
that wrote it has started), then the rest fan out with bounded concurrency and read the cache.
Every context is stored as soon as it arrives, keyed by the hash of the rendered prompt (document
and chunk text included), the prompt variant and the model with its generation parameters: a
rerun pays nothing for what is stored, a changed document re-contextualizes only its own chunks,
and an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from situate.contexts.base import Placement
from situate.contexts.budget import Budget
from situate.contexts.prompts import PromptVariant, RenderedPrompt
from situate.errors import SituateError
from situate.llm.base import LLMCallFailed, LLMProvider, LLMRequest, LLMResponse
from situate.pricing import PriceBook
from situate.progress import progress_bar
from situate.records import Chunk, Context, Corpus, Document, Usage
from situate.store import BlobStore, content_hash

log = logging.getLogger(__name__)


@dataclass
class StoredContext:
    text: str
    usage: Usage
    model: str
    prompt: str
    seconds: float
    retries: int
    batch: bool

    def to_bytes(self) -> bytes:
        return json.dumps({**asdict(self), "usage": asdict(self.usage)}).encode()

    @classmethod
    def from_bytes(cls, blob: bytes) -> StoredContext:
        data = json.loads(blob)
        return cls(**{**data, "usage": Usage(**data["usage"])})


class ContextStore:
    """Contexts on disk (SQLite, one transaction per context), content addressed."""

    def __init__(self, path: str | Path):
        self.blobs = BlobStore(path, "contexts")

    @staticmethod
    def key(rendered: RenderedPrompt, prompt: PromptVariant, llm: LLMProvider) -> str:
        return content_hash(
            "context",
            rendered.document,
            rendered.prompt,
            rendered.answer_prefix,
            prompt.max_tokens,
            llm.identity(),
        )

    def get_many(self, keys: list[str]) -> dict[str, StoredContext]:
        return {k: StoredContext.from_bytes(v) for k, v in self.blobs.get_many(keys).items()}

    def put(self, key: str, stored: StoredContext) -> None:
        self.blobs.put_many([(key, stored.to_bytes())])


class LLMContext(Placement):
    """Contexts written by ``llm`` from ``prompt``.

    Parameters
    ----------
    prompt : PromptVariant
        The prompt variant (``conf/prompt/``).
    llm : LLMProvider
        The model (``conf/llm/``), with its minimum cacheable prompt length and context window.
    store : str
        The context store (SQLite file).
    concurrency : int
        Calls in flight at once within a document, after its first call.
    first_call_alone : bool
        Send a document's first call alone so the others read the cache it writes. False fires
        every call of a document at once (each may then pay a cache write).
    batch : bool
        Send a document's first call alone, the rest through the provider's batch API (half price,
        asynchronous).
    """

    name = "llm"

    def __init__(
        self,
        prompt: PromptVariant,
        llm: LLMProvider,
        store: str,
        concurrency: int = 4,
        first_call_alone: bool = True,
        batch: bool = False,
        budget_usd: float | None = None,
        pricing: PriceBook | None = None,
        placement: str = "after",
        separator: str = "\n\n",
        apply_to: Sequence[str] = ("dense", "sparse", "rerank"),
    ):
        super().__init__(placement, separator, apply_to)
        if concurrency < 1:
            raise SituateError(f"context.concurrency={concurrency} must be >= 1")
        self.prompt = prompt
        self.llm = llm
        self.store = ContextStore(store)
        if budget_usd is not None and pricing is None:
            raise SituateError(
                "context.budget_usd needs prices: keep `pricing` in the config (conf/pricing/)"
            )
        self.budget_usd = budget_usd
        self.pricing = pricing
        self.budget: Budget | None = None
        self.concurrency = concurrency
        self.first_call_alone = first_call_alone
        self.batch = batch
        self.calls: list[tuple[str, LLMResponse]] = []  # (doc_id, response) paid in this run
        self.failures: list[tuple[str, str]] = []  # (chunk_id, error)
        self.stats: dict[str, float] = {}
        self._lock = threading.Lock()

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
        stored = self.store.get_many(list(dict.fromkeys(keys)))
        return [stored.get(k) for k in keys]

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        self.calls, self.failures, self.stats = [], [], {}  # this run's, not a previous run's
        by_doc, windows, rendered, keys = self.plan(corpus, chunks)
        stored = self.store.get_many(list(dict.fromkeys(keys)))
        self.budget = self._budget(stored)
        first_row_of_key = {k: row for row, k in reversed(list(enumerate(keys)))}
        todo = sorted(
            row for k, row in first_row_of_key.items() if k not in stored
        )  # identical prompts: one call
        log.info(
            "contexts: %d of %d stored already, %d to write with %s",
            len(chunks) - len(todo),
            len(chunks),
            len(todo),
            self.llm.model,
        )
        t = time.perf_counter()
        if todo:
            with progress_bar(f"contextualizing {len(todo)} chunks ({self.llm.model})") as advance:
                advance(0, len(todo))
                todo_rows = set(todo)
                for doc_id, rows in by_doc.items():
                    pending = [r for r in rows if r in todo_rows]
                    if pending:
                        self._document(doc_id, pending, chunks, rendered, keys, stored, advance)
        self.stats = self._stats(time.perf_counter() - t, len(chunks) - len(todo), windows)
        missing = sum(1 for k in set(keys) if k not in stored)
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

    def _document(self, doc_id, rows, chunks, rendered, keys, stored, advance) -> None:
        def call(row: int) -> None:
            r = rendered[row]
            request = LLMRequest(
                r.document, r.prompt, self.prompt.max_tokens, answer_prefix=r.answer_prefix
            )
            estimate = self.budget.estimate(request) if self.budget else 0.0
            if self.budget and not self.budget.reserve(estimate):
                advance(1)  # not sent: it would break the budget
                return
            try:
                response = self.llm.complete(request)
            except LLMCallFailed as e:
                with self._lock:
                    self.failures.append((chunks[row].chunk_id, str(e)))
                    self.stats["llm_retries"] = self.stats.get("llm_retries", 0) + e.retries
                if self.budget:
                    self.budget.release(estimate)
                advance(1)
                return
            if self.budget:
                self.budget.settle(estimate, self._cost(response))
            self._keep(doc_id, keys[row], response, stored)
            advance(1)

        first, rest = (rows[:1], rows[1:]) if self.first_call_alone else ([], rows)
        for row in first:
            call(row)
        if not rest:
            return
        if self.batch:
            self._batch(doc_id, rest, rendered, keys, stored, advance, chunks)
            return
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            list(pool.map(call, rest))

    def _batch(self, doc_id, rows, rendered, keys, stored, advance, chunks) -> None:
        complete_batch = getattr(self.llm, "complete_batch", None)
        if complete_batch is None:
            raise SituateError(
                f"llm {self.llm.model} ({self.llm.name}) has no batch API; set context.batch=false"
            )
        requests = [
            LLMRequest(
                rendered[r].document,
                rendered[r].prompt,
                self.prompt.max_tokens,
                answer_prefix=rendered[r].answer_prefix,
            )
            for r in rows
        ]
        if self.budget:  # reserve every batched call up front; those that don't fit are not sent
            estimates = [self.budget.estimate(q) for q in requests]
            sendable = [self.budget.reserve(e) for e in estimates]
            advance(sendable.count(False))
            rows = [r for r, ok in zip(rows, sendable, strict=True) if ok]
            requests = [q for q, ok in zip(requests, sendable, strict=True) if ok]
            estimates = [e for e, ok in zip(estimates, sendable, strict=True) if ok]
            if not rows:
                return
        for i, (row, result) in enumerate(zip(rows, complete_batch(requests), strict=True)):
            if self.budget:
                self.budget.settle(
                    estimates[i], self._cost(result) if isinstance(result, LLMResponse) else 0.0
                )
            if isinstance(result, LLMResponse):
                self._keep(doc_id, keys[row], result, stored)
            else:
                self.failures.append((chunks[row].chunk_id, str(result)))
            advance(1)

    def _keep(self, doc_id: str, key: str, response: LLMResponse, stored: dict) -> None:
        item = StoredContext(
            response.text.strip(), response.usage, response.model, self.prompt.name,
            response.seconds, response.retries, response.batch,
        )  # fmt: skip
        self.store.put(key, item)  # stored before anything else can go wrong: never paid twice
        with self._lock:
            stored[key] = item
            self.calls.append((doc_id, response))

    # -- the budget -------------------------------------------------------------------------

    def _budget(self, stored: dict[str, StoredContext]) -> Budget | None:
        """The cap for this run; stored contexts count at what they cost when written."""
        if self.budget_usd is None:
            return None
        price = self.pricing.price(self.llm.model)
        ttl = getattr(self.llm, "cache_ttl", "5m")
        spent = sum(price.call_cost(s.usage, ttl=ttl, batch=s.batch).total for s in stored.values())
        return Budget(self.budget_usd, price, ttl, spent)

    def _cost(self, response: LLMResponse) -> float:
        ttl = getattr(self.llm, "cache_ttl", "5m")
        return self.budget.price.call_cost(response.usage, ttl=ttl, batch=response.batch).total

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

    # -- what the run paid ------------------------------------------------------------------

    def _stats(self, seconds: float, reused: int, windows: dict[str, dict]) -> dict[str, float]:
        stats = {
            "llm_calls": float(len(self.calls)),
            "llm_retries": float(
                sum(r.retries for _, r in self.calls) + self.stats.get("llm_retries", 0)
            ),
            "contexts_from_store": float(reused),
            "contexts_failed": float(len(self.failures)),
            "docs_windowed": float(sum(1 for w in windows.values() if w)),
            "contextualize_seconds": seconds,
        }
        for field in ("input_uncached", "cache_write", "cache_read", "output"):
            stats[f"tokens_{field}"] = float(sum(getattr(r.usage, field) for _, r in self.calls))
        stats.update(cache_shares(self.calls))
        stats.update(throughput([r for _, r in self.calls]))
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
        out["llm_prefill_tokens_per_s"] = sum(r.extra["evaluated_tokens"] for r in timed) / prefill_s
    if generation_s:
        out["llm_generation_tokens_per_s"] = sum(r.usage.output for r in timed) / generation_s
    return out


def cache_shares(calls: list[tuple[str, LLMResponse]]) -> dict[str, float]:
    """``cache_read_share`` = cache reads / all input tokens; ``cache_read_share_of_max`` = cache
    reads / the physical maximum (each document's prefix written once and read by each of its
    other calls), over documents whose prefix was cacheable; ``docs_below_cache_minimum`` counts
    documents none of whose calls wrote or read the cache."""
    by_doc: dict[str, list[Usage]] = defaultdict(list)
    for doc_id, response in calls:
        by_doc[doc_id].append(response.usage)
    reads = sum(u.cache_read for usages in by_doc.values() for u in usages)
    total_input = sum(
        u.input_uncached + u.cache_write + u.cache_read
        for usages in by_doc.values()
        for u in usages
    )
    maximum, below = 0, 0
    for usages in by_doc.values():
        prefix = max(u.cache_write + u.cache_read for u in usages)
        if prefix == 0:
            below += 1
            continue
        maximum += prefix * (len(usages) - 1)
    return {
        "cache_read_share": reads / total_input if total_input else 0.0,
        "cache_read_share_of_max": reads / maximum if maximum else 0.0,
        "docs_below_cache_minimum": float(below),
    }
