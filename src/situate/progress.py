"""Progress bars for long stages (rich), quiet when nothing is long."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """Yield ``advance(n, total=None)``; a bar appears on stderr once there is work to show."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    task = bar.add_task(description, total=None)
    started = False

    def advance(n: int, total: int | None = None) -> None:
        nonlocal started
        if total is not None:
            bar.update(task, total=total)
        bar.update(task, advance=n)
        if not started and bar.tasks[0].total and bar.tasks[0].completed < bar.tasks[0].total:
            bar.start()
            started = True

    try:
        yield advance
    finally:
        if started:
            bar.stop()
