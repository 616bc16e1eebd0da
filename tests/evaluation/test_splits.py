"""Question splits (eval.split): whole documents per part, seeded, and metrics per part."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from situate.datasets.cookbook import CookbookLoader
from situate.errors import SituateError
from situate.evaluation.evaluate import Evaluator
from situate.evaluation.splits import assign_parts, describe
from situate.rankings import Rankings
from situate.records import Chunk, Corpus, Document, Question, Span


def questions(sizes: dict[str, int]) -> list[Question]:
    """``sizes[doc]`` questions about each document, interleaved as a file might hold them."""
    out, left = [], dict(sizes)
    while any(left.values()):
        for doc in sizes:
            if left[doc]:
                left[doc] -= 1
                out.append(Question(f"{doc}{left[doc]}", "?", (Span(doc, 0, 1),)))
    return out


def parts_by_document(qs: list[Question], parts: list[str]) -> dict[str, set[str]]:
    by_doc: dict[str, set[str]] = {}
    for q, p in zip(qs, parts, strict=True):
        by_doc.setdefault(q.gold[0].doc_id, set()).add(p)
    return by_doc


def test_equal_documents_split_evenly_and_whole() -> None:
    # 4 documents of 2 questions, dev_share 0.5: targets 4 and 4, so exactly 2 documents each
    qs = questions({"a": 2, "b": 2, "c": 2, "d": 2})
    parts = assign_parts(qs, "dev_test", dev_share=0.5, seed=3)
    assert Counter(parts) == {"dev": 4, "test": 4}
    assert all(len(p) == 1 for p in parts_by_document(qs, parts).values())


def test_dev_share_is_followed() -> None:
    # 10 one-question documents, dev_share 0.3: 3 to dev, 7 to test
    qs = questions({f"d{i}": 1 for i in range(10)})
    assert Counter(assign_parts(qs, "dev_test", dev_share=0.3)) == {"dev": 3, "test": 7}


def test_kfold_balances_folds() -> None:
    # 6 one-question documents in 3 folds: 2 each
    qs = questions({f"d{i}": 1 for i in range(6)})
    assert Counter(assign_parts(qs, "kfold", folds=3)) == {"fold_1": 2, "fold_2": 2, "fold_3": 2}


def test_none_is_one_part() -> None:
    assert assign_parts(questions({"a": 2}), "none") == ["", ""]


def test_cookbook_split_is_by_document_and_seeded(cookbook_dir) -> None:
    qs = CookbookLoader(path=str(cookbook_dir)).load().questions
    largest = max(Counter(q.gold[0].doc_id for q in qs).values())
    seen = set()
    for seed in range(4):
        parts = assign_parts(qs, "dev_test", seed=seed)
        assert parts == assign_parts(qs, "dev_test", seed=seed)  # deterministic
        assert all(len(p) == 1 for p in parts_by_document(qs, parts).values())  # no straddling
        assert abs(Counter(parts)["dev"] - len(qs) / 2) <= largest  # within one document
        seen.add(tuple(parts))
    assert len(seen) == 4  # each seed its own split
    # the split the README's figures (and every process, whatever its hash seed) use
    assert Counter(assign_parts(qs, "dev_test", seed=0)) == {"dev": 123, "test": 125}
    folds = assign_parts(qs, "kfold", folds=5)
    assert all(len(p) == 1 for p in parts_by_document(qs, folds).values())
    assert max(Counter(folds).values()) - min(Counter(folds).values()) <= largest


def test_bad_split_settings_are_one_line() -> None:
    for kwargs, key in (
        ({"split": "holdout"}, "eval.split"),
        ({"split": "dev_test", "dev_share": 1.0}, "eval.dev_share"),
        ({"split": "kfold", "folds": 1}, "eval.folds"),
    ):
        with pytest.raises(SituateError, match=key):
            Evaluator(**kwargs)


def test_describe_counts_each_part_in_order_of_first_appearance() -> None:
    assert describe(["test", "dev", "dev", ""]) == "test 1 question, dev 2 questions"
    assert describe(["", ""]) == ""


def test_metrics_per_part_hand_computed(caplog) -> None:
    # two documents with one 2-character chunk each; q1 (doc a) is found at rank 1, q2 (doc b)
    # at rank 2 of 2: recall_at_1 is 1.0 in one part and 0.0 in the other, 0.5 overall
    docs = [Document("a", "aa"), Document("b", "bb")]
    chunks = [Chunk("a0", "a", 0, 0, 2, "aa"), Chunk("b0", "b", 0, 0, 2, "bb")]
    qs = [Question("q1", "?", (Span("a", 0, 2),)), Question("q2", "?", (Span("b", 0, 2),))]
    ranked = Rankings.from_rows(
        [(np.array([0, 1]), np.array([2.0, 1.0])), (np.array([0, 1]), np.array([2.0, 1.0]))], 2
    )
    ev = Evaluator(ks=[1, 2], split="dev_test", seed=0)
    with caplog.at_level("INFO", logger="situate"):
        result = ev.evaluate(Corpus("tiny", docs, qs), chunks, ranked)
    part = {r.qid: r.part for r in result.per_question}
    assert sorted(part.values()) == ["dev", "test"]
    m = result.metrics
    assert m["recall_at_1"] == 0.5
    assert m[f"{part['q1']}_recall_at_1"] == 1.0
    assert m[f"{part['q2']}_recall_at_1"] == 0.0
    assert m[f"{part['q2']}_mrr"] == 0.5
    assert m["dev_n_questions"] == m["test_n_questions"] == 1.0
    first = part["q1"]
    other = "test" if first == "dev" else "dev"
    assert f"eval.split=dev_test (seed 0): {first} 1 question, {other} 1 question" in caplog.text


def test_a_fold_without_questions_is_one_line() -> None:
    docs = [Document("a", "aa")]
    chunks = [Chunk("a0", "a", 0, 0, 2, "aa")]
    qs = [Question("q1", "?", (Span("a", 0, 2),))]
    ranked = Rankings.from_rows([(np.array([0]), np.array([1.0]))], 1)
    with pytest.raises(SituateError, match="part fold_2 holds no question"):
        Evaluator(ks=[1], split="kfold", folds=2).evaluate(Corpus("t", docs, qs), chunks, ranked)
