"""``situate judge experiment=NAME [overrides]``: judge a study's pooled chunks, score every arm.

Reads the study as ``situate report`` does (its latest sweep, or ``--all-runs``), pools the top
``judge.depth`` chunks of every arm per question (:mod:`situate.judging.pool`), has ``judge.llm`` grade each
distinct pair once (:mod:`situate.judging.judge`; stored pairs are free), scores every arm on the judgments
(:mod:`situate.evaluation.judged`) and on gold where gold exists, compares them with the baseline
(paired tests, CIs, Holm: :func:`situate.study.compare.compare_study`) and writes
``judged.md`` and ``qrels_judged.txt`` to ``outputs/reports/<study>/``; each run gets its own
``qrels_judged.txt`` artifact and its judged metrics in MLflow. ``situate estimate ... --judge``
prices the same pairs first. ``--human-labels`` corrects every judged metric with a person's
grades of some pairs (prediction-powered inference: :mod:`situate.judging.human`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from situate.errors import SituateError

if TYPE_CHECKING:
    from situate.judging.judge import Judge
    from situate.judging.pool import Arm, Pool
    from situate.study.collect import Study


@dataclass
class Judging:
    """A study, its arms, the judge and the pool, as both ``judge`` and ``estimate`` need them."""

    study: Study
    arms: list[Arm]
    judge: Judge
    pool: Pool
    reports: Path  # outputs/reports/<study>


def prepare(overrides: list[str], all_runs: bool = False, paying: bool = True) -> Judging:
    """The study, its arms, the judge and the pool; ``paying`` (not an estimate): the judge's
    key is checked before the study is read."""
    from situate.commands.report import study_of
    from situate.config.compose import compose, instantiate_stage
    from situate.config.preflight import with_its_llm
    from situate.judging.pool import build_pool, load_arms

    cfg = compose(overrides, uses=with_its_llm("judge") if paying else ("judge",))
    judge = instantiate_stage(cfg, "judge")
    study = study_of(cfg, all_runs=all_runs)
    arms = load_arms(study)
    pool = build_pool(study, arms, judge.depth, judge.agreement_pairs, judge.seed)
    return Judging(study, arms, judge, pool, Path(str(cfg.output_dir)) / "reports" / study.name)


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("overrides", nargs="*", help="e.g. experiment=cookbook_replication")
    parser.add_argument(
        "--all-runs",
        action="store_true",
        help="every FINISHED run of the study, not its latest sweep",
    )
    return parser


def main(args: list[str]) -> int:
    parser = _parser(
        "situate judge",
        "Pool a study's top chunks, grade each (question, chunk) pair once with an LLM, and "
        "score every arm on the judgments and on gold: outputs/reports/<study>/judged.md",
    )
    parser.add_argument("--out", default=None, help="folder (default outputs/reports/<study>)")
    parser.add_argument(
        "--qrels", default=None,
        help="judgments edited by hand (qid 0 chunk_id grade): they replace the judge's grade of "
        "their pairs, which are then not sent to the model",
    )  # fmt: skip
    parser.add_argument(
        "--stored-only", action="store_true",
        help="judge nothing new: score with the stored judgments (the rest shows as unjudged)",
    )  # fmt: skip
    parser.add_argument(
        "--sample-only", action="store_true",
        help="judge only the agreement sample and print the agreement with gold (how far to "
        "trust a judge before paying for the whole pool)",
    )  # fmt: skip
    parser.add_argument(
        "--human-labels", default=None, metavar="PATH",
        help="human grades of some (question, chunk) pairs (qid 0 chunk_id grade, or a CSV / "
        "JSONL with qid, chunk_id, grade): correct every judged metric by prediction-powered "
        "inference, the interval covering the judge's bias (the judge grades these pairs too)",
    )  # fmt: skip
    parser.add_argument(
        "--power-tuning", action="store_true",
        help="with --human-labels: PPI++ (the judge weighted by a tuned lambda) instead of "
        "classic PPI",
    )  # fmt: skip
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_intermixed_args(args)
    if ns.permutations < 100:
        raise SituateError(f"judge: --permutations {ns.permutations} is too few (use >= 100)")
    from situate.evaluation.trec import read_qrels
    from situate.judging.report import score_and_write

    if ns.power_tuning and not ns.human_labels:
        raise SituateError(
            "judge: --power-tuning tunes the correction by --human-labels; give both"
        )
    if ns.human_labels and ns.sample_only:
        raise SituateError(
            "judge: --human-labels corrects the metrics of the whole pool; drop --sample-only"
        )
    if ns.human_labels and not Path(ns.human_labels).is_file():  # before the study is read
        raise SituateError(f"--human-labels {ns.human_labels}: no such file")
    j = prepare(ns.overrides, ns.all_runs, paying=not ns.sample_only)  # a sample pays nothing
    by_hand = _by_hand(j, read_qrels(ns.qrels), ns.qrels) if ns.qrels else {}
    labels = None
    pairs = j.pool.all_pairs()
    if ns.human_labels:
        from situate.judging.human import human_labels

        labels = human_labels(j, ns.human_labels)
        pooled = {(p.qid, p.text) for p in pairs}
        outside = {(p.qid, p.text): p for p in labels.pairs if (p.qid, p.text) not in pooled}
        pairs = pairs + list(outside.values())  # the judge's grade of every labelled pair
    pairs = [p for p in pairs if (p.qid, p.text) not in by_hand]
    if ns.sample_only:
        if not j.pool.sample:
            raise SituateError(
                f"judge --sample-only: study {j.study.name} has no gold (or judge.agreement_pairs "
                "is 0): there is nothing to agree with"
            )
        sampled = {(p.qid, p.text) for p, _ in j.pool.sample}
        pairs = [p for p in pairs if (p.qid, p.text) in sampled]
    if ns.stored_only:
        from situate.judging.judge import JudgeRun

        stored = j.judge.stored(pairs)
        run = JudgeRun(stored, from_store=len(stored))
    else:
        run = j.judge.judge(pairs)
    grades = {
        (p.qid, p.text): run.judgments[k].grade
        for p in pairs
        if (k := j.judge.key(p)) in run.judgments
    }
    grades.update(by_hand)
    if ns.sample_only:
        from situate.judging.report import print_agreement

        print_agreement(j, grades, run)
        return 0
    out = Path(ns.out) if ns.out else j.reports
    score_and_write(
        j, grades, run, len(by_hand), out, ns.permutations, ns.seed, labels, ns.power_tuning
    )
    return 0


def _by_hand(j: Judging, qrels: dict, path: str) -> dict[tuple[str, str], int]:
    """Hand-edited grades by (qid, chunk text); a chunk id no run names is a one-line error."""
    from situate.judging.human import grades_by_text

    return grades_by_text(j, qrels, path)


# the models `situate estimate --judge` prices beside the judge's own (conf/llm options)
PRICED_BESIDE = "claude_haiku_4_5,claude_haiku_5_5"


def estimate_main(args: list[str]) -> int:
    """``situate estimate [overrides] --judge``: what judging the study will cost with the
    judge's model and with each of ``--llms`` (the same pairs, counted and priced per model)."""
    parser = _parser("situate estimate --judge", "Price judging a study before spending.")
    parser.add_argument("--counter", default="auto", help="auto, provider, local or chars4")
    parser.add_argument(
        "--llms", default=PRICED_BESIDE,
        help=f"conf/llm options priced beside the judge's own model, comma-separated (default "
        f"{PRICED_BESIDE}; '' for none)",
    )  # fmt: skip
    ns = parser.parse_intermixed_args(args)
    from dataclasses import replace

    from situate.judging.report import estimate_lines

    j = prepare(ns.overrides, ns.all_runs, paying=False)
    judges = [j.judge]
    for option in filter(None, (o.strip() for o in ns.llms.split(","))):
        judge = judge_with(ns.overrides, option)
        if judge.llm.model not in {x.llm.model for x in judges}:
            judges.append(judge)
    from situate.console import console

    out = console()
    for judge in judges:
        for line in estimate_lines(replace(j, judge=judge), ns.counter):
            out.print(line, highlight=False, markup=False)
    return 0


def judge_with(overrides: list[str], option: str) -> Judge:
    """The judge of ``overrides`` with ``llm=option`` instead of their model (its other
    overrides, ``llm.base_url`` included, kept)."""
    from situate.config.compose import compose, instantiate_stage

    kept = [o for o in overrides if o.partition("=")[0].lstrip("+~") != "llm"]
    return instantiate_stage(compose([*kept, f"llm={option}"]), "judge")
