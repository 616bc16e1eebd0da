"""How far a study's questions can separate its configurations, from the runs' per-question scores.

:func:`situate.evaluation.informativeness.informativeness` over a study's runs: each metric's
per-question column of every run aligned on the baseline's questions (the first run's without
one; a run that scored other questions is left out), NaN where a run left a question unscored (a
blank cell: no gold), every run compared with the baseline when there is one, else every pair.
The sweep's results table (:func:`sweep_lines`) and ``situate report`` read it; with a dev/test
split both compute it on the test questions, where the figures are reported.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from situate.evaluation.informativeness import informativeness
from situate.evaluation.informativeness_result import Informativeness, metric_name
from situate.evaluation.splits import DEV, TEST
from situate.study.collect import RunData
from situate.study.compare import column_of, metric_names
from situate.study.selection import parts_of, sweep_baseline, sweep_runs


def runs_informativeness(
    runs: list[RunData], baseline: RunData | None, metrics: list[str]
) -> Informativeness | None:
    """The informativeness of the questions ``runs`` share (arms named by their labels) at each of
    ``metrics`` some question is scored at in every run; None with fewer than two runs to align."""
    if not runs:
        return None
    reference = baseline if any(r is baseline for r in runs) else runs[0]
    qids = reference.qids
    aligned: list[tuple[RunData, np.ndarray]] = []
    for run in runs:
        position = {q: i for i, q in enumerate(run.qids)}
        if len(position) == len(run.qids) and set(position) == set(qids):
            aligned.append((run, np.array([position[q] for q in qids], dtype=int)))
    if len(aligned) < 2:
        return None
    names = _names([run.label or run.name for run, _ in aligned])
    scores: dict[str, dict[str, np.ndarray]] = {}
    for m in metrics:
        c = column_of(m)
        by_arm = {
            name: np.where(run.scored(c), run.column(c), np.nan)[order]
            for name, (run, order) in zip(names, aligned, strict=True)
        }
        if not np.any(~np.isnan(np.vstack(list(by_arm.values()))).all(axis=0)):
            continue  # no question this metric scores in every run (no gold)
        scores[m] = by_arm
    if not scores:
        return None
    base = next((n for n, (run, _) in zip(names, aligned, strict=True) if run is baseline), None)
    return informativeness(scores, base)


def _names(labels: list[str]) -> list[str]:
    """The runs' labels, a repeated one numbered (the arms of one result must differ)."""
    out = []
    for label in labels:
        name, n = label, 1
        while name in out:
            n += 1
            name = f"{label} ({n})"
        out.append(name)
    return out


def on_test_questions(runs: list[RunData]) -> tuple[list[RunData], int | None]:
    """With a dev/test split every run shares: the runs cut to their test questions and how many
    those are; otherwise the runs as they are and None."""
    if not runs:
        return runs, None
    reference = parts_of(runs[0])
    if set(reference.values()) != {DEV, TEST} or any(parts_of(r) != reference for r in runs):
        return runs, None
    cut = [
        replace(r, questions=[q for q in r.questions or [] if q.get("part") == TEST]) for r in runs
    ]
    return cut, sum(p == TEST for p in reference.values())


def scope(test_questions: int | None) -> str:
    """'on the 20 test questions the figures are reported on, ' with a split; '' without."""
    if test_questions is None:
        return ""
    return f"on the {test_questions} test questions the figures are reported on, "


def sweep_informativeness(
    rows: list[dict], folders: list[Path], baseline: dict | None
) -> tuple[Informativeness | None, int | None]:
    """The informativeness of a sweep's questions (its jobs' ``result.json`` rows and folders),
    with the sweep's ``baseline`` (config group choices) when one job matches it; on the test
    questions with a dev/test split (their count, else None)."""
    runs = sweep_runs(rows, folders)
    if len(runs) < 2 or not runs[0].questions:
        return None, None
    base = sweep_baseline(runs, baseline)
    runs, test_questions = on_test_questions(runs)
    if base is not None:
        base = runs[[r.run_id for r in runs].index(base.run_id)]
    columns = runs[0].questions[0] if runs[0].questions else {}
    ks = sorted(int(c[len("pass_at_") :]) for c in columns if c.startswith("pass_at_"))
    if not ks:
        return None, test_questions
    return runs_informativeness(runs, base, metric_names(ks)), test_questions


def sweep_lines(result: Informativeness | None, test_questions: int | None = None) -> list[str]:
    """What the sweep's results table prints under it: when the questions cannot separate the
    arms, the warning and the recommended metric; else one line with the smallest
    detectable difference."""
    if result is None:
        return []
    where = scope(test_questions)
    if result.warning is not None:
        return [
            f"Warning: {where}the {result.warning}.",
            f"The recommended metric on this set: {metric_name(result.headline)}, "
            f"report.headline={result.headline}.",
        ]
    line = f"{where}the {result.verdict}."
    return [line[0].upper() + line[1:]]
