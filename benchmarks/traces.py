"""``python benchmarks/traces.py``: what one retrieval trace per question costs in MLflow.

Makes ``--questions`` synthetic questions (4 stages: dense, sparse, fusion, rerank; 20 chunks
each, 10 of them logged as Documents) and writes their traces to a fresh SQLite store in a temp
folder, linked to a run: first with :func:`situate.tracking.traces.log_traces` (spans built in
situate, written ``log_spans`` 64 traces at a time, then linked to the run, then counted back by
searching the run's traces), then, unless ``--no-client``, with
MLflow's client API as its docs show it (``MlflowClient.start_trace`` / ``start_span`` /
``end_span`` / ``end_trace``, which goes through MLflow's tracing pipeline and its async export
queue, flushed before the clock stops). Prints JSON: seconds in all, milliseconds per trace and
how many traces the store holds for the run afterwards, per approach, and writes
``outputs/bench/traces.json``.

    python benchmarks/traces.py [--questions 248] [--no-client]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from common import write_json  # noqa: E402  (puts this tree's src/ on the path)

from situate.tracking.traces import QuestionTrace, StageList, log_traces  # noqa: E402

STAGES = ("dense", "sparse", "fusion", "rerank")
CHUNKS = 20
TEXT = "def parse(path):\n    return open(path).read().split()\n" * 12  # ~600 characters


def synthetic(n: int, seed: int = 0) -> list[QuestionTrace]:
    """``n`` questions of 4 stages, 20 chunks each, 2 gold chunks each."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pool = [f"doc_{n // 30}_chunk_{n % 30}" for n in rng.sample(range(2700), 60)]
        stages = []
        for name in STAGES:
            ids = rng.sample(pool, CHUNKS)
            scores = sorted((rng.random() for _ in ids), reverse=True)
            stages.append(StageList(name, ids, scores, rng.uniform(0.001, 0.05)))
        gold = set(rng.sample(pool, 2))
        out.append(QuestionTrace(f"q{i}", f"How does parse handle path {i}?", gold, stages))
    return out


def store(folder: Path, name: str):
    """A fresh SQLite store, its experiment id and a run id (MLflow's client, no active run)."""
    from mlflow import MlflowClient

    uri = f"sqlite:///{folder / name}.db"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment(name, artifact_location=str(folder / f"{name}-art"))
    return uri, experiment_id, client.create_run(experiment_id).info.run_id


def with_client_api(uri: str, experiment_id: str, run_id: str, traces) -> tuple[float, int]:
    """The docs' way: MlflowClient.start_trace and its spans. MLflow's pipeline writes to the
    global tracking URI, so it is set to the store first."""
    import mlflow
    from mlflow import MlflowClient
    from mlflow.entities import Document, SpanType

    mlflow.set_tracking_uri(uri)
    client = MlflowClient(uri)
    started = time.perf_counter()
    at = time.time_ns() - sum(round(s.seconds * 1e9) for q in traces for s in q.stages)
    for q in traces:
        root = client.start_trace(
            "retrieve",
            span_type=SpanType.CHAIN,
            inputs={"query": q.question, "question_id": q.question_id},
            tags={"situate.question_id": q.question_id},
            experiment_id=experiment_id,
            start_time_ns=at,
            run_id=run_id,
        )
        for stage in q.stages:
            span = client.start_span(
                stage.name,
                root.trace_id,
                root.span_id,
                span_type=SpanType.RETRIEVER,
                inputs={"query": q.question},
                start_time_ns=at,
            )
            docs = [
                Document(
                    page_content=TEXT[:300],
                    metadata={
                        "doc_uri": "doc",
                        "chunk_id": c,
                        "score": s,
                        "rank": r,
                        "gold": False,
                    },
                    id=c,
                )
                for r, (c, s) in enumerate(
                    zip(stage.chunk_ids[:10], stage.scores[:10], strict=True), 1
                )
            ]
            at += round(stage.seconds * 1e9)
            client.end_span(root.trace_id, span.span_id, outputs=docs, end_time_ns=at)
        client.end_trace(root.trace_id, end_time_ns=at)
    mlflow.flush_trace_async_logging()
    seconds = time.perf_counter() - started
    found = mlflow.search_traces(
        locations=[experiment_id], run_id=run_id, return_type="list", max_results=100_000
    )
    return seconds, len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=248)
    parser.add_argument("--no-client", action="store_true", help="skip MLflow's client API")
    args = parser.parse_args()
    traces = synthetic(args.questions)
    figures = {"questions": args.questions, "stages": len(STAGES), "chunks_per_stage": CHUNKS}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        uri, experiment_id, run_id = store(folder, "situate")
        counts = log_traces(uri, experiment_id, run_id, traces, lambda c: TEXT, lambda c: c)
        figures["log_traces"] = {
            "seconds": round(counts.seconds, 3),
            "ms_per_trace": round(counts.seconds / args.questions * 1000, 2),
            "logged": counts.logged,
        }
        if not args.no_client:
            uri, experiment_id, run_id = store(folder, "client")
            seconds, found = with_client_api(uri, experiment_id, run_id, traces)
            figures["client_api"] = {
                "seconds": round(seconds, 3),
                "ms_per_trace": round(seconds / args.questions * 1000, 2),
                "logged": found,
            }
    print(json.dumps(figures, indent=2))
    write_json("traces", figures)


if __name__ == "__main__":
    main()
