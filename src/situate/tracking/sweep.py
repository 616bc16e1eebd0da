"""What the tracker does around the jobs of a run or a sweep: the sweep's parent run (opened
before its jobs, closed with their outcome, closed as KILLED on Ctrl-C) and where to look once
the jobs end (the outputs, the MLflow UI, the study's report).

The Hydra callback that calls these (:class:`situate.study.results_table.ResultsTable`) reads
the jobs' ``result.json`` files, which :func:`job_results` lists.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from situate.errors import SituateExit
from situate.tracking.base import RESULT_FILE, Tracker, run_name, without_credentials
from situate.tracking.pending import PARENT_FILE, pending_files

log = logging.getLogger(__name__)

# the config of a sweep whose parent run is open (Ctrl-C skips on_multirun_end: see interrupted())
SWEEP_UNDER_WAY: list[DictConfig] = []


def _parent(config: DictConfig) -> tuple[str, dict[str, str], dict[str, str]]:
    """The name, params (the grid: a preset's ``hydra.sweeper.params``, then the command line's
    key=values) and tags of a sweep's parent run."""
    sweep = Path(config.hydra.sweep.dir)
    task = list(config.hydra.overrides.task)
    params = {str(k): str(v) for k, v in (config.hydra.sweeper.get("params") or {}).items()}
    for override in task:  # `+key=value` adds key (MLflow refuses a `+` in a param's name)
        key, sep, value = override.partition("=")
        if sep:
            params[key.lstrip("+~")] = value
    tags = {"sweep": "true", "sweep_dir": str(sweep), "overrides": " ".join(task)}
    return f"sweep {run_name(task) or sweep.name}", params, tags


def open_parent(config: DictConfig) -> None:
    """Before a sweep's jobs: create the tracking store and open the parent run they nest under
    (its id written to the sweep folder's :data:`PARENT_FILE`). A fault of the store stops the
    sweep in one line before any job starts."""
    tracker = prepare_tracking(config)
    if tracker is None:
        return
    sweep = Path(config.hydra.sweep.dir)
    with _one_line():
        parent = tracker.start_parent(*_parent(config))
    if parent:
        sweep.mkdir(parents=True, exist_ok=True)
        (sweep / PARENT_FILE).write_text(parent)
        SWEEP_UNDER_WAY.append(config)


@contextlib.contextmanager
def _one_line() -> Iterator[None]:
    """A fault of the tracking store, met in a Hydra callback (which would print it as a warning
    and go on), out to the CLI as its one line (exit 2)."""
    from situate.stores.faults import StorageError

    try:
        yield
    except StorageError as e:
        raise SituateExit(e) from e


def close_parent(
    config: DictConfig,
    files: list[Path],
    table: str,
    interrupted: bool = False,
    error: str | None = None,
    study: Mapping[str, Any] | None = None,
):
    """End the sweep's parent run with its jobs' outcome (``results.txt``: the table) and what
    the study found (``study``: ``tables`` and ``tags``, see :func:`end_parent`).

    When the tracking store failed during the sweep (:mod:`situate.tracking.pending`), the
    parent waits in the sweep folder with its jobs' runs; once the jobs are done they are all
    logged now if the store answers again, else the sweep stops with the one line that says
    where their results are and the command that logs them (``situate track``). A sweep stopped
    by Ctrl-C, or by an error (``error``: its one line, which the parent carries), only writes
    what waits."""
    sweep = Path(config.hydra.sweep.dir)
    parent_file = sweep / PARENT_FILE
    if config.get("tracking") is None:
        return
    tracker = _tracker(config)
    rows = [json.loads(f.read_text()) for f in files]
    failed = sum(1 for r in rows if r.get("error"))
    end = {
        "jobs": len(rows),
        "failed_jobs": failed,
        "text_artifacts": {"results.txt": table},
        "interrupted": interrupted,
        "error": error,
    }
    if study:  # its results as a table, its informativeness as a tag and a file
        end["text_artifacts"].update(study.get("text_artifacts", {}))
        end["tables"], end["tags"] = study.get("tables"), study.get("tags")
    parent = parent_file.read_text().strip() if parent_file.exists() else None
    waiting = bool(pending_files(sweep))
    if parent:
        from situate.tracking.faults import TrackingStoreError

        try:
            tracker.end_parent(parent, **end)
        except TrackingStoreError as e:
            _keep_parent(config, tracker, parent, end, e)
            waiting = True
        else:
            if waiting:  # the jobs' runs wait: their parent too, for a new store's sake
                _keep_parent(config, tracker, parent, None, None)
    if waiting and not interrupted and error is None:
        settle(tracker, sweep)


