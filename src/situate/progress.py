"""Progress of long stages: a bar on a terminal (rich), lines a log can show elsewhere.

On a terminal a stage draws rich's bar once there is work to show. Where stderr is not a terminal
(``nohup``, CI, output piped to a file), no bar can redraw, so the stage writes a line at least
every :data:`LOG_EVERY_S` seconds instead: done / total, the rate and the time left. Either way,
once the first items are done, work that will take longer than that is announced in one line:
how many items and about how long at the rate this run just measured.

Lines go to the ``situate.progress`` logger, so a Hydra job's log file holds them too; a verb
that configured no logging gets them on stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

from situate.errors import SituateError
from situate.stores.rates import read_rate, record_rate

LOG_EVERY_S = 30.0
EVERY_S_VARIABLE = "SITUATE_PROGRESS_EVERY_S"  # another interval, in seconds (0: every batch)

log = logging.getLogger(__name__)


def line_interval_s() -> float:
    """The interval between lines: :data:`EVERY_S_VARIABLE` when set, else :data:`LOG_EVERY_S`."""
    value = os.environ.get(EVERY_S_VARIABLE, "").strip()
    if not value:
        return LOG_EVERY_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise SituateError(
            f"{EVERY_S_VARIABLE}={value!r}: give the seconds between progress lines (e.g. 30, "
            "or 0 for a line after every batch), or unset it"
        )
    return seconds


def duration(seconds: float) -> str:
    """``0:34:07``, as rich's bar writes elapsed and remaining time."""
    return str(timedelta(seconds=max(0, round(seconds))))


def say(line: str) -> None:
    """Log ``line``; on stderr when nothing handles this logger (a verb without logging)."""
    if log.hasHandlers():
        log.info(line)
    else:
        print(line, file=sys.stderr, flush=True)


class ProgressLines:
    """Done / total, rate and time left of one stage, written as lines by a clock.

    A stage's first ``advance`` is its baseline: what was already done (read from a cache) and
    the total. Long work is announced then, from this machine's last rate of the stage, or else
    after the first batch, at the rate that batch measured; then a line whenever ``every_s`` has
    passed since the last one (``tick`` writes it when no batch came), and a closing line if any
    was written. When it ends, the rate after the first batch (which pays a model's start-up) is
    kept as the stage's rate on this machine (``rate_key``)."""

    def __init__(
        self,
        description: str,
        clock: Callable[[], float] = time.monotonic,
        every_s: float | None = None,
        periodic: bool = True,
        write: Callable[[str], None] = say,
        rate_key: str | None = None,
    ):
        self.description = description
        self.clock = clock
        self.every_s = line_interval_s() if every_s is None else every_s
        self.periodic = periodic
        self.write = write
        self.done = 0
        self.total: int | None = None
        self.started = self.last_line = clock()
        self.baseline: tuple[int, float] | None = None  # (done, when) at the first advance
        self.first_done: tuple[int, float] | None = None  # (done, when) after the first batch
        self.lines = 0
        self.announced = False
        self.rate_key = rate_key  # where this machine's rate of the stage is kept
        self.stored = read_rate(rate_key) if rate_key else None  # its rate the last time here
        self._lock = threading.Lock()

    def measured(self, now: float) -> tuple[int, float] | None:
        """``(items, seconds)`` the rate rests on: since the first batch, or that batch alone
        while no other has come."""
        if self.first_done is None or self.baseline is None:
            return None
        done0, when0 = self.first_done
        if self.done > done0 and now > when0:
            return self.done - done0, now - when0
        base_done, base_when = self.baseline
        return (done0 - base_done, when0 - base_when) if when0 > base_when else None

    def rate(self, now: float) -> float | None:
        found = self.measured(now)
        return found[0] / found[1] if found else None

    def advance(self, n: int, total: int | None = None) -> None:
        with self._lock:
            now = self.clock()
            if total is not None:
                self.total = total
            self.done += n
            if self.baseline is None:
                self.baseline = (self.done, now)
                if self.stored is not None:
                    self._announce_stored(now)
            elif self.first_done is None and self.done > self.baseline[0]:
                self.first_done = (self.done, now)
                self._announce(now)
            elif self.periodic and now - self.last_line >= self.every_s:
                self._line(now)

    def tick(self) -> None:
        """A line if ``every_s`` has passed since the last one, whether or not a batch came."""
        with self._lock:
            now = self.clock()
            if now - self.last_line >= self.every_s:
                self._line(now)

    def close(self) -> None:
        with self._lock:
            now = self.clock()
            found = self.measured(now)
            if self.rate_key is not None and found is not None:
                record_rate(self.rate_key, *found)
            if self.lines and self.baseline is not None:
                base_done, base_when = self.baseline
                took = now - base_when
                rate = (self.done - base_done) / took if took > 0 else 0.0
                self._emit(
                    f"{self.description}: {self._count()} in {duration(took)}, {rate:,.1f}/s", now
                )

    def _count(self) -> str:
        return f"{self.done:,}/{self.total:,}" if self.total else f"{self.done:,}"

    def _announce_stored(self, now: float) -> None:
        """Before the first batch: how many and how long at the rate last measured here."""
        assert self.stored is not None
        if not self.total or self.total <= self.done:
            return
        left = self.stored.seconds(self.total - self.done)
        self.announced = True
        if left >= self.every_s:
            self._emit(
                f"{self.description}: {self.total - self.done:,} to do, about {duration(left)} at "
                f"{self.stored.per_second:,.1f}/s (measured on this machine "
                f"{self.stored.measured})",
                now,
            )

    def _announce(self, now: float) -> None:
        rate = self.rate(now)
        if self.announced or not self.total or not rate or self.total <= self.done:
            return
        self.announced = True
        left = (self.total - self.done) / rate
        if left >= self.every_s:
            self._emit(
                f"{self.description}: {self.total - self.done:,} of {self.total:,} to do, about "
                f"{duration(left)} at {rate:,.1f}/s (this run's first {self._first_batch():,})",
                now,
            )

    def _first_batch(self) -> int:
        assert self.first_done is not None and self.baseline is not None
        return self.first_done[0] - self.baseline[0]

    def _line(self, now: float) -> None:
        rate = self.rate(now)
        parts = [f"{self.description}: {self._count()}"]
        if self.total:
            parts.append(f"({self.done / self.total:.0%})")
        line = " ".join(parts)
        if rate:
            line += f", {rate:,.1f}/s"
            if self.total and self.total > self.done:
                line += f", {duration((self.total - self.done) / rate)} left"
        else:
            line += f", {duration(now - self.started)} so far"
        self._emit(line, now)

    def _emit(self, line: str, now: float) -> None:
        self.last_line = now
        self.lines += 1
        self.write(line)


