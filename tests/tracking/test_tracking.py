"""What a run leaves in MLflow: spend that survives an interruption, and what a user sees in the UI.

Every test writes to its own file-based MLflow store under ``tmp_path``.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import run_cli
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.errors import SituateError
from situate.tracking.base import flatten, one_line_error, run_name
from situate.tracking.mlflow_tracker import MlflowTracker, print_runs_urls, runs_url

TESTS = Path(__file__).resolve().parents[1]
KEY = "emulator-key-test-tracking-7c2"
# claude-haiku-5-5, USD per million tokens: input, 5-minute cache write, cache read, output
INPUT, WRITE_5M, READ, OUTPUT = (
    Fraction("0.10"),
    Fraction("0.125"),
    Fraction("0.01"),
    Fraction("0.50"),
)


def tracker(tmp_path: Path, experiment: str = "t") -> MlflowTracker:
    return MlflowTracker(None, str(tmp_path / "mlflow.db"), str(tmp_path / "art"), experiment)


def runs_of(tmp_path: Path, experiment: str) -> list:
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    return mlflow.search_runs(experiment_names=[experiment], output_format="list")


def artifact_text(run, name: str, tmp_path: Path) -> str:
    import mlflow

    local = mlflow.artifacts.download_artifacts(
        run_id=run.info.run_id, artifact_path=name, dst_path=str(tmp_path / "dl" / run.info.run_id)
    )
    return Path(local).read_text()


# -- spend across an interruption (issue 16, item 2) -------------------------------------------


def billed(emu: AnthropicEmulator) -> list[dict]:
    """The usage of every request the emulator billed."""
    return [r.usage for r in emu.requests if r.billed and r.path == "/v1/messages"]


def usd_by_hand(usages: list[dict]) -> float:
    """claude-haiku-5-5 prices times the emulator's usage fields."""
    total = sum(
        u["input_tokens"] * INPUT
        + u["cache_creation_input_tokens"] * WRITE_5M
        + u["cache_read_input_tokens"] * READ
        + u["output_tokens"] * OUTPUT
        for u in usages
    )
    return float(Fraction(total) / 1_000_000)


