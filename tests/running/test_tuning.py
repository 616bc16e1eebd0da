"""Adaptive search (experiment=tune_fusion): the Optuna study resumes after a kill.

The kill is deterministic and real: a Hydra callback sends the process SIGKILL right after the
third trial's job returns, before the sweeper records it, so two trials are finished and one was
in flight (nothing of the process runs after the signal: no finally, no atexit, no flush).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from conftest import run_cli
from situate.errors import SituateError
from situate.running.tuning import objective_names, objective_value

KILLER = """
import os
import signal
from hydra.experimental.callback import Callback


class KillAfterJobs(Callback):
    def __init__(self, jobs):
        self.jobs, self.done = jobs, 0

    def on_job_end(self, config, job_return, **kwargs):
        self.done += 1
        if self.done == self.jobs:
            os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_the_study_resumes_after_a_kill_without_repeating_finished_trials(
    cookbook_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "killer.py").write_text(KILLER)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    args = ("run", "experiment=tune_fusion", "dataset.max_documents=4", f"output_dir={tmp_path}",
            "hydra.sweeper.n_trials=4", "embedder=minilm_onnx")  # fmt: skip
    killed = run_cli(*args, "+hydra.callbacks.kill._target_=killer.KillAfterJobs",
                     "+hydra.callbacks.kill.jobs=3", env=env)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    journal = tmp_path / "tuning" / "tune_fusion.jsonl"
    before = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [t["number"] for t in before] == [0, 1]  # the third was running when it died

    resumed = run_cli(*args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "2 trial(s) completed" in resumed.stderr + resumed.stdout
    after = [json.loads(line) for line in journal.read_text().splitlines()]
    assert after[:2] == before  # finished trials kept as they were
    assert [t["number"] for t in after] == [0, 1, 2, 3]
    assert all(t["state"] == "COMPLETE" for t in after)
    params = {tuple(sorted(t["params"].items())) for t in after}
    assert len(params) == 4  # no finished trial drawn again
    sweeps = sorted((tmp_path / "multirun").glob("*/*"))
    jobs = [len(list(s.glob("*/result.json"))) for s in sweeps]
    assert jobs == [3, 2]  # the resumed sweep ran only the two still to go
    # each trial is a child MLflow run of its sweep's parent, scored on dev and test
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("tune_fusion").experiment_id
    runs = client.search_runs([experiment])
    (parent,) = [r for r in runs if r.data.tags.get("sweep") == "true" and r.info.status == "FINISHED"]  # fmt: skip
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == 2
    for child in children:
        m = child.data.metrics
        assert m["dev_n_questions"] + m["test_n_questions"] == m["n_questions"]
    # the objective each trial returned is its dev Pass@20
    resumed_rows = [json.loads(f.read_text()) for f in sweeps[1].glob("*/result.json")]
    values = sorted(t["values"][0] for t in after[2:])
    assert values == sorted(r["metrics"]["dev_pass_at_20"] for r in resumed_rows)


@pytest.mark.slow
def test_a_second_objective_gives_a_pareto_front(cookbook_dir: Path, tmp_path: Path) -> None:
    # quality on dev against index size: the chunk size decides how many chunks there are
    proc = run_cli("run", "experiment=tune_fusion", "dataset.max_documents=4", "chunker=fixed",
                   "embedder=minilm_onnx",  # the sweeper is the point here, not the embedder
                   "context=none", "chunker.size=int(interval(100,800))", "eval.ks=[1,5]",
                   "objective=[pass_at_5,n_chunks]", "hydra.sweeper.direction=[maximize,minimize]",
                   "hydra/sweeper/sampler=nsgaii", "hydra.sweeper.n_trials=5", "study=front",
                   "tracking=none", f"output_dir={tmp_path}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    trials = [json.loads(line) for line in (tmp_path / "tuning" / "front.jsonl").open()]
    assert len(trials) == 5 and all(len(t["values"]) == 2 for t in trials)
    (sweep,) = (tmp_path / "multirun").glob("*/*")
    jobs = [json.loads(f.read_text()) for f in sweep.glob("*/result.json")]
    for t in trials:  # each trial's values are its job's dev Pass@5 and its chunk count
        (job,) = [j for j in jobs if {f"{k}={v}" for k, v in t["params"].items()} <= set(j["overrides"])]  # fmt: skip
        assert t["values"] == [job["metrics"]["dev_pass_at_5"], job["metrics"]["n_chunks"]]

    def dominated(t: dict) -> bool:  # another trial at least as good on both, better on one
        (q, n) = t["values"]
        return any(u["values"][0] >= q and u["values"][1] <= n and u["values"] != [q, n]
                   for u in trials)  # fmt: skip

    front = [t["params"] for t in trials if not dominated(t)]
    import yaml

    solutions = yaml.safe_load((sweep / "optimization_results.yaml").read_text())["solutions"]
    assert sorted(map(str, (s["params"] for s in solutions))) == sorted(map(str, front))
    assert f"Number of Pareto solutions: {len(front)}" in proc.stdout + proc.stderr


def test_the_objective_is_taken_on_dev_with_a_split() -> None:
    metrics = {"pass_at_20": 0.8, "dev_pass_at_20": 0.9, "test_pass_at_20": 0.7, "n_chunks": 32.0}
    row = {"metrics": metrics, "ks": [5, 20]}
    assert objective_value(row, None, "dev_test") == 0.9
    assert objective_value(row, None, "none") == 0.8
    assert objective_value(row, ["pass_at_20", "n_chunks"], "dev_test") == [0.9, 32.0]
    assert objective_value({"error": "x", "ks": [20]}, None, "dev_test") is None
    with pytest.raises(SituateError, match="objective: 'recall_at_3' is not a metric"):
        objective_names(["recall_at_3"], [20], "none", metrics)


def test_without_gold_the_default_objective_is_none_and_a_cost_objective_still_works() -> None:
    row = {"metrics": {"questions_with_gold": 0.0, "n_chunks": 32.0}, "ks": [5, 20]}
    assert objective_value(row, None, "none") is None
    assert objective_value(row, ["n_chunks"], "none") == 32.0


@pytest.mark.slow
def test_the_journal_replays_finished_trials_and_refuses_other_objectives(tmp_path: Path) -> None:
    import optuna

    from hydra_plugins.situate_optuna.sweeper import journal_storage
    from situate.errors import SituateExit

    path = tmp_path / "study.jsonl"
    first = optuna.create_study(
        study_name="s", storage=journal_storage(str(path)), direction="maximize"
    )
    first.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_int("n", 1, 3), n_trials=3)
    again = optuna.create_study(
        study_name="s", storage=journal_storage(str(path)), direction="maximize"
    )
    assert [t.params for t in again.trials] == [t.params for t in first.trials]
    assert again.best_value == first.best_value
    assert journal_storage(str(path)).completed("s") == 3
    assert journal_storage(str(path)).completed("other") == 0
    with pytest.raises(SituateExit, match="has 1 objective value"):
        optuna.create_study(study_name="s", storage=journal_storage(str(path)),
                            directions=["maximize", "minimize"])  # fmt: skip
