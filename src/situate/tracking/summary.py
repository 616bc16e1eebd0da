"""A Hydra callback that prints one results table when a run or a sweep ends.

Each job writes ``result.json`` into its own output folder (jobs may run in other processes);
the callback reads them back, so the table is the same with every launcher.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from situate.stages import CHOICE_GROUPS
from situate.tracking.base import RESULT_FILE, Tracker, run_name, without_credentials
from situate.tracking.mlflow_tracker import runs_url

log = logging.getLogger(__name__)

PARENT_FILE = "parent_run_id"  # in the sweep folder: the MLflow run the sweep's jobs nest under


class ResultsTable(Callback):
    """Print a table of every job's metrics (rich), and create the tracking store up front."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        _prepare_tracking(config)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        tracker = _prepare_tracking(config)
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

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        folder = Path(config.hydra.run.dir)
        if print_results(sorted(folder.glob(RESULT_FILE))) is not None:
            print_next_steps(config, folder)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        SWEEP_UNDER_WAY.clear()
        sweep = Path(config.hydra.sweep.dir)
        files = sorted(sweep.glob(f"*/{RESULT_FILE}"), key=_job_number)
        table = print_results(files)
        if table is not None:
            print_selection(config, files)
            print_next_steps(config, sweep)
        close_parent(config, files, table or "")
        rows = [json.loads(f.read_text()) for f in files]
        SWEEP_OUTCOME.update(jobs=len(rows), failed=sum(1 for r in rows if r.get("error")))


# how the last sweep of this process ended (``situate run -m`` exits 1 when a job failed)
SWEEP_OUTCOME: dict[str, int] = {"jobs": 0, "failed": 0}

# the config of a sweep whose parent run is open (Ctrl-C skips on_multirun_end: see interrupted())
SWEEP_UNDER_WAY: list[DictConfig] = []


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
        files = sorted(Path(config.hydra.sweep.dir).glob(f"*/{RESULT_FILE}"), key=_job_number)
        close_parent(config, files, "", interrupted=True)


def _tracker(config: DictConfig) -> Tracker | None:
    from hydra.utils import instantiate

    return None if config.get("tracking") is None else instantiate(config.tracking)


def _prepare_tracking(config: DictConfig) -> Tracker | None:
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


def print_selection(config: DictConfig, files: list[Path]) -> None:
    """Under a sweep's table: its best job, picked on dev and reported on test with a split."""
    from situate.console import console
    from situate.report.selection import sweep_selection

    rows = [json.loads(f.read_text()) for f in files]
    baseline = config.get("baseline")
    spec = OmegaConf.to_container(baseline, resolve=True) if baseline is not None else None
    for line in sweep_selection(rows, [f.parent for f in files], spec):
        console().print(line)


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


def _job_number(path: Path) -> int:
    try:
        return int(path.parent.name)
    except ValueError:
        return 0


def print_results(files: list[Path]) -> str | None:
    """Print the results table; return it as plain text (for the sweep's parent run)."""
    rows = [json.loads(f.read_text()) for f in files]
    if not rows:
        return None
    from rich.console import Console

    from situate.console import console

    table = results_table(rows)
    console().print(table)
    plain = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    plain.print(table)
    return plain.export_text()


def telling_groups(rows: list[dict]) -> list[str]:
    """The config groups whose choices tell the rows apart; with ``arm``, only those it does not set."""
    varying = [g for g in CHOICE_GROUPS if len({r["choices"].get(g) for r in rows}) > 1]
    if "arm" in varying:
        arms = {r["choices"].get("arm") for r in rows}
        varying = [
            g
            for g in varying
            if g == "arm"
            or len({(r["choices"].get("arm"), r["choices"].get(g)) for r in rows}) > len(arms)
        ]
    return varying or ["context", "fusion"]


def results_table(rows: list[dict]):
    """One row per job: the choices that tell it apart (never cut), Pass@k, Recall@k, MRR, run id."""
    from rich.table import Table

    groups = telling_groups(rows)
    ks = rows[0].get("ks", [5, 10, 20])
    table = Table(title=f"{rows[0]['choices'].get('dataset', '')}: {len(rows)} run(s)")
    for g in groups:
        names = [str(r["choices"].get(g, "")) for r in rows]
        table.add_column(g, min_width=max(len(n) for n in [g, *names]), overflow="fold")
    told = telling_overrides(rows, groups)
    if told:  # parameters set per job (an Optuna trial's values) tell the rows apart
        table.add_column("parameters", overflow="fold")
    for name in ("Pass", "Recall"):
        for k in ks:
            table.add_column(f"{name}@{k}", justify="right")
    table.add_column("MRR", justify="right")
    # a job's wall seconds (app.run_job's run_seconds), where the jobs logged them
    timed = any("run_seconds" in r.get("metrics", {}) for r in rows)
    if timed:
        table.add_column("seconds", justify="right")
    table.add_column("MLflow run", overflow="fold")
    for i, r in enumerate(rows):
        m = r.get("metrics", {})
        if r.get("error"):
            error = r["error"] if len(r["error"]) <= 70 else r["error"][:67] + "..."
            cells = ["failed"] * (2 * len(ks) + 1) + [error]
        elif "mrr" not in m:  # no question has gold: no gold metric, and no zero to misread
            cells = ["no gold"] * (2 * len(ks) + 1) + [r.get("run_id") or "-"]
        else:
            cells = [f"{100 * m[f'pass_at_{k}']:.1f}" for k in ks]
            cells += [f"{100 * m[f'recall_at_{k}']:.1f}" for k in ks]
            cells += [f"{m['mrr']:.3f}", r.get("run_id") or "-"]
        if timed:
            seconds = m.get("run_seconds")
            cells.insert(-1, "-" if seconds is None else f"{seconds:.0f}")
        extra = [told[i]] if told else []
        table.add_row(*[str(r["choices"].get(g, "")) for g in groups], *extra, *cells)
    return table


def telling_overrides(rows: list[dict], groups: list[str]) -> list[str]:
    """Per row, the overrides that differ between rows and are not a group choice shown; [] when
    the rows' choices already tell them apart."""
    if len({tuple(r["choices"].get(g) for g in groups) for r in rows}) == len(rows):
        return []
    lists = [r.get("overrides") or [] for r in rows]
    shared = set.intersection(*(set(o) for o in lists)) if lists else set()
    return [" ".join(o for o in overrides if o not in shared) for overrides in lists]