@pytest.mark.slow
def test_spend_survives_an_interrupt_and_the_resumed_run_reports_both_families(
    cookbook_dir, tmp_path
):
    run = (
        "run", "context=llm", "llm=claude_haiku_5_5", "embedder=minilm_onnx",
        "embedder.batch_size=8", "dataset.max_documents=2", "eval.ks=[5,10]",
        f"output_dir={tmp_path}", "study=resume",
    )  # fmt: skip
    env = {
        "ANTHROPIC_API_KEY": KEY,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    interrupt = (
        "embedder._target_=interrupting_embedder.InterruptingEmbedder",
        "+embedder.interrupt_after=8",  # one batch of 8 vectors stored, then Ctrl-C
    )
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        url = f"llm.base_url={emu.url}"
        stopped = run_cli(*run, url, *interrupt, env=env)
        paid = billed(emu)
        resumed = run_cli(*run, url, env=env)
        assert len(billed(emu)) == len(paid)  # the resumed run paid for no context again
    assert stopped.returncode == 130 and "interrupted" in stopped.stderr
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    first, second = sorted(runs_of(tmp_path, "resume"), key=lambda r: r.info.start_time)
    n_chunks = 13 + 7  # the first two cookbook documents
    assert len(paid) == n_chunks
    usd = usd_by_hand(paid)
    assert usd > 0

    # the interrupted run is KILLED, says why, and logged the calls it had paid for
    assert first.info.status == "KILLED"  # Ctrl-C: stopped by the user, not failed
    assert first.data.tags["situate.error"].startswith("interrupted (KeyboardInterrupt)")
    assert artifact_text(first, "error.txt", tmp_path).startswith("interrupted")
    assert [i.dataset.name for i in first.inputs.dataset_inputs] == ["cookbook"]
    assert "None" not in first.data.tags.values()  # no `arm: None`
    m = first.data.metrics
    assert m["run_llm_calls"] == n_chunks
    assert m["run_cost_usd_context"] == pytest.approx(usd, rel=1e-9)
    assert m["run_tokens_cache_read"] == sum(u["cache_read_input_tokens"] for u in paid)

    # the resumed run paid nothing for contexts; the configuration's contexts cost what was paid
    m = second.data.metrics
    assert second.info.status == "FINISHED"
    assert m["run_llm_calls"] == 0 and m["run_cost_usd_context"] == 0
    assert m["config_llm_calls"] == n_chunks
    assert m["config_cost_usd_context"] == pytest.approx(usd, rel=1e-9)
    fields = {
        "input_uncached": "input_tokens",
        "cache_write": "cache_creation_input_tokens",
        "cache_read": "cache_read_input_tokens",
        "output": "output_tokens",
    }
    for ours, theirs in fields.items():
        assert m[f"config_tokens_{ours}"] == sum(u[theirs] for u in paid), ours
    reads = sum(u["cache_read_input_tokens"] for u in paid)
    inputs = sum(u[f] for u in paid for f in list(fields.values())[:3])
    assert reads > 0
    assert m["config_cache_read_share"] == pytest.approx(reads / inputs, rel=1e-12)
    assert "run_cache_read_share" not in m  # no call made: no share to speak of
    assert not any(k.startswith(("cost_usd", "tokens_", "llm_calls")) for k in m)
    assert m["texts_embedded"] == n_chunks - 8 + m["n_questions"]  # the stored batch is reused


# -- MLflow as users expect it (issue 16, item 12) ---------------------------------------------


@pytest.mark.slow
def test_experiment_opens_on_its_runs_table(tmp_path, capsys):
    import mlflow

    t = tracker(tmp_path)
    experiment_id = t.prepare()
    client = mlflow.MlflowClient()
    assert client.get_experiment(experiment_id).tags["mlflow.experimentKind"] == (
        "custom_model_development"
    )
    # an experiment an older situate created without the tag gets it
    old = client.create_experiment("old", artifact_location=(tmp_path / "old").as_uri())
    tracker(tmp_path, "old").prepare()
    assert client.get_experiment(old).tags["mlflow.experimentKind"] == "custom_model_development"
    assert runs_url("http://127.0.0.1:5000/", "3") == (
        "http://127.0.0.1:5000/#/experiments/3/runs?workflowType=machine_learning"
    )
    print_runs_urls(str(tmp_path / "mlflow.db"), "http://ui:1")  # what `make mlflow-ui` prints
    lines = capsys.readouterr().out.splitlines()
    assert (
        f"t: http://ui:1/#/experiments/{experiment_id}/runs?workflowType=machine_learning" in lines
    )


@pytest.mark.slow
def test_dataset_is_logged_as_a_run_input(tmp_path):
    t = tracker(tmp_path)
    with t.run("r", {}, {}):
        t.log_dataset(
            "handbook", "0123456789abcdef", str(tmp_path / "handbook"),
            {"documents": 2, "questions": 3, "chunks": 5}, context="eval",
        )  # fmt: skip
    (run,) = runs_of(tmp_path, "t")
    (item,) = run.inputs.dataset_inputs
    assert item.dataset.name == "handbook" and item.dataset.digest == "0123456789abcdef"
    assert json.loads(item.dataset.source)["uri"] == str(tmp_path / "handbook")
    assert json.loads(item.dataset.profile) == {"documents": 2, "questions": 3, "chunks": 5}
    assert [t.value for t in item.tags if t.key == "mlflow.data.context"] == ["eval"]


@pytest.mark.slow
def test_two_runs_logging_the_same_dataset_at_once(tmp_path):
    """The CI failure of a two-job Ray sweep, replayed in order: between this run's lookup of the
    dataset and its insert, another process inserts the same (experiment, name, digest). MLflow's
    insert breaks the unique key; the run logs its input on the second try, against that row."""
    import sqlite3

    from mlflow.store.tracking.dbmodels.models import SqlDataset
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    raced = []

    def other_process_inserts_first(session, flush_context, instances):
        rows = [o for o in session.new if isinstance(o, SqlDataset)]
        if rows and not raced:
            row = rows[0]
            with sqlite3.connect(tmp_path / "mlflow.db") as other:
                other.execute(
                    "INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, "
                    "dataset_source_type, dataset_source) VALUES (?, ?, ?, ?, ?, ?)",
                    ("0" * 32, row.experiment_id, row.name, row.digest,
                     row.dataset_source_type, row.dataset_source),
                )  # fmt: skip
            raced.append(row.name)

    t = tracker(tmp_path)
    event.listen(Session, "before_flush", other_process_inserts_first)
    try:
        with t.run("r", {}, {}):
            t.log_dataset("handbook", "0123456789abcdef", str(tmp_path), {"chunks": 5}, "eval")
    finally:
        event.remove(Session, "before_flush", other_process_inserts_first)
    assert raced == ["handbook"]
    (run,) = runs_of(tmp_path, "t")
    (item,) = run.inputs.dataset_inputs
    assert item.dataset.digest == "0123456789abcdef"
    with sqlite3.connect(tmp_path / "mlflow.db") as db:  # one dataset row: the other process's
        assert db.execute("SELECT dataset_uuid FROM datasets").fetchall() == [("0" * 32,)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "error, line",
    [
        (SituateError("qa.json: question q3: empty text; write the question"), None),
        (KeyboardInterrupt(), "interrupted (KeyboardInterrupt); what was stored is kept: rerun"),
        (ValueError("bad shape\nmore detail"), "ValueError: bad shape"),
    ],
)
def test_a_failed_run_carries_its_one_line_error(tmp_path, error, line):
    line = line or str(error)
    t = tracker(tmp_path)
    with pytest.raises(type(error)), t.run("r", {"a": "1"}, {}):
        raise error
    (run,) = runs_of(tmp_path, "t")
    assert run.info.status == ("KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED")
    assert run.data.tags["situate.error"].startswith(line)
    assert artifact_text(run, "error.txt", tmp_path).strip() == one_line_error(error)
    assert "\n" not in one_line_error(error)


@pytest.mark.slow
@pytest.mark.parametrize("failed, status", [(0, "FINISHED"), (1, "FINISHED"), (3, "FAILED")])
def test_sweep_parent_holds_the_grid_and_fails_only_when_every_job_did(tmp_path, failed, status):
    t = tracker(tmp_path)
    parent = t.start_parent("sweep", {"fusion.k": "10,60,abc"}, {"sweep": "true"})
    t.end_parent(parent, 3, failed, {"results.txt": "table"})
    (run,) = runs_of(tmp_path, "t")
    assert run.info.status == status
    assert run.data.params == {"fusion.k": "10,60,abc"}
    assert run.data.tags["failed_jobs"] == str(failed)
    assert run.data.metrics == {"jobs": 3, "jobs_failed": failed}


def test_params_never_hold_none_and_names_stay_short():
    assert flatten({"llm": {"thinking": None, "budget": 0}, "qa": None}) == {
        "llm.thinking": "",
        "llm.budget": "0",
        "qa": "",
    }
    assert run_name(
        [
            "dataset=folder",
            "dataset.path=/home/me/notes/handbook/",
            "output_dir=/tmp/o",
            "fusion=rrf",
        ]
    ) == ("dataset=folder dataset.path=handbook fusion=rrf")


def handbook(root: Path) -> Path:
    folder = root / "team-handbook"
    folder.mkdir()
    (folder / "leave.md").write_text(
        "# Leave\n\nEvery employee gets twenty-five days of paid leave each calendar year.\n"
    )
    (folder / "travel.md").write_text(
        "# Travel\n\nTrain tickets are booked through the travel desk two weeks ahead.\n"
    )
    qa = [
        {"id": "q1", "q": "How many days of paid leave?", "gold": ["twenty-five days"]},
        {"id": "q2", "q": "Who books train tickets?", "gold": ["the travel desk"]},
    ]
    (folder / "qa.json").write_text(json.dumps(qa))
    return folder


@pytest.mark.slow
def test_a_sweep_of_a_folder_in_mlflow(tmp_path):
    folder = handbook(tmp_path)
    proc = run_cli(
        "run", "-m", "dataset=folder", f"dataset.path={folder}", "chunker=markdown",
        "context=none", "embedder=minilm_onnx", "eval.ks=[1,2]", "fusion.k=60,-1",
        f"output_dir={tmp_path / 'out'}", "study=folder",
    )  # fmt: skip
    # one job of two failed: the sweep exits 1 and says so in one line
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "situate: 1 of 2 jobs of the sweep failed" in proc.stderr
    runs = runs_of(tmp_path / "out", "folder")
    (parent,) = [r for r in runs if r.data.tags.get("sweep") == "true"]
    # fusion.k=-1 stops at its stage's parameters, before a run is opened: one job, one run
    (job,) = [r for r in runs if r is not parent]
    assert parent.info.status == "FINISHED" and parent.data.tags["failed_jobs"] == "1"
    assert parent.data.params["fusion.k"] == "60,-1"
    assert parent.data.params["dataset.path"] == str(folder)
    assert job.info.status == "FINISHED"
    assert job.info.run_name == (
        "dataset=folder dataset.path=team-handbook chunker=markdown context=none "
        "embedder=minilm_onnx eval.ks=[1,2] fusion.k=60"
    )
    assert "None" not in job.data.params.values()
    assert job.data.params["dataset.qa"] == ""
    (item,) = job.inputs.dataset_inputs
    assert item.dataset.name == "folder" and len(item.dataset.digest) == 16
    assert json.loads(item.dataset.source)["uri"] == str(folder)
    assert json.loads(item.dataset.profile) == {"documents": 2, "questions": 2, "chunks": 2}


@pytest.mark.slow
@pytest.mark.parametrize("typo", ["fusoin=rrf", "fusion.k=abc", "+fusion.kk=1"])
def test_a_config_typo_leaves_no_run_behind(tmp_path, typo):
    proc = run_cli("run", typo, "context=none", f"output_dir={tmp_path}", "study=typo")
    assert proc.returncode != 0
    assert "error:" in proc.stderr
    db = tmp_path / "mlflow.db"
    assert not db.exists() or runs_of(tmp_path, "typo") == []
