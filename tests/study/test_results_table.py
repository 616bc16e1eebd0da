"""The table a run or a sweep ends on, and the lines after it that say where to look next."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from rich.console import Console

from conftest import run_cli
from situate.study.results_table import results_table, telling_groups, telling_overrides
from situate.tracking.sweep import next_steps

ARMS = {
    "baseline": ("none", "dense_only", "none"),
    "contextual_embeddings": ("replay", "dense_only", "none"),
    "contextual_bm25": ("replay", "weighted_rank", "none"),
    "contextual_reranked": ("replay", "weighted_rank", "cross_encoder"),
}


def row(arm: str, i: int) -> dict:
    context, fusion, reranker = ARMS[arm]
    choices = {"dataset": "cookbook", "arm": arm, "context": context, "fusion": fusion}
    metrics = {f"{m}_at_{k}": 0.5 + i / 10 for m in ("pass", "recall") for k in (5, 10, 20)}
    return {
        "choices": {**choices, "reranker": reranker},
        "ks": [5, 10, 20],
        "metrics": {**metrics, "mrr": 0.25},
        "run_id": str(i) * 32,
    }


def render(table, width: int) -> str:
    out = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    out.print(table)
    return out.export_text()


def test_arms_are_told_apart_by_name_alone() -> None:
    rows = [row(arm, i) for i, arm in enumerate(ARMS)]
    assert telling_groups(rows) == ["arm"]  # context, fusion, reranker follow from the arm


def test_a_group_the_arm_does_not_set_stays() -> None:
    rows = [row("baseline", 0), row("baseline", 1), row("contextual_bm25", 2)]
    rows[1]["choices"]["embedder"] = "minilm_onnx"
    assert telling_groups(rows) == ["arm", "embedder"]


def test_arm_names_are_never_cut_on_an_80_column_terminal() -> None:
    text = render(results_table([row(arm, i) for i, arm in enumerate(ARMS)]), 80)
    for i, arm in enumerate(ARMS):
        assert f"│ {arm} " in text, text  # whole, on one line
        assert f" {50 + 10 * i}.0 │" in text  # Pass@5 = 100 * (0.5 + i/10)
    wide = render(results_table([row(arm, i) for i, arm in enumerate(ARMS)]), 120)
    assert "…" not in wide and "Recall@20" in wide
    assert "3" * 20 in wide and "3" * 12 + " " in wide  # the run id folds over two lines


def test_without_arms_the_differing_choices_are_the_columns() -> None:
    rows = [row("baseline", 0), row("contextual_bm25", 1)]
    for r in rows:
        del r["choices"]["arm"]
    assert telling_groups(rows) == ["context", "fusion"]


def test_trials_of_one_option_are_told_apart_by_their_parameters() -> None:
    rows = [row("baseline", 0), row("baseline", 1)]
    rows[0]["overrides"] = ["fusion.k=12", "experiment=tune_fusion"]
    rows[1]["overrides"] = ["fusion.k=80", "experiment=tune_fusion"]
    groups = telling_groups(rows)
    assert telling_overrides(rows, groups) == ["fusion.k=12", "fusion.k=80"]
    text = render(results_table(rows), 160)
    assert "parameters" in text and "fusion.k=80" in text
    assert telling_overrides([row("baseline", 0), row("contextual_bm25", 1)], ["arm"]) == []


def test_next_steps_name_the_outputs_the_mlflow_ui_and_the_report(tmp_path: Path) -> None:
    config = OmegaConf.create(
        {
            "study": "quickstart",
            "baseline": {"context": "none", "fusion": "dense_only"},
            "tracking": {
                "_target_": "situate.tracking.mlflow_tracker.MlflowTracker",
                "tracking_uri": None,
                "db_path": str(tmp_path / "mlflow.db"),
                "artifact_root": str(tmp_path / "mlartifacts"),
                "experiment": "quickstart",
            },
            "hydra": {"runtime": {"choices": {"experiment": "quickstart"}}},
            "output_dir": str(tmp_path),
        }
    )
    steps = dict(next_steps(config, tmp_path / "multirun" / "x", "4"))
    assert steps["outputs"].startswith(f"{tmp_path}/multirun/x ")
    # the experiment's runs table: a plain experiment link opens MLflow 3.17's GenAI overview
    assert steps["MLflow"] == (
        f"mlflow ui --backend-store-uri sqlite:///{tmp_path}/mlflow.db, then open "
        "http://127.0.0.1:5000/#/experiments/4/runs?workflowType=machine_learning"
    )
    # the report finds the study in that output_dir only when told so
    assert steps["report"].startswith(
        f"situate report experiment=quickstart output_dir={tmp_path}:"
    )
    config.study, config.output_dir = "mine", "outputs"
    steps = dict(next_steps(config, tmp_path / "multirun" / "x"))
    assert steps["report"].startswith("situate report experiment=quickstart study=mine:")
    config.study, config.output_dir = None, str(tmp_path)
    server = {"tracking_uri": "https://me:hunter2@mlflow.example.org/", "db_path": "x.db"}
    config.tracking = {**config.tracking, **server}
    assert dict(next_steps(config, tmp_path, "4"))["MLflow"] == (
        "open https://me:***@mlflow.example.org/#/experiments/4/runs?workflowType=machine_learning "
        "(the tracking server)"
    )
    assert dict(next_steps(config, tmp_path))["MLflow"] == (  # the experiment not found
        "open https://me:***@mlflow.example.org/ (the tracking server)"
    )


@pytest.mark.slow
def test_the_hint_links_the_experiment_a_run_logged_to(tmp_path: Path) -> None:
    proc = run_cli(
        "run", "dataset.max_documents=2", "eval.ks=[5]", f"output_dir={tmp_path}", "study=hint"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    hint = (
        f"MLflow mlflow ui --backend-store-uri sqlite:///{tmp_path}/mlflow.db, then open "
        "http://127.0.0.1:5000/#/experiments/1/runs?workflowType=machine_learning"
    )
    assert "".join(hint.split()) in "".join(proc.stdout.split())  # the table folds long lines


def test_the_default_store_is_opened_with_make_mlflow_ui(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = OmegaConf.create(
        {
            "study": "cookbook_replication",
            "baseline": {"arm": "baseline"},
            "tracking": {
                "_target_": "situate.tracking.mlflow_tracker.MlflowTracker",
                "tracking_uri": None,
                "db_path": "outputs/mlflow.db",
                "artifact_root": "outputs/mlartifacts",
                "experiment": "cookbook_replication",
            },
            "hydra": {"runtime": {"choices": {"experiment": "cookbook_replication"}}},
            "output_dir": "outputs",
        }
    )
    steps = dict(next_steps(config, Path("outputs/multirun/x"), "2"))
    assert steps["MLflow"] == (
        "make mlflow-ui, then open "
        "http://127.0.0.1:5000/#/experiments/2/runs?workflowType=machine_learning"
    )
    assert steps["report"].startswith(
        "make report (= situate report experiment=cookbook_replication)"
    )


def test_a_run_without_gold_shows_no_gold_not_zeros() -> None:
    no_gold = {**row("baseline", 0), "metrics": {"n_questions": 3.0, "questions_with_gold": 0.0}}
    text = render(results_table([no_gold, row("contextual_bm25", 1)]), 200)
    line = next(x for x in text.splitlines() if "baseline" in x)
    assert line.count("no gold") == 7 and "0.0" not in line  # Pass@3 ks, Recall@3 ks, MRR


def test_the_parameters_column_holds_only_what_is_not_a_column() -> None:
    rows = [row("baseline", i) for i in range(4)]
    for r, (context, sparse, k) in zip(
        rows, [("none", "bm25s", 12), ("heading_path", "bm25s", 12), ("none", "pyserini", 80),
               ("none", "pyserini", 12)], strict=True
    ):  # fmt: skip
        r["choices"].update(context=context, sparse=sparse)
        r["overrides"] = [f"context={context}", f"sparse={sparse}", f"fusion.k={k}"]
    rows[0]["choices"]["context"] = rows[3]["choices"]["context"] = "none"
    groups = telling_groups(rows)
    assert groups == ["context", "sparse"]
    assert telling_overrides(rows, groups) == [
        "fusion.k=12",
        "fusion.k=12",
        "fusion.k=80",
        "fusion.k=12",
    ]


def test_the_table_shows_each_jobs_seconds_when_the_jobs_logged_them() -> None:
    rows = [row("baseline", 0), row("contextual_bm25", 1)]
    rows[0]["metrics"]["run_seconds"] = 12.4
    rows[1]["metrics"]["run_seconds"] = 347.0
    text = render(results_table(rows), 200)
    header = next(line for line in text.splitlines() if "MRR" in line)
    assert header.split("┃")[-3].strip() == "seconds"
    assert [line.split("│")[-3].strip() for line in text.splitlines() if "0.250" in line] == [
        "12",
        "347",
    ]
    assert "seconds" not in render(results_table([row("baseline", 0)]), 200)  # none logged
