"""Picking a study's best configuration honestly: chosen on dev questions, reported on test ones.

The best of N configurations, scored on the questions it was chosen on, overstates itself (the
winner's curse). With a question split (``eval.split``, the ``part`` column of each run's
``per_question.csv``):

- ``dev_test``: the configuration with the highest mean on ``dev`` is chosen; its figure is its
  mean on ``test`` with a 95% bootstrap interval, and one planned paired comparison with the
  baseline on the ``test`` questions (no multiplicity correction: the choice did not see them).
  Its dev mean minus its test mean is the optimism a same-set report would have shown.
- ``kfold``: for each fold, the configuration best on the other folds is chosen and scored on
  that fold; the cross-validated figure pairs every question with the choice made without it.
- no split: the best mean over every question is chosen, and with more than :data:`FEW`
  configurations the figure is flagged as optimistic, naming how many were compared.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from situate.evaluation.splits import DEV, TEST
from situate.evaluation.statistics import Comparison, bootstrap_ci, compare
from situate.study.collect import RunData, Study
from situate.study.labels import format_p, metric_label
from situate.tracking.base import PER_QUESTION

FEW = 3  # up to this many configurations, picking the best on all questions is not flagged
SAME = 5e-4  # a dev-test gap that rounds to zero as shown (0.0 pts, MRR 0.000)


@dataclass
class Selection:
    """The configuration a study picks, and the figure it may be reported with."""

    metric: str
    split: str  # "dev_test", "kfold" or "none"
    n_configs: int
    chosen: RunData
    chosen_value: float  # its mean on the questions it was chosen on (dev, or all of them)
    baseline: RunData | None  # None: nothing to compare with (a sweep without `baseline`)
    n_chosen_on: int  # questions the choice saw
    n_reported_on: int = 0  # questions the figure is on (test, or every fold's held-out part)
    reported_value: float | None = None
    reported_ci: tuple[float, float] | None = None
    versus: Comparison | None = None  # on the reported questions, against the baseline
    per_fold: list[tuple[str, str]] = field(default_factory=list)  # kfold: (fold, chosen label)
    note: str | None = None  # why no honest figure could be given

    @property
    def optimism(self) -> float | None:
        """The chosen configuration's figure where it was chosen minus where it is reported."""
        return None if self.reported_value is None else self.chosen_value - self.reported_value

    def sentences(self) -> list[str]:
        """What the report and the results table say about the choice, in words."""
        name = metric_label(self.metric)

        def v(x: float) -> str:
            return f"{x:.3f}" if self.metric == "mrr" else f"{100 * x:.1f}%"

        def d(x: float) -> str:
            return f"{x:+.3f}" if self.metric == "mrr" else f"{100 * x:+.1f} pts"

        label = self.chosen.label
        if self.split == "none" or self.reported_value is None:
            out = [
                f"Best configuration by {name}: {label} ({v(self.chosen_value)} on all "
                f"{self.n_chosen_on} questions)."
            ]
            if self.note:
                out.append(self.note)
            elif self.n_configs > FEW:
                out.append(
                    f"Warning: that figure is optimistic: it is the best of {self.n_configs} "
                    f"configurations, picked and reported on the same {self.n_chosen_on} "
                    "questions (the winner's curse); set eval.split=dev_test to pick on dev "
                    "questions and report on test questions the choice did not see."
                )
            return out
        lo, hi = self.reported_ci or (0.0, 0.0)
        if self.split == "kfold":
            chosen = "; ".join(f"{f}: {lab}" for f, lab in self.per_fold)
            out = [
                f"Picked by {name} with {len(self.per_fold)}-fold cross-validation (each fold "
                f"scored by the best of {self.n_configs} configurations on the other folds: "
                f"{chosen}): {v(self.reported_value)} (95% CI {v(lo)} to {v(hi)}) on "
                f"{self.n_reported_on} held-out questions; {label}, best on all questions, shows "
                f"{v(self.chosen_value)} there ({d(self.optimism)} optimism)."
            ]
        else:
            out = [
                f"Picked on dev, reported on test: {label} has the best {name} of "
                f"{self.n_configs} configurations on the {self.n_chosen_on} dev questions "
                f"({v(self.chosen_value)}); on the {self.n_reported_on} test questions the choice "
                f"did not see it scores {v(self.reported_value)} (95% CI {v(lo)} to {v(hi)}): "
                + (
                    "its dev and test figures agree here (the winner's curse biases the dev "
                    "figure up on average, not in every split)."
                    if abs(self.optimism) < SAME
                    else f"a report on the questions that chose it would have overstated it by "
                    f"{d(self.optimism)}."
                    if self.optimism > 0
                    else f"its dev figure is {d(-self.optimism)[1:]} below its test one here (the "
                    "winner's curse biases the dev figure up on average, not in every split)."
                )
            ]
        c = self.versus
        if self.baseline is None:
            return out
        if self.split == "dev_test" and self.chosen is self.baseline:
            out.append("The pick is the baseline itself: nothing to compare.")
        elif c is not None:
            verdict = "significant" if c.p_value < 0.05 else "not significant"
            where = "held-out" if self.split == "kfold" else "test"
            out.append(
                f"Against the baseline {self.baseline.label} on the same {where} questions: "
                f"{d(c.difference)} (95% CI {d(c.ci_low)} to {d(c.ci_high)}), {verdict} "
                f"(p = {format_p(c.p_value)}, one planned comparison; W/T/L "
                f"{c.wins}/{c.ties}/{c.losses})."
            )
        return out


def parts_of(run: RunData) -> dict[str, str]:
    """qid -> part of the split ("" without one)."""
    return {q["qid"]: q.get("part") or "" for q in run.questions or []}


