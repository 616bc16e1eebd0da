"""What the tracker does around the jobs of a run or a sweep: the sweep's parent run (opened
before its jobs, closed with their outcome, closed as KILLED on Ctrl-C) and where to look once
the jobs end (the outputs, the MLflow UI, the study's report).

The Hydra callback that calls these (:class:`situate.study.results_table.ResultsTable`) reads
the jobs' ``result.json`` files, which :func:`job_results` lists.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from urllib.parse import urlsplit

from omegaconf import DictConfig, OmegaConf

from situate.tracking.base import RESULT_FILE, Tracker, run_name, without_credentials

log = logging.getLogger(__name__)

PARENT_FILE = "parent_run_id"  # in the sweep folder: the MLflow run the sweep's jobs nest under

# the config of a sweep whose parent run is open (Ctrl-C skips on_multirun_end: see interrupted())
SWEEP_UNDER_WAY: list[DictConfig] = []


def open_parent(config: DictConfig) -> None:
    """Before a sweep's jobs: create the tracking store and open the parent run they nest under
    (its id written to the sweep folder's :data:`PARENT_FILE`)."""
    tracker = prepare_tracking(config)
    if tracker is None:
        return
    sweep = Path(config.hydra.sweep.dir)
    task = list(config.hydra.overrides.task)
    # the grid: a preset's hydra.sweeper.params, then the command line's key=values
    params = {str(k): str(v) for k, v in (config.hydra.sweeper.get("params") or {}).items()}
    params.update(o.partition("=")[::2] for o in task if "=" in o)
    tags = {"sweep": "true", "sweep_dir": str(sweep), "overrides": " ".join(task)}
    parent = tracker.start_parent(f"sweep {run_name(task) or sweep.name}", params, tags)
    if parent:
        sweep.mkdir(parents=True, exist_ok=True)
        (sweep / PARENT_FILE).write_text(parent)
        SWEEP_UNDER_WAY.append(config)


def close_parent(config: DictConfig, files: list[Path], table: str, interrupted: bool = False):
    """End the sweep's parent run with its jobs' outcome (``results.txt``: the table)."""
    parent_file = Path(config.hydra.sweep.dir) / PARENT_FILE
    if parent_file.exists() and config.get("tracking") is not None:
        rows = [json.loads(f.read_text()) for f in files]
        failed = sum(1 for r in rows if r.get("error"))
        _tracker(config).end_parent(
            parent_file.read_text().strip(), len(rows), failed, {"results.txt": table}, interrupted
        )


def interrupted() -> None:
    """Ctrl-C during a sweep: its parent run is KILLED with the jobs that finished, not left
    RUNNING (Hydra calls no callback on an interrupt)."""
    while SWEEP_UNDER_WAY:
        config = SWEEP_UNDER_WAY.pop()
        close_parent(config, job_results(config.hydra.sweep.dir), "", interrupted=True)


def _tracker(config: DictConfig) -> Tracker | None:
    from hydra.utils import instantiate

    return None if config.get("tracking") is None else instantiate(config.tracking)


def prepare_tracking(config: DictConfig) -> Tracker | None:
    """Create the MLflow store before any job starts (parallel jobs would race to migrate it)."""
    tracker = _tracker(config)
    if tracker is not None:
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


def _experiment_id(config: DictConfig) -> str | None:
    """The id of the experiment the runs were logged to (None untracked, or where the store does
    not answer: the hint then names the UI without the experiment's page)."""
    tracker = _tracker(config)
    try:
        return None if tracker is None else tracker.prepare()
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
