"""How a metric and a p-value read in a report, the results table, ``situate judge``'s tables and
the command line."""

from __future__ import annotations


def metric_label(metric: str) -> str:
    """``pass_at_20`` -> ``Pass@20``; ``mrr`` -> ``MRR``."""
    if metric == "mrr":
        return "MRR"
    name, _, k = metric.rpartition("_at_")
    return f"{name.capitalize()}@{k}" if k else metric


def format_p(p: float) -> str:
    """0.31 -> '0.31'; 0.004 -> '0.004'; 0.0001 -> '0.0001'."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.1g}"


JUDGED_LABELS = {
    "judged_ndcg": "judged nDCG",
    "judged_precision": "judged P",
    "judged_recall": "judged R",
    "unjudged": "unjudged",
    "pass": "gold Pass",
    "recall": "gold Recall",
    "precision": "gold P",
}


def judged_label(metric: str) -> str:
    """``judged_ndcg_at_10`` -> ``judged nDCG@10``; ``average_precision`` -> ``gold MAP``."""
    if metric == "average_precision":
        return "gold MAP"
    if metric == "mrr":
        return "gold MRR"
    name, _, k = metric.rpartition("_at_")
    return f"{JUDGED_LABELS.get(name, name)}@{k}"
