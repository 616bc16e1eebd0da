"""Cross-process locks so parallel jobs of a sweep compute a shared upstream result once.

Two jobs that need the same index (or the same contexts) would otherwise both build it; with the
lock, the second waits for the first and then finds the result in the cache. The lock is
``filelock``'s (``flock`` on Linux and macOS, ``LockFileEx`` on Windows): held by an open file,
so a process that dies releases it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock


@contextlib.contextmanager
def exclusive(folder: str | Path, key: str) -> Iterator[None]:
    """Hold an exclusive lock on ``folder/<key>.lock``, waiting as long as another process or
    thread holds it (released on exit or process death)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    with FileLock(Path(folder) / f"{key}.lock"):
        yield
