"""The per-question table: hand-computed rows, MLflow's own format (read back by
``mlflow.load_table``) and the tag that lists it."""

from __future__ import annotations

import json

import pytest

from situate.evaluation.evaluate import QuestionResult
from situate.records import Chunk, Context
from situate.tracking.tables import first_line, logged_artifacts, per_question_table, write_table


def chunk(cid: str, text: str) -> Chunk:
    return Chunk(cid, "d", 0, 0, len(text), text)


CHUNKS = [
    chunk("c1", "\n  def alpha():\n    pass"),
    chunk("c2", "beta " * 40),
    chunk("c3", "gamma"),
]


def question(qid, top, relevant, rank, gold=("d:0-5",)) -> QuestionResult:
    found = rank is not None
    return QuestionResult(
        qid, f"q {qid}?", list(gold), top,
        recall={1: float(rank == 1), 2: float(found and rank <= 2)},
        passed={1: float(rank == 1), 2: float(found and rank <= 2)},
        reciprocal_rank=1 / rank if found else 0.0, first_relevant_rank=rank,
        relevant_ids=relevant,
    )  # fmt: skip


def test_first_line_skips_blank_lines_and_cuts_long_ones():
    assert first_line("\n  def alpha():\n    pass") == "def alpha():"
    assert first_line("x" * 150) == "x" * 99 + "…"
    assert first_line("") == ""


def test_rows_are_the_questions_with_their_ranked_chunks_scores_and_context():
    questions = [
        question("q1", ["c2", "c1", "c3"], ["c1"], 2),
        question("q2", ["c3", "c2"], ["c1"], None),  # missed: the gold chunk's context is shown
        question("q3", ["c1"], [], None, gold=()),  # no gold: empty cells, not zeros
    ]
    contexts = [Context("c1", "From alpha.py."), Context("c2", ""), Context("c3", "")]
    table = per_question_table(questions, CHUNKS, contexts, [2, 1])
    assert list(table) == [
        "question_id", "question", "gold", "part", "top_2_chunk_ids", "top_2_first_lines",
        "first_relevant_rank", "reciprocal_rank", "pass_at_1", "pass_at_2", "recall_at_1",
        "recall_at_2", "context_of_first_relevant",
    ]  # fmt: skip
    assert table["question_id"] == ["q1", "q2", "q3"]
    assert table["top_2_chunk_ids"] == ["c2 c1", "c3 c2", "c1"]
    assert (
        table["top_2_first_lines"][0]
        == f"1. c2: {('beta ' * 20).strip()[:99]}…\n2. c1: def alpha():"
    )
    assert table["first_relevant_rank"] == [2, None, None]
    assert table["reciprocal_rank"] == [0.5, 0.0, None]
    assert table["pass_at_1"] == [0.0, 0.0, None] and table["pass_at_2"] == [1.0, 0.0, None]
    assert table["context_of_first_relevant"] == ["From alpha.py.", "From alpha.py.", ""]


def test_a_run_without_contexts_has_no_context_column():
    table = per_question_table([question("q1", ["c1"], ["c1"], 1)], CHUNKS, None, [1])
    assert "context_of_first_relevant" not in table


def test_the_file_is_what_mlflow_load_table_reads(tmp_path):
    mlflow = pytest.importorskip("mlflow")
    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.create_experiment("t", artifact_location=(tmp_path / "art").as_uri())
    run = client.create_run(exp).info.run_id
    columns = {"question_id": ["q1", "q2"], "pass_at_5": [1.0, None], "ids": ["a b", "c"]}
    folder = tmp_path / "out"
    folder.mkdir()
    size = write_table(folder / "per_question_table.json", columns)
    assert size == (folder / "per_question_table.json").stat().st_size
    client.log_artifacts(run, str(folder))
    client.set_tag(
        run, "mlflow.loggedArtifacts", logged_artifacts(None, ["per_question_table.json"])
    )
    got = client.load_table(exp, "per_question_table.json", run_ids=[run])  # as the UI finds it
    assert list(got["question_id"]) == ["q1", "q2"] and list(got["ids"]) == ["a b", "c"]
    assert got["pass_at_5"][0] == 1.0 and got["pass_at_5"].isna()[1]


def test_the_tag_lists_each_table_once():
    first = logged_artifacts(None, ["t.json"])
    assert json.loads(first) == [{"path": "t.json", "type": "table"}]
    assert logged_artifacts(first, ["t.json"]) == first
    assert json.loads(logged_artifacts(first, ["u.json"]))[-1] == {
        "path": "u.json",
        "type": "table",
    }
