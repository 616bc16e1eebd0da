"""Retrieval traces in a real MLflow SQLite store: linked to the run, documents, timings, tags."""

from __future__ import annotations

import random

import pytest

from situate.tracking.traces import QuestionTrace, StageList, log_traces

TEXT = {f"c{i}": f"chunk {i} " + "x" * 400 for i in range(1, 10)}


def questions() -> list[QuestionTrace]:
    return [
        # gold c2: dense ranks it 2nd, the final (rerank) list 1st
        QuestionTrace(
            "q1",
            "how is parse called?",
            {"c2"},
            [
                StageList("dense", ["c1", "c2", "c3"], [0.9, 0.8, 0.7], 0.012),
                StageList("sparse", ["c3", "c4"], [12.5, 7.25], 0.003),
                StageList("fusion", ["c2", "c3", "c1"], [0.05, 0.04, 0.03], 0.0005),
                StageList("rerank", ["c2", "c1"], [3.0, -1.0], 0.25),
            ],
        ),
        # gold c9 retrieved by no stage; no rerank
        QuestionTrace(
            "q2",
            "where are tokens counted?",
            {"c9"},
            [
                StageList("dense", ["c5", "c6", "c9"], [0.6, 0.5, 0.4], 0.02),
                StageList("sparse", ["c6"], [4.0], 0.001),
                StageList("fusion", ["c5", "c6"], [0.03, 0.02], 0.0002),
            ],
        ),
        # no gold at all
        QuestionTrace(
            "q3", "what does main do?", set(), [StageList("dense", ["c7", "c8"], [0.3, 0.2], 1.5)]
        ),
    ]


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory):
    """One SQLite store for the module (creating one costs seconds: MLflow's migrations)."""
    from mlflow import MlflowClient

    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    client = MlflowClient(uri)
    return uri, client, client.create_experiment("traces", artifact_location=str(folder / "art"))


@pytest.fixture
def store(mlflow_store):
    """The module's store, its experiment and a new run."""
    uri, client, experiment_id = mlflow_store
    return uri, client, experiment_id, client.create_run(experiment_id).info.run_id


def test_one_trace_per_question_linked_to_the_run(store, capsys):
    import mlflow
    from mlflow.entities import SpanType

    uri, client, experiment_id, run_id = store
    global_uri, rng = mlflow.get_tracking_uri(), random.getstate()
    counts = log_traces(
        uri, experiment_id, run_id, questions(), TEXT.__getitem__, lambda c: f"doc://{c}", top=2
    )
    assert (counts.questions, counts.logged) == (3, 3)
    assert counts.seconds > 0
    # nothing printed, no global state of MLflow's (or Python's random) used
    assert capsys.readouterr().out == ""
    assert mlflow.get_tracking_uri() == global_uri
    assert mlflow.active_run() is None
    assert random.getstate() == rng

    found = client.search_traces(locations=[experiment_id], run_id=run_id)
    assert len(found) == 3
    # what the run's Traces tab asks the store for
    ui = client.search_traces(
        locations=[experiment_id], filter_string=f"attributes.run_id = '{run_id}'"
    )
    assert len(ui) == 3
    by_question = {t.info.tags["situate.question_id"]: t for t in found}
    assert set(by_question) == {"q1", "q2", "q3"}

    # gold found in the final list: q1 yes (rerank's first), q2 no, q3 has no gold (no tag)
    assert by_question["q1"].info.tags["situate.gold_found"] == "true"
    assert by_question["q2"].info.tags["situate.gold_found"] == "false"
    assert "situate.gold_found" not in by_question["q3"].info.tags

    expected = {q.question_id: q for q in questions()}
    for qid, trace in by_question.items():
        q = expected[qid]
        assert trace.info.tags["mlflow.traceName"] == "retrieve"
        root, *children = sorted(
            trace.data.spans, key=lambda s: (s.parent_id is not None, s.start_time_ns)
        )
        assert (root.name, root.span_type, root.parent_id) == ("retrieve", SpanType.CHAIN, None)
        assert root.inputs == {"query": q.question, "question_id": qid}
        assert [s.name for s in children] == [s.name for s in q.stages]
        for span, stage in zip(children, q.stages, strict=True):
            assert span.span_type == SpanType.RETRIEVER
            assert span.parent_id == root.span_id
            assert abs((span.end_time_ns - span.start_time_ns) / 1e9 - stage.seconds) < 1e-3
            docs = span.outputs
            assert [d["metadata"]["chunk_id"] for d in docs] == stage.chunk_ids[:2]
            assert [d["id"] for d in docs] == stage.chunk_ids[:2]
            assert [d["metadata"]["rank"] for d in docs] == list(range(1, len(docs) + 1))
            assert [d["metadata"]["score"] for d in docs] == stage.scores[:2]
            assert [d["metadata"]["doc_uri"] for d in docs] == [
                f"doc://{c}" for c in docs_ids(docs)
            ]
            assert all(d["page_content"] == TEXT[d["id"]][:300] for d in docs)
        total = sum(s.seconds for s in q.stages)
        assert abs((root.end_time_ns - root.start_time_ns) / 1e9 - total) < 1e-3

    # the dense spans' gold flags, by hand: q1 [c1, c2] -> [no, yes]; q2 [c5, c6]; q3 [c7, c8]
    gold = {
        qid: [d["metadata"]["gold"] for d in span.outputs]
        for qid, t in by_question.items()
        for span in t.data.spans
        if span.name == "dense"
    }
    assert gold == {"q1": [False, True], "q2": [False, False], "q3": [False, False]}
    # the rerank span of q1: c2 (gold) first
    (rerank,) = [s for s in by_question["q1"].data.spans if s.name == "rerank"]
    assert [(d["id"], d["metadata"]["gold"]) for d in rerank.outputs] == [
        ("c2", True),
        ("c1", False),
    ]


def docs_ids(docs: list[dict]) -> list[str]:
    return [d["metadata"]["chunk_id"] for d in docs]


def test_a_second_call_counts_its_own_traces(store):
    uri, client, experiment_id, run_id = store
    first = log_traces(uri, experiment_id, run_id, questions()[:2], TEXT.__getitem__, str)
    second = log_traces(uri, experiment_id, run_id, questions()[2:], TEXT.__getitem__, str)
    assert (first.logged, second.logged) == (2, 1)
    assert len(client.search_traces(locations=[experiment_id], run_id=run_id)) == 3
