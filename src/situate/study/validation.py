"""Can a generated question set rank the arms in place of a few human questions?
(``situate questions validate``)

The arms are composed as ``situate run -m`` composes a sweep: the overrides given, each sweep
override (``context=none,heading_path``) and each parameter of an ``experiment=`` preset's
``hydra.sweeper.params`` (the command line's list wins for a key in both) expanded to their
grid (:func:`expand_arms`). Each arm's pipeline (``app.build_pipeline``, the stages of ``situate
run``, no MLflow run) runs once on the human questions (a ``qa.json``) and once on the generated
set (the ``questions.jsonl`` of ``situate questions generate``), over the same documents: the two
runs differ only in their questions, so the second finds every index, embedding and context the
first built in the caches (keyed by content) and only embeds its questions.

From the per-question scores (:class:`SetScores`, per metric and arm) :func:`validate` computes,
with :mod:`situate.evaluation.agreement` and :mod:`situate.evaluation.informativeness`:
Kendall's tau-b of the two orderings with its bootstrap interval, at every metric; each arm's
bias (generated - human) with its interval; the decision each set makes on each pair of arms and
those that flip; how informative each set is; and the verdict (:class:`~situate.evaluation.
agreement.Criteria`) at one metric: ``--metric``, else the human set's recommended one.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from situate.errors import SituateError
from situate.evaluation.agreement import (
    Criteria,
    Decision,
    SetAgreement,
    SplitHalf,
    Verdict,
    decisions,
    set_agreement,
    split_half,
    verdict,
)
from situate.evaluation.informativeness import informativeness
from situate.evaluation.informativeness_result import (
    Informativeness,
    markdown_lines,
    metric_name,
)

log = logging.getLogger("situate")

FOLDER_LOADER = "situate.datasets.folder.FolderLoader"
HUMAN, GENERATED = "human", "generated"
MULTIRUN_FLAGS = ("-m", "--multirun")


@dataclass(frozen=True)
class Arm:
    label: str
    overrides: tuple[str, ...]  # the arm's own overrides (``context=none fusion=sparse_only``)


def expand_arms(overrides: Sequence[str]) -> tuple[list[str], list[Arm]]:
    """The overrides every arm shares, and the arms: the grid of the sweep overrides and of an
    ``experiment=`` preset's ``hydra.sweeper.params`` (the command line's list wins for a key in
    both), in Hydra's basic sweeper's order (the preset's keys, then the command line's)."""
    from situate.config.compose import compose, config_error, first_values

    given = [o for o in overrides if o not in MULTIRUN_FLAGS]
    parsed, _ = first_values(given)
    common, grid = [], {}
    for o in parsed:
        if o.is_sweep_override():
            grid[o.get_key_element()] = _values(o)
        else:
            common.append(o.input_line)
    for o in common:
        key = o.partition("=")[0].lstrip("+~")
        if key == "dataset.qa":
            raise SituateError(
                f"{o}: the two question sets are --human and --generated; leave dataset.qa out"
            )
    preset = compose(common, with_hydra=True).hydra.sweeper.get("params") or {}
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    swept = {}
    for key, value in preset.items():
        try:
            (o,) = OverridesParser.create().parse_overrides([f"{key}={value}"])
        except HydraException as e:
            raise config_error(e) from e
        swept[str(key)] = _values(o) if o.is_sweep_override() else [str(value)]
    swept.update(grid)
    if not swept or all(len(v) < 2 for v in swept.values()):
        raise SituateError(
            "questions validate: give two or more arms to compare: lists as for `situate run -m` "
            "(context=none,heading_path fusion=sparse_only,dense_only) or an experiment= preset "
            "that sweeps"
        )
    keys = list(swept)
    combos = list(itertools.product(*(swept[k] for k in keys)))
    varying = [i for i, k in enumerate(keys) if len(swept[k]) > 1]
    values = [v for i in varying for v in swept[keys[i]]]
    if len(set(values)) == len(values):  # each value names its key: heading_path+sparse_only
        labels = ["+".join(c[i] for i in varying) for c in combos]
    else:  # a value under two keys (40 words, 40 tokens): name the keys
        labels = [" ".join(f"{keys[i]}={c[i]}" for i in varying) for c in combos]
    arms = [
        Arm(label, tuple(f"{k}={v}" for k, v in zip(keys, c, strict=True)))
        for label, c in zip(labels, combos, strict=True)
    ]
    return common, arms


def _values(override) -> list[str]:
    """A sweep override's values as strings (``a,b`` -> [a, b]); one that cannot be listed
    (``glob``, ``interval``) is a one-line error."""
    from hydra.errors import HydraException

    try:
        values = [str(v) for v in override.sweep_string_iterator()]
    except HydraException:
        values = []
    if not values:
        raise SituateError(
            f"{override.input_line}: questions validate runs a grid; list the values "
            "(key=a,b,c), not a range or an Optuna search space"
        )
    return values


@dataclass
class SetScores:
    """One question set's per-question scores: ``scores[metric][arm]`` over ``qids`` (the
    questions with gold, in the set's order, the same for every arm)."""

    name: str
    file: Path
    qids: list[str] = field(default_factory=list)
    scores: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    texts_embedded: dict[str, int] = field(default_factory=dict)  # per arm: what the run embedded

    def add(self, arm: str, per_question, ks: Sequence[int]) -> None:
        scored = [r for r in per_question if r.has_gold]
        qids = [r.qid for r in scored]
        if self.qids and qids != self.qids:
            raise SituateError(
                f"{self.file}: arm {arm} scored other questions than the first arm; the file "
                "changed during validation?"
            )
        self.qids = qids
        columns = {f"pass_at_{k}": [r.passed[k] for r in scored] for k in ks}
        columns |= {f"recall_at_{k}": [r.recall[k] for r in scored] for k in ks}
        columns["mrr"] = [r.reciprocal_rank for r in scored]
        for metric, values in columns.items():
            self.scores.setdefault(metric, {})[arm] = np.asarray(values, dtype=float)


