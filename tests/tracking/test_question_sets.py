"""A run's question set as an MLflow evaluation dataset: registered once by content, found by
``search_datasets``, the run tagged with it; a generated set keeps each question's review and
provenance; a store that cannot hold datasets is one line and the run goes on."""

from __future__ import annotations

import json
import logging

import pytest

from situate.records import Corpus, Document, Question, Span
from situate.tracking.mlflow_tracker import MlflowTracker, forget_fault
from situate.tracking.question_sets import DATASET_ID_TAG, DATASET_NAME_TAG, question_set

mlflow = pytest.importorskip("mlflow")


def corpus(questions) -> Corpus:
    return Corpus("notes", [Document("report.pdf", "alpha beta gamma")], questions)


QUESTIONS = [
    Question("q1", "What is alpha?", (Span("report.pdf", 0, 5),), "alpha"),
    Question("q2", "And beta?", (Span("report.pdf", 6, 10),)),
]


def tracker(tmp_path) -> MlflowTracker:
    forget_fault()
    return MlflowTracker(
        None, str(tmp_path / "mlflow.db"), str(tmp_path / "mlartifacts"), "exp", lock_seconds=5
    )


def test_records_hold_the_question_its_gold_and_who_wrote_it(tmp_path):
    made = question_set(corpus(QUESTIONS), "/data/notes", tmp_path / "qa.json")
    assert made.name == f"notes-questions-{made.digest}" and len(made.digest) == 12
    assert made.records[0] == {
        "inputs": {"question_id": "q1", "question": "What is alpha?"},
        "expectations": {"gold_spans": ["report.pdf:0-5"], "answer": "alpha"},
        "source": {"source_type": "HUMAN", "source_data": {}},
    }
    assert made.records[1]["expectations"] == {"gold_spans": ["report.pdf:6-10"]}
    assert made.tags["situate.source"] == str(tmp_path / "qa.json")
    # the name follows the content: another gold span is another set
    other = [QUESTIONS[0], Question("q2", "And beta?", (Span("report.pdf", 6, 9),))]
    assert question_set(corpus(other), "/data/notes", None).name != made.name


def test_a_generated_set_keeps_each_questions_review_and_provenance(tmp_path):
    line = {
        "id": "q1", "q": "What is alpha?", "answer": "alpha", "quote": "alpha",
        "gold": [{"path": "report.pdf", "start": 0, "end": 5}], "match": "exact",
        "match_score": 100.0, "strategy": "factoid", "language": "en",
        "passage": {"path": "report.pdf", "start": 0, "end": 16},
        "provenance": {"generator": "claude-haiku-4-5"}, "status": "kept", "review": "accepted",
    }  # fmt: skip
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps(line) + "\n")
    made = question_set(corpus(QUESTIONS[:1]), str(tmp_path), path)
    assert made.records[0]["tags"] == {
        "review": "accepted", "strategy": "factoid", "generator": "claude-haiku-4-5",
    }  # fmt: skip
    assert made.records[0]["source"] == {
        "source_type": "DOCUMENT", "source_data": {"doc_uri": "report.pdf"},
    }  # fmt: skip
    assert made.tags["situate.questions"] == "generated"


@pytest.mark.slow
def test_two_runs_register_the_set_once_and_name_it(tmp_path):
    t = tracker(tmp_path)
    made = question_set(corpus(QUESTIONS), str(tmp_path), None)
    ids = []
    for name in ("a", "b"):
        with t.run(name, {}, {}) as run_id:
            t.log_question_set(made)
        ids.append(run_id)
    client = mlflow.MlflowClient(t.uri)
    found = client.search_datasets(filter_string=f"name = '{made.name}'")
    assert len(found) == 1
    (dataset,) = found
    rows = dataset.to_df()
    assert sorted(r["question_id"] for r in rows["inputs"]) == ["q1", "q2"]
    for run_id in ids:
        tags = client.get_run(run_id).data.tags
        assert tags[DATASET_ID_TAG] == dataset.dataset_id and tags[DATASET_NAME_TAG] == made.name


@pytest.mark.slow
def test_a_store_that_cannot_hold_datasets_is_one_line_and_the_run_goes_on(
    tmp_path, monkeypatch, caplog
):
    t = tracker(tmp_path)
    made = question_set(corpus(QUESTIONS), str(tmp_path), None)
    from mlflow.exceptions import MlflowException

    def refused(*args, **kwargs):  # what an MLflow server older than 3.4 answers
        raise MlflowException("Endpoint not found: /api/3.0/mlflow/datasets/search", 404)

    monkeypatch.setattr(mlflow.MlflowClient, "search_datasets", refused)
    with caplog.at_level(logging.WARNING), t.run("a", {}, {}) as run_id:
        t.log_question_set(made)
        t.log_metrics({"mrr": 0.5})
    lines = [r.getMessage() for r in caplog.records if "evaluation datasets" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "cannot hold evaluation datasets (Endpoint not found" in lines[0]
    run = mlflow.MlflowClient(t.uri).get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.metrics["mrr"] == 0.5
    assert DATASET_ID_TAG not in run.data.tags


def test_another_datasets_jsonl_is_not_read_as_a_generated_set(tmp_path):
    path = tmp_path / "evaluation_set.jsonl"  # the cookbook's: no passage, no provenance
    path.write_text(json.dumps({"query": "What is alpha?", "golden_chunk_uuids": []}) + "\n")
    made = question_set(corpus(QUESTIONS), str(tmp_path), path)
    assert made.tags["situate.questions"] == "written"
    assert made.records[0]["source"]["source_type"] == "HUMAN"


def test_traced_questions_are_all_none_or_the_same_seeded_sample(tmp_path):
    def made(**kw) -> MlflowTracker:
        return MlflowTracker(None, str(tmp_path / "m.db"), str(tmp_path / "a"), "e", **kw)

    assert made(traces="all").traced(250) == list(range(250))
    assert made(traces="none").traced(250) == []
    assert made(traces="sample", trace_sample=5).traced(4) == [0, 1, 2, 3]  # fewer: all
    sample = made(traces="sample", trace_sample=5, trace_seed=3).traced(250)
    assert len(set(sample)) == 5 and sample == sorted(sample) and max(sample) < 250
    assert made(traces="sample", trace_sample=5, trace_seed=3).traced(250) == sample  # a sweep
    assert made(traces="sample", trace_sample=5, trace_seed=4).traced(250) != sample
    from situate.errors import SituateError

    with pytest.raises(SituateError, match="tracking.traces='some' is invalid; use one of all"):
        made(traces="some")