def _keep_parent(config, tracker, parent: str, end: dict | None, fault) -> None:
    from situate.tracking.pending import write_parent

    name, params, tags = _parent(config)
    write_parent(
        Path(config.hydra.sweep.dir),
        {
            "name": name, "params": params, "tags": tags, "store": tracker.store(),
            "experiment": tracker.experiment, "run_id": parent, "end": end,
            "artifact_root": str(tracker.artifact_root) if tracker.local_artifacts else None,
            "reason": None if fault is None else str(fault),
        },
    )  # fmt: skip


def settle(tracker, folder: Path) -> None:
    """The runs waiting under ``folder`` (a run's or a sweep's): logged now when the store
    answers again, else the one line (exit 2) that names the store, its fix, where the results
    are and the command that logs them later."""
    from situate.tracking.faults import TrackingStoreError
    from situate.tracking.mlflow_tracker import forget_fault, store_down
    from situate.tracking.pending import log_pending, waiting_line

    first = store_down(tracker.uri)
    forget_fault(tracker.uri)  # the store is asked again: it may be back
    try:
        tracker.check()
        logged = log_pending(folder, tracker)
    except TrackingStoreError as e:
        fault = first or e
        if fault.kind == "server" and first is None:  # the probe's words: no fix for later
            fault = TrackingStoreError(
                fault.where, fault.kind, fault.head, "start it again (mlflow server)"
            )
        raise SituateExit(fault.told(waiting_line(folder, fault))) from e
    log.info(
        "%s: the tracking store answers again; logged the %d run(s) that waited", folder,
        len(logged),
    )  # fmt: skip


def interrupted() -> None:
    """Ctrl-C during a sweep: its parent run is KILLED with the jobs that finished, not left
    RUNNING (Hydra calls no callback on an interrupt)."""
    while SWEEP_UNDER_WAY:
        config = SWEEP_UNDER_WAY.pop()
        close_parent(config, job_results(config.hydra.sweep.dir), "", interrupted=True)


def stopped(error: BaseException) -> None:
    """A sweep stopped by an error (a fault of the disk or of a store, which every later job
    would meet too): its parent run is closed FAILED with the one-line error and the jobs that
    ended, not left RUNNING (Hydra calls no callback then)."""
    from situate.tracking.base import one_line_error

    while SWEEP_UNDER_WAY:
        config = SWEEP_UNDER_WAY.pop()
        try:
            close_parent(
                config, job_results(config.hydra.sweep.dir), "", error=one_line_error(error)
            )
        except Exception as e:  # the sweep's own error is the one to print
            log.warning("could not close the sweep's parent run: %s", e)


def _tracker(config: DictConfig) -> Tracker | None:
    from hydra.utils import instantiate

    return None if config.get("tracking") is None else instantiate(config.tracking)


def prepare_tracking(config: DictConfig) -> Tracker | None:
    """Create the MLflow store before any job starts (parallel jobs would race to migrate it);
    a fault of the store is its one line (exit 2)."""
    tracker = _tracker(config)
    if tracker is not None:
        with _one_line():
            tracker.prepare()
    return tracker


MAKE_REPORT = "cookbook_replication"  # the experiment `make report` reports
DEFAULT_OUTPUT_DIR = "outputs"  # conf/config.yaml's output_dir
DEFAULT_DB = Path(DEFAULT_OUTPUT_DIR, "mlflow.db")  # the store `make mlflow-ui` opens
LOCAL_UI = "http://127.0.0.1:5000"  # where `mlflow ui` and `make mlflow-ui` serve


