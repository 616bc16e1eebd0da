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
from situate.stores.rates import Rate, read_rate, record_rate

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
    """Done / total, rate and time left of one stage, written as lines by a clock: the first batch
    measures the rate and announces long work, then a line whenever ``every_s`` has passed since
    the last one (``tick`` writes it when no batch came), and a closing line if any was written."""

    def __init__(
        self,
        description: str,
        clock: Callable[[], float] = time.monotonic,
        every_s: float | None = None,
        periodic: bool = True,
        write: Callable[[str], None] = say,
        rate_key: str | None = None,
        stored: Rate | None = None,
    ):
        self.description = description
        self.clock = clock
        self.every_s = line_interval_s() if every_s is None else every_s
        self.periodic = periodic
        self.write = write
        self.done = 0
        self.total: int | None = None
        self.started = clock()
        self.last_line = self.started
        self.first_done: tuple[int, float] | None = None  # (done, when) after the first batch
        self.lines = 0
        self.announced = False
        self.rate_key = rate_key  # where this machine's rate of the stage is kept
        self.stored = stored if stored is not None or rate_key is None else read_rate(rate_key)
        self._lock = threading.Lock()

    def rate(self, now: float) -> float | None:
        """Items a second since the first batch (that batch pays a model's start-up), else over
        the first batch alone."""
        if self.first_done is None:
            return None
        done0, when0 = self.first_done
        if self.done > done0 and now > when0:
            return (self.done - done0) / (now - when0)
        return done0 / (when0 - self.started) if when0 > self.started else None

    def advance(self, n: int, total: int | None = None) -> None:
        with self._lock:
            now = self.clock()
            if total is not None:
                self.total = total
            self.done += n
            if not self.announced and self.done == 0 and self.stored is not None:
                self._announce_stored(now)
            if self.first_done is None and self.done > 0:
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
            if self.rate_key is not None and self.first_done is not None:
                done0, when0 = self.first_done  # the rate after start-up
                record_rate(self.rate_key, self.done - done0, self.clock() - when0)
            if self.lines:
                now = self.clock()
                rate = self.done / (now - self.started) if now > self.started else 0.0
                self._emit(
                    f"{self.description}: {self._count()} in {duration(now - self.started)}"
                    f", {rate:,.1f}/s",
                    now,
                )

    def _count(self) -> str:
        return f"{self.done:,}/{self.total:,}" if self.total else f"{self.done:,}"

    def _announce_stored(self, now: float) -> None:
        """Before the first batch: how many and how long at the rate last measured here."""
        assert self.stored is not None
        if not self.total:
            return
        left = self.stored.seconds(self.total)
        self.announced = True
        if left >= self.every_s:
            self._emit(
                f"{self.description}: {self.total:,} to do, about {duration(left)} at "
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
                f"{duration(left)} at {rate:,.1f}/s (this run's first {self.done:,})",
                now,
            )

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
