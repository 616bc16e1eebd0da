"""How a metric and a p-value read in a report, the results table and the command line."""

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
