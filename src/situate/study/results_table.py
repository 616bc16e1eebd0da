"""A Hydra callback that prints one results table when a run or a sweep ends.

Each job writes ``result.json`` into its own output folder (jobs may run in other processes);
the callback reads them back, so the table is the same with every launcher. Under a sweep's
table, its best job (:func:`situate.study.selection.sweep_selection`) and whether its questions
can separate the arms (:func:`situate.study.informativeness.sweep_lines`); around the jobs, the
tracker's parent run and the lines that say where to look next (:mod:`situate.tracking.sweep`).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from situate.config.stages import CHOICE_GROUPS
from situate.tracking.base import PER_QUESTION, RESULT_FILE
from situate.tracking.sweep import (
    SWEEP_UNDER_WAY,
    close_parent,
    job_results,
    open_parent,
    prepare_tracking,
    print_next_steps,
)


class ResultsTable(Callback):
    """Print a table of every job's metrics (rich), and create the tracking store up front."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        prepare_tracking(config)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        open_parent(config)

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        folder = Path(config.hydra.run.dir)
        if print_results(sorted(folder.glob(RESULT_FILE))) is not None:
            print_next_steps(config, folder)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        SWEEP_UNDER_WAY.clear()
        sweep = Path(config.hydra.sweep.dir)
        files = job_results(sweep)
        table = print_results(files)
        lines: list[str] = []
        if table is not None:
            if compared_arms(files) >= 2:  # one arm has no best and nothing to separate
                print_selection(config, files)
                lines = print_informativeness(config, files)
            print_next_steps(config, sweep)
        close_parent(config, files, table or "", study=study_record(files, lines))
        rows = [json.loads(f.read_text()) for f in files]
        SWEEP_OUTCOME.update(
            jobs=len(rows),
            failed=sum(1 for r in rows if r.get("error")),
            skipped=sum(1 for r in rows if r.get("skipped")),
        )


# how the last sweep of this process ended (``situate run -m`` exits 1 when a job failed; a
# skipped job, which needs what is not installed, is not a failure)
SWEEP_OUTCOME: dict[str, int] = {"jobs": 0, "failed": 0, "skipped": 0}


def compared_arms(files: list[Path]) -> int:
    """The jobs of a sweep with results to compare: each that wrote its per-question table
    (neither failed nor skipped)."""
    return sum(1 for f in files if (f.parent / PER_QUESTION).is_file())


def print_selection(config: DictConfig, files: list[Path]) -> None:
    """Under a sweep's table: its best job, picked on dev and reported on test with a split."""
    from situate.console import console
    from situate.study.selection import sweep_selection

    rows = [json.loads(f.read_text()) for f in files]
    baseline = config.get("baseline")
    spec = OmegaConf.to_container(baseline, resolve=True) if baseline is not None else None
    for line in sweep_selection(rows, [f.parent for f in files], spec):
        console().print(line)


def print_informativeness(config: DictConfig, files: list[Path]) -> list[str]:
    """Under a sweep's table: whether its questions can separate the arms it compares (the
    warning and the metric that separates them best when they cannot), against the sweep's
    ``baseline`` when one job matches it, on the test questions with a dev/test split."""
    from situate.console import console
    from situate.study.informativeness import sweep_informativeness, sweep_lines

    rows = [json.loads(f.read_text()) for f in files]
    baseline = config.get("baseline")
    spec = OmegaConf.to_container(baseline, resolve=True) if baseline is not None else None
    lines = sweep_lines(*sweep_informativeness(rows, [f.parent for f in files], spec))
    for line in lines:
        console().print(line, markup=False, soft_wrap=True)  # one line each
    return lines


RESULTS_TABLE = "results_table.json"  # the sweep's parent run: one row per job
INFORMATIVENESS_TAG = "situate.informativeness"
INFORMATIVENESS_FILE = "informativeness.txt"


def study_record(files: list[Path], informativeness: list[str]) -> dict[str, Any]:
    """What a sweep's parent run holds of its study: the results as a table (one row per
    job: its run id, the choices that tell it apart, Pass@k / Recall@k / MRR or its error) and
    the informativeness lines (a tag and a file)."""
    rows = [json.loads(f.read_text()) for f in files]
    if not rows:
        return {}
    groups = telling_groups(rows)
    ks = rows[0].get("ks", [5, 10, 20])
    names = [f"{m}_at_{k}" for m in ("pass", "recall") for k in ks] + ["mrr"]
    columns: dict[str, list] = {"run_id": [], **{g: [] for g in groups}, **{n: [] for n in names}}
    columns["outcome"] = []
    for row in rows:
        metrics = row.get("metrics") or {}
        columns["run_id"].append(row.get("run_id") or "")
        for g in groups:
            columns[g].append(str(row["choices"].get(g, "")))
        for n in names:
            columns[n].append(round(metrics[n], 4) if n in metrics else None)
        outcome = row.get("error") or (f"skipped: {row['skipped']}" if row.get("skipped") else "")
        columns["outcome"].append(outcome or "finished")
    record: dict[str, Any] = {"tables": {RESULTS_TABLE: columns}}
    if informativeness:
        record["tags"] = {INFORMATIVENESS_TAG: " ".join(informativeness)}
        record["text_artifacts"] = {INFORMATIVENESS_FILE: "\n".join(informativeness) + "\n"}
    return record


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
        elif r.get("skipped"):  # an optional part not installed: not a failure
            cells = ["skipped"] * (2 * len(ks) + 1) + [r["skipped"]]
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
    """Per row, the overrides that differ between rows and are not a group choice shown (a column
    of their own: ``context=heading_path`` is not repeated); [] when the rows' choices already
    tell them apart."""
    if len({tuple(r["choices"].get(g) for g in groups) for r in rows}) == len(rows):
        return []
    lists = [
        [o for o in r.get("overrides") or [] if o.partition("=")[0].lstrip("+~") not in groups]
        for r in rows
    ]
    shared = set.intersection(*(set(o) for o in lists)) if lists else set()
    return [" ".join(o for o in overrides if o not in shared) for overrides in lists]
