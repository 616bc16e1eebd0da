"""Load a study from MLflow: its runs (tags, params, metrics, per-question scores, contexts).

A study is an MLflow experiment (config key ``study``). By default the report reads its latest
sweep: the newest parent run (tag ``sweep=true``) and the jobs nested under it (tag
``mlflow.parentRunId``), failed ones included with the one-line error their job wrote to
``result.json`` in the sweep folder. ``all_runs=True`` (or a study without any sweep) reads every
FINISHED run instead, keeping the newest run of each configuration.
"""

from __future__ import annotations

import csv
import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from situate.config.stages import TAGGED_GROUPS
from situate.errors import SituateError
from situate.stores.keys import content_hash
from situate.study.writing_cost import WritingCost, writing_cost
from situate.tracking.base import PER_QUESTION, RESULT_FILE, without_credentials

CONTEXTS = "contexts.jsonl"
CONFIG = "config.yaml"
WRITTEN_BY = "context.written_by.llm"  # the param of a run whose contexts were written before


@dataclass
class RunData:
    """One run of a study as the report sees it."""

    run_id: str
    name: str
    status: str  # MLflow status: FINISHED, FAILED, RUNNING, KILLED
    start_time: int = 0
    tags: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    questions: list[dict[str, str]] | None = None  # rows of per_question.csv
    contexts: list[dict[str, Any]] | None = (
        None  # rows of contexts.jsonl, when the run had contexts
    )
    error: str | None = None
    label: str = ""
    writing: WritingCost | None = None  # replayed contexts: what writing them cost (estimate)
    writing_error: str | None = None  # why that could not be estimated

    @property
    def choices(self) -> dict[str, str]:
        """The option chosen in each config group (from the run's tags)."""
        return {g: self.tags[g] for g in TAGGED_GROUPS if g in self.tags}

    @property
    def ok(self) -> bool:
        """Finished, with per-question scores to compare."""
        return self.status == "FINISHED" and self.questions is not None and self.error is None

    @property
    def qids(self) -> list[str]:
        return [q["qid"] for q in self.questions or []]

    def column(self, name: str) -> np.ndarray:
        """A per-question column as floats (blank cells are 0), in the CSV's question order."""
        return np.array([float(q.get(name) or 0.0) for q in self.questions or []], dtype=float)

    def scored(self, name: str) -> np.ndarray:
        """Which questions a per-question column scores: a blank cell is a question without gold
        in a gold metric's column (never a miss), left out of its means and comparisons."""
        return np.array([q.get(name) not in (None, "") for q in self.questions or []], dtype=bool)

    def value(self, key: str) -> str | None:
        """A tag (config group choice) or, failing that, a param (flattened config key)."""
        if key in self.tags:
            return self.tags[key]
        return self.params.get(key)


@dataclass
class Study:
    """The runs of one study, its baseline run and what varies between them."""

    name: str
    tracking_uri: str
    experiment_id: str
    runs: list[RunData]
    baseline: RunData
    baseline_spec: dict[str, str]
    ks: list[int]
    varying: list[str]
    parent: RunData | None = None
    source: str = "sweep"  # "sweep" or "finished runs"

    @property
    def ok_runs(self) -> list[RunData]:
        return [r for r in self.runs if r.ok]

    @property
    def failed_runs(self) -> list[RunData]:
        return [r for r in self.runs if not r.ok]

    @property
    def git_commits(self) -> list[str]:
        return sorted({r.tags["git_commit"] for r in self.runs if r.tags.get("git_commit")})


