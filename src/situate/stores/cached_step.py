"""One cached step of a sweep: a result computed once under a lock, written whole, read back after.

The jobs of a sweep share upstream results (a corpus parsed, chunks cut, an index built, a
count made), each kept under a key of everything it depends on. :func:`cached_step` is the one
way they are kept: under a cross-process lock (:func:`~situate.stores.locks.exclusive`), the
result already written is loaded; else it is computed and written through a temporary path that
takes its final name only once written whole (``DirectoryCache.writing`` for a folder,
:func:`~situate.stores.files.atomic_file` for one file), so a parallel job waits for the one
computing and then loads its result, and a compute or write that fails or is interrupted leaves
nothing under the final name. :func:`write_pickle` and :func:`read_pickle` are the pickled
form the steps that keep Python objects use.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from situate.stores.locks import exclusive

T = TypeVar("T")


def cached_step(
    done: Path,
    *,
    lock: Path,
    compute: Callable[[], T],
    write: Callable[[Path, T], object],
    load: Callable[[Path], T],
    writing: AbstractContextManager[Path],
) -> T:
    """``load(done)`` when ``done`` exists, else ``compute()``, written with ``write``.

    ``lock`` names the lock file ``<lock>.lock``, held from the check until the result is in
    place. ``writing`` (entered only when computing) yields the temporary path ``write(tmp,
    value)`` fills; it becomes the result's final path when the block ends, so ``done`` (that path,
    or a file in that folder) exists only once whole. Returns the value loaded or computed."""
    with exclusive(lock.parent, lock.name):  # a parallel job computing the same: wait, then load
        if done.exists():
            return load(done)
        value = compute()
        with writing as tmp:
            write(tmp, value)
    return value


def write_pickle(path: Path, value: Any) -> None:
    path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def read_pickle(path: Path) -> Any:
    return pickle.loads(path.read_bytes())
