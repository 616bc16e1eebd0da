"""The order of a run's LLM calls: every slot busy across documents, every possible cache read.

A document's first call (its *writer*) writes the provider's prompt cache entry for the document;
its other calls (*readers*) read it, but only once the entry exists, which is from the moment the
writer's response has started (Anthropic's ``message_start``; a provider that cannot say so
starts when its answer ends). :class:`Schedule` keeps up to ``slots()`` calls in flight (the AIMD
limit of :mod:`situate.paid.ratelimit`) over the whole run, not per document:

1. a reader is never sent before its document's writer has started responding;
2. a free slot goes to a ready reader of the earliest open document, else to the next document's
   writer: while A's writer is in flight the writers of B, C... go, and each document's readers
   start as soon as its writer's response starts, so documents finish in order and few are open;
3. the cache's lifetime: every call of a document must *start* (pass the rate gates) before
   ``ttl - margin`` seconds after its writer started. A reader the rate limits held past that is
   not sent; the document is refreshed deliberately instead: that call becomes the document's new
   writer, sent alone (it writes the entry again if it is gone; it reads it if reads kept it
   alive: Anthropic extends an entry's life at every read, so a window measured from the write is
   on the safe side), and its other readers wait for it again (``refreshes`` counts the
   documents' refreshes, and each is logged). A document that cannot be read within one window even at the configured
   request rate is named in the log before it starts;
4. a writer that ends without an answer (failed after retries, refused by the budget) hands the
   role to the document's next call;
5. with ``first_call_alone=False`` every call is sent at once, as a reader of no writer;
6. with ``batch``, a document's readers go to ``send_batch`` (the provider's batch API, on a
   thread of their own, holding no slot) as soon as its writer has started.

The caller's ``send(row, started, deadline)`` makes one call: it runs ``started()`` when the
answer starts, returns True if the context was stored, and raises :class:`CacheWindowMissed` if
the call could not start by ``deadline`` (seconds on ``clock``; None for a writer).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from situate.threads import share_faults, wait

log = logging.getLogger(__name__)

WAITING, WRITING, OPEN = "waiting", "writing", "open"


class CacheWindowMissed(Exception):
    """A reader could not start before its document's cache window closed (see :class:`Schedule`)."""


@dataclass
class _Document:
    doc_id: str
    pending: list[int]  # rows not sent yet, in order; pending[0] is the next writer while WAITING
    state: str = WAITING
    written_at: float = 0.0  # clock when the current writer's response started
    epoch: int = 0  # bumped by each refresh: a late start of an older writer is ignored
    in_flight: int = 0
    batched: bool = False
    events: list[tuple[str, int, float]] = field(default_factory=list)  # (kind, row, clock)


