"""Scoring ranked chunks against graded judgments of a pool (0 = unrelated ... 3 = answers).

For one question, ``grades`` is the judged grade of each ranked chunk, best first (None where
the chunk was not judged), and ``pool`` every grade judged for the question (the pool's, and any
other pair graded for it, so that no ranking scores above 1). A chunk is relevant
when its grade is at least ``relevant_from``.

- ``judged_ndcg_at_k``: graded nDCG@k, gain = the grade (trec_eval's ndcg_cut on graded qrels),
  the ideal ranking sorting the pool's grades; an unjudged chunk gains 0;
- ``judged_precision_at_k``: relevant chunks in the top k / k;
- ``judged_recall_at_k``: relevant chunks in the top k / relevant chunks in the pool (0 for a
  question whose pool holds none);
- ``unjudged_at_k``: share of the top k without a judgment. It is 0 for every arm that was
  pooled at a depth of at least k; an arm run after the judging shows its share here instead of
  having its unjudged chunks silently counted as irrelevant.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from situate.evaluation.metrics import graded_ndcg_at_k, precision_at_k

JUDGED = ("judged_ndcg", "judged_precision", "judged_recall", "unjudged")


def judged_names(ks: Sequence[int]) -> list[str]:
    """Every judged metric at every k: ``judged_ndcg_at_5``, ... ``unjudged_at_20``."""
    return [f"{name}_at_{k}" for name in JUDGED for k in ks]


def judged_scores(
    grades: Sequence[int | None], pool: Sequence[int], ks: Sequence[int], relevant_from: int = 2
) -> dict[str, float]:
    """The judged metrics of one question at every k of ``ks``."""
    judged = np.array([g is not None for g in grades], dtype=bool)
    gains = np.array([g or 0 for g in grades], dtype=float)
    relevant = gains >= relevant_from
    n_relevant = int(np.sum(np.asarray(pool, dtype=float) >= relevant_from))
    out = {}
    for k in ks:
        out[f"judged_ndcg_at_{k}"] = graded_ndcg_at_k(gains, pool, k)
        out[f"judged_precision_at_{k}"] = precision_at_k(relevant, k)
        out[f"judged_recall_at_{k}"] = (
            float(np.sum(relevant[:k])) / n_relevant if n_relevant else 0.0
        )
        top = judged[:k]
        out[f"unjudged_at_{k}"] = float(np.sum(~top)) / k
    return out
