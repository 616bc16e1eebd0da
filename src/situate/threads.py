"""Threads for paid calls that a Ctrl-C always stops, even with a call hung in flight.

A SIGINT sent to the process may be delivered to any of its threads. CPython then only notes it
for the main thread, which sees it at its next bytecode; a main thread blocked on a lock with no
timeout (``Condition.wait()``, ``Future.result()``) runs no bytecode until the lock is released,
so while a call hangs, the interrupt waits with it. And ``ThreadPoolExecutor`` joins its threads
when the interpreter exits, so a hung call holds the exit too.

Here the calling thread waits in slices of :data:`POLL` seconds (:func:`wait`: the interrupt is
seen within one slice, and a condition's waiters re-check their predicate anyway) and the calls
run on daemon threads (:func:`map_on_daemon_threads`), which an exit does not wait for: an
interrupt leaves at once, as a kill would; answers already kept stay kept.

Once the interrupt is handled (runs closed as KILLED, the one line printed), the ``situate``
command ends with :func:`exit_at_once`, not through the interpreter's shutdown: that shutdown
tears down every module of the run (some 6,000 once MLflow, Hydra and the SDKs are imported:
garbage collection over half a million objects, ~2 s of CPU) while the daemon threads are still
in their hung calls, and it made up 85-95% of an interrupted sweep's exit, tens of seconds with
both cores busy; it would also join any non-daemon thread still in a call.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import NoReturn, TypeVar

from situate.stores.faults import StorageError

T = TypeVar("T")

POLL = 0.25  # seconds: how long a pending interrupt can wait for the calling thread to see it


def wait(cond: threading.Condition, predicate: Callable[[], bool] | None = None) -> None:
    """``cond.wait()`` (``predicate`` None) or ``cond.wait_for(predicate)``, interruptible: the
    caller holds ``cond``; returns after a notification (or a slice; a caller loops on its own
    condition as it must anyway), or once ``predicate()`` holds."""
    if predicate is None:
        cond.wait(POLL)
        return
    while not predicate():
        cond.wait(POLL)


def map_on_daemon_threads(call: Callable[[T], None], items: Iterable[T], workers: int) -> None:
    """``call(item)`` for every item on ``workers`` daemon threads; returns when all have ended,
    re-raising the first exception once the others have ended (each item is called: as
    ``list(ThreadPoolExecutor.map(...))`` does), but for a fault of the disk or a store: after
    one, no item is handed out (its answer could not be kept: it would be paid for nothing), and
    the calls in flight end. An interrupt of the calling thread leaves at once (see the module's
    docstring)."""
    todo = list(items)
    if not todo:
        return
    cond = threading.Condition()
    state = {"next": 0, "ended": 0}
    errors: list[BaseException] = []

    def worker() -> None:
        share_faults(errors)
        while True:
            with cond:
                i = state["next"]
                if i >= len(todo) or any(isinstance(e, StorageError) for e in errors):
                    state["ended"] += len(todo) - i  # never handed out: counted as ended
                    state["next"] = len(todo)
                    cond.notify_all()
                    return
                state["next"] = i + 1
            try:
                call(todo[i])
            except BaseException as e:  # noqa: BLE001 - handed to the calling thread
                with cond:
                    errors.append(e)
            finally:
                with cond:
                    state["ended"] += 1
                    cond.notify_all()

    for _ in range(max(1, min(workers, len(todo)))):  # never more threads than items
        threading.Thread(target=worker, daemon=True, name="situate-call").start()
    with cond:
        wait(cond, lambda: state["ended"] == len(todo))
    if errors:
        raise errors[0]


_siblings = threading.local()  # per worker thread: the errors list of its map_on_daemon_threads


def share_faults(errors: list[BaseException]) -> None:
    """Make ``errors`` (what the calls of this thread's group have raised, appended as they
    fail) what :func:`sibling_storage_fault` reads in this thread."""
    _siblings.errors = errors


def sibling_storage_fault() -> StorageError | None:
    """In a worker of :func:`map_on_daemon_threads` (or of a group that calls
    :func:`share_faults`): the storage fault another call of the same group has met, if any (a paid call checks it right before each request: an answer that could
    not be kept is not paid for); None elsewhere."""
    errors = getattr(_siblings, "errors", None) or ()
    found = next((e for e in list(errors) if isinstance(e, StorageError)), None)
    return None if found is None else StorageError(found.where, found.kind, str(found))


def exit_at_once(code: int) -> NoReturn:
    """End the process with ``code`` now, as a kill would (see the module's docstring), once what
    it keeps is stored: the ``atexit`` handlers run (log files flushed, an embedded server
    stopped) and stdout and stderr are flushed; the interpreter's shutdown (joining non-daemon
    threads, tearing the modules down) does not. For a process's own entry point only."""
    import atexit

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
