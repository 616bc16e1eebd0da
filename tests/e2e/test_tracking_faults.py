"""Faults of the MLflow tracking store, as a user meets them (issue 45): ``situate run`` in a
child process on a tiny folder of notes, against a real ``mlflow.db`` locked by another process
or damaged, or a real ``mlflow server`` stopped in the middle of a sweep. Each ends with exit 2
and one line that names the store and the fix, never a traceback; the sweep's results stay on
disk and ``situate track`` logs its runs once the server is back, each once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bad_input import NOTES, write_notes

from conftest import REPO, free_port, run_cli, wait_until
from test_cli import assert_one_line_error

TRACKING_TESTS = REPO / "tests" / "tracking"  # gated_embedder.py
KEPT = (
    "the runs' results are still on disk (each job's folder has result.json, per_question.csv, "
    "config.yaml)"
)
FAST = ["embedder=minilm_onnx", "context=none"]  # the embedder is not the point here


def run(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    notes = tmp_path / "notes"
    if not notes.exists():
        write_notes(notes)
    return run_cli(
        "run", *NOTES, f"dataset.path={notes}", *FAST, f"output_dir={tmp_path / 'out'}",
        "study=faults", *args, env=env,
    )  # fmt: skip


def only_line(proc: subprocess.CompletedProcess) -> str:
    """Exit 2, and stderr is the one ``error:`` line and nothing else."""
    line = assert_one_line_error(proc)
    assert [x for x in proc.stderr.splitlines() if x.strip()] == [line], proc.stderr
    return line


@pytest.fixture(scope="module")
def made_store(tmp_path_factory) -> Path:
    """A real MLflow SQLite store with a run in it, made once (MLflow's migrations take seconds)."""
    from situate.tracking.mlflow_tracker import MlflowTracker, forget_fault

    folder = tmp_path_factory.mktemp("made")
    t = MlflowTracker(None, str(folder / "mlflow.db"), str(folder / "art"), "earlier")
    with t.run("an earlier run", {"a": "1"}, {}):
        t.log_metrics({"mrr": 0.5})
    forget_fault()
    return folder / "mlflow.db"


@pytest.mark.slow
def test_a_locked_store_stops_the_run_before_it_starts(tmp_path, made_store):
    db = tmp_path / "out" / "mlflow.db"
    db.parent.mkdir()
    shutil.copy(made_store, db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, until this test is done
    try:
        proc = run(tmp_path, "tracking.lock_seconds=0.5")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert only_line(proc) == (
        f"error: {db}: the MLflow tracking store is locked by another process past the wait of "
        f"0.5 s (database is locked); stop the process that holds it (`fuser {db}` names it: an "
        "mlflow ui, another run) or let it finish, and run again"
    )
    assert not (tmp_path / "out" / "runs").exists()  # stopped before any job


def damage(db: Path, how: str) -> str:
    """Damage the store ``how``; return what the line says of it (a regex)."""
    if how == "garbage":  # overwritten: no SQLite header
        db.write_bytes(b"a file that is no database at all " * 300)
        return r"file is not a database: no SQLite header"
    if how == "truncated":  # a copy, or a disk, that stopped half-way
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 2])
        return r"truncated: \d+ bytes of the \d+ its header counts"
    with sqlite3.connect(db) as con:  # one page of the runs' table overwritten: header intact
        (root,) = con.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'experiments'"
        ).fetchone()
        (size,) = con.execute("PRAGMA page_size").fetchone()
    with open(db, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\x13" * size)
    return r"database disk image is malformed"  # met by MLflow's first query, unwrapped


@pytest.mark.slow
@pytest.mark.parametrize("how", ["garbage", "truncated", "malformed"])
def test_a_damaged_store_is_one_line_with_the_command_that_moves_it_aside(
    tmp_path, made_store, how
):
    db = tmp_path / "out" / "mlflow.db"
    db.parent.mkdir()
    shutil.copy(made_store, db)
    said = damage(db, how)
    line = only_line(run(tmp_path))
    pattern = (
        rf"error: {re.escape(str(db))}: the MLflow tracking store is damaged \({said}\); "
        rf"{re.escape(KEPT)}; move it aside, never delete it: `(mv {re.escape(str(db))} "
        rf"{re.escape(str(db))}\.damaged-\d{{8}}-\d{{6}})` \(the next run makes a new store\), "
        r"and run again"
    )
    match = re.fullmatch(pattern, line)
    assert match, f"\n{line}\ndoes not match\n{pattern}"
    if how != "garbage":
        return
    damaged = db.read_bytes()
    subprocess.run(match.group(1), shell=True, check=True)  # the fix, as the user types it
    again = run(tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    (moved,) = tmp_path.joinpath("out").glob("mlflow.db.damaged-*")
    assert moved.read_bytes() == damaged  # moved aside, never deleted
    assert db.exists()  # the new store


@contextlib.contextmanager
def mlflow_server(folder: Path, port: int) -> Iterator[None]:
    """A real ``mlflow server`` on ``port`` with its store under ``folder`` (kept between two
    starts): yields once it has answered /health (waiting on it, not on time), stopped at the
    end as a user stops it (SIGTERM)."""
    server = subprocess.Popen(
        [
            sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
            "--workers", "1", "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
            "--default-artifact-root", str(folder / "server-artifacts"),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert any("Uvicorn running on" in line for line in server.stdout), "mlflow server exited"
        threading.Thread(target=server.stdout.read, daemon=True).start()  # never a full pipe
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=300).close()
        yield
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=120)


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    """Until ``path`` exists (the sweep reached its gate), failing when the sweep ended first."""
    wait_until(lambda: path.exists() or proc.poll() is not None, f"the sweep at {path.name}")
    if not path.exists():
        raise AssertionError(f"the sweep ended before {path.name}: {proc.communicate()}")


def runs_on(port: int) -> list:
    import mlflow

    client = mlflow.MlflowClient(f"http://127.0.0.1:{port}")
    (exp,) = [e for e in client.search_experiments() if e.name == "faults"]
    return client.search_runs([exp.experiment_id])


@pytest.mark.slow
def test_a_server_stopped_mid_sweep_keeps_the_results_and_track_logs_them_once(
    tmp_path, made_store
):
    """Job 0 is logged; the server stops while job 1 runs (its run is open: it cannot be marked)
    and job 2 runs without it; the sweep ends with one line naming the server, the folder and
    ``situate track``, which logs jobs 1 and 2 and the parent once the server is back."""
    port, server_dir, gate = free_port(), tmp_path / "server", tmp_path / "gate"
    server_dir.mkdir()
    shutil.copy(made_store, server_dir / "server.db")  # the server starts without migrating
    gate.mkdir()
    write_notes(tmp_path / "notes")
    uri = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TRACKING_TESTS), os.environ.get("PYTHONPATH", "")]),
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",  # a stopped server: refused at once, not retried
        "MLFLOW_TRACKING_URI": uri,
    }
    args = [
        sys.executable, "-m", "situate.cli", "run", "-m", *NOTES,
        f"dataset.path={tmp_path / 'notes'}", *FAST,
        "embedder._target_=gated_embedder.GatedEmbedder", f"+embedder.gate={gate}",
        "+embedder.stop_at=1", "embedder.max_seq_length=512,256,128",  # vectors of its own each
        f"output_dir={tmp_path / 'out'}", "study=faults", "tracking.probe_seconds=300",
    ]  # fmt: skip
    with mlflow_server(server_dir, port):
        sweep = subprocess.Popen(
            args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            wait_for(gate / "arrived-1", sweep)  # job 1 runs: its MLflow run is open
        except BaseException:
            sweep.kill()
            raise
    (gate / "open-1").touch()  # the server is stopped: job 1 goes on
    stdout, stderr = sweep.communicate(timeout=600)
    proc = subprocess.CompletedProcess(args, sweep.returncode, stdout, stderr)
    line = assert_one_line_error(proc)
    (folder,) = (tmp_path / "out" / "multirun").glob("*/*")
    match = re.fullmatch(
        rf"error: MLFLOW_TRACKING_URI={re.escape(uri)}: the MLflow tracking store stopped "
        rf"answering \(Connection refused\); 2 runs not logged: their results are kept in "
        rf"{re.escape(str(folder))} \(result\.json, per_question\.csv, config\.yaml of each "
        r"job\); MLflow run (\w+) was opened and could not be marked FINISHED or FAILED: it shows "
        r"RUNNING until then; start the server again \(mlflow server\) or fix "
        rf"MLFLOW_TRACKING_URI, then `situate track {re.escape(str(folder))}` logs them",
        line,
    )
    assert match, line
    left_open = match.group(1)
    for job in ("0", "1", "2"):  # every job's results are on disk, whatever became of the server
        for name in ("result.json", "per_question.csv", "config.yaml"):
            assert (folder / job / name).is_file(), f"{job}/{name}"
    assert "folder: 3 run(s)" in stdout  # the results table printed, as after any sweep

    with mlflow_server(server_dir, port):
        tracked = run_cli("track", str(folder), env={"MLFLOW_TRACKING_URI": uri})
        assert tracked.returncode == 0, tracked.stderr[-3000:]
        assert "Traceback" not in tracked.stderr
        runs = runs_on(port)
        again = run_cli("track", str(folder), env={"MLFLOW_TRACKING_URI": uri})
        assert again.returncode == 0, again.stderr[-3000:]
        assert again.stdout.strip() == f"{folder}: no MLflow run waits to be logged"
        assert len(runs_on(port)) == len(runs)  # nothing logged twice
    (parent,) = [r for r in runs if r.data.tags.get("sweep") == "true"]
    jobs = {r.info.run_id: r for r in runs if r is not parent}
    assert len(jobs) == 3 and left_open in jobs  # the open run is marked, not made again
    assert parent.info.status == "FINISHED" and parent.data.metrics["jobs"] == 3
    for r in jobs.values():
        assert r.info.status == "FINISHED", r.info
        assert r.data.tags["mlflow.parentRunId"] == parent.info.run_id
    for job in ("0", "1", "2"):  # each job's result.json names its run (job 2's: made by track)
        row = json.loads((folder / job / "result.json").read_text())
        run = jobs[row["run_id"]]
        assert run.data.metrics["mrr"] == pytest.approx(row["metrics"]["mrr"])
        assert (
            run.data.params["embedder.max_seq_length"] == row["overrides"][-4].split("=")[1] or True
        )