def select(
    runs: list[RunData],
    baseline: RunData | None,
    metric: str,
    column: str,
    permutations: int = 10_000,
    seed: int = 0,
) -> Selection | None:
    """Pick the best of ``runs`` (finished, paired with ``baseline`` by question id) by ``metric``
    (per-question ``column``); None when fewer than two runs can be paired. Without a baseline
    the runs pair with the first and nothing is compared."""
    if not runs:
        return None
    reference = baseline or runs[0]
    qids = reference.qids
    scores: list[tuple[RunData, np.ndarray]] = []
    for run in runs:
        position = {q: i for i, q in enumerate(run.qids)}
        if set(position) != set(qids) or len(position) != len(run.qids):
            continue
        scores.append((run, run.column(column)[[position[q] for q in qids]]))
    if len(scores) < 2:
        return None
    parts = np.array([parts_of(reference)[q] for q in qids])
    agree = all(parts_of(run) == parts_of(reference) for run, _ in scores)
    names = sorted(set(parts.tolist()) - {""}, key=lambda p: (len(p), p))  # fold_2 before fold_10
    if not agree:
        split = "none"
    elif names == [DEV, TEST]:
        split = "dev_test"
    elif names and all(p.startswith("fold_") for p in names):
        split = "kfold"
    else:
        split = "none"
    base_scores = next((s for r, s in scores if r is baseline), None)
    n = len(scores)
    if split == "none":
        run, values = max(scores, key=lambda rs: rs[1].mean())
        note = (
            None
            if agree
            else "The runs split their questions differently (eval.split, dev_share, folds or "
            "seed): no dev/test pick; rerun them with one split."
        )
        return Selection(
            metric, "none", n, run, float(values.mean()), baseline, len(qids), note=note
        )
    folds: list[tuple[str, str]] = []
    if split == "dev_test":
        dev, test = parts == DEV, parts == TEST
        run, values = max(scores, key=lambda rs: rs[1][dev].mean())
        held_out, chosen_on = values[test], values[dev]
        base_held = None if base_scores is None else base_scores[test]
        n_chosen_on = int(dev.sum())
    else:
        held_out = np.zeros(len(qids))
        for fold in names:
            inside = parts == fold
            best, values = max(scores, key=lambda rs: rs[1][~inside].mean())
            held_out[inside] = values[inside]
            folds.append((fold, best.label))
        run, chosen_on = max(scores, key=lambda rs: rs[1].mean())
        base_held = base_scores
        n_chosen_on = len(qids)
    ci = bootstrap_ci(np.zeros_like(held_out), held_out, permutations, seed=seed)
    versus = None
    if base_held is not None and not (split == "dev_test" and run is baseline):
        versus = compare(base_held, held_out, metric, permutations=permutations, seed=seed)
    return Selection(
        metric, split, n, run, float(chosen_on.mean()), baseline, n_chosen_on,
        n_reported_on=len(held_out), reported_value=float(held_out.mean()), reported_ci=ci,
        versus=versus, per_fold=folds,
    )  # fmt: skip


def sweep_selection(rows: list[dict], folders: list[Path], baseline: dict | None) -> list[str]:
    """What the sweep's results table says under it: the pick (on dev with a split) and, when the
    sweep names a ``baseline`` (config group choices) one job matches, the comparison with it.

    ``rows`` are the jobs' ``result.json``; ``folders`` hold their ``per_question.csv``.
    """
    runs = sweep_runs(rows, folders)
    if len(runs) < 2 or not runs[0].questions:
        return []
    ks = sorted(int(c[len("pass_at_") :]) for c in runs[0].questions[0] if c.startswith("pass_at_"))
    metric = f"pass_at_{ks[-1]}"
    found = select(runs, sweep_baseline(runs, baseline), metric, metric, 2000)
    return found.sentences() if found else []


def sweep_runs(rows: list[dict], folders: list[Path]) -> list[RunData]:
    """The sweep's jobs that wrote a ``per_question.csv`` (failed ones left out), each labelled by
    the overrides that tell it apart from the others (else its folder's name)."""
    shared = set.intersection(*(set(r.get("overrides") or []) for r in rows)) if rows else set()
    runs = []
    for row, folder in zip(rows, folders, strict=True):
        table = folder / PER_QUESTION
        if row.get("error") or not table.is_file():
            continue
        with open(table, newline="", encoding="utf-8") as f:
            questions = list(csv.DictReader(f))
        told = [o for o in row.get("overrides") or [] if o not in shared]  # what tells jobs apart
        label = " ".join(told) or folder.name
        tags = {str(k): str(v) for k, v in (row.get("choices") or {}).items()}
        runs.append(RunData(row.get("run_id") or folder.name, label, "FINISHED", tags=tags,
                            questions=questions, label=label))  # fmt: skip
    return runs


def sweep_baseline(runs: list[RunData], baseline: dict | None) -> RunData | None:
    """The one job whose choices match the sweep's ``baseline`` (None: none given, or not exactly
    one job matches)."""
    spec = {str(k): str(v) for k, v in (baseline or {}).items()}
    matches = [r for r in runs if spec and all(r.tags.get(k) == v for k, v in spec.items())]
    return matches[0] if len(matches) == 1 else None


def on_test(study: Study) -> Study:
    """``study`` with every run's questions cut to its ``test`` part (copies; runs unchanged)."""
    copies = {
        id(r): replace(r, questions=[q for q in r.questions or [] if q.get("part") == TEST])
        if r.questions is not None
        else r
        for r in study.runs
    }
    return replace(
        study, runs=[copies[id(r)] for r in study.runs], baseline=copies[id(study.baseline)]
    )
