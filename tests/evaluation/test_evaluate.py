"""Evaluator on a two-document corpus with 10-character chunks, every metric computed by hand.

doc a: "(c) ACME. " [0,10)   "apples ok " [10,20)   "pears ok. " [20,30)
doc b: "\\n(c) ACME." [0,10)  "plums ok. " [10,20)   "no apples." [20,30)

Chunk rows: 0=a0 1=a1 2=a2 3=b0 4=b1 5=b2. a0 and b0 differ only in surrounding whitespace, like
the cookbook's duplicated licence headers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from situate.errors import SituateError
from situate.evaluation.evaluate import Evaluator
from situate.rankings import Rankings
from situate.records import Chunk, Corpus, Document, Question, Span

DOC_A = Document("a", "(c) ACME. " + "apples ok " + "pears ok. ")
DOC_B = Document("b", "\n(c) ACME." + "plums ok. " + "no apples.")


def make_chunks() -> list[Chunk]:
    out = []
    for doc in (DOC_A, DOC_B):
        for i, start in enumerate((0, 10, 20)):
            end = start + 10
            out.append(Chunk(f"{doc.doc_id}{i}", doc.doc_id, i, start, end, doc.text[start:end]))
    return out


CHUNKS = make_chunks()


def corpus(*questions: Question) -> Corpus:
    return Corpus(name="tiny", documents=[DOC_A, DOC_B], questions=list(questions))


def q(qid: str, *gold: Span) -> Question:
    return Question(qid, f"question {qid}", tuple(gold))


def ranking(*rows: list[int], depth: int = 6) -> Rankings:
    return Rankings.from_rows(
        [(np.array(r, dtype=np.int64), np.arange(len(r), 0, -1, dtype=np.float64)) for r in rows],
        depth,
    )


def test_fixture_offsets() -> None:
    assert [c.text for c in CHUNKS] == [
        "(c) ACME. ",
        "apples ok ",
        "pears ok. ",
        "\n(c) ACME.",
        "plums ok. ",
        "no apples.",
    ]
    assert all(len(d.text) == 30 for d in (DOC_A, DOC_B))


def test_recall_fractional_credit_with_two_gold_spans() -> None:
    # gold 1 lies in a1 (row 1), gold 2 in b1 (row 4); ranking: a1, b2, a0, b1
    question = q("q1", Span("a", 12, 18), Span("b", 14, 16))
    ev = Evaluator(ks=(1, 2, 4)).evaluate(corpus(question), CHUNKS, ranking([1, 5, 0, 4]))
    m = ev.metrics
    assert m["recall_at_1"] == pytest.approx(1 / 2)  # a1 at rank 1
    assert m["recall_at_2"] == pytest.approx(1 / 2)  # b2 is not gold
    assert m["recall_at_4"] == pytest.approx(2 / 2)  # b1 at rank 4
    assert m["failure_rate_at_1"] == pytest.approx(1 - 1 / 2)
    assert m["failure_rate_at_4"] == pytest.approx(1 - 2 / 2)
    assert m["pass_at_1"] == pytest.approx(1 / 2)  # match="span": pass is recall
    assert m["mrr"] == pytest.approx(1 / 1)
    assert m["n_questions"] == 1.0
    (r,) = ev.per_question
    assert r.qid == "q1"
    assert r.gold == ["a:12-18", "b:14-16"]
    assert r.top_ids == ["a1", "b2", "a0", "b1"]
    assert r.first_relevant_rank == 1


def test_partial_overlap_counts() -> None:
    # [18, 25) overlaps a1 = [10, 20) by 2 characters and a2 = [20, 30) by 5
    question = q("q1", Span("a", 18, 25))
    ev = Evaluator(ks=(1,))
    assert [rows.tolist() for rows in ev.relevant_rows(corpus(question), CHUNKS)[0]] == [[1, 2]]
    assert ev.evaluate(corpus(question), CHUNKS, ranking([1])).metrics["recall_at_1"] == 1.0
    assert ev.evaluate(corpus(question), CHUNKS, ranking([2])).metrics["recall_at_1"] == 1.0


def test_touching_span_does_not_count() -> None:
    # [20, 25) touches a1 = [10, 20) (end == start) but does not overlap it: only a2 is relevant
    question = q("q1", Span("a", 20, 25))
    ev = Evaluator(ks=(1, 2))
    assert [rows.tolist() for rows in ev.relevant_rows(corpus(question), CHUNKS)[0]] == [[2]]
    m = ev.evaluate(corpus(question), CHUNKS, ranking([1, 2])).metrics
    assert m["recall_at_1"] == 0.0
    assert m["recall_at_2"] == 1.0
    # exactly a1's span: neither neighbour a0 = [0, 10) nor a2 = [20, 30) counts
    exact = q("q2", Span("a", 10, 20))
    assert [rows.tolist() for rows in ev.relevant_rows(corpus(exact), CHUNKS)[0]] == [[1]]


def test_same_offsets_in_another_document_do_not_count() -> None:
    question = q("q1", Span("b", 12, 18))  # inside b1, not a1
    m = Evaluator(ks=(1,)).evaluate(corpus(question), CHUNKS, ranking([1])).metrics
    assert m["recall_at_1"] == 0.0


def test_pass_chunk_text_credits_an_identical_chunk_elsewhere() -> None:
    # gold: a0's text "(c) ACME. "; b0 is "\n(c) ACME.": equal once stripped, different span
    question = q("q1", Span("a", 0, 10, "chunk_text"))
    ev = Evaluator(ks=(1,))
    m = ev.evaluate(corpus(question), CHUNKS, ranking([3])).metrics
    assert m["pass_at_1"] == 1.0
    assert m["recall_at_1"] == 0.0
    assert m["failure_rate_at_1"] == 1.0
    assert m["mrr"] == 0.0  # mrr and ndcg follow overlap, like recall
    # a chunk with different text passes nothing
    m = ev.evaluate(corpus(question), CHUNKS, ranking([4])).metrics
    assert m["pass_at_1"] == 0.0
    # the gold chunk itself passes and is recalled
    m = ev.evaluate(corpus(question), CHUNKS, ranking([0])).metrics
    assert (m["pass_at_1"], m["recall_at_1"]) == (1.0, 1.0)


def test_pass_answer_text_credits_a_chunk_containing_the_answer() -> None:
    # gold text is a[10:16] = "apples"; b2 "no apples." contains it in another document
    question = q("q1", Span("a", 10, 16, "answer_text"))
    m = Evaluator(ks=(1, 2)).evaluate(corpus(question), CHUNKS, ranking([5, 1])).metrics
    assert m["pass_at_1"] == 1.0
    assert m["recall_at_1"] == 0.0
    assert m["recall_at_2"] == 1.0  # a1 overlaps the span
    m = Evaluator(ks=(1,)).evaluate(corpus(question), CHUNKS, ranking([4])).metrics
    assert m["pass_at_1"] == 0.0  # "plums ok. "


def test_mrr_averages_over_questions_within_max_k() -> None:
    questions = (
        q("q1", Span("a", 12, 18)),  # a1 = row 1
        q("q2", Span("b", 12, 18)),  # b1 = row 4
        q("q3", Span("b", 12, 18)),
    )
    rank = ranking([0, 1], [0, 2, 4], [0, 2, 3, 5, 4])
    ev = Evaluator(ks=(1, 4)).evaluate(corpus(*questions), CHUNKS, rank)
    # q1: rank 2 -> 1/2; q2: rank 3 -> 1/3; q3: rank 5 > max(ks) = 4 -> 0
    assert ev.metrics["mrr"] == pytest.approx((1 / 2 + 1 / 3 + 0) / 3)
    assert [r.first_relevant_rank for r in ev.per_question] == [2, 3, None]
    assert ev.per_question[2].top_ids == ["a0", "a2", "b0", "b2"]  # cut to depth 4
    assert ev.metrics["recall_at_4"] == pytest.approx((1 + 1 + 0) / 3)
    assert ev.metrics["recall_at_1"] == 0.0


def test_ndcg_with_two_relevant_chunks() -> None:
    # [18, 25) makes a1 (row 1) and a2 (row 2) relevant; ranking a0, a2, b0, a1: hits at ranks 2, 4
    question = q("q1", Span("a", 18, 25))
    m = Evaluator(ks=(1, 2, 4)).evaluate(corpus(question), CHUNKS, ranking([0, 2, 3, 1])).metrics
    idcg = 1 / math.log2(1 + 1) + 1 / math.log2(2 + 1)  # two relevant chunks at ranks 1, 2
    assert m["ndcg_at_1"] == 0.0
    assert m["ndcg_at_2"] == pytest.approx((1 / math.log2(2 + 1)) / idcg)
    assert m["ndcg_at_4"] == pytest.approx((1 / math.log2(2 + 1) + 1 / math.log2(4 + 1)) / idcg)
    assert m["mrr"] == pytest.approx(1 / 2)


def test_failure_rate_is_one_minus_recall() -> None:
    questions = (q("q1", Span("a", 12, 18), Span("b", 14, 16)), q("q2", Span("a", 22, 24)))
    m = (
        Evaluator(ks=(1, 2, 3))
        .evaluate(corpus(*questions), CHUNKS, ranking([4, 0, 1], [2]))
        .metrics
    )
    # q1: @1 1/2 (b1), @2 1/2, @3 2/2; q2: a2 at rank 1
    assert m["recall_at_1"] == pytest.approx((1 / 2 + 1) / 2)
    assert m["recall_at_3"] == pytest.approx((1 + 1) / 2)
    for k in (1, 2, 3):
        assert m[f"failure_rate_at_{k}"] == pytest.approx(1 - m[f"recall_at_{k}"])


def test_ks_sorted_and_deduplicated() -> None:
    ev = Evaluator(ks=[10, 5, 5])
    assert ev.ks == [5, 10]
    assert ev.depth == 10


@pytest.mark.parametrize("ks", [[0], [5, -1], [-3], []])
def test_ks_must_be_positive(ks: list[int]) -> None:
    with pytest.raises(SituateError, match="eval.ks"):
        Evaluator(ks=ks)


@pytest.mark.parametrize(
    "gold",
    [Span("c", 0, 5), Span("a", 30, 35)],  # a document never chunked; past the end of doc a
)
def test_gold_span_that_no_chunk_overlaps(gold: Span) -> None:
    bad = corpus(q("q1", Span("a", 12, 18)), q("q-unreachable", gold))
    with pytest.raises(SituateError) as e:
        Evaluator(ks=(1,)).relevant_rows(bad, CHUNKS)
    message = str(e.value)
    assert "q-unreachable" in message
    assert f"{gold.doc_id}:{gold.start}-{gold.end}" in message
    assert "\n" not in message
    with pytest.raises(SituateError, match="q-unreachable"):
        Evaluator(ks=(1,)).evaluate(bad, CHUNKS, ranking([1], [1]))


def test_a_k_that_reaches_the_number_of_chunks_is_warned_and_recorded() -> None:
    """Six chunks: a top 6 (or 10) is every chunk, so even the worst ranking passes there."""
    c = corpus(q("x", Span("a", 20, 30)))
    worst = ranking([3, 4, 5, 0, 1, 2])  # the gold chunk a2 (row 2) comes last
    ev = Evaluator(ks=(1, 5, 6, 10))
    assert ev.ks_covering(len(CHUNKS)) == [6, 10]
    assert ev.depth_warning(c, len(CHUNKS)) == (
        "eval.ks: k=6, 10 not below the 6 chunks of tiny: a top 6 holds every chunk, so recall "
        "and pass there say nothing about the ranking; choose ks below 6 or a finer chunker"
    )
    m = ev.evaluate(c, CHUNKS, worst).metrics
    assert (m["recall_at_1"], m["recall_at_5"], m["recall_at_6"], m["pass_at_10"]) == (0, 0, 1, 1)
    assert m["ks_covering_all_chunks"] == 2
    fine = Evaluator(ks=(1, 5))
    assert fine.depth_warning(c, len(CHUNKS)) is None
    assert fine.evaluate(c, CHUNKS, worst).metrics["ks_covering_all_chunks"] == 0


def test_a_question_without_gold_is_ranked_but_not_scored() -> None:
    # q1's gold lies in a1 (row 1), found at rank 2 of [a0, a1]; q2 has no gold and ranks b1, b2
    labelled, unlabelled = q("q1", Span("a", 12, 18)), q("q2")
    ev = Evaluator(ks=(1, 2)).evaluate(
        corpus(labelled, unlabelled), CHUNKS, ranking([0, 1], [4, 5])
    )
    m = ev.metrics
    assert (m["n_questions"], m["questions_with_gold"]) == (2.0, 1.0)
    # q1 alone: a miss at 1, a hit at 2 (q2 would halve these if it counted as a miss)
    assert (m["recall_at_1"], m["recall_at_2"], m["mrr"]) == (0.0, 1.0, 0.5)
    assert [r.has_gold for r in ev.per_question] == [True, False]
    r2 = ev.per_question[1]
    assert (r2.qid, r2.gold, r2.top_ids, r2.recall, r2.relevant_ids) == (
        "q2",
        [],
        ["b1", "b2"],
        {},
        [],
    )


def test_no_gold_at_all_gives_counts_and_no_gold_metric() -> None:
    ev = Evaluator(ks=(1, 2)).evaluate(corpus(q("q1"), q("q2")), CHUNKS, ranking([0, 1], [4, 5]))
    assert [r.top_ids for r in ev.per_question] == [["a0", "a1"], ["b1", "b2"]]
    gold_named = [k for k in ev.metrics if "_at_" in k and k != "ks_covering_all_chunks"]
    assert gold_named == [] and "mrr" not in ev.metrics and "map" not in ev.metrics
    assert ev.metrics["n_questions"] == 2.0 and ev.metrics["questions_with_gold"] == 0.0
