"""End to end on small slices of the real data, through the CLI, tracked in MLflow."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conftest import run_cli


def results(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.rglob("result.json"))]


@pytest.mark.slow
def test_cookbook_sweep_tracks_four_runs(cookbook_dir: Path, tmp_path: Path):
    proc = run_cli(
        "run", "-m", "context=none,replay", "fusion=dense_only,rrf",
        "dataset.max_documents=6", f"output_dir={tmp_path}", "study=e2e",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = results(tmp_path / "multirun")
    assert len(rows) == 4
    docs = json.loads((cookbook_dir / "codebase_chunks.json").read_text())[:6]
    expected_chunks = sum(len(d["chunks"]) for d in docs)
    for row in rows:
        m = row["metrics"]
        assert 0 < m["recall_at_5"] <= m["recall_at_10"] <= m["recall_at_20"] <= 1
        assert m["failure_rate_at_20"] == pytest.approx(1 - m["recall_at_20"])
        assert (
            m["pass_at_20"] >= m["recall_at_20"] - 1e-9
        )  # text match credits identical chunks too
        assert m["n_chunks"] == expected_chunks
    # the table names every run id
    for row in rows:
        assert row["run_id"] in proc.stdout

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = mlflow.search_runs(experiment_names=["e2e"], output_format="list")
    parents = [r for r in runs if r.data.tags.get("sweep") == "true"]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    (parent,) = parents
    assert parent.data.metrics["jobs"] == 4 and parent.data.metrics["jobs_failed"] == 0
    # the parent holds the study: its results as a table, whether its questions separate the arms
    assert json.loads(parent.data.tags["mlflow.loggedArtifacts"]) == [
        {"path": "results_table.json", "type": "table"}
    ]
    results_table = mlflow.MlflowClient().load_table(
        parent.info.experiment_id, "results_table.json", [parent.info.run_id]
    )
    assert sorted(results_table["run_id"]) == sorted(r["run_id"] for r in rows)
    assert set(results_table["outcome"]) == {"finished"}
    assert {"context", "fusion", "pass_at_5", "mrr"} <= set(results_table.columns)
    line = parent.data.tags["situate.informativeness"]
    assert (
        line and line.split()[0] in ("The", "Warning:") and line in proc.stdout.replace("\n", " ")
    )
    runs = [r for r in runs if r is not parent]
    assert len(runs) == 4
    assert all(r.data.tags["mlflow.parentRunId"] == parent.info.run_id for r in runs)
    run = next(
        r for r in runs if r.data.tags["context"] == "replay" and r.data.tags["fusion"] == "rrf"
    )
    assert run.info.status == "FINISHED"
    assert {
        "dataset",
        "chunker",
        "context",
        "embedder",
        "sparse",
        "fusion",
        "reranker",
        "git_commit",
    } <= set(run.data.tags)
    assert run.data.params["fusion.k"] == "60"
    assert run.data.params["context.placement"] == "before"
    for name in (
        "recall_at_5",
        "pass_at_5",
        "ndcg_at_10",
        "mrr",
        "failure_rate_at_20",
        "n_questions",
        "n_chunks",
        "index_seconds",
        "query_seconds",
        "run_seconds",  # logged after the artifacts: the job's wall time to the end of logging
        "unaccounted_seconds",
    ):
        assert name in run.data.metrics, name
    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(run.info.run_id)}
    assert {"config.yaml", "per_question.csv", "contexts_sample.json"} <= artifacts
    local = mlflow.artifacts.download_artifacts(
        run_id=run.info.run_id, artifact_path="per_question.csv", dst_path=str(tmp_path / "dl")
    )
    with open(local) as f:
        rows_csv = list(csv.DictReader(f))
    assert len(rows_csv) == run.data.metrics["n_questions"]
    assert rows_csv[0]["top_20_chunk_ids"].split()[0].startswith("doc_")
    # one per-question table per run, listed as MLflow's log_table lists it, read back by MLflow
    for r in runs:
        listed = json.loads(r.data.tags["mlflow.loggedArtifacts"])
        assert listed == [{"path": "per_question_table.json", "type": "table"}]
    client, experiment = mlflow.MlflowClient(), run.info.experiment_id
    table = client.load_table(experiment, "per_question_table.json", run_ids=[run.info.run_id])
    assert len(table) == run.data.metrics["n_questions"]
    assert list(table["question_id"]) == [r["qid"] for r in rows_csv]
    assert list(table["question"]) == [r["question"] for r in rows_csv]
    assert [f"{x:.4f}" for x in table["pass_at_5"]] == [r["pass_at_5"] for r in rows_csv]
    assert "context_of_first_relevant" in table.columns  # a replayed context per chunk
    ids = [x.info.run_id for x in runs]
    both = client.load_table(experiment, "per_question_table.json", ids, extra_columns=["run_id"])
    assert len(both) == 4 * run.data.metrics["n_questions"]
    # the question set is one evaluation dataset of the store, and each run names it
    (dataset,) = client.search_datasets(experiment_ids=[experiment])
    assert {r.data.tags["situate.eval_dataset_id"] for r in runs} == {dataset.dataset_id}
    assert dataset.name.startswith("cookbook-questions-")
    records = dataset.to_df()
    assert len(records) == run.data.metrics["n_questions"]
    assert sorted(x["question_id"] for x in records["inputs"]) == sorted(table["question_id"])
    # a retriever trace per question (fewer than the default sample of 100: all of them)
    for r in runs:
        assert r.data.metrics["traces_logged"] == r.data.metrics["n_questions"]
    traces = client.search_traces(locations=[experiment], run_id=run.info.run_id)
    assert len(traces) == run.data.metrics["n_questions"]
    trace = next(t for t in traces if t.info.tags["situate.question_id"] == rows_csv[0]["qid"])
    names = [s.name for s in trace.data.spans]
    assert names == ["retrieve", "dense", "sparse", "fusion"]  # rrf of dense and BM25
    dense = next(s for s in trace.data.spans if s.name == "dense")
    assert dense.span_type == "RETRIEVER"
    top = [d["metadata"]["chunk_id"] for d in dense.outputs]
    assert top[0].startswith("doc_") and [d["metadata"]["rank"] for d in dense.outputs][:2] == [
        1,
        2,
    ]
    fused = next(s for s in trace.data.spans if s.name == "fusion")
    assert [d["metadata"]["chunk_id"] for d in fused.outputs] == rows_csv[0][
        "top_20_chunk_ids"
    ].split()[:10]


@pytest.mark.slow
def test_second_run_reuses_every_cached_embedding(cookbook_dir: Path, tmp_path: Path):
    args = ("run", "dataset.max_documents=3", "tracking=none", f"output_dir={tmp_path}")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr[-3000:]
    second = run_cli(*args)
    assert second.returncode == 0, second.stderr[-3000:]
    a, b = sorted((tmp_path / "runs").rglob("result.json"))
    m1, m2 = json.loads(a.read_text())["metrics"], json.loads(b.read_text())["metrics"]
    assert m1["texts_embedded"] > 0
    assert m2["texts_embedded"] == 0  # index and query vectors all came from the cache
    assert m1["recall_at_10"] == m2["recall_at_10"]


@pytest.mark.slow
def test_covid_qa_fixed_chunker(covid_qa_file: Path, tmp_path: Path):
    proc = run_cli(
        "run", "dataset=covid_qa", "dataset.max_documents=3", "chunker=fixed", "chunker.size=300",
        "chunker.overlap=50", "context=none", "embedder=minilm_onnx", "tracking=none", f"output_dir={tmp_path}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (row,) = results(tmp_path / "runs")
    m = row["metrics"]
    assert m["n_documents"] == 3
    assert m["n_questions"] > 0
    assert 0 < m["recall_at_5"] <= m["recall_at_20"] <= 1


@pytest.mark.slow
def test_index_then_search(cookbook_dir: Path, tmp_path: Path):
    args = ("dataset.max_documents=3", f"output_dir={tmp_path}")
    built = run_cli("index", *args)
    assert built.returncode == 0, built.stderr[-3000:]
    assert f"{tmp_path}/index/" in built.stdout
    found = run_cli(
        "search", "What is the purpose of the DiffExecutor struct?", *args, "-k", "3", "--json"
    )
    assert found.returncode == 0, found.stderr[-3000:]
    answer = json.loads(found.stdout)
    assert [h["rank"] for h in answer["hits"]] == [1, 2, 3]
    # the model load and the index open come before the query, and are not counted in its time
    assert {"seconds", "model_load_seconds", "index_open_seconds"} <= set(answer)
    scores = [h["score"] for h in answer["hits"]]
    assert scores == sorted(scores, reverse=True)
    docs = {
        d["doc_id"]: d["content"]
        for d in json.loads((cookbook_dir / "codebase_chunks.json").read_text())[:3]
    }
    for hit in answer["hits"]:
        assert docs[hit["doc_id"]][hit["start"] : hit["end"]] == hit["text"]
        assert hit["context"]  # replayed Claude context
    assert "DiffExecutor" in answer["hits"][0]["text"]
    table = run_cli("search", "DiffExecutor", *args)
    assert table.returncode == 0 and "doc_1_chunk_" in table.stdout
    assert " ms (before it: index open " in table.stdout and ", model load " in table.stdout
    missing = run_cli("search", "DiffExecutor", *args, "context=none")
    assert missing.returncode == 2
    assert "no index for this config; run `situate index" in missing.stderr


@pytest.mark.slow
def test_search_with_lucene_shows_the_jvm_start_apart(cookbook_dir: Path, tmp_path: Path):
    args = ("sparse=pyserini", "dataset.max_documents=1", f"output_dir={tmp_path}")
    assert run_cli("index", *args).returncode == 0
    found = run_cli("search", "DiffExecutor", *args, "-k", "2", "--json")
    assert found.returncode == 0, found.stderr[-3000:]
    answer = json.loads(found.stdout)
    assert list(answer)[:5] == [
        "query", "seconds", "jvm_start_seconds", "index_open_seconds", "model_load_seconds",
    ]  # fmt: skip
    table = run_cli("search", "DiffExecutor", *args, "-k", "2", env={"COLUMNS": "200"})
    assert "(before it: JVM start " in table.stdout


@pytest.mark.slow
def test_parallel_sweep_builds_each_shared_index_once(cookbook_dir: Path, tmp_path: Path):
    proc = run_cli(
        "run", "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "dataset.max_documents=3",
        "context=none,replay", "fusion=dense_only,rrf", f"output_dir={tmp_path}", "study=parallel",
        "embedder=minilm_onnx",  # the lock is the point here, not the embedder
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = results(tmp_path / "multirun")
    assert len(rows) == 4
    docs = json.loads((cookbook_dir / "codebase_chunks.json").read_text())[:3]
    plain = {c["content"] for d in docs for c in d["chunks"]}
    # each context variant's chunk texts are embedded by exactly one job; the other waits and reuses
    by_context: dict[str, int] = {}
    for row in rows:
        by_context[row["choices"]["context"]] = by_context.get(row["choices"]["context"], 0) + int(
            row["metrics"]["texts_embedded"]
        )
    # chunk texts once (plus the few question vectors); without the lock both jobs embed them all
    assert len(plain) <= by_context["none"] < 2 * len(plain)
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = mlflow.search_runs(experiment_names=["parallel"], output_format="list")
    assert len(runs) == 5  # one parent, four jobs


@pytest.mark.slow
def test_sweep_on_a_local_ray_instance(cookbook_dir: Path, tmp_path: Path):
    proc = run_cli(
        "run", "-m", "hydra/launcher=ray_cluster", "dataset.max_documents=2", "context=none,replay",
        "fusion=rrf", f"output_dir={tmp_path}", "study=ray", "embedder=minilm_onnx",
        env={"RAY_ADDRESS": "local"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = results(tmp_path / "multirun")
    assert sorted(r["choices"]["context"] for r in rows) == ["none", "replay"]
    assert all(r["metrics"]["n_chunks"] == 13 + 7 for r in rows)  # the first two files' chunks
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = mlflow.search_runs(experiment_names=["ray"], output_format="list")
    assert len(runs) == 3  # the sweep's parent and its two jobs


@pytest.mark.slow
def test_a_window_that_cuts_contexts_is_said_logged_and_listed(cookbook_dir: Path, tmp_path: Path):
    # the cookbook's order (context after the chunk) at 128 tokens, on 6 documents
    proc = run_cli(
        "run", "context=replay", "context.placement=after", "embedder.max_seq_length=128",
        "fusion=dense_only", "dataset.max_documents=6", f"output_dir={tmp_path}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    output = (proc.stdout + proc.stderr).splitlines()
    said = [line for line in output if "window of 128 tokens cut" in line]
    assert len(said) == 1 and "set context.placement=before" in said[0]
    (row,) = results(tmp_path)
    m = row["metrics"]
    assert m["contexts_truncated"] == m["texts_truncated"] > 0  # every cut text loses its context
    assert m["contexts_truncated_share"] == m["contexts_truncated"] / m["n_chunks"]
    cut = json.loads(next(tmp_path.rglob("truncated.json")).read_text())["dense"]
    assert cut["window_tokens"] == 128
    assert len(cut["contexts_truncated"]) == m["contexts_truncated"]
    assert all(chunk_id.startswith("doc_") for chunk_id in cut["contexts_truncated"])