def next_steps(
    config: DictConfig, folder: Path, experiment_id: str | None = None
) -> list[tuple[str, str]]:
    """Where to look once the table is printed: the outputs, the MLflow UI (the experiment's runs
    table: MLflow 3.17 opens an experiment on its GenAI overview otherwise), the study's report."""
    steps = [
        (
            "outputs",
            f"{folder} (result.json, per_question.csv, config.yaml and app.log of each job)",
        )
    ]
    tracker = _tracker(config)
    uri = tracker.uri if tracker is not None else None

    def page(ui: str) -> str:
        from situate.tracking.mlflow_tracker import runs_url  # not imported by a run without it

        return runs_url(ui, experiment_id) if experiment_id else ui

    if uri and uri == f"sqlite:///{DEFAULT_DB.resolve()}":
        steps.append(("MLflow", f"make mlflow-ui, then open {page(LOCAL_UI)}"))
    elif uri and urlsplit(uri).scheme in ("http", "https"):
        steps.append(("MLflow", f"open {page(without_credentials(uri))} (the tracking server)"))
    elif uri:  # a SQLite file or a database: the UI is served from it
        store = without_credentials(uri)
        steps.append(
            ("MLflow", f"mlflow ui --backend-store-uri {store}, then open {page(LOCAL_UI)}")
        )
    experiment = OmegaConf.select(config, "hydra.runtime.choices.experiment")
    if experiment and config.get("baseline") is not None:
        # what finds the study again: a study or output_dir other than the preset's
        where = [
            f"{key}={value}"
            for key, value, usual in (
                ("study", config.get("study"), experiment),
                ("output_dir", config.get("output_dir"), DEFAULT_OUTPUT_DIR),
            )
            if value is not None and str(value) != usual
        ]
        command = " ".join(["situate report", f"experiment={experiment}", *where])
        if experiment == MAKE_REPORT and not where:
            command = f"make report (= {command})"
        steps.append(("report", f"{command}: HTML + Markdown vs the baseline"))
    return steps


def print_next_steps(config: DictConfig, folder: Path) -> None:
    from rich.table import Table

    from situate.console import console

    table = Table(title="where to look next", title_justify="left", show_header=False, box=None)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for what, where in next_steps(config, folder, _experiment_id(config)):
        table.add_row(what, where)
    console().print(table)
    tracker = _tracker(config)
    single = OmegaConf.select(config, "hydra.mode") != RunMode.MULTIRUN  # a sweep: close_parent
    if tracker is not None and single and pending_files(folder):
        settle(tracker, folder)  # the run's MLflow run waits: logged now, or its one line


def _experiment_id(config: DictConfig) -> str | None:
    """The id of the experiment the runs were logged to (None untracked, or where the store does
    not answer: the hint then names the UI without the experiment's page)."""
    tracker = _tracker(config)
    from situate.tracking.mlflow_tracker import store_down

    if tracker is None or (tracker.uri and store_down(tracker.uri)):
        return None  # a store that failed in this run is not waited on again for a link
    try:
        return tracker.prepare()
    except Exception as e:  # the runs are logged; a hint must not turn them into a failure
        log.warning("could not look the MLflow experiment up for its link: %s", e)
        return None


def parent_run_id(sweep_dir: str | Path) -> str | None:
    """The parent run of the sweep in ``sweep_dir``, if one was opened."""
    f = Path(sweep_dir) / PARENT_FILE
    return f.read_text().strip() if f.exists() else None


def job_results(sweep_dir: str | Path) -> list[Path]:
    """The ``result.json`` of each job of the sweep in ``sweep_dir``, in job order."""
    return sorted(Path(sweep_dir).glob(f"*/{RESULT_FILE}"), key=_job_number)


def _job_number(path: Path) -> int:
    try:
        return int(path.parent.name)
    except ValueError:
        return 0
