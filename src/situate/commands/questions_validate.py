"""``situate questions validate [group=option ...] [--human qa.json] [--generated FILE]``: can a
generated set rank the arms in place of a few human questions?

Composed like ``situate run -m`` (``dataset=folder dataset.path=...`` and the arms: lists such as
``context=none,heading_path fusion=sparse_only,dense_only`` or an ``experiment=`` preset that
sweeps); each arm runs on both sets in this process (:mod:`situate.study.validation`). Prints the arms'
table, the rank agreement, the flipped decisions, each set's informativeness and the verdict
line; writes ``validation.md`` and ``validation.json`` to ``${output_dir}/reports/<study>/`` (or
``--out``). Exit 0 whatever the verdict; 2 on a user error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from situate.errors import SituateError

FEW_HUMAN = 20  # fewer human questions with gold than this: a note says the intervals are wide
EXAMPLE = (
    "e.g. situate questions validate dataset=folder dataset.path=docs/ "
    "context=none,heading_path fusion=sparse_only,dense_only"
)


def main(verb: str, args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate questions validate",
        description="Run the arms on your human questions and on a generated set; say whether "
        "the generated set ranks the arms as the human questions do. " + EXAMPLE,
    )
    parser.add_argument(
        "overrides", nargs="*", help="group=option overrides and the arms' lists, as for "
        "`situate run -m`",
    )  # fmt: skip
    parser.add_argument(
        "--human", default=None, help="the human qa.json (default <dataset.path>/qa.json)"
    )
    parser.add_argument(
        "--generated", default=None,
        help="the generated questions.jsonl (default <dataset.path>/questions.jsonl, else "
        "where `situate questions generate` writes it: outputs/questions/<dataset>/)",
    )  # fmt: skip
    parser.add_argument(
        "--metric", default=None,
        help="decide at this metric (pass_at_5, mrr, ...); default: the human set's "
        "recommended one (its halves order the arms most alike there)",
    )  # fmt: skip
    parser.add_argument("--min-tau", type=float, default=0.8, help="least Kendall's tau (0.8)")
    parser.add_argument(
        "--min-tau-low", type=float, default=0.0,
        help="the tau's interval must lie above this (0.0)",
    )  # fmt: skip
    parser.add_argument(
        "--alpha", type=float, default=0.05,
        help="a pair the human set separates: Holm-adjusted p below this (0.05)",
    )  # fmt: skip
    parser.add_argument(
        "--resamples", type=int, default=10_000,
        help="bootstrap resamples and permutations (10000)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", default=None, help="folder to write to (default outputs/reports/<study>)"
    )
    args = [a for a in args if a not in ("-m", "--multirun")]
    ns = parser.parse_intermixed_args(args)
    if ns.resamples < 100:
        raise SituateError(
            f"questions validate: --resamples {ns.resamples} is too few (use >= 100)"
        )

    from situate.config.compose import compose
    from situate.evaluation.agreement import Criteria
    from situate.study.validation import (
        check_human,
        expand_arms,
        folder_of,
        run_sets,
        validate,
        write,
    )

    common, arms = expand_arms(ns.overrides)
    first = compose([*common, *arms[0].overrides])
    folder = folder_of(first)
    human = Path(ns.human).expanduser() if ns.human else folder / "qa.json"
    generated = Path(ns.generated).expanduser() if ns.generated else default_generated(first)
    if not generated.is_file():
        raise SituateError(
            f"{generated}: no generated set here; write one with `situate questions generate` "
            "(same dataset overrides) or pass --generated FILE"
        )
    check_human(human, generated)
    criteria = Criteria(ns.min_tau, ns.min_tau_low, ns.alpha)
    human_scores, generated_scores, cfg = run_sets(common, arms, human, generated)
    result = validate(
        human_scores, generated_scores, arms, ns.metric, criteria, ns.resamples, ns.seed
    )
    study = str(cfg.study)
    out = Path(ns.out) if ns.out else Path(str(cfg.output_dir)) / "reports" / study
    md, js = write(result, study, out)
    _print(result, md, js)
    return 0


def default_generated(cfg) -> Path:
    """The generated set beside the documents (``<dataset.path>/questions.jsonl``), else where
    ``situate questions generate`` writes it with the same overrides and no ``--out``
    (``${output_dir}/questions/<dataset name>/questions.jsonl``): the first that exists, else
    the first."""
    from situate.commands.questions_generate import output_path
    from situate.study.validation import folder_of

    beside = folder_of(cfg) / "questions.jsonl"
    written = output_path(cfg, str(cfg.dataset.name), None)
    return next((p for p in (beside, written) if p.is_file()), beside)


def _print(v, md: Path, js: Path) -> None:
    from rich.table import Table

    from situate.console import console
    from situate.evaluation.informativeness_result import metric_name
    from situate.study.validation import GENERATED

    name = metric_name(v.metric)
    a = v.agreement[v.metric]
    table = Table(
        title=f"{len(v.human.qids)} human and {len(v.generated.qids)} generated questions, "
        f"{len(v.arms)} arms, at {name}"
    )
    for col in ("arm", "human", "generated", "bias (generated - human) [95%]"):
        table.add_column(col, justify="left" if col == "arm" else "right")
    scale = 1 if v.metric == "mrr" else 100
    fmt = ".3f" if v.metric == "mrr" else ".1f"
    for d in a.arms:
        low, high = scale * d.ci_low, scale * d.ci_high
        table.add_row(
            d.arm, f"{scale * d.human:{fmt}}", f"{scale * d.synthetic:{fmt}}",
            f"{scale * d.difference:+{fmt}} [{low:+{fmt}}, {high:+{fmt}}]",
        )  # fmt: skip
    out = console()
    out.print(table)
    taus = ", ".join(
        f"{metric_name(m)} {x.tau:+.2f} [{x.tau_low:+.2f}, {x.tau_high:+.2f}]"
        for m, x in v.agreement.items()
    )
    lines = [f"rank agreement (Kendall's tau-b [95%]): {taus}"]
    lines.append(
        f"decisions at {name}: {len(v.decisions) - len(v.disagreeing)} of {len(v.decisions)} "
        f"pairs get the same winner; the human set separates "
        f"{sum(d.separated for d in v.decisions)}"
    )
    lines += [
        f"  {'flipped' if d.flipped else 'tied on one set'}: {d.words(v.metric, GENERATED)}"
        for d in v.disagreeing
    ]
    for s in (v.human, v.generated):
        lines.append(f"{s.name} set: {v.informativeness[s.name].verdict}")
    if len(v.human.qids) < FEW_HUMAN:
        lines.append(
            f"note: {len(v.human.qids)} human questions with gold; 20-40 narrow the intervals"
        )
    lines += [v.self_line, v.line, f"markdown: {md.resolve()}", f"json: {js.resolve()}"]
    for line in lines:
        out.print(line, highlight=False, markup=False)
