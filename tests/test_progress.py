"""Progress a log can show: lines by a clock where no bar can be drawn, long work announced."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import wait_until
from situate.errors import SituateError
from situate.progress import ProgressLines, duration, line_interval_s, progress_bar


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_by_the_clock_with_rate_and_time_left() -> None:
    clock, out = Clock(), []
    lines = ProgressLines("embedding 1,000 texts", clock=clock, every_s=30, write=out.append)
    lines.advance(0, 1000)  # the baseline: nothing from the cache
    clock.now = 10
    lines.advance(100)  # first batch: 100 in 10 s, 900 left at 10/s = 90 s, announced
    clock.now = 30
    lines.advance(100)  # 20 s since the last line: quiet
    clock.now = 40
    lines.tick()  # 30 s: 200 done, (200 - 100) / (40 - 10) = 3.33/s, 800 left = 240 s
    clock.now = 45
    lines.advance(300)
    clock.now = 70
    lines.advance(500)  # (1000 - 100) / (70 - 10) = 15/s, none left
    lines.close()  # 1000 in 70 s = 14.29/s
    assert out == [
        "embedding 1,000 texts: 900 of 1,000 to do, about 0:01:30 at 10.0/s (this run's first 100)",
        "embedding 1,000 texts: 200/1,000 (20%), 3.3/s, 0:04:00 left",
        "embedding 1,000 texts: 1,000/1,000 (100%), 15.0/s",
        "embedding 1,000 texts: 1,000/1,000 in 0:01:10, 14.3/s",
    ]


def test_short_work_writes_nothing() -> None:
    clock, out = Clock(), []
    lines = ProgressLines("parsing 10 files", clock=clock, every_s=30, write=out.append)
    lines.advance(0, 10)
    clock.now = 1
    lines.advance(5)  # 5 left at 5/s: a second, not announced
    clock.now = 2
    lines.advance(5)
    lines.close()
    assert out == []


def test_a_stage_with_no_total_says_how_long_it_has_run() -> None:
    clock, out = Clock(), []
    lines = ProgressLines("building the Lucene index", clock=clock, every_s=30, write=out.append)
    clock.now = 95
    lines.tick()
    assert out == ["building the Lucene index: 0, 0:01:35 so far"]


def test_on_a_terminal_only_the_announcement_and_the_closing_line() -> None:
    clock, out = Clock(), []
    lines = ProgressLines(
        "judging 300 pairs", clock=clock, every_s=30, periodic=False, write=out.append
    )
    lines.advance(0, 300)
    clock.now = 2
    lines.advance(10)  # 290 left at 5/s = 58 s
    clock.now = 62
    lines.advance(290)
    lines.close()
    assert out == [
        "judging 300 pairs: 290 of 300 to do, about 0:00:58 at 5.0/s (this run's first 10)",
        "judging 300 pairs: 300/300 in 0:01:02, 4.8/s",
    ]


def test_off_a_terminal_a_thread_writes_a_line_when_no_batch_comes() -> None:
    clock, out = Clock(), []
    lines = ProgressLines("contextualizing 50 chunks", clock=clock, every_s=30, write=out.append)
    with progress_bar("contextualizing 50 chunks", terminal=False, lines=lines) as advance:
        advance(0, 50)
        clock.now = 1
        advance(1)  # 49 left at 1/s: announced
        clock.now = 45  # no batch for 44 s: the thread writes the line
        wait_until(lambda: len(out) == 2, "the ticker's line")
        assert out[1] == "contextualizing 50 chunks: 1/50 (2%), 1.0/s, 0:00:49 left"
        advance(49)
    assert out[-1] == "contextualizing 50 chunks: 50/50 in 0:00:45, 1.1/s"


def test_the_interval_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("SITUATE_PROGRESS_EVERY_S", "5")
    assert line_interval_s() == 5.0
    monkeypatch.setenv("SITUATE_PROGRESS_EVERY_S", "soon")
    with pytest.raises(SituateError, match="SITUATE_PROGRESS_EVERY_S='soon'"):
        line_interval_s()
    monkeypatch.delenv("SITUATE_PROGRESS_EVERY_S")
    assert line_interval_s() == 30.0


def test_durations_read_as_the_bar_writes_them() -> None:
    assert duration(2047.4) == "0:34:07"
    assert duration(90000) == "1 day, 1:00:00"


def test_output_to_a_file_gets_a_line_per_batch(tmp_path) -> None:
    """A child process whose stderr is a file (no terminal), at an interval of 0: every batch
    writes a line there, and the bar's finished state follows."""
    script = (
        "from situate.progress import progress_bar\n"
        "with progress_bar('embedding 6 texts') as advance:\n"
        "    advance(0, 6)\n"
        "    for _ in range(3):\n"
        "        advance(2, 6)\n"
    )
    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        subprocess.run(
            [sys.executable, "-c", script],
            stderr=err,
            check=True,
            env={**os.environ, "SITUATE_PROGRESS_EVERY_S": "0"},
        )
    text = log.read_text()
    assert "embedding 6 texts: 4/6 (67%)" in text and "embedding 6 texts: 6/6 (100%)" in text
    assert "embedding 6 texts: 6/6 in " in text


def test_a_stage_that_fails_leaves_no_bar_after_its_error(capsys) -> None:
    with pytest.raises(SituateError), progress_bar("parsing 3 files", terminal=False) as advance:
        advance(0, 3)
        advance(1)
        raise SituateError("b.pdf: not a PDF; fix or remove it")
    assert capsys.readouterr().err.strip() == ""  # rich ends its live display with a newline


def test_a_usually_short_stage_prints_no_finished_bar_off_a_terminal(capsys) -> None:
    with progress_bar("parsing 3 files", terminal=False, final_bar=False) as advance:
        advance(0, 3)
        advance(3)
    assert capsys.readouterr().err == ""


def test_a_stage_that_starts_with_cached_items_counts_its_rate_from_what_it_computes() -> None:
    """500 of 1,000 texts from the cache: the first batch's 100 in 10 s is 10/s, not 60/s."""
    clock, out = Clock(), []
    lines = ProgressLines("embedding 1,000 texts", clock=clock, every_s=30, write=out.append)
    lines.advance(500, 1000)
    clock.now = 10
    lines.advance(100)  # 400 left at 10/s = 40 s
    assert out == [
        "embedding 1,000 texts: 400 of 1,000 to do, about 0:00:40 at 10.0/s (this run's first 100)"
    ]
