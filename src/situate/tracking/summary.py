"""A Hydra callback that prints one results table when a run or a sweep ends.

Each job writes ``result.json`` into its own output folder (jobs may run in other processes);
the callback reads them back, so the table is the same with every launcher.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from situate.tracking.base import run_name

RESULT_FILE = "result.json"
PARENT_FILE = "parent_run_id"  # in the sweep folder: the MLflow run the sweep's jobs nest under
GROUPS = (
    "arm",
    "dataset",
    "chunker",
    "context",
    "embedder",
    "dense",
    "sparse",
    "fusion",
    "reranker",
)
LLM_GROUPS = ("prompt", "llm")  # meaningful only with context=llm


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

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        print_results(sorted(Path(config.hydra.run.dir).glob(RESULT_FILE)))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep = Path(config.hydra.sweep.dir)
        files = sorted(sweep.glob(f"*/{RESULT_FILE}"), key=_job_number)
        table = print_results(files)
        parent_file = sweep / PARENT_FILE
        if parent_file.exists() and config.get("tracking") is not None:
            from hydra.utils import instantiate

            rows = [json.loads(f.read_text()) for f in files]
            failed = sum(1 for r in rows if r.get("error"))
            instantiate(config.tracking).end_parent(
                parent_file.read_text().strip(), len(rows), failed, {"results.txt": table or ""}
            )


def _prepare_tracking(config: DictConfig):
    """Create the MLflow store before any job starts (parallel jobs would race to migrate it)."""
    from hydra.utils import instantiate

    if config.get("tracking") is None:
        return None
    tracker = instantiate(config.tracking)
    tracker.prepare()
    return tracker


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
    from rich.table import Table

    from situate.console import console

    varying = [g for g in GROUPS if len({r["choices"].get(g) for r in rows}) > 1] or [
        "context",
        "fusion",
    ]
    ks = rows[0].get("ks", [5, 10, 20])
    table = Table(title=f"{rows[0]['choices'].get('dataset', '')}: {len(rows)} run(s)")
    for g in varying:
        table.add_column(g)
    for name in ("Pass", "Recall"):
        for k in ks:
            table.add_column(f"{name}@{k}", justify="right")
    table.add_column("MRR", justify="right")
    table.add_column("MLflow run", no_wrap=True)
    for r in rows:
        m = r.get("metrics", {})
        if r.get("error"):
            error = r["error"] if len(r["error"]) <= 70 else r["error"][:67] + "..."
            cells = ["failed"] * (2 * len(ks) + 1) + [error]
        else:
            cells = [f"{100 * m[f'pass_at_{k}']:.1f}" for k in ks]
            cells += [f"{100 * m[f'recall_at_{k}']:.1f}" for k in ks]
            cells += [f"{m['mrr']:.3f}", r.get("run_id") or "-"]
        table.add_row(*[str(r["choices"].get(g, "")) for g in varying], *cells)
    console().print(table)
    from rich.console import Console

    plain = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    plain.print(table)
    return plain.export_text()
