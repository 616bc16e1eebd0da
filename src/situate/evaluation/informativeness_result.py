"""An informativeness result: what it holds and what it says.

What it holds: the dataclasses :func:`situate.evaluation.informativeness.informativeness` fills
(the thresholds of a verdict, each metric's saturation, each compared pair's power, the
recommended metric); how they are computed, and why, is that module's docstring. What it says:
one line for the run log (:attr:`Informativeness.warning`, :attr:`Informativeness.verdict`), a
paragraph a stakeholder reads (:attr:`Informativeness.paragraph`), the Markdown of a report
(:func:`markdown_lines`, the tables :func:`metric_table` and :func:`pair_table`) and the report's
metric labels (:func:`metric_name`). No number is computed in the sentences: each is read off the
result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Thresholds:
    """When a question set cannot separate the arms it compares, at one metric.

    - *saturated*: more than ``saturated_share`` of the questions are solved by every arm (they
      can separate nothing), or every arm's mean is above ``saturated_mean``;
    - *floored*: more than ``floored_share`` of the questions get nothing from any arm, or every
      arm's mean is below ``floored_mean``;
    - *underpowered*: no compared pair is separated (every |mean difference| is below its MDE)
      and the median MDE of the compared pairs is above ``max_mde`` (the set cannot even detect a
      difference of that size between arms that do not differ much on it);
    - *unstable*: two random halves of the questions order the arms alike at a median tau-a
      below ``min_stability`` (0.5: with no ties, fewer than 3 in 4 pairs of arms ordered alike;
      for two arms, their order held in at most half the splits): whatever the differences, the
      set's order of the arms is not one other questions would reproduce.

    Fractions of the metric's scale (0.05 = 5 points of Pass@k, 0.05 of MRR).
    """

    alpha: float = 0.05
    power: float = 0.8
    saturated_share: float = 0.75
    saturated_mean: float = 0.9
    floored_share: float = 0.75
    floored_mean: float = 0.05
    max_mde: float = 0.05
    effects: tuple[float, ...] = (0.02, 0.05)  # differences to size the set for (2 and 5 points)
    halves: int = 500  # random splits of the questions in two halves, for each metric's stability
    min_stability: float = 0.5


@dataclass(frozen=True)
class MetricSaturation:
    """How many questions of one metric the arms all solve, all miss, or score apart."""

    metric: str
    questions: int  # scored by this metric (NaN in any arm left out)
    means: dict[str, float]  # arm -> mean score
    all_solved: float  # share of questions every arm scores at the maximum (1.0)
    none_solved: float  # share of questions every arm scores 0
    discriminating: float  # share of questions at least two arms score differently
    graded: bool  # scores other than 0 and 1 occur (fractional Pass@k, MRR, nDCG)
    saturated: bool
    floored: bool


@dataclass(frozen=True)
class PairPower:
    """What the set can detect between ``arm`` and ``versus`` at one metric."""

    metric: str
    arm: str
    versus: str  # the baseline (or the other arm of the pair)
    questions: int
    difference: float  # mean of d = score(arm) - score(versus)
    sd: float  # sample standard deviation of d (n - 1 degrees of freedom)
    mde: float  # minimum detectable difference: inf if the arms never differ, 0 if d is constant
    needed: dict[float, int | None]  # effect -> questions needed (None: never differ, or n < 2)

    @property
    def identical(self) -> bool:
        """The arms score the same on every question (or there are fewer than 2): the set cannot
        separate them."""
        return math.isinf(self.mde)

    @property
    def separated(self) -> bool:
        """The observed difference is at least the smallest one the set can detect."""
        return not self.identical and abs(self.difference) >= self.mde

    @property
    def ratio(self) -> float:
        """|mean d| / MDE: above 1 when the set detects a difference of the size observed."""
        if self.identical:
            return 0.0
        return abs(self.difference) / self.mde if self.mde > 0 else math.inf


@dataclass(frozen=True)
class MetricInformativeness:
    metric: str
    saturation: MetricSaturation
    pairs: list[PairPower]
    underpowered: bool
    stability: float  # median tau-a of two random halves' orders of the arms; NaN: < 4 questions
    unstable: bool  # stability below Thresholds.min_stability

    @property
    def problem(self) -> str | None:
        """'saturated', 'floored', 'underpowered', 'unstable' or None (the set separates at this
        metric)."""
        s = self.saturation
        if s.saturated:
            return "saturated"
        if s.floored:
            return "floored"
        if self.underpowered:
            return "underpowered"
        return "unstable" if self.unstable else None

    @property
    def separated(self) -> int:
        return sum(p.separated for p in self.pairs)

    @property
    def mean_ratio(self) -> float:
        return float(np.mean([p.ratio for p in self.pairs]))

    @property
    def median_mde(self) -> float:
        return median_mde(self.pairs)

    def median_needed(self, effect: float) -> int | None:
        ns = [p.needed[effect] for p in self.pairs if p.needed.get(effect) is not None]
        return int(np.ceil(np.median(ns))) if ns else None


@dataclass(frozen=True)
class Informativeness:
    """What a question set can tell about the arms it compares (see
    :mod:`situate.evaluation.informativeness`)."""

    arms: list[str]
    baseline: str | None
    metrics: dict[str, MetricInformativeness]
    headline: str  # the recommended metric (the most stable fit one): a report.headline value
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def best(self) -> MetricInformativeness:
        return self.metrics[self.headline]

    @property
    def separates(self) -> bool:
        """The set can separate the arms it compares at its best metric."""
        return self.best.problem is None

    @property
    def warning(self) -> str | None:
        """One line for the run log when the set cannot separate the arms; None when it can."""
        return None if self.separates else warning_line(self)

    @property
    def verdict(self) -> str:
        """One line for the run log, whatever the verdict."""
        return self.warning or informative_line(self)

    @property
    def paragraph(self) -> str:
        """The verdict in a short paragraph for the report."""
        return paragraph(self)


def median_mde(pairs: list[PairPower]) -> float:
    """Median MDE of the compared pairs whose arms differ somewhere (inf when none does)."""
    finite = [p.mde for p in pairs if not p.identical]
    return float(np.median(finite)) if finite else math.inf


# -- words ----------------------------------------------------------------------------------------


JUDGED_NAMES = {
    "judged_ndcg": "judged nDCG",
    "judged_precision": "judged P",
    "judged_recall": "judged R",
}


def metric_name(metric: str) -> str:
    """``pass_at_20`` -> ``Pass@20``; ``mrr`` -> ``MRR``; ``judged_ndcg_at_10`` -> ``judged
    nDCG@10`` (the report's labels)."""
    if metric == "mrr":
        return "MRR"
    name, _, k = metric.rpartition("_at_")
    if name in JUDGED_NAMES:
        return f"{JUDGED_NAMES[name]}@{k}"
    return f"{name.capitalize()}@{k}" if k else metric


def _amount(metric: str, x: float) -> str:
    """A difference in points of a 0-1 metric (MRR as a fraction): '6.1 points', '0.061'."""
    return f"{x:.3f}" if metric == "mrr" else f"{100 * x:.1f} points"


def _count(n: int) -> str:
    """1234 -> '~1,200' (two significant figures; small counts exact)."""
    if n < 100:
        return str(n)
    digits = int(math.floor(math.log10(n))) - 1
    return f"~{round(n, -digits):,}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _tau(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:+.2f}"


def _effects_text(m: MetricInformativeness, effects: tuple[float, ...]) -> str:
    """'detecting 2 points would take ~1,200 questions, 5 points ~200' (medians over the pairs)."""
    parts = []
    for e in effects:
        n = m.median_needed(e)
        if n is not None:
            what = f"{e:g}" if m.metric == "mrr" else f"{100 * e:g} points"
            parts.append(
                f"{what} {_count(n)}" if parts else f"{what} would take {_count(n)} questions"
            )
    return f"detecting {', '.join(parts)}" if parts else ""


def _means_range(s: MetricSaturation) -> str:
    low, high = min(s.means.values()), max(s.means.values())
    if s.metric == "mrr":
        return f"{low:.3f}" if low == high else f"{low:.3f}-{high:.3f}"
    return f"{100 * low:.1f}%" if low == high else f"{100 * low:.1f}-{100 * high:.1f}%"


def _why(m: MetricInformativeness) -> str:
    """The problem of one metric in a clause: 'saturated at Pass@20: 94% of the 131 questions
    are answered by every arm'."""
    s, name = m.saturation, metric_name(m.metric)
    solved = "at its maximum for every arm" if s.graded else "answered by every arm"
    missed = "at 0 for every arm" if s.graded else "answered by no arm"
    if m.problem == "saturated":
        if s.all_solved >= 0.5:
            return f"saturated at {name}: {_pct(s.all_solved)} of its {s.questions} questions are {solved}"
        return f"saturated at {name}: every arm scores {_means_range(s)}"
    if m.problem == "floored":
        if s.none_solved >= 0.5:
            return f"too hard at {name}: {_pct(s.none_solved)} of its {s.questions} questions are {missed}"
        return f"too hard at {name}: every arm scores {_means_range(s)}"
    if m.problem == "unstable":
        return (
            f"unstable at {name}: two random halves of its {s.questions} questions order the arms "
            f"alike at only tau-a {m.stability:+.2f} (the median of the splits; at 1 they order "
            f"every pair alike)"
        )
    if math.isinf(m.median_mde):
        return f"unable to separate the arms at {name}"
    return f"too small to separate the arms at {name}"


def _power_clause(m: MetricInformativeness, effects: tuple[float, ...], detail: str = "") -> str:
    """'differences under 6.1 points cannot be detected with 131 questions (detecting 2 points
    would take ~1,200 questions)', or why nothing can be detected; ``detail`` opens the
    parenthesis."""
    n = m.saturation.questions
    if math.isinf(m.median_mde):
        return f"no compared pair of arms scores differently on any of its {n} questions"
    if m.median_mde == 0:
        return "every compared pair differs by the same amount on every question"
    inside = "; ".join(x for x in (detail, _effects_text(m, effects)) if x)
    return (
        f"differences under {_amount(m.metric, m.median_mde)} cannot be detected with {n} "
        f"questions" + (f" ({inside})" if inside else "")
    )


def warning_line(r: Informativeness) -> str:
    m = r.best
    return (
        f"question set cannot separate the arms: {_why(m)}; {_power_clause(m, r.thresholds.effects)}"
        ": do not pick a configuration from it"
    )


def informative_line(r: Informativeness) -> str:
    m = r.best
    detectable = (
        f"smallest detectable difference {_amount(m.metric, m.median_mde)} with "
        f"{m.saturation.questions} questions"
    )
    if not m.separated:
        return (
            f"question set: no compared pair differs at {metric_name(m.metric)} by the "
            f"{detectable}: the arms score alike on it; recommended report.headline={r.headline}"
        )
    return (
        f"question set separates {m.separated} of {len(m.pairs)} compared pairs at "
        f"{metric_name(m.metric)} ({detectable}); recommended report.headline={r.headline}"
    )


def paragraph(r: Informativeness) -> str:
    m, t = r.best, r.thresholds
    name = metric_name(m.metric)
    test = (
        f"80% power, alpha {t.alpha:g}"
        if t.power == 0.8
        else f"{_pct(t.power)} power, alpha {t.alpha:g}"
    )
    sentences = []
    if r.separates and m.separated:
        sentences.append(
            f"This question set orders the arms it compares most reproducibly at {name} "
            f"(recommended report.headline: {r.headline}): {m.separated} of {len(m.pairs)} "
            f"compared pairs differ by at least the smallest difference it can detect."
        )
    elif r.separates:
        largest = max(abs(p.difference) for p in m.pairs)
        sentences.append(
            f"This question set orders the arms it compares most reproducibly at {name} "
            f"(recommended report.headline: {r.headline}), but none of the {len(m.pairs)} "
            f"compared pairs differs by the smallest difference it can detect: on these questions "
            f"the arms score alike (largest difference: {_amount(m.metric, largest)})."
        )
    if r.separates and not (math.isinf(m.median_mde) or m.median_mde == 0):
        needed = _effects_text(m, t.effects)
        sentences.append(
            f"With its {m.saturation.questions} questions that is "
            f"{_amount(m.metric, m.median_mde)} (median over the pairs; {test}"
            + (f"; {needed}" if needed else "")
            + ")."
        )
    if r.separates and not math.isnan(m.stability):
        sentences.append(
            f"Two random halves of its questions order the arms alike at tau-a "
            f"{m.stability:+.2f} there (median of {t.halves} splits; at 1 they order every pair "
            f"alike)."
        )
    if not r.separates:
        why = _why(m)
        sentences.append(f"This question set is {why}.")
        power = _power_clause(m, t.effects, f"median over the compared pairs; {test}")
        sentences.append(f"{power[0].upper()}{power[1:]}.")
        if m.problem == "underpowered" and not math.isinf(m.median_mde):
            largest = max(abs(p.difference) for p in m.pairs)
            sentences.append(
                f"No compared pair differs by that much (largest difference: "
                f"{_amount(m.metric, largest)})."
            )
        sentences.append("Do not pick a configuration from it.")
    identical = [p for p in m.pairs if p.identical]
    if identical and not math.isinf(m.median_mde):
        names = ", ".join(f"{p.arm} and {p.versus}" for p in identical)
        sentences.append(
            f"At {name}, {names} score the same on every question: it cannot separate them."
        )
    others = [
        o for k, o in r.metrics.items() if k != r.headline and o.problem in ("saturated", "floored")
    ]
    if others and r.separates:
        sentences.append(
            "It is "
            + "; ".join(_why(o) for o in others)
            + ": do not compare arms at "
            + ("that metric." if len(others) == 1 else "those metrics.")
        )
    return " ".join(sentences)


# -- Markdown -------------------------------------------------------------------------------------


def markdown_lines(r: Informativeness) -> list[str]:
    """The informativeness as Markdown lines for a report: the paragraph, a row per metric
    (saturation, stability, separated pairs, median MDE and questions needed, its verdict; the
    recommended headline in bold) and a row per compared pair at the recommended metric."""
    t = r.thresholds
    effects = " / ".join(f"{100 * e:g}" for e in t.effects)
    out = ["## How informative is this question set", "", r.paragraph, ""]
    out += [
        f"Per metric: the arms' means, the share of questions every arm solves (scores the "
        f"maximum) and no arm does (scores 0), the share on which the arms score differently, how "
        f"alike two random halves of the questions order the arms (Kendall's tau-a, median of "
        f"{t.halves} splits; below {t.min_stability:+.2f} unstable: the recommended metric is the "
        f"most stable one that is not saturated, floored or underpowered); over the compared "
        f"pairs, those whose difference reaches the smallest difference the set can detect "
        f"(paired t-test, {_pct(t.power)} power, alpha {t.alpha:g}; median over the pairs) "
        f"and the questions it would take to detect {effects} points (MRR: "
        f"{' / '.join(f'{e:g}' for e in t.effects)}; Sakai's topic set size design, 2016).",
        "",
    ]
    header, rows = metric_table(r)
    rows = [[f"**{row[0]}**" if m == r.headline else row[0], *row[1:]]
            for m, row in zip(r.metrics, rows, strict=True)]  # fmt: skip
    out += _table(header, rows)
    out += ["", f"Compared pairs at {metric_name(r.headline)}:", ""]
    out += _table(*pair_table(r))
    return out


def metric_table(r: Informativeness) -> tuple[list[str], list[list[str]]]:
    """A row per metric, in ``r.metrics`` order: its label, questions, the arms' means, the shares
    every arm solves / no arm solves / the arms differ on, its stability, the pairs separated,
    the median detectable difference, the questions for each effect, its verdict."""
    t = r.thresholds
    effects = " / ".join(f"{100 * e:g}" for e in t.effects)
    rows = []
    for name, m in r.metrics.items():
        s = m.saturation
        needed = " / ".join(
            "-" if (n := m.median_needed(e)) is None else _count(n) for e in t.effects
        )
        mde = "-" if math.isinf(m.median_mde) else _amount(name, m.median_mde)
        verdict = m.problem or ("recommended headline" if name == r.headline else "separates")
        rows.append(
            [metric_name(name), str(s.questions), _means_range(s), _pct(s.all_solved),
             _pct(s.none_solved), _pct(s.discriminating), _tau(m.stability),
             f"{m.separated} of {len(m.pairs)}", mde, needed, verdict]
        )  # fmt: skip
    header = ["metric", "questions", "arms' means", "every arm solves", "no arm solves",
              "arms differ", "halves agree (tau-a)", "pairs separated", "detectable difference",
              f"questions for {effects} points", "verdict"]  # fmt: skip
    return header, rows


def pair_table(r: Informativeness) -> tuple[list[str], list[list[str]]]:
    """A row per compared pair at the recommended metric: the observed mean difference, the sd of
    the differences, the detectable difference, whether it is separated, the questions needed
    for each effect."""
    t, m = r.thresholds, r.best
    rows = []
    for p in m.pairs:
        sign = "+" if p.difference > 0 else ""
        mde = "-" if p.identical else _amount(m.metric, p.mde)
        needed = ["-" if p.needed.get(e) is None else _count(p.needed[e]) for e in t.effects]
        separated = "never differ" if p.identical else ("yes" if p.separated else "no")
        rows.append(
            [f"{p.arm} - {p.versus}", f"{sign}{_amount(m.metric, p.difference)}", f"{p.sd:.3f}",
             mde, separated, *needed]
        )  # fmt: skip
    header = ["pair", "difference", "sd of the differences", "detectable difference",
              "separated", *(f"questions for {100 * e:g} points" for e in t.effects)]  # fmt: skip
    return header, rows


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    def cell(x: object) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
