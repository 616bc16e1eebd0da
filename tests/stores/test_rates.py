"""This machine's rates: kept per stage, read back, advice that never stops a run."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from situate.progress import ProgressLines
from situate.stores.rates import (
    MIN_SECONDS,
    Rate,
    rate_key,
    rates_path,
    read_rate,
    record_rate,
)


def test_a_rate_is_kept_and_read_back(rates_of_this_test: Path) -> None:
    assert rates_path() == rates_of_this_test
    assert read_rate("texts embedded by all-MiniLM-L6-v2") is None
    assert record_rate("texts embedded by all-MiniLM-L6-v2", 900, 60.0, date(2026, 12, 8))
    assert record_rate("files parsed", 74, 37.0, date(2026, 12, 8))
    rate = read_rate("texts embedded by all-MiniLM-L6-v2")
    assert rate == Rate(15.0, 900, "2026-12-08")  # 900 / 60
    assert rate.seconds(28_141) == 28_141 / 15.0
    assert read_rate("files parsed") == Rate(2.0, 74, "2026-12-08")


def test_a_short_stage_measures_start_up_and_is_not_kept() -> None:
    assert not record_rate("files parsed", 10, MIN_SECONDS - 0.1)
    assert not record_rate("files parsed", 0, 60.0)
    assert read_rate("files parsed") is None


def test_an_unreadable_or_unwritable_file_is_advice_lost_not_a_stop(
    rates_of_this_test: Path, caplog
) -> None:
    rates_of_this_test.write_text("{not json")
    assert read_rate("files parsed") is None
    rates_of_this_test.unlink()
    rates_of_this_test.mkdir()  # a folder where the file should be: no write can replace it
    assert not record_rate("files parsed", 100, 10.0)
    assert "cannot write" in caplog.text


def test_a_stage_records_its_rate_after_start_up_and_the_next_announces_from_it() -> None:
    class Clock:
        now = 0.0

        def __call__(self) -> float:
            return self.now

    clock, out = Clock(), []
    key = "texts embedded by all-MiniLM-L6-v2"
    first = ProgressLines("embedding 1,000 chunks", clock=clock, write=out.append, rate_key=key)
    first.advance(0, 1000)  # nothing measured here yet: nothing said before the first batch
    clock.now = 8  # the model's start-up and the first batch
    first.advance(100)
    clock.now = 68  # 900 more in 60 s: 15/s after start-up
    first.advance(900)
    first.close()
    assert read_rate(key).per_second == 15.0
    out.clear()
    second = ProgressLines("embedding 737 chunks", clock=clock, write=out.append, rate_key=key)
    second.advance(0, 737)  # 737 at 15/s: 49 s, said before it starts
    assert out == [
        f"embedding 737 chunks: 737 to do, about 0:00:49 at 15.0/s (measured on this machine "
        f"{date.today().isoformat()})"
    ]
    clock.now = 75
    second.advance(100)  # announced once: the first batch says nothing more
    assert len(out) == 1


def test_a_rate_names_the_endpoint_it_was_measured_against() -> None:
    local = {"provider": "sentence-transformers", "model": "all-MiniLM-L6-v2"}
    api = {"model": "claude-haiku-4-5", "endpoint": "https://api.anthropic.com"}
    emulated = {"model": "claude-haiku-4-5", "endpoint": "http://127.0.0.1:8765"}
    assert rate_key("texts embedded", local) == "texts embedded by all-MiniLM-L6-v2"
    assert rate_key("contexts written", api) == (
        "contexts written by claude-haiku-4-5 at https://api.anthropic.com"
    )
    record_rate(rate_key("contexts written", emulated), 600, 10.0)
    assert read_rate(rate_key("contexts written", api)) is None  # the emulator's is not the API's