def spec_text(spec: Mapping[str, Any]) -> str:
    """``{arm: baseline}`` as the user would write it."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in spec.items()) + "}"


def load_study(
    study: str,
    baseline: Mapping[str, Any] | None,
    tracking_uri: str,
    all_runs: bool = False,
    base_dir: str | Path | None = None,
) -> Study:
    """Read ``study`` from the MLflow store at ``tracking_uri`` and find its baseline run.

    ``base_dir`` resolves a sweep's relative folder (where its jobs' ``result.json`` are); the
    current directory by default. Raises a one-line ``SituateError`` for a missing store, study or
    baseline.
    """
    spec = {str(k): str(v) for k, v in (baseline or {}).items()}
    if not spec:
        raise SituateError(
            f"study {study} declares no baseline, and a report compares with one: set `baseline` "
            "to the choices of one run of the study, e.g. baseline={arm:baseline} or "
            "baseline={context:none,fusion:dense_only}; an Optuna study of one option "
            "(experiment=tune_fusion) has none: its pick on dev and test figure are under its "
            "results table (situate.sweep(...).attrs['selection'] in Python)"
        )
    client = _client(study, tracking_uri)
    exp = client.get_experiment_by_name(study)
    if exp is None:
        raise SituateError(
            f"study {study}: no MLflow experiment of that name in {without_credentials(tracking_uri)}; run the study "
            "first (situate run experiment=...) or set study= to an existing one"
        )
    runs = _search(client, exp.experiment_id)
    parents = [r for r in runs if r.data.tags.get("sweep") == "true"]
    parent = None
    if parents and not all_runs:
        parent_run = max(parents, key=lambda r: r.info.start_time or 0)
        parent = _run_data(parent_run)
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.run_id]
        data = [_run_data(r) for r in children]
        _attach_sweep_errors(data, parent, Path(base_dir or "."))
        source = "sweep"
    else:
        finished = [
            r for r in runs if r.data.tags.get("sweep") != "true" and r.info.status == "FINISHED"
        ]
        newest: dict[tuple, Any] = {}
        for r in sorted(finished, key=lambda r: r.info.start_time or 0):
            key = (tuple(sorted(_choices(r.data.tags).items())), r.data.tags.get("overrides", ""))
            newest[key] = r
        data = [_run_data(r) for r in newest.values()]
        source = "finished runs"
    if not data:
        where = f"sweep {parent.run_id}" if parent else "the experiment"
        raise SituateError(
            f"study {study}: {where} has no runs to report on in {without_credentials(tracking_uri)}"
        )
    data.sort(key=lambda r: r.start_time)
    with tempfile.TemporaryDirectory() as tmp:
        for run in data:
            if run.status == "FINISHED":
                _load_artifacts(client, tracking_uri, run, Path(tmp) / run.run_id)
        _estimate_writing(client, tracking_uri, [r for r in data if r.ok], Path(tmp))
    base = find_baseline(study, data, spec)
    varying = _label(data)
    ks = sorted(
        int(m.group(1)) for c in base.questions[0] if (m := re.fullmatch(r"pass_at_(\d+)", c))
    )
    if not ks:
        raise SituateError(
            f"study {study}: the baseline's {PER_QUESTION} has no pass_at_K columns; rerun it"
        )
    needed = {"qid", "reciprocal_rank", *(f"{n}_at_{k}" for n in ("pass", "recall") for k in ks)}
    for run in data:
        missing = needed - set(run.questions[0]) if run.ok else set()
        if missing:  # scored at other cut-offs (eval.ks) than the baseline: nothing to pair
            run.error = f"{PER_QUESTION} lacks {', '.join(sorted(missing))} (other eval.ks than the baseline's)"
    return Study(
        name=study,
        tracking_uri=tracking_uri,
        experiment_id=exp.experiment_id,
        runs=data,
        baseline=base,
        baseline_spec=spec,
        ks=ks,
        varying=varying,
        parent=parent,
        source=source,
    )


def find_baseline(study: str, runs: list[RunData], spec: Mapping[str, str]) -> RunData:
    """The one usable run whose tags (or params) match every ``key: value`` of ``spec``."""
    matches = [r for r in runs if all(r.value(k) == str(v) for k, v in spec.items())]
    usable = [r for r in matches if r.ok]
    if not matches:
        seen = "; ".join(sorted({" ".join(f"{k}={r.value(k)}" for k in spec) for r in runs}))
        raise SituateError(
            f"study {study}: no run matches baseline {spec_text(spec)} (its runs have {seen}); "
            "run the baseline configuration in the study or fix `baseline`"
        )
    if not usable:
        why = matches[0].error or f"status {matches[0].status}"
        raise SituateError(
            f"study {study}: the baseline run {spec_text(spec)} cannot be compared ({why}); "
            "rerun it before reporting"
        )
    if len(usable) > 1:
        ids = ", ".join(r.run_id[:8] for r in usable)
        raise SituateError(
            f"study {study}: baseline {spec_text(spec)} matches {len(usable)} runs ({ids}); "
            "name more config groups in `baseline` so that one run matches"
        )
    return usable[0]


def _client(study: str, tracking_uri: str):
    import logging

    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if tracking_uri.startswith("sqlite:///"):
        db = Path(tracking_uri[len("sqlite:///") :])
        if not db.exists():
            raise SituateError(
                f"study {study}: no MLflow store at {db}; run the study first "
                "(situate run experiment=...) or point tracking at the right store"
            )
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def _search(client, experiment_id: str) -> list:
    runs, token = [], None
    while True:
        page = client.search_runs(
            [experiment_id],
            max_results=1000,
            order_by=["attributes.start_time ASC"],
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _choices(tags: Mapping[str, str]) -> dict[str, str]:
    return {g: tags[g] for g in TAGGED_GROUPS if g in tags}


def _run_data(run) -> RunData:
    return RunData(
        run_id=run.info.run_id,
        name=run.info.run_name or run.info.run_id,
        status=run.info.status,
        start_time=run.info.start_time or 0,
        tags=dict(run.data.tags),
        params=dict(run.data.params),
        metrics=dict(run.data.metrics),
    )


def _attach_sweep_errors(runs: list[RunData], parent: RunData, base_dir: Path) -> None:
    """Each failed job's one-line error, from ``result.json`` in its sweep folder.

    A job that failed before MLflow opened its run appears from its ``result.json`` alone, as
    does a skipped one (status ``SKIPPED``, its error ``needs ...``: it needed what was
    not installed, and opened no run).
    """
    folder = parent.tags.get("sweep_dir")
    rows = []
    if folder:
        sweep = Path(folder) if Path(folder).is_absolute() else base_dir / folder
        for f in sorted(sweep.glob(f"*/{RESULT_FILE}")):
            try:
                rows.append(json.loads(f.read_text()))
            except (OSError, ValueError):
                continue
    by_id = {r.run_id: r for r in runs}
    for row in rows:
        error = row.get("error") or row.get("skipped") or ""  # skipped: "needs ..."
        if not error:
            continue
        run = by_id.get(row.get("run_id") or "")
        if run is not None:
            run.error = error
        else:
            runs.append(
                RunData(
                    run_id=row.get("run_id") or "",
                    name=" ".join(row.get("overrides") or []),
                    status="SKIPPED" if row.get("skipped") else "FAILED",
                    start_time=parent.start_time,
                    tags={str(k): str(v) for k, v in (row.get("choices") or {}).items() if v},
                    error=error,
                )
            )
    for run in runs:
        if run.status != "FINISHED" and not run.error:
            run.error = f"MLflow run {run.status.lower()} (no error recorded)"


def _load_artifacts(client, tracking_uri: str, run: RunData, dest: Path) -> None:
    import os

    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow.artifacts import download_artifacts

    names = {a.path for a in client.list_artifacts(run.run_id)}
    if PER_QUESTION not in names:
        run.error = f"finished without a {PER_QUESTION} artifact: nothing to compare"
        return
    dest.mkdir(parents=True, exist_ok=True)
    path = download_artifacts(
        run_id=run.run_id, artifact_path=PER_QUESTION, dst_path=str(dest), tracking_uri=tracking_uri
    )
    with open(path, newline="", encoding="utf-8") as f:
        run.questions = list(csv.DictReader(f))
    if not run.questions:
        run.error = f"{PER_QUESTION} has no questions"
        return
    first: dict[str, int] = {}
    for row, q in enumerate(run.questions, start=1):
        qid = q.get("qid", "")
        if qid in first:  # pairing joins on the id: two rows of one id cannot be paired
            run.error = (
                f"{PER_QUESTION} has question id {qid!r} in rows {first[qid]} and {row}; "
                "comparisons pair questions by id: give every question its own id and rerun"
            )
            return
        first[qid] = row
    if CONTEXTS in names:
        path = download_artifacts(
            run_id=run.run_id, artifact_path=CONTEXTS, dst_path=str(dest), tracking_uri=tracking_uri
        )
        with open(path, encoding="utf-8") as f:
            run.contexts = [json.loads(line) for line in f if line.strip()]


def _estimate_writing(client, tracking_uri: str, runs: list[RunData], tmp: Path) -> None:
    """Each replayed run's cost of writing its contexts, once per dataset, chunker and context."""
    from mlflow.artifacts import download_artifacts
    from omegaconf import OmegaConf

    done: dict[str, WritingCost | SituateError | None] = {}
    for run in runs:
        if WRITTEN_BY not in run.params or CONFIG not in {
            a.path for a in client.list_artifacts(run.run_id)
        }:
            continue
        path = download_artifacts(
            run_id=run.run_id, artifact_path=CONFIG, dst_path=str(tmp / run.run_id),
            tracking_uri=tracking_uri,
        )  # fmt: skip
        cfg = OmegaConf.load(path)
        key = content_hash(
            {
                g: OmegaConf.to_container(cfg.get(g))
                for g in ("dataset", "chunker", "context", "pricing")
            }
        )
        if key not in done:
            try:
                done[key] = writing_cost(cfg)
            except SituateError as e:  # e.g. the data set is not on this machine
                done[key] = e
        found = done[key]
        if isinstance(found, SituateError):
            run.writing_error = f"no estimate of writing its contexts: {found}"
        else:
            run.writing = found


