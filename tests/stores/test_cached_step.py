"""The cached step: computed once, loaded after, under a lock held while computing, and never a
half-written result under its final name."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_locks import held_elsewhere

from situate.stores.cached_step import cached_step, read_pickle, write_pickle
from situate.stores.files import DirectoryCache, atomic_file


class Step:
    """A pickled result ``value.pkl`` in the folder ``key`` of kind ``squares``, counting calls."""

    def __init__(self, root: Path, key: str = "k1"):
        self.cache, self.key = DirectoryCache(root / "index"), key
        self.lock = root / "locks" / f"squares-{key}"
        self.done = self.cache.path("squares", key) / "value.pkl"
        self.computed: list[int] = []
        self.loaded: list[Path] = []

    def compute(self) -> list[int]:
        self.computed.append(1)
        return [n * n for n in range(4)]

    def load(self, path: Path) -> list[int]:
        self.loaded.append(path)
        return read_pickle(path)

    def __call__(self, compute=None, write=None) -> list[int]:
        return cached_step(
            self.done,
            lock=self.lock,
            compute=compute or self.compute,
            write=write or (lambda tmp, value: write_pickle(tmp / "value.pkl", value)),
            load=self.load,
            writing=self.cache.writing("squares", self.key),
        )


def leftovers(folder: Path) -> list[str]:
    """Names under ``folder`` (temporaries included: their names start with a dot)."""
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_computed_once_then_loaded(tmp_path: Path) -> None:
    step = Step(tmp_path)
    assert step() == [0, 1, 4, 9]
    assert step.computed == [1] and step.loaded == []
    assert read_pickle(step.done) == [0, 1, 4, 9]
    again = Step(tmp_path)  # another job of the sweep, the same key
    assert again() == [0, 1, 4, 9]
    assert again.computed == [] and again.loaded == [step.done]
    other = Step(tmp_path, "k2")  # another key: computed
    other()
    assert other.computed == [1]


def test_the_lock_is_held_while_computing_and_a_second_job_loads(tmp_path: Path) -> None:
    first, second = Step(tmp_path), Step(tmp_path)
    computing, finish = threading.Event(), threading.Event()

    def slow() -> list[int]:
        computing.set()
        assert finish.wait(timeout=120), "never told to finish"
        return first.compute()

    results: dict[str, list[int]] = {}
    job = threading.Thread(target=lambda: results.update(first=first(compute=slow)))
    job.start()
    assert computing.wait(timeout=120), "the first job never computed"
    lock_file = first.lock.with_name(first.lock.name + ".lock")
    assert held_elsewhere(lock_file)  # held while computing
    assert not first.done.exists()  # nothing under the final name yet
    waiting = threading.Thread(target=lambda: results.update(second=second()))
    waiting.start()
    finish.set()
    job.join()
    waiting.join()
    assert not held_elsewhere(lock_file)  # released once written
    assert results == {"first": [0, 1, 4, 9], "second": [0, 1, 4, 9]}
    assert first.computed == [1] and second.computed == [] and second.loaded == [second.done]


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_compute_leaves_nothing_and_is_computed_next_time(
    tmp_path: Path, interrupt: type[BaseException]
) -> None:
    step = Step(tmp_path)

    def stopped() -> list[int]:
        raise interrupt("stopped")

    with pytest.raises(interrupt):
        step(compute=stopped)
    assert not step.done.exists()
    assert leftovers(step.done.parent.parent) == []
    assert not held_elsewhere(step.lock.with_name(step.lock.name + ".lock"))
    assert step() == [0, 1, 4, 9] and step.computed == [1]


def test_a_write_interrupted_half_way_leaves_no_half_written_file(tmp_path: Path) -> None:
    step = Step(tmp_path)

    def half(tmp: Path, value: list[int]) -> None:
        (tmp / "value.pkl").write_bytes(b"\x80\x05half")  # a pickle cut short
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        step(write=half)
    assert not step.done.exists() and not step.done.parent.exists()
    assert leftovers(step.done.parent.parent) == []  # no temporary folder either
    assert step() == [0, 1, 4, 9] and step.loaded == []  # computed again, then whole


def test_one_file_written_through_atomic_file(tmp_path: Path) -> None:
    """A single file (an assembled model): the temporary sibling is renamed only once whole."""
    target = tmp_path / "models" / "joined.bin"

    def run(write) -> bytes:
        return cached_step(
            target, lock=target, compute=lambda: b"part1part2", write=write,
            load=lambda path: path.read_bytes(), writing=atomic_file(target),
        )  # fmt: skip

    def cut(tmp: Path, value: bytes) -> None:
        tmp.write_bytes(value[:5])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(cut)
    assert leftovers(target.parent) == ["joined.bin.lock"]  # no file, no temporary
    assert run(lambda tmp, value: tmp.write_bytes(value)) == b"part1part2"
    assert target.read_bytes() == b"part1part2"
    assert run(cut) == b"part1part2"  # there: loaded, nothing written
    assert leftovers(target.parent) == ["joined.bin", "joined.bin.lock"]
