"""The Python API: light to import, the CLI's own job and caches, and the docs' notebook runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import situate
from conftest import DATA_DIR, REPO, run_cli
from situate.api import Result
from situate.errors import SituateError


def test_import_situate_imports_nothing_heavy() -> None:
    code = (
        "import sys, situate; assert callable(situate.__getattr__); "
        "heavy = {'hydra', 'pandas', 'numpy', 'mlflow', 'omegaconf'} & set(sys.modules); "
        "assert not heavy, heavy; print(sorted(situate.API))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "['Result', 'compare', 'halve', 'run', 'sweep']" in proc.stdout


@pytest.mark.slow
def test_run_is_the_cli_job_with_the_same_caches(cookbook_dir: Path, tmp_path: Path) -> None:
    args = ["dataset.max_documents=3", "eval.split=dev_test", f"output_dir={tmp_path}"]
    cli = run_cli("run", *args, "tracking=none")
    assert cli.returncode == 0, cli.stderr[-3000:]
    (row,) = [json.loads(p.read_text()) for p in (tmp_path / "runs").rglob("result.json")]
    result = situate.run([*args, "tracking=mlflow"])
    assert result.metrics["texts_embedded"] == 0  # every vector came from the CLI's cache
    for k in ("pass_at_20", "dev_pass_at_20", "test_pass_at_20", "mrr"):
        assert result.metrics[k] == row["metrics"][k]
    table = result.per_question
    assert len(table) == result.metrics["n_questions"]
    assert set(table["part"]) == {"dev", "test"}
    assert table.loc[table.part == "dev", "pass_at_20"].mean() == pytest.approx(
        result.metrics["dev_pass_at_20"], abs=1e-4
    )
    import mlflow

    client = mlflow.tracking.MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    assert client.get_run(result.run_id).data.metrics["dev_pass_at_20"] == result.metrics["dev_pass_at_20"]  # fmt: skip
    again = situate.run([*args, "tracking=none"])  # likely within the same second: own folder
    assert again.folder != result.folder and again.metrics["mrr"] == result.metrics["mrr"]
    assert Result.from_folder(result.folder).run_id == result.run_id
    same = situate.compare(result, result, metric="pass_at_20", part="test", permutations=200)
    assert same.iloc[0]["difference"] == 0.0 and same.iloc[0]["p_value"] == 1.0
    with pytest.raises(SituateError, match="no question in part 'holdout'"):
        result.scores("pass_at_20", part="holdout")


def test_runs_in_one_process_each_log_to_their_own_store(tmp_path: Path, monkeypatch) -> None:
    # MLflow exports the URI it is given as MLFLOW_TRACKING_URI, which tracking.tracking_uri
    # reads: without care, a notebook's second situate.run (output_dir b) logs to a's store
    from hydra.utils import instantiate

    from situate.config.compose import compose

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uris = []
    for name in ("a", "b"):
        tracker = instantiate(compose([f"output_dir={tmp_path / name}"]).tracking)
        tracker.prepare()
        uris.append(tracker.uri)
    root = tmp_path.resolve()
    assert uris == [
        f"sqlite:///{root / 'a' / 'mlflow.db'}",
        f"sqlite:///{root / 'b' / 'mlflow.db'}",
    ]
    assert "MLFLOW_TRACKING_URI" not in os.environ
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uris[0])  # a user's own choice is followed and kept
    tracker = instantiate(compose([f"output_dir={tmp_path / 'c'}"]).tracking)
    tracker.prepare()
    assert tracker.uri == uris[0] and os.environ["MLFLOW_TRACKING_URI"] == uris[0]


def test_a_mistake_is_a_situate_error() -> None:
    with pytest.raises(SituateError, match="unknown option fusion=rrrf"):
        situate.run(["fusion=rrrf"])


@pytest.mark.slow
def test_the_notebook_example_runs_offline(cookbook_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "SITUATE_DATA_DIR": str(DATA_DIR),
           "SITUATE_EXAMPLE_ARGS": f"dataset.max_documents=12 output_dir={tmp_path}"}  # fmt: skip
    env.pop("MLFLOW_TRACKING_URI", None)
    proc = subprocess.run(
        [sys.executable, str(REPO / "docs" / "notebook.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Picked on dev, reported on test: fusion=" in proc.stdout
    # on 12 documents every arm may tie at Pass@20 (the baseline is then its own pick)
    assert ("Against the baseline fusion=dense_only on the same test questions" in proc.stdout
            or "The pick is the baseline itself" in proc.stdout)  # fmt: skip
    assert "p_holm" in proc.stdout and "fusion=zscore_sum" in proc.stdout  # the compare table


def test_a_halving_rung_drops_only_arms_shown_worse_than_the_leader() -> None:
    import pandas as pd

    from situate.api import halving_rung

    qids = [f"q{i}" for i in range(30)]
    lead = pd.Series([1.0] * 30, index=qids)
    worse = pd.Series([0.0] * 30, index=qids)  # 30 losses: p = 1/2001 before Holm
    close = pd.Series([1.0] * 29 + [0.0], index=qids[::-1])  # one loss, other question order
    rows = halving_rung([worse, lead, close], alpha=0.05, permutations=2000, seed=0)
    assert [r["kept"] for r in rows] == [False, True, True]
    assert rows[0]["difference"] == -1.0 and rows[0]["p_holm"] == pytest.approx(2 / 2001)
    assert rows[2]["difference"] == pytest.approx(-1 / 30) and rows[2]["p_holm"] == 1.0
    assert rows[1]["p_holm"] is None and rows[1]["mean"] == 1.0
    last = halving_rung([worse, lead, close], 0.05, 2000, 0, keep_all=True)
    assert all(r["kept"] for r in last)


@pytest.mark.slow
def test_halving_runs_the_survivors_on_more_questions(cookbook_dir: Path, tmp_path: Path) -> None:
    arms = [["fusion=dense_only"], ["fusion=rrf"]]
    table = situate.halve(arms, [f"output_dir={tmp_path}", "tracking=none",
                                 "dataset.max_documents=12"], sizes=(20, 41), alpha=1.0)  # fmt: skip
    # alpha 1.0: the trailing arm is dropped after the first rung whenever it trails at all
    first = table[table.rung == 0]
    assert list(first.questions) == [20, 20]
    leader = first.loc[first["mean"].idxmax(), "arm"]
    if first["mean"].nunique() == 1:  # a tie: the paired difference is 0, nothing dropped
        assert list(table[table.rung == 1].questions) == [41, 41]
    else:
        assert list(table[table.rung == 1].arm) == [leader]
        assert list(table[table.rung == 1].questions) == [41]


@pytest.mark.slow
def test_a_sweep_with_a_failed_job_is_a_table_with_its_error(
    cookbook_dir: Path, tmp_path: Path
) -> None:
    # the CLI exits 1 for it; the API gives the failed job as a row (fusion.k=-1 stops at its
    # stage's parameters) beside the job that ran
    import pandas as pd

    table = situate.sweep(
        ["dataset.max_documents=2", "fusion=rrf", "fusion.k=60,-1", "tracking=none",
         f"output_dir={tmp_path}"]
    )  # fmt: skip
    assert list(table["job"]) == [0, 1]
    assert pd.isna(table.loc[0, "error"]) and table.loc[0, "n_questions"] > 0
    assert "fusion.k" in table.loc[1, "error"]