def _distinct(runs: list[RunData], groups: list[str], describe) -> int:
    return len({describe(r, groups) for r in runs})


def _label(runs: list[RunData]) -> list[str]:
    """Set each run's short label; return the config groups whose choice varies between runs.

    One varying group whose values tell every run apart (``arm`` in a replication) is the label
    alone; otherwise ``group=option`` of every varying group; duplicates get their run id.
    """
    varying = [g for g in TAGGED_GROUPS if len({r.tags.get(g) for r in runs}) > 1]
    unique = next(
        (
            g
            for g in varying
            if all(g in r.tags for r in runs) and len({r.tags[g] for r in runs}) == len(runs)
        ),
        None,
    )
    # groups with one option wherever they are set (llm, when only some runs use an LLM) say little
    telling = [g for g in varying if len({r.tags[g] for r in runs if g in r.tags}) > 1]

    def describe(r: RunData, groups: list[str]) -> str:
        return ", ".join(f"{g}={r.tags[g]}" for g in groups if g in r.tags)

    groups = list(telling)
    for g in varying:  # add groups, in config order, while they tell more runs apart
        if g not in groups and _distinct(runs, groups + [g], describe) > _distinct(
            runs, groups, describe
        ):
            groups = [x for x in varying if x in groups or x == g]
    for r in runs:
        if unique:
            r.label = r.tags[unique]
        elif varying:
            r.label = describe(r, groups) or describe(r, varying)
        else:
            r.label = r.tags.get("overrides") or r.name
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.label] = counts.get(r.label, 0) + 1
    for r in runs:
        if counts[r.label] > 1:
            r.label = f"{r.label} ({r.run_id[:6]})"
    return varying
