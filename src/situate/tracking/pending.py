"""Runs whose tracking store failed while they ran: kept in their job's folder, logged later.

A job does not need its tracking store to compute its results: when the store fails mid-run (a
tracking server stopped, ``mlflow.db`` locked past MLflow's wait, damaged or on a full disk),
the job goes on, keeps its results (``result.json``, ``per_question.csv``, ``config.yaml``) and
writes what it would have logged into :data:`PENDING_FILE` beside them: the run's name, params,
tags, parent, metrics, dataset, status and error, its id when the run had been opened, with its
artifacts copied under :data:`PENDING_ARTIFACTS`. A sweep's parent run does the same in the
sweep folder. :func:`log_pending` (``situate track FOLDER``, and the end of a sweep when the
store answers again) logs them: into the run that was opened (marking it, which the failing
store could not) or a new one, each file renamed :data:`LOGGED_FILE` once logged, so a second
call logs nothing twice.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from situate.stores.files import atomic_write_text
from situate.tracking.base import RESULT_FILE
from situate.tracking.faults import KEPT_ON_DISK, TrackingStoreError

PENDING_FILE = "pending_mlflow.json"
PENDING_ARTIFACTS = "pending_mlflow"  # the run's artifacts, copied while the store was down
LOGGED_FILE = "logged_mlflow.json"  # a pending file once logged (its record, with the run id)
PARENT_FILE = "parent_run_id"  # in the sweep folder: the MLflow run the sweep's jobs nest under


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class PendingRun:
    """What a run logs, kept as it is logged: written to :data:`PENDING_FILE` when the store
    failed before all of it reached the store."""

    name: str
    params: dict[str, str]
    tags: dict[str, str]
    store: str  # the tracking URI, without credentials
    experiment: str
    artifact_root: str | None = None  # where a new experiment keeps artifacts (a local store)
    parent_run_id: str | None = None
    run_id: str | None = None  # the run opened on the store, if it was
    start_time: int = field(default_factory=now_ms)
    end_time: int | None = None
    status: str = "RUNNING"
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    artifacts: bool = False  # copied under PENDING_ARTIFACTS
    tables: list[str] = field(default_factory=list)  # artifacts that are the run's tables
    question_set: dict[str, Any] | None = None  # QuestionSet.to_json() of the run's questions
    reason: str | None = None  # the store's fault, once met

    def to_json(self) -> dict[str, Any]:
        return {"kind": "run", **self.__dict__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PendingRun:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def write(self, folder: Path) -> Path:
        path = Path(folder) / PENDING_FILE
        atomic_write_text(path, json.dumps(self.to_json(), indent=1))
        return path


def write_parent(sweep_dir: Path, record: dict[str, Any]) -> Path:
    """A sweep's parent run as it is to be logged: ``name``, ``params``, ``tags``, ``store``,
    ``experiment``, ``run_id`` (None when never opened), ``end`` (the sweep's outcome, or None
    while it runs) and ``reason``."""
    path = Path(sweep_dir) / PENDING_FILE
    atomic_write_text(path, json.dumps({"kind": "parent", **record}, indent=1))
    return path


def pending_files(folder: str | Path) -> list[Path]:
    """The pending runs under ``folder`` (itself included), parents first, then in job order."""
    folder = Path(folder)
    found = list(folder.rglob(PENDING_FILE))

    def order(path: Path) -> tuple:  # a sweep's job folders are numbers: 2 before 10
        parts = path.relative_to(folder).parts[:-1]
        return len(parts), tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)

    return sorted(found, key=order)


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Outcome:
    """What :func:`log_pending` logged: the runs (folder, run id) and the parents."""

    runs: list[tuple[Path, str]] = field(default_factory=list)
    parents: list[tuple[Path, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.runs) + len(self.parents)


def stores(folder: str | Path) -> dict[tuple[str, str, str | None], list[Path]]:
    """The pending files under ``folder`` by the store, experiment and artifact root they were
    meant for (a folder of several studies or stores holds several)."""
    found: dict[tuple[str, str, str | None], list[Path]] = {}
    for path in pending_files(folder):
        record = _read(path)
        key = (record["store"], record["experiment"], record.get("artifact_root"))
        found.setdefault(key, []).append(path)
    return found


def log_pending(folder: str | Path, tracker, files: list[Path] | None = None) -> Outcome:
    """Log the pending runs under ``folder`` (``files``: those of them; default: all) to
    ``tracker``'s store (an :class:`~situate.tracking.mlflow_tracker.MlflowTracker`); each file
    logged is renamed :data:`LOGGED_FILE` at once. A fault of the store is raised as its one
    line; what was not logged stays pending for the next call."""
    outcome = Outcome()
    files = pending_files(folder) if files is None else files
    if not files:
        return outcome
    remap: dict[str, str] = {}  # a parent's id in the store it was opened in -> in this one
    parents = [(f, _read(f)) for f in files if _read(f).get("kind") == "parent"]
    for path, record in parents:
        old = record.get("run_id")
        new = tracker.ensure_parent(record)
        if new != old:
            record["run_id"] = new
            write_parent(path.parent, {k: v for k, v in record.items() if k != "kind"})
            (path.parent / PARENT_FILE).write_text(new)
            if old:
                remap[old] = new
    for path in files:
        record = _read(path)
        if record.get("kind") == "parent":
            continue
        run = PendingRun.from_json(record)
        run.parent_run_id = remap.get(run.parent_run_id or "", run.parent_run_id)
        if run.parent_run_id:
            run.tags["mlflow.parentRunId"] = run.parent_run_id
        folder = path.parent
        run_id = tracker.log_recorded(
            run, folder / PENDING_ARTIFACTS, partial(PendingRun.write, folder=folder)
        )
        _update_result(path.parent, run_id)
        _done(path, {**run.to_json(), "run_id": run_id})
        outcome.runs.append((path.parent, run_id))
    for path, record in parents:
        if record.get("end") is not None:
            tracker.end_parent(record["run_id"], **record["end"])
        _done(path, record)
        outcome.parents.append((path.parent, record["run_id"]))
    return outcome


def _done(path: Path, record: dict[str, Any]) -> None:
    """``path`` logged: its record, with the run's id in the store, as :data:`LOGGED_FILE`."""
    record = {**record, "logged_at": now_ms()}
    atomic_write_text(path, json.dumps(record, indent=1))
    os.replace(path, path.with_name(LOGGED_FILE))


