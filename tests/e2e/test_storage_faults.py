"""Storage faults met by ``situate run`` as a user meets them: a damaged store, a disk that
fills during the run (a real tmpfs of fixed size) and the run after it end in one line that
names the file and the fix, exit 2, no traceback; a damaged store of contexts paid to the
Anthropic emulator is repaired with ``situate cache repair`` and the next run pays for none of
them again."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from test_bad_input import NOTES, write_notes

from conftest import damage, run_cli, small_filesystem
from situate.providers import emulated, emulator
from test_cli import assert_one_line_error

FAST = ("context=none", "fusion=dense_only", "tracking=none", "embedder=minilm_onnx")


def run(out: Path, notes: Path, *extra: str, env: dict | None = None):
    return run_cli("run", *NOTES, f"dataset.path={notes}", f"output_dir={out}", *extra, env=env)


@pytest.mark.slow
def test_a_damaged_embedding_store_is_one_line_naming_the_file_and_repair(tmp_path):
    notes, out = write_notes(tmp_path / "notes"), tmp_path / "out"
    assert run(out, notes, *FAST).returncode == 0
    store = out / "cache" / "embeddings.sqlite"
    damage(store, 0.5)  # its second half overwritten, as a torn copy leaves it
    assert_one_line_error(
        run(out, notes, *FAST),
        f"error: {store}: the store is damaged (database disk image is malformed)",
        f"situate cache repair cache_dir={out / 'cache'}",
    )
    repaired = run_cli("cache", "repair", f"cache_dir={out / 'cache'}")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "repaired embeddings.sqlite" in repaired.stdout
    assert list((out / "cache" / "damaged").glob("embeddings.sqlite.*"))
    assert run(out, notes, *FAST).returncode == 0


@pytest.mark.slow
def test_a_disk_that_fills_during_the_run_and_the_run_after_it(tmp_path):
    notes = write_notes(tmp_path / "notes")
    with small_filesystem(tmp_path, "80k") as disk:
        first = run(disk / "out", notes, *FAST)
        assert_one_line_error(first, "no space left on the device", "free space there")
        assert f"error: {disk}" in first.stderr  # a file or folder on the full disk
        again = run(disk / "out", notes, *FAST)
        assert_one_line_error(again, "no space left on the device", f"error: {disk}")


@pytest.mark.slow
def test_a_damaged_context_store_is_repaired_and_its_contexts_are_not_paid_again(tmp_path):
    notes, out = write_notes(tmp_path / "notes"), tmp_path / "out"
    vendor = emulated()["anthropic"]
    key = f"storage-faults-{uuid.uuid4()}"  # made here: no key-like text in the repository
    env = {vendor.key_env: key}
    with emulator(vendor, key) as server:
        paid = [o.format(url=server.url) for o in vendor.scan.overrides]
        args = (*paid, "fusion=dense_only", "tracking=none", "embedder=minilm_onnx")
        assert run(out, notes, *args, env=env).returncode == 0
        calls = server.calls("/v1/messages", ok_only=True)
        assert calls > 0
        store = out / "cache" / "contexts.sqlite"
        damage(store, 0.3)
        assert_one_line_error(run(out, notes, *args, env=env), f"{store}: the store is damaged")
        repaired = run_cli("cache", "repair", f"cache_dir={out / 'cache'}")
        assert repaired.returncode == 0, repaired.stdout + repaired.stderr
        assert "repaired contexts.sqlite" in repaired.stdout
        rerun = run(out, notes, *args, env=env)
        assert rerun.returncode == 0, rerun.stderr
        assert server.calls("/v1/messages", ok_only=True) == calls  # nothing paid again
