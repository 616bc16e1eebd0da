"""Cross-process locks so parallel jobs of a sweep compute a shared upstream result once.

Two jobs that need the same index (or the same contexts) would otherwise both build it; with the
lock, the second waits for the first and then finds the result in the cache.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusive(folder: str | Path, key: str) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``folder/<key>.lock`` (released on exit or process death)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{key}.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
