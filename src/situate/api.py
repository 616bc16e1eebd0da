"""The Python API, for notebooks: ``situate.run``, ``situate.sweep``, ``situate.compare``.

- :func:`run` composes the config with Hydra's compose API (the overrides ``situate run`` takes)
  and calls the CLI's own job (:func:`situate.running.app.run_job`): same caches, same MLflow tracking,
  same run folder; it returns a :class:`Result`.
- :func:`sweep` runs ``situate run -m`` in a child process (every sweeper and launcher the CLI
  has, Optuna's included, and the sweep's parent MLflow run), then returns one row per job.
- :func:`halve` is successive halving for expensive grids: every arm on a sample of the
  questions, the arms the paired test shows worse than the leader dropped, the rest on more.
- :func:`compare` pairs per-question scores of runs with a baseline's: difference, bootstrap CI,
  randomization p (Holm-adjusted across the runs), wins/ties/losses; on one part of the split
  (``part="test"``) if asked.

``import situate`` stays light: this module is imported on first use of one of those names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from situate.errors import SituateError
from situate.tracking.base import PER_QUESTION


@dataclass
class Result:
    """One run: its metrics, one row per question (``part`` says dev or test), its MLflow run."""

    metrics: dict[str, float]
    per_question: pd.DataFrame
    run_id: str | None
    folder: Path  # the run folder (result.json, per_question.csv, config.yaml)
    overrides: list[str] = field(default_factory=list)

    @classmethod
    def from_folder(cls, folder: str | Path) -> Result:
        """The result a run (or one job of a sweep) left in its folder."""
        folder = Path(folder)
        try:
            row = json.loads((folder / "result.json").read_text())
        except (OSError, ValueError) as e:
            raise SituateError(
                f"{folder / 'result.json'}: no readable result ({e}); pass a run or job folder"
            ) from e
        if row.get("error"):
            raise SituateError(f"{folder}: the run failed: {row['error']}")
        table = pd.read_csv(
            folder / PER_QUESTION,
            dtype={"qid": str, "question": str, "gold": str, "part": str},
            keep_default_na=False,
        )
        return cls(row["metrics"], table, row.get("run_id"), folder, list(row.get("overrides", [])))

    def scores(self, metric: str, part: str | None = None) -> pd.Series:
        """Per-question ``metric`` (``pass_at_20``, ``recall_at_5``, ``mrr``) indexed by qid;
        questions without gold (blank cells) are not scored, so they are left out."""
        column = "reciprocal_rank" if metric == "mrr" else metric
        table = self.per_question
        if column not in table:
            raise SituateError(
                f"{self.folder / PER_QUESTION}: no column {column}; choose one of "
                f"{', '.join(c for c in table.columns if '_at_' in c)} or mrr"
            )
        if part is not None:
            table = table[table["part"] == part]
            if table.empty:
                raise SituateError(
                    f"{self.folder / PER_QUESTION}: no question in part {part!r}; run with "
                    "eval.split=dev_test (parts dev, test) or kfold (fold_1, ...)"
                )
        return pd.to_numeric(table.set_index("qid")[column], errors="coerce").dropna()


def run(overrides: Sequence[str] = ()) -> Result:
    """One run of ``situate run OVERRIDES`` in this process; a mistake raises ``SituateError``.

    A preset that sweeps (``experiment=fusion_ablation``) runs its config once, without the
    sweep: use :func:`sweep` for that.
    """
    from hydra.types import RunMode
    from omegaconf import open_dict, read_write

    from situate.config.compose import check_overrides, compose
    from situate.config.preflight import stages_of_run
    from situate.errors import SituateExit
    from situate.running.app import Job, run_job

    overrides = list(overrides)
    check_overrides(overrides)
    cfg = compose(overrides, with_hydra=True, uses=stages_of_run)
    folder = first = Path(str(cfg.hydra.run.dir))
    n = 0
    while folder.exists():  # runs in a loop can start within one second: one folder each
        n += 1
        folder = first.with_name(f"{first.name}-{n}")
    with read_write(cfg), open_dict(cfg):
        cfg.hydra.mode = RunMode.RUN
        cfg.hydra.run.dir = str(folder)
        cfg.hydra.runtime.output_dir = str(folder.resolve())
    job = Job.of(cfg.hydra)  # what the job reads of Hydra, as `situate run` hands it over
    task = cfg.copy()
    with read_write(task), open_dict(task):
        del task["hydra"]
    folder.mkdir(parents=True, exist_ok=True)
    if task.get("tracking") is not None:
        from hydra.utils import instantiate

        tracker = instantiate(task.tracking)
        tracker.check()  # a dead tracking server: one line in seconds, as `situate run` says
        tracker.prepare()
    try:
        run_job(task, job)
    except SituateExit as e:
        raise e.error from None
    return Result.from_folder(folder)


def sweep(overrides: Sequence[str] = (), quiet: bool = True) -> pd.DataFrame:
    """``situate run -m OVERRIDES`` (a grid, a preset such as ``experiment=fusion_ablation``, or
    Optuna's ``experiment=tune_fusion``): one row per job with its overrides, metrics, MLflow run
    id, error (a failed job is a row, not an exception), skipped (``needs ...``: a job whose
    optional part, e.g. a cross-encoder folder, is not installed) and folder (for
    :meth:`Result.from_folder`). ``attrs["selection"]`` holds what the results table says about
    the best job (picked on dev, reported on test, with a split); ``attrs["informativeness"]``
    whether its questions can separate the arms (a
    :class:`~situate.evaluation.informativeness_result.Informativeness`: ``.warning``, ``.headline``,
    ``.paragraph``; on the test questions with a split; None with fewer than two scored jobs);
    ``attrs["sweep_dir"]`` the sweep's folder. ``quiet=False`` prints the CLI's output."""
    from situate.config.compose import check_overrides, compose, first_values

    overrides = list(overrides)
    check_overrides(overrides)
    _, first = first_values(overrides, drop_unlisted=True)  # the sweep's folder and baseline
    cfg = compose(first, with_hydra=True)
    sweep_dir = Path(str(cfg.hydra.sweep.dir)).resolve()
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "situate.cli", "run", "-m", *overrides, f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if not quiet:
        print(proc.stdout, proc.stderr, sep="\n")
    jobs_failed = proc.returncode == 1 and "jobs of the sweep failed" in proc.stderr
    if proc.returncode != 0 and not jobs_failed:  # a failed job is a row with its error
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
        detail = errors[-1][len("error: ") :] if errors else proc.stderr.strip()[-500:]
        raise SituateError(f"situate run -m {' '.join(overrides)}: {detail}")
    files = sorted(sweep_dir.glob("*/result.json"), key=lambda p: int(p.parent.name))
    rows = []
    for f in files:
        row = json.loads(f.read_text())
        rows.append(
            {
                "job": int(f.parent.name),
                "overrides": " ".join(row.get("overrides", [])),
                **{f"choice.{g}": v for g, v in (row.get("choices") or {}).items()},
                **(row.get("metrics") or {}),
                "run_id": row.get("run_id"),
                "error": row.get("error"),
                "skipped": row.get("skipped"),  # "needs ...": what was not installed
                "folder": str(f.parent),
            }
        )
    table = pd.DataFrame(rows)
    from omegaconf import OmegaConf

    from situate.study.informativeness import sweep_informativeness
    from situate.study.selection import sweep_selection

    baseline = cfg.get("baseline")
    spec = OmegaConf.to_container(baseline, resolve=True) if baseline is not None else None
    results, folders = [json.loads(f.read_text()) for f in files], [f.parent for f in files]
    table.attrs["selection"] = sweep_selection(results, folders, spec)
    table.attrs["informativeness"] = sweep_informativeness(results, folders, spec)[0]
    table.attrs["sweep_dir"] = str(sweep_dir)
    return table


def compare(
    baseline: Result,
    *others: Result,
    metric: str = "pass_at_20",
    part: str | None = None,
    permutations: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Each of ``others`` against ``baseline`` on ``metric``, paired by question id; one row per
    other run (index: its overrides), Holm-adjusted across them. ``part="test"`` pairs the test
    questions only (``eval.split=dev_test``)."""
    from situate.evaluation.statistics import compare as paired
    from situate.evaluation.statistics import holm

    if not others:
        raise SituateError("situate.compare: give the baseline and at least one run to compare")
    a = baseline.scores(metric, part)
    if a.empty:
        raise SituateError(
            f"situate.compare: {baseline.folder}: no question has gold, so there is no {metric}; "
            "score the runs on judgments with `situate judge`"
        )
    rows, labels = [], []
    for other in others:
        b = other.scores(metric, part)
        if set(a.index) != set(b.index):
            raise SituateError(
                f"situate.compare: {other.folder} scored other questions than the baseline "
                f"{baseline.folder} ({len(b)} vs {len(a)}); compare runs of one dataset and split"
            )
        c = paired(a.to_numpy(), b.loc[a.index].to_numpy(), metric, permutations, seed)
        rows.append(c)
        labels.append(" ".join(other.overrides) or str(other.folder))
    adjusted = holm([c.p_value for c in rows])
    return pd.DataFrame(
        [
            {
                "metric": c.metric,
                "baseline": c.baseline,
                "value": c.value,
                "difference": c.difference,
                "ci_low": c.ci_low,
                "ci_high": c.ci_high,
                "p_value": c.p_value,
                "p_holm": p,
                "wins": c.wins,
                "ties": c.ties,
                "losses": c.losses,
                "n_questions": len(a),
            }  # fmt: skip
            for c, p in zip(rows, adjusted, strict=True)
        ],
        index=labels,
    )


def halve(
    arms: Sequence[Sequence[str]],
    overrides: Sequence[str] = (),
    sizes: Sequence[int] = (62, 124, 248),
    metric: str = "pass_at_20",
    part: str | None = None,
    alpha: float = 0.05,
    permutations: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Successive halving: each surviving arm (a list of overrides) is run on ``sizes[i]``
    questions (``dataset.max_questions``, a sample stratified by document); an arm whose paired
    difference from the rung's leader is negative with a Holm-adjusted p below ``alpha`` is
    dropped; the others go on to the next size. ``part="dev"`` (with ``eval.split=dev_test`` in
    ``overrides``) decides on the dev questions only, leaving test for the report.

    One row per arm and rung: ``rung``, ``questions`` (sample size), ``arm``, ``mean``,
    ``difference`` and ``p_holm`` against the rung's leader, ``kept``, ``run_id``. Datasets
    without ``max_questions`` (folder) cannot be halved."""
    if len(arms) < 2 or not sizes:
        raise SituateError("situate.halve: give at least two arms and one sample size")
    alive = [list(a) for a in arms]
    rows = []
    for rung, n in enumerate(sizes):
        results = [run([*overrides, *arm, f"dataset.max_questions={n}"]) for arm in alive]
        scores = [r.scores(metric, part) for r in results]
        last = rung == len(sizes) - 1
        rung_rows = halving_rung(scores, alpha, permutations, seed, keep_all=last)
        for arm, result, row in zip(alive, results, rung_rows, strict=True):
            rows.append({"rung": rung, "questions": int(result.metrics["n_questions"]),
                         "arm": " ".join(arm), **row, "run_id": result.run_id})  # fmt: skip
        alive = [arm for arm, row in zip(alive, rung_rows, strict=True) if row["kept"]]
        if len(alive) == 1:
            break
    return pd.DataFrame(rows)


def halving_rung(
    scores: Sequence[pd.Series], alpha: float, permutations: int, seed: int, keep_all: bool = False
) -> list[dict]:
    """One rung of :func:`halve`: per arm (per-question scores by qid), its ``mean``, its
    ``difference`` from the leader (the best mean; ties to the first) with the Holm-adjusted
    ``p_holm`` of the paired randomization test, and ``kept`` (False when the leader is
    significantly better; everything is kept with ``keep_all``)."""
    from situate.evaluation.statistics import compare as paired
    from situate.evaluation.statistics import holm

    means = [float(s.mean()) for s in scores]
    lead = max(range(len(scores)), key=lambda i: means[i])
    others = [i for i in range(len(scores)) if i != lead]
    a = scores[lead]
    tests = {i: paired(a.to_numpy(), scores[i].loc[a.index].to_numpy(), "", permutations, seed)
             for i in others}  # fmt: skip
    adjusted = dict(zip(others, holm([tests[i].p_value for i in others]), strict=True))
    out = []
    for i in range(len(scores)):
        if i == lead:
            out.append({"mean": means[i], "difference": 0.0, "p_holm": None, "kept": True})
            continue
        worse = tests[i].difference < 0 and adjusted[i] < alpha
        out.append({"mean": means[i], "difference": tests[i].difference,
                    "p_holm": adjusted[i], "kept": keep_all or not worse})  # fmt: skip
    return out
