"""Our metrics on gold, and graded nDCG on judgments, against trec_eval (pytrec_eval) on random
runs, read back from the TREC files a run writes: equal to 1e-9.

pytrec_eval is a test-only dependency (the ``dev`` extra). Every random run ranks a random depth
of a random corpus; gold spans are whole chunks, one to three per question, so recall over gold
spans is trec_eval's recall over relevant chunks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from situate.evaluation.evaluate import Evaluator
from situate.evaluation.judged import judged_scores
from situate.evaluation.trec import read_qrels, read_run, write_qrels, write_run
from situate.rankings import Rankings
from situate.records import Chunk, Corpus, Document, Question, Span

pytrec_eval = pytest.importorskip("pytrec_eval")
KS = (1, 3, 5, 10)


def random_study(seed: int):
    rng = np.random.default_rng(seed)
    n_docs, per_doc = int(rng.integers(2, 6)), int(rng.integers(3, 9))
    docs, chunks = [], []
    for d in range(n_docs):
        text = "".join(f"chunk {d}-{i} text. " for i in range(per_doc))
        doc = Document(f"doc{d}", text)
        docs.append(doc)
        width = len(text) // per_doc
        for i in range(per_doc):
            start, end = i * width, (i + 1) * width
            chunks.append(Chunk(f"doc{d}_chunk_{i}", doc.doc_id, i, start, end, text[start:end]))
    questions, rows = [], []
    for q in range(int(rng.integers(5, 15))):
        gold_rows = rng.choice(len(chunks), int(rng.integers(1, 4)), replace=False)
        gold = tuple(Span(chunks[r].doc_id, chunks[r].start, chunks[r].end) for r in gold_rows)
        questions.append(Question(f"q{q}", f"question {q}", gold))
        depth = int(rng.integers(1, len(chunks) + 1))
        ranked = rng.permutation(len(chunks))[:depth]
        rows.append((ranked, np.linspace(1.0, 0.0, depth)))
    corpus = Corpus("random", docs, questions)
    return corpus, chunks, Rankings.from_rows(rows, depth=max(KS))


@pytest.mark.parametrize("seed", range(20))
def test_gold_metrics_equal_trec_eval(seed: int, tmp_path: Path):
    corpus, chunks, rankings = random_study(seed)
    evaluation = Evaluator(KS).evaluate(corpus, chunks, rankings)
    results = evaluation.per_question
    write_run(tmp_path / "run.trec", [(r.qid, r.top_ids) for r in results], "t")
    write_qrels(tmp_path / "qrels.txt", {r.qid: dict.fromkeys(r.relevant_ids, 1) for r in results})
    run = {q: {c: float(len(ids) - i) for i, c in enumerate(ids)} for q, ids in read_run(tmp_path / "run.trec").items()}  # fmt: skip
    qrels = read_qrels(tmp_path / "qrels.txt")
    cuts = ",".join(map(str, KS))
    measures = {f"ndcg_cut.{cuts}", f"P.{cuts}", f"recall.{cuts}", "map", "recip_rank"}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for r in results:
        t = trec[r.qid]
        for k in KS:
            assert r.ndcg[k] == pytest.approx(t[f"ndcg_cut_{k}"], abs=1e-9)
            assert r.precision[k] == pytest.approx(t[f"P_{k}"], abs=1e-9)
            assert r.recall[k] == pytest.approx(t[f"recall_{k}"], abs=1e-9)
        assert r.average_precision == pytest.approx(t["map"], abs=1e-9)
        assert r.reciprocal_rank == pytest.approx(t["recip_rank"], abs=1e-9)
    for k in KS:  # the run's means are the means of the per-question values
        assert evaluation.metrics[f"precision_at_{k}"] == pytest.approx(
            np.mean([trec[r.qid][f"P_{k}"] for r in results]), abs=1e-9
        )
    assert evaluation.metrics["map"] == pytest.approx(
        np.mean([trec[r.qid]["map"] for r in results]), abs=1e-9
    )


@pytest.mark.parametrize("seed", range(20))
def test_graded_ndcg_and_precision_equal_trec_eval_on_judged_qrels(seed: int):
    rng = np.random.default_rng(100 + seed)
    pool = [f"c{i}" for i in range(int(rng.integers(3, 30)))]
    grades = {c: int(rng.integers(0, 4)) for c in pool}
    ranked = [str(c) for c in rng.permutation(pool)[: int(rng.integers(1, len(pool) + 1))]]
    ours = judged_scores([grades[c] for c in ranked], list(grades.values()), KS, relevant_from=2)
    cuts = ",".join(map(str, KS))
    run = {"q": {c: float(len(ranked) - i) for i, c in enumerate(ranked)}}
    graded = pytrec_eval.RelevanceEvaluator({"q": grades}, {f"ndcg_cut.{cuts}"}).evaluate(run)
    binary = {"q": {c: int(g >= 2) for c, g in grades.items()}}
    p_r = pytrec_eval.RelevanceEvaluator(binary, {f"P.{cuts}", f"recall.{cuts}"}).evaluate(run)
    for k in KS:
        assert ours[f"judged_ndcg_at_{k}"] == pytest.approx(graded["q"][f"ndcg_cut_{k}"], abs=1e-9)
        assert ours[f"judged_precision_at_{k}"] == pytest.approx(p_r["q"][f"P_{k}"], abs=1e-9)
        if any(g >= 2 for g in grades.values()):  # trec_eval has no recall without relevant
            assert ours[f"judged_recall_at_{k}"] == pytest.approx(p_r["q"][f"recall_{k}"], abs=1e-9)
