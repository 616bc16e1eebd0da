"""max_questions: a seeded sample stratified by document (the default) or the first N in file order."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from situate.datasets.sample import allocate, sample_questions
from situate.datasets.squad import SquadLoader
from situate.errors import SituateError
from situate.records import Question, Span

REPO = Path(__file__).resolve().parents[2]
COVID_QA = REPO / ".." / "shared" / "data" / "covid-qa" / "200423_covidQA.json"

# ten questions in file order: six on document A, then three on B, then one on C
DOCS = ["A"] * 6 + ["B"] * 3 + ["C"]
QUESTIONS = [Question(f"q{i}", f"question {i}?", (Span(d, 0, 5),)) for i, d in enumerate(DOCS)]


def documents(questions: list[Question]) -> Counter:
    return Counter(q.gold[0].doc_id for q in questions)


@pytest.mark.parametrize(
    "sizes, n, shares",
    [
        ([6, 3, 1], 5, [3, 2, 0]),  # quotas 3, 1.5, 0.5: the one left over goes to B (tie: first)
        ([6, 3, 1], 7, [4, 2, 1]),  # quotas 4.2, 2.1, 0.7: C has the largest remainder
        ([5, 5], 3, [2, 1]),  # quotas 1.5, 1.5
        ([1, 1, 1], 2, [1, 1, 0]),
        ([6, 3, 1], 10, [6, 3, 1]),
        ([6, 3, 1], 50, [6, 3, 1]),  # more than there are: everything
    ],
)
def test_proportional_allocation_by_largest_remainder(sizes, n, shares):
    assert allocate(sizes, n) == shares


def test_stratified_sample_keeps_every_document_its_share_in_file_order():
    kept, notes = sample_questions(QUESTIONS, 5, "stratified", seed=0)
    assert documents(kept) == {"A": 3, "B": 2}
    positions = [QUESTIONS.index(q) for q in kept]
    assert positions == sorted(positions)
    assert notes == {
        "questions_before_sample": 10,
        "sample": "5 of 10 questions, a sample stratified by document (seed 0): 2 of the 3 "
        "documents with questions",
    }
    assert sample_questions(QUESTIONS, 5, "stratified", seed=0)[0] == kept  # same seed, same
    draws = {tuple(q.qid for q in sample_questions(QUESTIONS, 5, seed=s)[0]) for s in range(10)}
    assert len(draws) > 1  # the seed chooses which questions of each document
    assert all(documents([QUESTIONS[int(q[1:])] for q in d]) == {"A": 3, "B": 2} for d in draws)


def test_first_n_in_file_order_and_the_notes_say_so():
    kept, notes = sample_questions(QUESTIONS, 5, "first")
    assert [q.qid for q in kept] == ["q0", "q1", "q2", "q3", "q4"]
    assert notes["sample"] == (
        "5 of 10 questions, the first 5 in file order: 1 of the 3 documents with questions"
    )


def test_no_sample_without_max_questions_or_when_it_is_not_fewer():
    assert sample_questions(QUESTIONS, None) == (QUESTIONS, {})
    kept, notes = sample_questions(QUESTIONS, 10)
    assert kept == QUESTIONS
    assert notes == {"questions_before_sample": 10, "sample": "all 10 questions (max_questions=10)"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sample": "random"}, "dataset.sample='random': choose one of stratified, first"),
        (
            {"max_questions": 0},
            "dataset.max_questions=0: must be a positive integer, or null to keep every question",
        ),
        ({"seed": "x"}, "dataset.seed='x': must be an integer"),
    ],
)
def test_bad_sample_settings_are_one_line(kwargs, message):
    with pytest.raises(SituateError) as e:
        sample_questions(QUESTIONS, **{"max_questions": 5, **kwargs})
    assert str(e.value) == message


@pytest.mark.skipif(not COVID_QA.exists(), reason=f"real COVID-QA file absent at {COVID_QA}")
def test_real_covid_qa_sample_spreads_over_the_documents():
    everything = SquadLoader(str(COVID_QA)).load().questions
    per_doc = documents(everything)
    first = SquadLoader(str(COVID_QA), max_questions=100, sample="first").load()
    stratified = SquadLoader(str(COVID_QA), max_questions=100).load()  # the default
    assert len(first.questions) == len(stratified.questions) == 100
    assert len(documents(first.questions)) == 14  # the file is sorted by paper
    counts = documents(stratified.questions)
    for doc, n in per_doc.items():  # each paper gets 100 * n / 1380 questions, rounded
        assert 100 * n // 1380 <= counts.get(doc, 0) <= 100 * n // 1380 + 1
    assert len(counts) == 60
    assert stratified.notes["sample"].startswith(
        "100 of 1380 questions, a sample stratified by document (seed 0): 60 of the 98 documents"
    )
    assert stratified.notes["questions_before_sample"] == 1380
    again = SquadLoader(str(COVID_QA), max_questions=100, seed=0).load()
    assert [q.qid for q in again.questions] == [q.qid for q in stratified.questions]
