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


def write_sweep(folder: Path, hits: dict[str, list[int]], parts: list[str] | None = None) -> None:
    """A sweep's job folders as ``app.run_job`` leaves them: ``result.json`` and
    ``per_question.csv`` (0/1 hits: Pass@k = Recall@k at every k, reciprocal rank 1 or 0)."""
    import csv
    import json

    for job, (fusion, scores) in enumerate(hits.items()):
        out = folder / str(job)
        out.mkdir(parents=True)
        cells = [f"{s:.4f}" for s in scores]
        columns = ["qid", "question", "gold", "top_20_chunk_ids", "first_relevant_rank",
                   "reciprocal_rank", *(f"{m}_at_{k}" for m in ("recall", "pass", "precision")
                   for k in (5, 10, 20)), "average_precision", "part"]  # fmt: skip
        with open(out / "per_question.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(columns)
            for i, c in enumerate(cells):
                w.writerow([f"q{i}", f"question {i}?", f"d:{i}-{i + 1}", "c0", "1" if scores[i] else "", c, *[c] * 9, c, parts[i] if parts else ""])  # fmt: skip
        mean = sum(scores) / len(scores)
        metrics = {f"{m}_at_{k}": mean for m in ("pass", "recall") for k in (5, 10, 20)}
        (out / "result.json").write_text(json.dumps({
            "choices": {"dataset": "crafted", "context": "none", "fusion": fusion},
            "ks": [5, 10, 20], "metrics": {**metrics, "mrr": mean},
            "overrides": [f"fusion={fusion}"], "run_id": f"run{job}",
        }))  # fmt: skip


def end_sweep(folder: Path, capsys) -> str:
    from situate.study.results_table import ResultsTable

    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(folder)}}, "tracking": None,
                               "baseline": {"fusion": "baseline"}})  # fmt: skip
    ResultsTable().on_multirun_end(config)
    return capsys.readouterr().out


# 40 questions, 4 arms. The baseline misses q0 and q1 (95%); each other arm gains one of them and
# loses another (q2, q3, q4): 35 of 40 questions (88%) are solved by every arm.
SATURATED = {
    "baseline": [0, 0] + [1] * 38,
    "gain_q1": [0, 1, 0] + [1] * 37,
    "gain_q0": [1, 0, 1, 0] + [1] * 36,
    "gain_q1_too": [0, 1, 1, 1, 0] + [1] * 35,
}


def test_a_sweep_on_a_saturated_set_prints_the_warning(tmp_path: Path, capsys) -> None:
    write_sweep(tmp_path, SATURATED)
    out = end_sweep(tmp_path, capsys)
    # each pair against the baseline: d = one +1, one -1, 38 zeros; mean 0, sd = sqrt(2 / 39) =
    # 0.22646. MDE, normal approximation: (1.95996 + 0.84162) * 0.22646 / sqrt(40) = 0.1003; the
    # exact noncentral t with 39 df is 2.5% larger: 0.1029 = 10.3 points. Questions for 2 points
    # (Sakai): n0 = (2.80158 * 0.22646 / 0.02)^2 + 1.95996^2 / 2 = 1006.3 + 1.9 = 1008.2 -> 1009
    # (~1,000); for 5 points (12.689)^2 + 1.9 = 162.9 -> 163 (~160). Every metric scores alike,
    # so the first, Pass@5, is the recommended one.
    assert (
        "Warning: the question set cannot separate the arms: saturated at Pass@5: 88% of its 40 "
        "questions are answered by every arm; differences under 10.3 points cannot be detected "
        "with 40 questions (detecting 2 points would take ~1,000 questions, 5 points ~160): do "
        "not pick a configuration from it.\n"
        "The recommended metric on this set: Pass@5, report.headline=pass_at_5.\n"
    ) in out


# 40 questions, 3 arms: the baseline solves 10, the others those and 16 or 24 more
INFORMATIVE = {
    "baseline": [1] * 10 + [0] * 30,
    "better": [1] * 26 + [0] * 14,
    "best": [1] * 34 + [0] * 6,
}


def test_a_sweep_on_an_informative_set_prints_no_warning(tmp_path: Path, capsys) -> None:
    write_sweep(tmp_path, INFORMATIVE)
    out = end_sweep(tmp_path, capsys)
    # d = 16 (or 24) ones, the rest 0: sd = sqrt(40 * 0.4 * 0.6 / 39) = 0.49614 for both pairs
    # (0.6 * 0.4 = 0.4 * 0.6); MDE = 2.80158 * 0.49614 / sqrt(40) = 0.2198 (normal), 0.2254 exact:
    # 22.5 points, below both differences (40 and 60 points)
    assert "Warning" not in out and "cannot separate" not in out
    assert (
        "The question set separates 2 of 2 compared pairs at Pass@5 (smallest detectable "
        "difference 22.5 points with 40 questions); recommended report.headline=pass_at_5.\n"
    ) in out


def test_with_a_split_the_sweep_reads_the_test_questions_and_says_so(
    tmp_path: Path, capsys
) -> None:
    # the informative set's 40 questions as test, 10 dev questions every arm solves in front
    hits = {arm: [1] * 10 + scores for arm, scores in INFORMATIVE.items()}
    write_sweep(tmp_path, hits, ["dev"] * 10 + ["test"] * 40)
    out = end_sweep(tmp_path, capsys)
    assert (
        "On the 40 test questions the figures are reported on, the question set separates 2 of 2 "
        "compared pairs at Pass@5 (smallest detectable difference 22.5 points with 40 questions)"
    ) in out
