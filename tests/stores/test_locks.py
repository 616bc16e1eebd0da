"""The cross-process lock: exclusive while held, free once released or once its holder dies."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from filelock import FileLock, Timeout

from situate.stores.locks import exclusive


def held_elsewhere(path: Path) -> bool:
    """Whether another holder has ``path`` locked (probed from a thread of its own, at once)."""
    outcome: list[bool] = []

    def probe() -> None:
        lock = FileLock(path, timeout=0)
        try:
            lock.acquire()
            lock.release()
            outcome.append(False)
        except Timeout:
            outcome.append(True)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return outcome[0]


def test_the_lock_is_exclusive_while_held_and_free_after(tmp_path: Path):
    path = tmp_path / "locks" / "index-key.lock"
    with exclusive(tmp_path / "locks", "index-key"):
        assert held_elsewhere(path)
    assert not held_elsewhere(path)
    assert path.is_file()  # the file stays: the next waiter locks the same inode


def _hold_forever(folder: str, ready) -> None:
    with exclusive(folder, "k"):
        ready.set()
        threading.Event().wait()


def test_a_killed_holder_releases_the_lock(tmp_path: Path):
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_forever, args=(str(tmp_path), ready))
    holder.start()
    try:
        assert ready.wait(timeout=120), "the holder did not start"
        assert held_elsewhere(tmp_path / "k.lock")
    finally:
        holder.kill()
        holder.join()
    assert not held_elsewhere(tmp_path / "k.lock")  # a dead process holds nothing
