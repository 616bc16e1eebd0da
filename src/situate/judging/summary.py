"""``judged.json``: what ``situate judge`` found, kept beside ``judged.md`` in
``outputs/reports/<study>/`` so that ``situate report`` shows the judged metrics next to the gold
ones: per run (by MLflow run id) the mean and 95% bootstrap interval of every judged and gold
metric and each question's judged scores (what the report's separation of the judged metrics
reads), the judge's agreement with gold, and which judge graded what; with ``--human-labels``,
the prediction-powered correction of every judged metric (``ppi``, absent otherwise).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from situate.errors import SituateError
from situate.judging.agreement import Agreement
from situate.stores.files import atomic_write_text

JUDGED_FILE = "judged.json"


@dataclass(frozen=True)
class JudgedRun:
    run_id: str
    label: str
    baseline: bool
    means: dict[str, float]
    cis: dict[str, tuple[float, float]]
    # per question (``qids`` order) each judged metric's score, None where unscored; empty in a
    # judged.json an older situate wrote
    qids: list[str] = field(default_factory=list)
    scores: dict[str, list[float | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class PPISummary:
    """The judged metrics corrected by human labels (:mod:`situate.judging.human`).

    ``runs``: per run id and judged metric, the PPI estimate (``mean``, ``ci_low``,
    ``ci_high``), the judge alone (``judge_mean``, ``judge_ci``: normal, over questions), the
    judge's bias ``mean(f - y)`` with ``bias_ci``, ``lam``, ``n`` and ``big_n`` (labelled and all
    questions), the variances, and ``labels_needed`` / ``more_labels`` for +-``half_width``
    (None: no number suffices); ``versus``: the same for each run's difference with the baseline.
    """

    labels: str  # the file
    pairs: int  # labelled (question, chunk) pairs
    questions: int  # labelled questions
    method: str  # "PPI" (lambda = 1) or "PPI++" (tuned lambda)
    confidence: float
    half_width: float
    runs: dict[str, dict[str, dict]]
    versus: dict[str, dict[str, dict]]


@dataclass(frozen=True)
class JudgedStudy:
    """A study as ``situate judge`` scored it."""

    study: str
    model: str  # the judge's model, and the endpoint it answered from ("" for a local model)
    endpoint: str
    prompt_hash: str
    relevant_from: int
    depth: int  # the pool: top ``depth`` chunks of every arm per question
    pairs: int  # distinct (question, chunk) pairs of the pool
    ks: list[int]
    metrics: list[str]  # judged metrics, then gold ones where the study has gold
    runs: list[JudgedRun] = field(default_factory=list)
    agreement: Agreement | None = None
    ppi: PPISummary | None = None  # with human labels only

    def write(self, folder: Path) -> Path:
        path = folder / JUDGED_FILE
        record = asdict(self)
        if self.ppi is None:  # the file of a judging without human labels is as it was
            del record["ppi"]
        atomic_write_text(path, json.dumps(record, indent=1))
        return path

    def run(self, run_id: str) -> JudgedRun | None:
        return next((r for r in self.runs if r.run_id == run_id), None)


def read_judged(folder: Path) -> JudgedStudy | None:
    """The ``judged.json`` in ``folder``, or None when ``situate judge`` wrote none there."""
    path = folder / JUDGED_FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        runs = [
            JudgedRun(**{**r, "cis": {m: tuple(ci) for m, ci in r["cis"].items()}})
            for r in record.pop("runs")
        ]
        agree = record.pop("agreement")
        ppi = record.pop("ppi", None)
        return JudgedStudy(
            **record, runs=runs, agreement=Agreement(**agree) if agree else None,
            ppi=PPISummary(**ppi) if ppi else None,
        )  # fmt: skip
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise SituateError(
            f"{path}: not a judged.json situate judge writes ({type(e).__name__}: {e}); rerun "
            "`situate judge` with the study's overrides, or delete the file"
        ) from e


def agreement_line(model: str, endpoint: str, relevant_from: int, agree: Agreement) -> str:
    """The judge's agreement with gold, in one sentence."""
    return (
        f"agreement of {model}" + (f" at {endpoint}" if endpoint else "") + " with gold: "
        f"{100 * agree.gold_judged_relevant:.1f}% of {agree.n_gold} gold chunks judged relevant "
        f"(grade >= {relevant_from}), {100 * agree.other_judged_relevant:.1f}% of "
        f"{agree.n_other} pooled chunks without gold; Cohen's kappa {agree.kappa:.3f}"
    )
