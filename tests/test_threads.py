"""situate.threads: every item called, the first error re-raised after the others, a Ctrl-C
delivered to a worker thread (where the kernel may deliver a process's SIGINT) reaching the
waiting thread while a call hangs, and an interrupted command's exit not waiting on the
interpreter's shutdown."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from conftest import REPO
from situate.threads import map_on_daemon_threads, wait


def test_every_item_is_called_once():
    seen, lock = [], threading.Lock()

    def call(i: int) -> None:
        with lock:
            seen.append(i)

    map_on_daemon_threads(call, range(7), workers=3)
    assert sorted(seen) == [0, 1, 2, 3, 4, 5, 6]


def test_the_first_error_is_raised_after_every_other_item_ended():
    seen, lock = [], threading.Lock()

    def call(i: int) -> None:
        if i == 2:
            raise ValueError("item 2")
        with lock:
            seen.append(i)

    with pytest.raises(ValueError, match="item 2"):
        map_on_daemon_threads(call, range(5), workers=1)  # one worker: 2 fails, 3 and 4 still run
    assert seen == [0, 1, 3, 4]


def test_no_items_no_threads(monkeypatch):
    import situate.threads

    started, called = [], []

    class Counted(threading.Thread):
        def start(self) -> None:
            started.append(self.name)
            super().start()

    monkeypatch.setattr(situate.threads.threading, "Thread", Counted)
    map_on_daemon_threads(called.append, [], workers=4)
    assert started == [] and called == []
    map_on_daemon_threads(called.append, [7], workers=4)  # one item: one thread, not four
    assert started == ["situate-call"] and called == [7]


def test_wait_returns_once_the_predicate_holds():
    cond, done = threading.Condition(), []

    def finish() -> None:
        with cond:
            done.append(True)
            cond.notify_all()

    threading.Thread(target=finish).start()
    with cond:
        wait(cond, lambda: bool(done))
    assert done == [True]


# each script's worker sends SIGINT to its own thread, then hangs in its call for good: CPython
# notes the signal for the main thread, which must see it while that call is still hung
HUNG_CALL = """
import signal, sys, threading
def hang(*args):
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    threading.Event().wait()
"""
SCRIPTS = {
    "schedule": """
from situate.paid.schedule import Schedule
schedule = Schedule([("doc", [0, 1])], slots=lambda: 2, workers=2, ttl=None, clock=lambda: 0.0)
try:
    schedule.run(lambda row, started, deadline: hang())
except KeyboardInterrupt:
    print("interrupted")
""",
    "map_on_daemon_threads": """
from situate.threads import map_on_daemon_threads
try:
    map_on_daemon_threads(hang, range(3), workers=2)
except KeyboardInterrupt:
    print("interrupted")
""",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_sigint_a_worker_receives_interrupts_the_waiting_thread(name):
    script = textwrap.dedent(HUNG_CALL) + textwrap.dedent(SCRIPTS[name])
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        # the timeout is a hang guard only: without the fix the process never exits
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    # it printed, and exited with its daemon thread still hung in the call
    assert (proc.returncode, stdout.strip()) == (0, "interrupted"), stderr


def test_exit_at_once_keeps_what_atexit_and_stdout_hold_and_leaves_a_hung_thread(tmp_path):
    # a thread that is no daemon, hung for good: the interpreter's shutdown would join it forever
    script = textwrap.dedent("""
        import atexit, sys, threading
        from situate.threads import exit_at_once
        atexit.register(lambda: open(sys.argv[1], "w").write("atexit ran"))
        threading.Thread(target=threading.Event().wait).start()
        print("kept", end="")  # buffered in the pipe's writer until the exit flushes it
        exit_at_once(130)
    """)
    marker = tmp_path / "atexit.txt"
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(marker)], cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=300)  # a hang guard only
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, stdout) == (130, "kept"), stderr
    assert marker.read_text() == "atexit ran"


def test_after_a_storage_fault_no_item_is_handed_out():
    """One worker, items in order: item 1 meets a full disk; items 2 and 3 would be paid for an
    answer that could not be kept, so they are never called; the fault is raised."""
    from situate.stores.faults import StorageError

    called = []

    def call(item: int) -> None:
        called.append(item)
        if item == 1:
            raise StorageError("/cache/contexts.sqlite", "no_space", "full")

    with pytest.raises(StorageError):
        map_on_daemon_threads(call, [0, 1, 2, 3], workers=1)
    assert called == [0, 1]


def test_after_another_error_every_item_is_still_called():
    called = []

    def call(item: int) -> None:
        called.append(item)
        if item == 1:
            raise ValueError("one item's own failure")

    with pytest.raises(ValueError):
        map_on_daemon_threads(call, [0, 1, 2, 3], workers=1)
    assert called == [0, 1, 2, 3]


def test_a_call_sees_the_storage_fault_its_sibling_met():
    from conftest import wait_until
    from situate.stores.faults import StorageError
    from situate.threads import sibling_storage_fault

    seen = []

    def call(i: int) -> None:
        if i == 0:  # the second item, on the other worker: its store is full
            raise StorageError("/disk/contexts.sqlite", "no_space", "full")
        wait_until(lambda: sibling_storage_fault() is not None, "the sibling's fault")
        seen.append(sibling_storage_fault())  # what a paid call checks before its request

    with pytest.raises(StorageError):
        map_on_daemon_threads(call, [1, 0], workers=2)  # 1 waits on the worker that took it
    (fault,) = seen
    assert isinstance(fault, StorageError) and fault.kind == "no_space"
    assert str(fault) == "full" and fault.where == "/disk/contexts.sqlite"
    assert sibling_storage_fault() is None  # outside a worker: none
