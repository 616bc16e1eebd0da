"""What a sweeper optimizes: the value(s) ``situate run`` returns from each job (config ``objective``).

``objective: null`` is Pass@k at the largest k of ``eval.ks``; a list names metrics (``pass_at_10``,
``mrr``, ``run_cost_usd_per_1k_queries``, ``n_chunks``), one per direction of the sweeper (Optuna's
``hydra.sweeper.direction``), two or more giving a Pareto front. With a question split, a metric
measured per part is taken on ``dev`` (``dev_pass_at_10``): the search never sees the test
questions, which report the chosen configuration. Cost and size metrics are the run's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from situate.errors import SituateError


def objective_names(
    objective: Sequence[str] | None, ks: Sequence[int], split: str, metrics: Mapping[str, float]
) -> list[str]:
    """The metric keys the job returns, dev-prefixed where the split measured them on dev."""
    names = list(objective) if objective else [f"pass_at_{max(ks)}"]
    out = []
    for name in names:
        key = f"dev_{name}" if split == "dev_test" and f"dev_{name}" in metrics else name
        if key not in metrics:
            raise SituateError(
                f"objective: {name!r} is not a metric of this run (it has e.g. "
                f"{', '.join(sorted(m for m in metrics if not m.startswith(('dev_', 'test_', 'fold_')))[:8])}); "
                "fix `objective`"
            )
        out.append(key)
    return out


def objective_value(row: Mapping, objective: Sequence[str] | None, split: str):
    """What the Hydra task returns for a job's results row: a float for one objective, a list for
    several, None for a failed job (Optuna records it as failed)."""
    metrics = row.get("metrics")
    if not metrics:
        return None
    if not objective and metrics.get("questions_with_gold") == 0:
        return None  # no gold: nothing to optimize by default (a cost objective still works)
    values = [float(metrics[k]) for k in objective_names(objective, row["ks"], split, metrics)]
    return values[0] if len(values) == 1 else values