def check_human(human: Path, generated: Path) -> None:
    """The human side is a ``qa.json`` written by a person: a ``questions.jsonl`` (generated,
    reviewed or not) is refused, and so is a ``qa.json`` question that is one of the generated
    set's (same id, or the same question text as a generated or edited one)."""
    suffix = human.suffix.lower()
    if suffix == ".jsonl":
        from situate.datasets.generated import read_questions

        records = read_questions(human)
        makers = sorted({q.provenance.generator for q in records}) or ["a generator"]
        raise SituateError(
            f"{human}: generated questions (written by {', '.join(makers)}), reviewed or not, are "
            "not human questions; write 20-40 questions with their gold by hand in a qa.json "
            '(README, "Your own documents") and pass it as --human'
        )
    if suffix == ".txt":
        raise SituateError(
            f"{human}: questions without gold cannot be scored; write them in a qa.json with "
            'their gold (quotes, "file.pdf#page=N" or chunk ids from `situate chunks`)'
        )
    if not human.is_file():
        raise SituateError(
            f"{human}: no human questions here; write 20-40 questions with their gold in a qa.json "
            'there (README, "Your own documents") or pass --human FILE'
        )
    if generated.suffix.lower() != ".jsonl":
        raise SituateError(
            f"{generated}: --generated takes the questions.jsonl of `situate questions generate`"
        )
    from situate.datasets.generated import read_questions

    try:
        records = json.loads(human.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the loader says what is wrong with it, in its own words
    if not isinstance(records, list):
        return
    ids, texts = {}, {}
    for q in read_questions(generated):
        ids[q.id] = q
        for text in (q.q, q.original_q):
            if text:
                texts[_normal(text)] = q
    for n, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        found = ids.get(str(record.get("id"))) or texts.get(_normal(str(record.get("q", ""))))
        if found is not None:
            raise SituateError(
                f"{human}: question {n} (id {record.get('id', f'q{n}')}) is generated question "
                f"{found.id} of {generated} (by {found.provenance.generator}); reviewed generated "
                "questions are not human ones: write it yourself or leave it out"
            )


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def folder_of(cfg) -> Path:
    """The documents folder of a composed config, whose dataset must be a folder."""
    if cfg.dataset.get("_target_") != FOLDER_LOADER:
        raise SituateError(
            f"questions validate: dataset {cfg.dataset.get('name')} is not a folder of documents; "
            "use dataset=folder dataset.path=<your documents> (its qa.json is --human)"
        )
    return Path(str(cfg.dataset.path)).expanduser()


def run_sets(
    common: Sequence[str], arms: Sequence[Arm], human: Path, generated: Path
) -> tuple[SetScores, SetScores, object]:
    """Every arm's pipeline on both sets; the composed config of the first arm (its study,
    output folder, ks)."""
    from situate.config.compose import compose, instantiate_stage
    from situate.running.app import build_pipeline

    sets = {HUMAN: SetScores(HUMAN, human), GENERATED: SetScores(GENERATED, generated)}
    first = None
    for n, arm in enumerate(arms, start=1):
        base = [*common, *arm.overrides]
        cfg = compose([*base, f"dataset.qa={human}"])
        folder_of(cfg)
        first = first if first is not None else cfg
        pipeline = build_pipeline(cfg)
        loaders = {
            HUMAN: pipeline.dataset,
            GENERATED: instantiate_stage(compose([*base, f"dataset.qa={generated}"]), "dataset"),
        }
        for name, loader in loaders.items():  # one pipeline: the second set finds its indexes
            log.info("arm %d of %d (%s), %s questions", n, len(arms), arm.label, name)
            pipeline.dataset = loader
            result = pipeline.run()
            sets[name].add(arm.label, result.evaluation.per_question, sorted(cfg.eval.ks))
            sets[name].texts_embedded[arm.label] = int(result.counts["texts_embedded"])
    for s in sets.values():
        if len(s.qids) < 2:
            raise SituateError(
                f"{s.file}: {len(s.qids)} question(s) with gold; the {s.name} set needs at least "
                "2 scored questions (20-40 for the human one)"
            )
    return sets[HUMAN], sets[GENERATED], first


@dataclass
class Validation:
    """What ``situate questions validate`` found (see the module's docstring)."""

    metric: str  # where the verdict is decided
    arms: list[Arm]
    human: SetScores
    generated: SetScores
    agreement: dict[str, SetAgreement]  # per metric
    decisions: list[Decision]  # at ``metric``
    informativeness: dict[str, Informativeness]  # per set
    verdict: Verdict
    criteria: Criteria
    metric_chosen_by: str  # "--metric" or "the human set's recommended metric"
    self_agreement: SplitHalf  # the human set against itself, at ``metric``

    @property
    def disagreeing(self) -> list[Decision]:
        """The pairs whose winner differs between the sets (flipped, or tied on one set)."""
        return [d for d in self.decisions if not d.agrees]

    @property
    def line(self) -> str:
        """The verdict line the command prints."""
        a = self.agreement[self.metric]
        head = (
            f"verdict: {self.verdict.words} (at {metric_name(self.metric)}: Kendall's tau "
            f"{a.tau:+.2f} [{a.tau_low:+.2f}, {a.tau_high:+.2f}] over {len(self.arms)} arms"
        )
        if self.verdict.rank:
            return head + ")"
        return f"{head}): " + "; ".join(self.verdict.reasons)

    @property
    def self_line(self) -> str:
        """What the human set's own halves say: the most its order can confirm."""
        h = self.self_agreement
        line = (
            f"the human set against itself: two halves of {h.half} questions order the arms with "
            f"Kendall's tau {h.tau:+.2f} at {metric_name(self.metric)} (median of {h.splits:,} "
            f"random splits; {100 * self.criteria.confidence:g}% of them {h.low:+.2f} .. "
            f"{h.high:+.2f})"
        )
        if h.tau < self.criteria.min_tau:
            line += (
                f", below {self.criteria.min_tau:+.2f}: the human questions' own order is "
                "uncertain (all of them agree better than their halves, not exactly), so a "
                "generated set's tau against them is held down too; more human questions firm "
                "it up"
            )
        return line


def validate(
    human: SetScores,
    generated: SetScores,
    arms: list[Arm],
    metric: str | None = None,
    criteria: Criteria | None = None,
    resamples: int = 10_000,
    seed: int = 0,
) -> Validation:
    """Agreement, bias, decisions, informativeness and the verdict from two sets' scores
    (``criteria``: :class:`Criteria`'s defaults unless given)."""
    criteria = criteria or Criteria()
    metrics = list(human.scores)
    if metric is not None and metric not in human.scores:
        raise SituateError(
            f"questions validate: --metric {metric} is not measured; choose one of "
            f"{', '.join(metrics)}"
        )
    inform = {s.name: informativeness(s.scores) for s in (human, generated)}
    chosen_by = "--metric" if metric is not None else "the human set's recommended metric"
    metric = metric or inform[HUMAN].headline
    agreement = {
        m: set_agreement(human.scores[m], generated.scores[m], resamples, seed, criteria.confidence)
        for m in metrics
    }
    pairs = decisions(
        human.scores[metric], generated.scores[metric], criteria.alpha, resamples, seed
    )
    problem = inform[GENERATED].metrics[metric].problem
    found = verdict(agreement[metric], pairs, criteria, problem, metric_name(metric), GENERATED)
    itself = split_half(human.scores[metric], confidence=criteria.confidence, seed=seed)
    return Validation(
        metric, list(arms), human, generated, agreement, pairs, inform, found, criteria,
        chosen_by, itself,
    )  # fmt: skip


# -- what it writes -------------------------------------------------------------------------------


def to_json(v: Validation, study: str) -> dict:
    a = v.agreement[v.metric]
    return {
        "study": study,
        "metric": v.metric,
        "metric_chosen_by": v.metric_chosen_by,
        "verdict": v.verdict.words,
        "rank": v.verdict.rank,
        "reasons": v.verdict.reasons,
        "tau": a.tau,
        "tau_low": a.tau_low,
        "tau_high": a.tau_high,
        "p_value": a.p_value,
        "human_split_half": asdict(v.self_agreement),
        "criteria": {
            "min_tau": v.criteria.min_tau,
            "min_tau_low": v.criteria.min_tau_low,
            "alpha": v.criteria.alpha,
            "confidence": v.criteria.confidence,
            "informative": v.criteria.informative,
        },
        "sets": {
            s.name: {
                "file": str(s.file),
                "questions": len(s.qids),
                "texts_embedded": s.texts_embedded,
                "informativeness": {
                    "headline": v.informativeness[s.name].headline,
                    "separates": v.informativeness[s.name].separates,
                    "problem_at_metric": v.informativeness[s.name].metrics[v.metric].problem,
                    "verdict": v.informativeness[s.name].verdict,
                },
            }
            for s in (v.human, v.generated)
        },
        "arms": [
            {
                "arm": d.arm,
                "overrides": list(arm.overrides),
                "human": d.human,
                "generated": d.synthetic,
                "bias": d.difference,
                "ci_low": d.ci_low,
                "ci_high": d.ci_high,
            }
            for arm, d in zip(v.arms, a.arms, strict=True)
        ],
        "agreement": {
            m: {"tau": x.tau, "tau_low": x.tau_low, "tau_high": x.tau_high, "p_value": x.p_value}
            for m, x in v.agreement.items()
        },
        "decisions": [
            {
                "first": d.first,
                "second": d.second,
                "human": d.human,
                "generated": d.synthetic,
                "human_p_holm": d.p_holm,
                "human_separates": d.separated,
                "agrees": d.agrees,
                "flipped": d.flipped,
                "words": d.words(v.metric, GENERATED),
            }
            for d in v.decisions
        ],
    }


def markdown(v: Validation, study: str) -> str:
    a, name = v.agreement[v.metric], metric_name(v.metric)
    c = v.criteria
    out = [
        f"# {study}: can the generated questions rank the arms?",
        "",
        f"**{v.verdict.words[0].upper()}{v.verdict.words[1:]}** (at {name}, {v.metric_chosen_by}).",
        "",
    ]
    out += [f"- {r[0].upper()}{r[1:]}." for r in v.verdict.reasons] + (
        [""] if v.verdict.reasons else []
    )
    out += [f"{v.self_line[0].upper()}{v.self_line[1:]}.", ""]
    out += [
        f"{len(v.human.qids)} human questions ({v.human.file}) and {len(v.generated.qids)} "
        f"generated ones ({v.generated.file}), each run through the same {len(v.arms)} arms. "
        f"The verdict asks for Kendall's tau-b of the two orderings at least {c.min_tau:+.2f}, "
        f"its {100 * c.confidence:g}% bootstrap interval (each set's questions resampled) above "
        f"{c.min_tau_low:+.2f}, no flipped decision among the pairs the human questions separate "
        f"(paired randomization test, Holm-adjusted, p < {c.alpha:g})"
        + (
            ", and a generated set that is not saturated, floored, underpowered or unstable."
            if c.informative
            else "."
        ),
        "",
        "## Rank agreement per metric",
        "",
        "| metric | Kendall's tau | interval | p |",
        "|---|---|---|---|",
    ]
    for m, x in v.agreement.items():
        label = f"**{metric_name(m)}**" if m == v.metric else metric_name(m)
        out.append(
            f"| {label} | {x.tau:+.2f} | [{x.tau_low:+.2f}, {x.tau_high:+.2f}] | {x.p_value:.3f} |"
        )
    out += [
        "",
        f"## Each arm at {name}: bias = generated - human",
        "",
        "| arm | human | generated | bias [interval] |",
        "|---|---|---|---|",
    ]
    for d in a.arms:
        out.append(
            f"| {d.arm} | {_value(v.metric, d.human)} | {_value(v.metric, d.synthetic)} | "
            f"{_signed(v.metric, d.difference)} [{_signed(v.metric, d.ci_low)}, "
            f"{_signed(v.metric, d.ci_high)}] |"
        )
    separated = sum(d.separated for d in v.decisions)
    out += [
        "",
        f"## Decisions at {name}",
        "",
        f"{len(v.decisions) - len(v.disagreeing)} of {len(v.decisions)} pairs of arms get the same "
        f"winner on both sets; the human questions separate {separated} of them.",
        "",
        "| pair | human | generated | human separates (Holm p) | same winner |",
        "|---|---|---|---|---|",
    ]
    for d in v.decisions:
        out.append(
            f"| {d.first} vs {d.second} | {_signed(v.metric, d.human)} | "
            f"{_signed(v.metric, d.synthetic)} | {'yes' if d.separated else 'no'} "
            f"({d.p_holm:.3f}) | {_agreement_cell(d)} |"
        )
    if v.disagreeing:
        out += ["", "Not the same winner:", ""]
        out += [f"- {d.words(v.metric, GENERATED)}" for d in v.disagreeing]
    for s in (v.human, v.generated):
        lines = markdown_lines(v.informativeness[s.name])
        lines[0] = f"## How informative is the {s.name} set"
        out += ["", *lines]
    return "\n".join(out) + "\n"


def _agreement_cell(d: Decision) -> str:
    if d.agrees:
        return "yes"
    return "**no: flipped**" if d.flipped else "**no: tied on one set**"


def _value(metric: str, x: float) -> str:
    return f"{x:.3f}" if metric == "mrr" else f"{100 * x:.1f}"


def _signed(metric: str, x: float) -> str:
    return f"{x:+.3f}" if metric == "mrr" else f"{100 * x:+.1f}"


def write(v: Validation, study: str, folder: Path) -> tuple[Path, Path]:
    from situate.stores.files import atomic_write_text

    folder.mkdir(parents=True, exist_ok=True)
    md, js = folder / "validation.md", folder / "validation.json"
    atomic_write_text(md, markdown(v, study))
    atomic_write_text(js, json.dumps(to_json(v, study), indent=1))
    return md, js
