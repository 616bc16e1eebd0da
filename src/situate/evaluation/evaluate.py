"""Score a run's ranked chunks: a chunk is relevant when it overlaps a gold span."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from situate.errors import SituateError
from situate.evaluation.metrics import first_hit_rank, ndcg_at_k, recall_at_k, reciprocal_rank
from situate.rankings import Rankings
from situate.records import Chunk, Corpus, Span


@dataclass
class QuestionResult:
    qid: str
    question: str
    gold: list[str]  # "doc_id:start-end" per gold span
    top_ids: list[str]  # chunk ids, best first, up to the evaluation depth
    recall: dict[int, float]
    passed: dict[int, float]
    ndcg: dict[int, float]
    reciprocal_rank: float
    first_relevant_rank: int | None


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
    """

    def __init__(self, ks: Sequence[int] = (5, 10, 20), latency_sample: int = 50):
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
        self.ks = ks

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
        results = []
        for qi, q in enumerate(corpus.questions):
            ids, _ = ranking.row(qi)
            ids = ids[:depth]
            overlap = np.array([np.isin(ids, rows) for rows in relevant[qi]]).reshape(
                len(q.gold), len(ids)
            )
            passed = np.array(
                [
                    [_passes(g, corpus, chunks[r], overlap[gi, j]) for j, r in enumerate(ids)]
                    for gi, g in enumerate(q.gold)
                ],
                dtype=bool,
            ).reshape(len(q.gold), len(ids))
            any_relevant = overlap.any(axis=0)
            n_relevant = len(np.unique(np.concatenate(relevant[qi]))) if relevant[qi] else 0
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
                )
            )
        metrics = self.aggregate(results)
        metrics["ks_covering_all_chunks"] = float(len(self.ks_covering(len(chunks))))
        return Evaluation(metrics, results)

    def aggregate(self, results: list[QuestionResult]) -> dict[str, float]:
        if not results:
            raise SituateError(
                "evaluation: the dataset has no questions with gold; nothing to score"
            )
        metrics: dict[str, float] = {}
        for k in self.ks:
            recall = float(np.mean([r.recall[k] for r in results]))
            metrics[f"recall_at_{k}"] = recall
            metrics[f"failure_rate_at_{k}"] = 1.0 - recall
            metrics[f"pass_at_{k}"] = float(np.mean([r.passed[k] for r in results]))
            metrics[f"ndcg_at_{k}"] = float(np.mean([r.ndcg[k] for r in results]))
        metrics["mrr"] = float(np.mean([r.reciprocal_rank for r in results]))
        metrics["n_questions"] = float(len(results))
        return metrics


def _passes(gold: Span, corpus: Corpus, chunk: Chunk, overlaps: bool) -> bool:
    if gold.match == "span":
        return bool(overlaps)
    text = corpus.document(gold.doc_id).text[gold.start : gold.end]
    if gold.match == "chunk_text":
        return chunk.text.strip() == text.strip()
    return text in chunk.text