def _update_result(folder: Path, run_id: str) -> None:
    """The job's ``result.json`` names the run it was logged to (its results table's column)."""
    result = folder / RESULT_FILE
    if not result.is_file():
        return
    row = json.loads(result.read_text(encoding="utf-8"))
    if row.get("run_id") != run_id:
        row["run_id"] = run_id
        atomic_write_text(result, json.dumps(row, indent=1))


def waiting_line(folder: Path, fault: TrackingStoreError, command: str = "situate track") -> str:
    """The one line of a run or sweep that ended with runs not logged: the store's fault and its
    fix, where their results are, the runs left open, and the command that logs them."""
    records = [_read(f) for f in pending_files(folder)]
    runs = [r for r in records if r.get("kind") != "parent"]
    left_open = [r["run_id"] for r in records if r.get("run_id") and r.get("kind") != "parent"]
    open_note = ""
    if left_open:
        shown = ", ".join(left_open[:3]) + (" ..." if len(left_open) > 3 else "")
        open_note = (
            f"; MLflow run {shown} was opened and could not be marked FINISHED or FAILED: it "
            "shows RUNNING until then"
        )
    if len(runs) == 1:
        kept = f"1 run not logged: its results are kept in {folder} ({KEPT_ON_DISK})"
    else:
        kept = (
            f"{len(runs)} runs not logged: their results are kept in {folder} ({KEPT_ON_DISK} of "
            "each job)"
        )
    return f"{fault.head}; {kept}{open_note}; {fault.fix}, then `{command} {folder}` logs them"