class Schedule:
    """Calls of ``documents`` (``(doc_id, rows)`` in order) under the rules above.

    Parameters
    ----------
    documents : list of (str, list of int)
        Each document's rows to call, in the order they should go.
    slots : callable
        Calls allowed in flight now (read at every dispatch: the AIMD limit).
    workers : int
        Threads that make calls (the most ``slots()`` can return).
    ttl : float or None
        Seconds a cache entry lives after its write; None: no window to respect.
    margin : float
        Seconds kept free at the end of each window (the response's way back, clock drift).
    clock : callable
        Seconds (the rate ceiling's clock, so tests can run it virtually).
    first_call_alone, batch : bool
        See the module docstring.
    rpm : int or None
        The request ceiling, to say in advance which documents cannot fit one window.
    """

    def __init__(
        self,
        documents: list[tuple[str, list[int]]],
        slots: Callable[[], int],
        workers: int,
        ttl: float | None,
        clock: Callable[[], float],
        margin: float = 0.0,
        first_call_alone: bool = True,
        batch: bool = False,
        rpm: int | None = None,
    ):
        self.docs = [_Document(d, list(rows)) for d, rows in documents if rows]
        self.slots, self.workers = slots, workers
        self.ttl, self.margin, self.clock = ttl, margin, clock
        self.first_call_alone, self.batch = first_call_alone, batch
        self.rpm = rpm
        self.refreshes = 0
        self._in_flight = 0
        self._error: BaseException | None = None
        self._errors: list[BaseException] = []  # every call's error, read by the workers
        self._cond = threading.Condition()
        if not first_call_alone:
            for d in self.docs:
                d.state = OPEN
        self._warn_unfittable()

    def _warn_unfittable(self) -> None:
        if self.ttl is None or self.rpm is None:
            return
        window = self.ttl - self.margin
        for d in self.docs:
            if (len(d.pending) - 1) * 60.0 / self.rpm > window:
                log.warning(
                    "contexts: document %s has %d calls, more than context.rpm=%d lets start "
                    "within its %.0f s cache window: its cache will be refreshed deliberately "
                    "(a new write) as the window closes",
                    d.doc_id, len(d.pending), self.rpm, self.ttl,
                )  # fmt: skip

    # -- choosing the next call -----------------------------------------------------------------

    def _next(self) -> tuple[_Document, int, bool] | None:
        """(document, row, is_writer) of the call to send now, or None (under the lock)."""
        for d in self.docs:  # readers of open documents first, earliest document first
            if d.state == OPEN and d.pending and not self.batch:
                return d, d.pending.pop(0), False
        for d in self.docs:
            if d.state == WAITING and d.pending:
                d.state = WRITING
                return d, d.pending.pop(0), True
        return None

    def _deadline(self, d: _Document) -> float | None:
        if self.ttl is None or not self.first_call_alone:
            return None
        return d.written_at + self.ttl - self.margin

    def _done(self) -> bool:
        return all(not d.pending and d.in_flight == 0 for d in self.docs)

    # -- running --------------------------------------------------------------------------------

    def run(
        self,
        send: Callable[[int, Callable[[], None], float | None], bool],
        send_batch: Callable[[str, list[int]], None] | None = None,
    ) -> None:
        """Make every call; returns when all have ended, re-raises the first unexpected error
        once the calls in flight have ended (their answers are kept). The workers are daemon
        threads and the waits here are :func:`situate.threads.wait`'s: an interrupt
        (Ctrl-C) leaves at once, even with calls hung in flight, as a kill would."""
        work: queue.SimpleQueue = queue.SimpleQueue()
        workers = [
            threading.Thread(target=self._worker, args=(work, send), daemon=True)
            for _ in range(self.workers)
        ]
        for w in workers:
            w.start()
        try:
            while True:
                with self._cond:
                    picked = None
                    while self._error is None and not self._done():
                        if self.batch:
                            self._submit_batches(send_batch)
                        if self._in_flight < max(1, self.slots()):
                            picked = self._next()
                            if picked is not None:
                                break
                        wait(self._cond)
                    if picked is None:
                        wait(self._cond, lambda: all(d.in_flight == 0 for d in self.docs))
                        break
                    d, row, writer = picked
                    d.in_flight += 1
                    self._in_flight += 1
                    deadline = None if writer else self._deadline(d)
                work.put((d, row, writer, deadline))
        finally:
            for _ in workers:
                work.put(None)  # each worker ends after its call
        if self._error is not None:
            raise self._error

    def _worker(self, work: queue.SimpleQueue, send) -> None:
        share_faults(self._errors)  # a storage fault of one call stops the others' requests
        while (item := work.get()) is not None:
            self._call(send, *item)

    def _submit_batches(self, send_batch) -> None:
        for d in self.docs:
            if d.state == OPEN and d.pending and not d.batched:
                rows, d.pending, d.batched = d.pending, [], True
                d.in_flight += 1
                threading.Thread(
                    target=self._batch, args=(send_batch, d, rows), daemon=True
                ).start()

    def _batch(self, send_batch, d: _Document, rows: list[int]) -> None:
        try:
            send_batch(d.doc_id, rows)
        except BaseException as e:  # noqa: BLE001 - handed to the scheduling thread
            self._fail(e)
        finally:
            with self._cond:
                d.in_flight -= 1
                self._cond.notify_all()

    def _call(self, send, d: _Document, row: int, writer: bool, deadline: float | None) -> None:
        epoch, seen = d.epoch, []

        def started() -> None:  # once per call, however often the provider and the caller say so
            with self._cond:
                if seen:
                    return
                seen.append(True)
                if writer and d.state == WRITING and d.epoch == epoch:
                    d.state, d.written_at = OPEN, self.clock()
                    d.events.append(("written", row, d.written_at))
                    self._cond.notify_all()
                elif not writer:
                    d.events.append(("read", row, self.clock()))

        answered = False
        try:
            answered = send(row, started, deadline)
        except CacheWindowMissed:
            with self._cond:
                d.pending.insert(0, row)
                if d.state == OPEN and d.epoch == epoch:
                    d.state, d.epoch = WAITING, d.epoch + 1
                    self.refreshes += 1
                    log.info(
                        "contexts: %s: the rate limits held a call past its cache window "
                        "(%.0f s after the write); refreshing the cache with it alone",
                        d.doc_id, self.ttl,
                    )  # fmt: skip
        except BaseException as e:  # noqa: BLE001 - handed to the scheduling thread
            self._fail(e)
        finally:
            with self._cond:
                if writer and d.state == WRITING and d.epoch == epoch:
                    if answered:  # a provider that cannot signal the start: it started by now
                        d.state, d.written_at = OPEN, self.clock()
                        d.events.append(("written", row, d.written_at))
                    else:  # no answer: the next call writes
                        d.state = WAITING
                d.in_flight -= 1
                self._in_flight -= 1
                self._cond.notify_all()

    @property
    def in_flight(self) -> int:
        """Calls sent and not yet answered (after an interrupt: those whose answers are lost)."""
        with self._cond:
            return self._in_flight

    def _fail(self, error: BaseException) -> None:
        with self._cond:
            if self._error is None:
                self._error = error
            self._errors.append(error)
            self._cond.notify_all()

    def events(self) -> dict[str, list[tuple[str, int, float]]]:
        """Per document, when each writer's response started and each reader's did (tests)."""
        return {d.doc_id: list(d.events) for d in self.docs}