def on_terminal() -> bool:
    from rich.console import Console

    return Console(stderr=True).is_terminal


@contextlib.contextmanager
def progress_bar(
    description: str,
    *,
    terminal: bool | None = None,
    final_bar: bool = True,
    rate_key: str | None = None,
    lines: ProgressLines | None = None,
) -> Iterator[Callable[..., None]]:
    """Yield ``advance(n, total=None)``. On a terminal a bar appears on stderr once there is work
    to show; elsewhere (``terminal=False``, or stderr not a terminal) a thread writes a line every
    :data:`LOG_EVERY_S` seconds until the stage ends, and rich prints the finished bar once
    (``final_bar=False``: not that, for a stage that is usually short). ``lines`` replaces the
    clock and the writer (tests). ``rate_key`` names the stage's rate on this machine
    (:mod:`situate.stores.rates`): read to announce the work before it starts, kept when it ends.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    terminal = on_terminal() if terminal is None else terminal
    if lines is None:
        lines = ProgressLines(description, periodic=not terminal, rate_key=rate_key)
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
    started = bar_started = False
    stop = threading.Event()
    ticker: threading.Thread | None = None

    def tick_until_stopped() -> None:
        while not stop.wait(max(0.05, min(lines.every_s, 5.0))):
            lines.tick()

    def advance(n: int, total: int | None = None) -> None:
        nonlocal started, bar_started, ticker
        if total is not None:
            bar.update(task, total=total)
        bar.update(task, advance=n)
        lines.advance(n, total)
        if not started and bar.tasks[0].total and bar.tasks[0].completed < bar.tasks[0].total:
            started = True
            if terminal or final_bar:
                bar.start()
                bar_started = True
            if not terminal:
                ticker = threading.Thread(
                    target=tick_until_stopped, name="situate-progress", daemon=True
                )
                ticker.start()

    failed = False
    try:
        yield advance
    except BaseException:
        failed = True  # the error's one line stands alone: no bar or closing line after it
        raise
    finally:
        stop.set()
        if ticker is not None:
            ticker.join()
        if bar_started:
            bar.live.transient = failed
            bar.stop()
        if started and not failed:
            lines.close()
