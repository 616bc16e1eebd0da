"""Every configuration of a study against its baseline, question by question.

For each finished configuration and each metric (pass@k and recall@k at every k of ``eval.ks``,
and MRR): the mean with a 95% bootstrap interval. Against the baseline, the paired
:func:`~situate.evaluation.statistics.compare` (difference, 95% bootstrap CI of the difference,
randomization p-value, wins/ties/losses) at every one of those metrics, or only at the headline
metric when the study names one (``report.headline``, e.g. ``recall_at_1``): a gain at k = 1 is
then not hidden behind a tie at the largest k, and the findings say which metric each comparison
is at. Holm's correction is applied across ALL the report's comparisons at once. Flipped
questions are taken at the headline's k (the largest k without one), where a question is a *hit*
when its pass@k is 1.0 (every gold span found in the top k).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from situate.errors import SituateError
from situate.evaluation.statistics import Comparison, bootstrap_ci, compare, flipped, holm
from situate.study.collect import RunData, Study
from situate.study.labels import format_p, metric_label
from situate.study.selection import Selection, on_test, select

ALPHA = 0.05
PERMUTATIONS = 10_000


def metric_names(ks: list[int]) -> list[str]:
    """pass@k for every k, then recall@k for every k, then MRR."""
    return [f"pass_at_{k}" for k in ks] + [f"recall_at_{k}" for k in ks] + ["mrr"]


def metric_k(metric: str) -> int | None:
    """``recall_at_5`` -> 5; ``mrr`` -> None."""
    _, _, k = metric.rpartition("_at_")
    return int(k) if k.isdigit() else None


def column_of(metric: str) -> str:
    """The per_question.csv column holding ``metric`` per question."""
    return "reciprocal_rank" if metric == "mrr" else metric


def significance(c: Comparison, alpha: float = ALPHA) -> str:
    """'significant (p_holm = 0.003)' or 'not significant (p_holm = 0.31)'."""
    p = c.p_holm if c.p_holm is not None else c.p_value
    name = "p_holm" if c.p_holm is not None else "p"
    return f"{'significant' if p < alpha else 'not significant'} ({name} = {format_p(p)})"


def hit_rule(k: int) -> str:
    return f"a question is a hit when its pass@{k} is 1.0 (every gold span found in the top {k})"


@dataclass
class ConfigSummary:
    """One finished configuration: the mean of each metric and its 95% bootstrap interval."""

    run: RunData
    means: dict[str, float]
    cis: dict[str, tuple[float, float]]
    is_baseline: bool = False


@dataclass
class GoldContext:
    span: str  # "doc_id:start-end"
    chunk_id: str
    context: str


@dataclass
class Flip:
    """A question that changed between hit and miss against the baseline (at the largest k)."""

    qid: str
    question: str
    gold: list[str]
    baseline_rank: str  # first relevant rank in the baseline ('' when none within depth)
    rank: str  # ... in this configuration
    baseline_pass: float = 0.0  # the question's pass@k in the baseline
    passed: float = 0.0  # ... in this configuration
    contexts: list[GoldContext] = field(default_factory=list)  # of the gold chunks, in this config


@dataclass
class RunComparison:
    run: RunData
    comparisons: list[Comparison] = field(default_factory=list)
    gained: list[Flip] = field(default_factory=list)  # miss -> hit
    lost: list[Flip] = field(default_factory=list)  # hit -> miss
    note: str | None = None  # why nothing was compared

    def get(self, metric: str) -> Comparison | None:
        return next((c for c in self.comparisons if c.metric == metric), None)


@dataclass
class StudyComparison:
    """``metrics`` are summarised for every configuration; ``compared`` (all of them, or the
    ``headline`` alone when the study names one) are tested against the baseline."""

    study: Study
    metrics: list[str]
    summaries: list[ConfigSummary]
    versus: list[RunComparison]
    k_flip: int
    permutations: int
    seed: int
    alpha: float = ALPHA
    headline: str | None = None
    compared: list[str] = field(default_factory=list)
    selection: Selection | None = None  # the best configuration, picked on dev with a split

    def scope(self) -> str:
        """One sentence: which metrics each configuration was compared at, and the correction."""
        labels = ", ".join(metric_label(m) for m in self.compared)
        holm_note = (
            f"{self.n_comparisons} comparison(s) in all, Holm-corrected together at "
            f"α = {self.alpha}"
        )
        if self.selection is not None and self.selection.split == "dev_test":
            holm_note += (
                f"; every figure and comparison of this report is on the "
                f"{self.selection.n_reported_on} test questions (the dev questions chose)"
            )
        if self.headline is not None:
            return (
                f"Compared with the baseline at the headline metric {labels} only "
                f"(report.headline); {holm_note}."
            )
        return (
            f"Compared with the baseline at every metric and k of the study ({labels}; set "
            f"report.headline to compare at one); {holm_note}."
        )

    @property
    def pass_equals_recall(self) -> bool:
        """True when every run's per-question pass@k equals its recall@k at every k (gold spans
        that are whole chunks): the recall comparisons then repeat the pass ones."""
        return all(
            np.array_equal(s.run.column(f"pass_at_{k}"), s.run.column(f"recall_at_{k}"))
            for s in self.summaries
            for k in self.study.ks
        )

    @property
    def n_comparisons(self) -> int:
        return sum(len(v.comparisons) for v in self.versus)

    def best(self, metric: str) -> set[str]:
        """Run ids with the highest mean of ``metric`` (ties share it)."""
        values = [s.means[metric] for s in self.summaries if metric in s.means]
        if not values:
            return set()
        top = max(values)
        return {s.run.run_id for s in self.summaries if s.means.get(metric, -np.inf) >= top - 1e-12}

    def summary_of(self, run: RunData) -> ConfigSummary | None:
        return next((s for s in self.summaries if s.run.run_id == run.run_id), None)

    def findings(self) -> list[str]:
        """One sentence per configuration: the headline comparison in full, or (without a
        headline) every comparison, each naming its metric and k, significance stated."""
        out = []
        for v in self.versus:
            if v.note:
                out.append(f"{v.run.label}: not compared ({v.note}).")
                continue
            if not v.comparisons:
                continue
            flips = f"{len(v.gained)} questions gained, {len(v.lost)} lost at Pass@{self.k_flip}"
            head = f"{v.run.label} vs {self.study.baseline.label}"
            if self.headline is not None:
                c = v.comparisons[0]
                out.append(
                    f"{head}: {metric_label(c.metric)} {_value(c.metric, c.value)} vs "
                    f"{_value(c.metric, c.baseline)} ({_diff(c.metric, c.difference)}, 95% CI "
                    f"{_diff(c.metric, c.ci_low, '')} to {_diff(c.metric, c.ci_high, '')}"
                    f"{_failure_change(c)}; {flips}): {significance(c, self.alpha)}."
                )
                continue
            each = "; ".join(
                f"{metric_label(c.metric)} {_diff(c.metric, c.difference)}, "
                f"{significance(c, self.alpha)}"
                for c in v.comparisons
            )
            out.append(f"{head}: {each}; {flips}.")
        return out


def _value(metric: str, x: float) -> str:
    return f"{x:.3f}" if metric == "mrr" else f"{100 * x:.1f}%"


def _diff(metric: str, x: float, unit: str = " pts") -> str:
    return f"{x:+.3f}" if metric == "mrr" else f"{100 * x:+.1f}{unit}"


def _failure_change(c: Comparison) -> str:
    """'; failure rate @5 40% lower' (failure rate = 1 - the metric), '' for MRR or no failures."""
    k = metric_k(c.metric)
    fail_b, fail = 1 - c.baseline, 1 - c.value
    if k is None or fail_b <= 0:
        return ""
    r = (fail_b - fail) / fail_b
    return f"; failure rate @{k} {abs(r):.0%} {'lower' if r >= 0 else 'higher'}"


def compare_study(
    study: Study,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
    alpha: float = ALPHA,
    headline: str | None = None,
    metrics: list[str] | None = None,
) -> StudyComparison:
    """Summaries of every finished configuration and their comparisons with the baseline.

    ``headline`` (``report.headline``): compare at that metric only; None compares at every
    metric of ``metrics`` (:func:`metric_names` by default; ``situate judge`` adds the judged
    ones). A metric the study lacks is a one-line error.
    """
    metrics = metrics or metric_names(study.ks)
    if headline is not None and headline not in metrics:
        raise SituateError(
            f"report.headline={headline!r}: study {study.name} has no such metric (its runs are "
            f"scored at k = {', '.join(map(str, study.ks))}); choose one of {', '.join(metrics)}, "
            "or null to compare at every one"
        )
    unscored = [m for m in metrics if not study.baseline.scored(column_of(m)).any()]
    if unscored:
        raise SituateError(
            f"study {study.name}: no question has gold, so there is no {metric_label(unscored[0])}"
            f"; score it on judgments instead: situate judge experiment={study.name}"
        )
    compared = [headline] if headline is not None else metrics
    pick = headline or f"pass_at_{study.ks[-1]}"
    gold_pick = study.baseline.scored(column_of(pick)).any()
    selection = (
        select(study.ok_runs, study.baseline, pick, column_of(pick), permutations, seed)
        if gold_pick
        else None
    )
    if selection is not None and selection.split == "dev_test":
        study = on_test(study)  # the dev questions chose: what the report shows is on test
    base = study.baseline
    summaries = []
    for run in study.ok_runs:
        means, cis = {}, {}
        for m in metrics:
            values = run.column(column_of(m))[run.scored(column_of(m))]
            means[m] = float(values.mean())
            cis[m] = bootstrap_ci(np.zeros_like(values), values, permutations, seed=seed)
        summaries.append(ConfigSummary(run, means, cis, is_baseline=run is base))
    k = (metric_k(headline) if headline else None) or study.ks[-1]
    versus = []
    for run in study.ok_runs:
        if run is base:
            continue
        order = _align(base, run)
        if order is None:
            versus.append(
                RunComparison(run, note="its questions differ from the baseline's: no pairing")
            )
            continue
        v = RunComparison(run)
        for m in compared:
            c = column_of(m)
            keep = base.scored(c) & run.scored(c)[order]
            a, b = base.column(c)[keep], run.column(c)[order][keep]
            v.comparisons.append(compare(a, b, m, permutations=permutations, seed=seed))
        if not gold_pick:  # no gold: no hits to flip
            versus.append(v)
            continue
        a_hit = base.column(f"pass_at_{k}") >= 1.0 - 1e-9
        b_hit = run.column(f"pass_at_{k}")[order] >= 1.0 - 1e-9
        gained, lost = flipped(a_hit, b_hit)
        v.gained = [_flip(base, run, i, int(order[i]), k) for i in gained]
        v.lost = [_flip(base, run, i, int(order[i]), k) for i in lost]
        versus.append(v)
    raw = [c.p_value for v in versus for c in v.comparisons]
    adjusted = iter(holm(raw)) if raw else iter(())
    for v in versus:
        v.comparisons = [replace(c, p_holm=next(adjusted)) for c in v.comparisons]
    return StudyComparison(
        study, metrics, summaries, versus, k, permutations, seed, alpha, headline, compared,
        selection,
    )  # fmt: skip


def _align(base: RunData, run: RunData) -> np.ndarray | None:
    """Indices into ``run``'s questions in the baseline's question order (None if they differ)."""
    position = {q: i for i, q in enumerate(run.qids)}
    if len(position) != len(run.qids) or set(position) != set(base.qids):
        return None
    return np.array([position[q] for q in base.qids], dtype=int)


def parse_span(text: str) -> tuple[str, int, int] | None:
    """``doc_1:0-847`` -> ``("doc_1", 0, 847)`` (None when it is not a span)."""
    doc, _, rng = text.rpartition(":")
    start, _, end = rng.partition("-")
    if not doc or not start.isdigit() or not end.isdigit():
        return None
    return doc, int(start), int(end)


def gold_contexts(run: RunData, gold: list[str]) -> list[GoldContext]:
    """The contexts ``run`` gave the chunks overlapping each gold span (by character overlap)."""
    out = []
    for g in gold:
        span = parse_span(g)
        if span is None:
            continue
        doc, start, end = span
        for c in run.contexts or []:
            if c.get("doc_id") == doc and int(c["start"]) < end and start < int(c["end"]):
                out.append(GoldContext(g, str(c["chunk_id"]), str(c.get("context") or "")))
    return out


def _flip(base: RunData, run: RunData, i_base: int, i_run: int, k: int) -> Flip:
    q, qb = run.questions[i_run], base.questions[i_base]
    gold = (qb.get("gold") or "").split()
    return Flip(
        qid=qb["qid"],
        question=qb.get("question", ""),
        gold=gold,
        baseline_rank=qb.get("first_relevant_rank") or "",
        rank=q.get("first_relevant_rank") or "",
        baseline_pass=float(qb.get(f"pass_at_{k}") or 0.0),
        passed=float(q.get(f"pass_at_{k}") or 0.0),
        contexts=gold_contexts(run, gold),
    )
