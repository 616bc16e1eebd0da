"""Score a run's ranked chunks: a chunk is relevant when it overlaps a gold span.

A question without gold (a corpus with no labels, or some unlabeled questions) is ranked and
listed but never scored: the gold metrics average the questions that have gold
(``questions_with_gold``), and a corpus without any has no gold metric at all (not zeros).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from situate.errors import SituateError
from situate.evaluation.metrics import (
    average_precision,
    first_hit_rank,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from situate.evaluation.splits import assign_parts, check_split, describe, part_names
from situate.rankings import Rankings
from situate.records import Chunk, Corpus, Span

log = logging.getLogger("situate")


@dataclass
class QuestionResult:
    qid: str
    question: str
    gold: list[str]  # "doc_id:start-end" per gold span; empty: the question is not scored
    top_ids: list[str]  # chunk ids, best first, up to the evaluation depth
    recall: dict[int, float] = field(default_factory=dict)  # these scores: empty without gold
    passed: dict[int, float] = field(default_factory=dict)
    ndcg: dict[int, float] = field(default_factory=dict)
    reciprocal_rank: float = 0.0
    first_relevant_rank: int | None = None
    precision: dict[int, float] = field(default_factory=dict)
    average_precision: float = 0.0
    relevant_ids: list[str] = field(default_factory=list)  # chunks overlapping a gold span
    part: str = ""  # the question's part of the split (eval.split): dev, test, fold_N or ""

    @property
    def has_gold(self) -> bool:
        return bool(self.gold)


@dataclass
class Evaluation:
    metrics: dict[str, float]
    per_question: list[QuestionResult] = field(default_factory=list)


class Evaluator:
    """Recall@k, Pass@k, nDCG@k, failure rate@k and MRR for the ``ks`` given.

    Parameters
    ----------
    ks : sequence of int
        Cut-offs; the evaluation depth (and the MRR cut-off) is ``max(ks)``.
    split : str
        ``none``, ``dev_test`` or ``kfold``: how the questions are split into parts
        (:mod:`situate.evaluation.splits`); every metric is then also given per part, prefixed
        with the part's name (``dev_pass_at_20``, ``test_pass_at_20``, ``fold_1_mrr``).
    dev_share : float
        With ``dev_test``: the share of the questions in ``dev``.
    folds : int
        With ``kfold``: the number of folds.
    seed : int
        Seed of the split.
    latency_sample : int
        Questions answered one at a time, timed, for the per-query latency (``query_p50_ms``,
        ``query_p95_ms``); the others are embedded and searched in batches.

    Notes
    -----
    - ``recall_at_k``: fraction of a question's gold spans overlapped by a top-k chunk, averaged.
    - ``pass_at_k``: the cookbook's scorer generalised: a gold span counts as found when a top-k
      chunk matches it as its ``Span.match`` says (identical text for golden chunks, containing
      the answer for extractive answers, overlap otherwise); fractional credit, averaged.
    - ``failure_rate_at_k`` = 1 - ``recall_at_k`` (what Anthropic's post charts).
    - ``mrr``: reciprocal rank of the first relevant chunk within ``max(ks)``.
    - ``ndcg_at_k``: binary relevance (chunk overlaps any gold span).
    - ``precision_at_k``: relevant chunks in the top k / k; ``map``: mean average precision
      within ``max(ks)`` (trec_eval's P_k and map on the run's qrels, see :mod:`.trec`).
    """

    def __init__(
        self,
        ks: Sequence[int] = (5, 10, 20),
        split: str = "none",
        dev_share: float = 0.5,
        folds: int = 5,
        seed: int = 0,
        latency_sample: int = 50,
    ):
        if latency_sample < 1:
            raise SituateError(
                f"eval.latency_sample={latency_sample}: time at least 1 question (e.g. 50)"
            )
        self.latency_sample = latency_sample
        ks = sorted({int(k) for k in ks})
        if not ks or ks[0] < 1:
            raise SituateError(
                f"eval.ks={list(ks)}: every k must be a positive integer (e.g. [5,10,20])"
            )
        check_split(split, dev_share, folds, seed)
        self.ks = ks
        self.split, self.dev_share, self.folds, self.seed = split, dev_share, folds, seed

    @property
    def parts(self) -> list[str]:
        """The parts of the split, in order (none without one)."""
        return part_names(self.split, self.folds)

    @property
    def depth(self) -> int:
        return self.ks[-1]

    def ks_covering(self, n_chunks: int) -> list[int]:
        """The ks that are not below ``n_chunks``: their top k holds every chunk of the corpus."""
        return [k for k in self.ks if k >= n_chunks]

    def depth_warning(self, corpus: Corpus, n_chunks: int) -> str | None:
        """One line for the log when some k reaches the number of chunks (None when none does).

        Such a top k retrieves the whole corpus, so its recall and pass score every configuration
        alike (100% when the ranking is that deep): a warning rather than an error, since the other
        ks still measure, and a tiny corpus is a usual first try.
        """
        ks = self.ks_covering(n_chunks)
        if not ks:
            return None
        return (
            f"eval.ks: k={', '.join(map(str, ks))} not below the {n_chunks} chunks of {corpus.name}: "
            f"a top {ks[0]} holds every chunk, so recall and pass there say nothing about the "
            f"ranking; choose ks below {n_chunks} or a finer chunker"
        )

    def relevant_rows(self, corpus: Corpus, chunks: list[Chunk]) -> list[list[np.ndarray]]:
        """For each question and gold span, the chunk rows that overlap it.

        Raises a one-line error for a gold span that no chunk overlaps (it could never be found).
        """
        by_doc: dict[str, list[int]] = defaultdict(list)
        for row, c in enumerate(chunks):
            by_doc[c.doc_id].append(row)
        out = []
        for q in corpus.questions:
            per_gold = []
            for g in q.gold:
                rows = [
                    r
                    for r in by_doc.get(g.doc_id, ())
                    if g.overlaps(chunks[r].doc_id, chunks[r].start, chunks[r].end)
                ]
                if not rows:
                    raise SituateError(
                        f"{corpus.name}: question {q.qid}: gold span {g.doc_id}:{g.start}-{g.end} "
                        "matches no chunk; fix the gold or check the document was chunked"
                    )
                per_gold.append(np.array(rows, dtype=np.int64))
            out.append(per_gold)
        return out

    def evaluate(self, corpus: Corpus, chunks: list[Chunk], ranking: Rankings) -> Evaluation:
        relevant = self.relevant_rows(corpus, chunks)
        depth = self.depth
        parts = assign_parts(corpus.questions, self.split, self.dev_share, self.folds, self.seed)
        results = []
        for qi, q in enumerate(corpus.questions):
            ids, _ = ranking.row(qi)
            ids = ids[:depth]
            if not q.gold:
                top_ids = [chunks[r].chunk_id for r in ids]
                results.append(QuestionResult(q.qid, q.text, [], top_ids, part=parts[qi]))
                continue
            overlap = np.array([np.isin(ids, rows) for rows in relevant[qi]]).reshape(
                len(q.gold), len(ids)
            )
            passed = np.array(
                [
                    _passes(g, corpus, [chunks[r] for r in ids], overlap[gi])
                    for gi, g in enumerate(q.gold)
                ],
                dtype=bool,
            ).reshape(len(q.gold), len(ids))
            any_relevant = overlap.any(axis=0)
            gold_rows = np.unique(np.concatenate(relevant[qi])) if relevant[qi] else []
            n_relevant = len(gold_rows)
            first = first_hit_rank(any_relevant[None, :])[0]
            results.append(
                QuestionResult(
                    qid=q.qid,
                    question=q.text,
                    gold=[f"{g.doc_id}:{g.start}-{g.end}" for g in q.gold],
                    top_ids=[chunks[r].chunk_id for r in ids],
                    recall={k: recall_at_k(overlap, k) for k in self.ks},
                    passed={k: recall_at_k(passed, k) for k in self.ks},
                    ndcg={k: ndcg_at_k(any_relevant, n_relevant, k) for k in self.ks},
                    reciprocal_rank=reciprocal_rank(any_relevant),
                    first_relevant_rank=None if np.isinf(first) else int(first),
                    precision={k: precision_at_k(any_relevant, k) for k in self.ks},
                    average_precision=average_precision(any_relevant, n_relevant),
                    relevant_ids=[chunks[r].chunk_id for r in gold_rows],
                    part=parts[qi],
                )
            )
        metrics = self.aggregate(results)
        if self.parts:
            log.info("eval.split=%s (seed %d): %s", self.split, self.seed, describe(parts))
        for part in self.parts:
            members = [r for r in results if r.part == part]
            if not members:
                raise SituateError(
                    f"eval.split={self.split}: part {part} holds no question (the {len(results)} "
                    "questions have too few documents); lower eval.folds or set eval.split=none"
                )
            metrics.update({f"{part}_{k}": v for k, v in self.aggregate(members).items()})
        if metrics["questions_with_gold"] < len(results):
            log.info(
                "%s: %d of %d questions have gold; gold metrics average those only",
                corpus.name, int(metrics["questions_with_gold"]), len(results),
            )  # fmt: skip
        metrics["ks_covering_all_chunks"] = float(len(self.ks_covering(len(chunks))))
        return Evaluation(metrics, results)

    def aggregate(self, results: list[QuestionResult]) -> dict[str, float]:
        """Means over the questions with gold; only the counts when none has gold."""
        if not results:
            raise SituateError("evaluation: the dataset has no questions; nothing to score")
        counts = {"n_questions": float(len(results))}
        results = [r for r in results if r.has_gold]
        counts["questions_with_gold"] = float(len(results))
        if not results:
            return counts
        metrics: dict[str, float] = {}
        for k in self.ks:
            recall = float(np.mean([r.recall[k] for r in results]))
            metrics[f"recall_at_{k}"] = recall
            metrics[f"failure_rate_at_{k}"] = 1.0 - recall
            metrics[f"pass_at_{k}"] = float(np.mean([r.passed[k] for r in results]))
            metrics[f"ndcg_at_{k}"] = float(np.mean([r.ndcg[k] for r in results]))
            metrics[f"precision_at_{k}"] = float(np.mean([r.precision[k] for r in results]))
        metrics["map"] = float(np.mean([r.average_precision for r in results]))
        metrics["mrr"] = float(np.mean([r.reciprocal_rank for r in results]))
        return {**metrics, **counts}


def _passes(gold: Span, corpus: Corpus, ranked: list[Chunk], overlaps: np.ndarray) -> list[bool]:
    """Whether each ranked chunk passes ``gold``: overlaps its span (``span``), has its text
    (``chunk_text``, white space at the ends aside) or holds it (``text``)."""
    if gold.match == "span":
        return [bool(o) for o in overlaps]
    text = corpus.document(gold.doc_id).text[gold.start : gold.end]
    if gold.match == "chunk_text":
        text = text.strip()
        return [chunk.text.strip() == text for chunk in ranked]
    return [text in chunk.text for chunk in ranked]
