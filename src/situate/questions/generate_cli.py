"""``situate questions generate [group=option ...] [--out FILE]``: an evaluation set from the corpus.

Composed by Hydra like a run (:func:`situate.cli.compose`): the same ``dataset`` (and its
``parser`` options), ``llm`` and ``pricing``, plus ``questions`` (target, seed, language,
passage words, strategy mix, filters: ``conf/questions/``) and ``question_generator`` (who
writes: ``conf/question_generator/``). Writes ``questions.jsonl`` (default
``${output_dir}/questions/<dataset name>/questions.jsonl``, or ``questions.out``, or ``--out``)
and prints, per strategy, the candidates, those kept, those rejected by reason and the cost.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from situate.errors import SituateError

USAGE_EXAMPLE = (
    "e.g. situate questions generate dataset=folder dataset.path=docs/ questions=mixed "
    "questions.target=50 llm=claude_haiku_4_5"
)


def output_path(cfg, corpus_name: str, out: str | None) -> Path:
    """``--out``, else ``questions.out``, else ``${output_dir}/questions/<dataset>/questions.jsonl``."""
    from situate.questions.records import QUESTIONS_FILE

    chosen = out or cfg.questions.get("out")
    if chosen:
        return Path(str(chosen))
    return Path(str(cfg.output_dir)) / "questions" / corpus_name / QUESTIONS_FILE


def main(verb: str, args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate questions generate",
        description="Write an evaluation set (questions with span gold) from the corpus. "
        + USAGE_EXAMPLE,
    )
    parser.add_argument("overrides", nargs="*", help="group=option overrides, as for `situate run`")
    parser.add_argument("--out", default=None, help="the questions.jsonl to write")
    ns = parser.parse_intermixed_args(args)
    from situate.app import instantiate_stage
    from situate.cli import compose
    from situate.questions.filters import build_filters
    from situate.questions.generate import generate, keep_reviews
    from situate.questions.records import read_questions, write_questions

    cfg = compose(ns.overrides)
    q = cfg.questions
    corpus = instantiate_stage(cfg, "dataset").load()
    if not corpus.documents:
        raise SituateError(f"dataset {corpus.name}: no documents to write questions from")
    generator = instantiate_stage(cfg, "question_generator")
    llm = getattr(generator, "llm", None) or instantiate_stage(cfg, "llm")
    filters = build_filters(q.filters, embedder=instantiate_stage(cfg, "embedder"), llm=llm)
    result = generate(
        corpus.documents, generator, filters,
        target=int(q.target), mix=dict(q.mix), passage_words=int(q.passage_words),
        seed=int(q.seed), language=str(q.language or ""), quote_threshold=float(q.quote_threshold),
    )  # fmt: skip
    path = output_path(cfg, corpus.name, ns.out)
    existing = read_questions(path) if path.is_file() else []
    questions, dropped = keep_reviews(result.questions, existing)
    write_questions(path, questions)
    print_summary(result, questions, path, dropped, corpus.name, int(q.target), generator)
    stop = getattr(generator, "budget_stop", None)
    if stop is not None:
        raise stop
    return 0


def print_summary(result, questions, path, dropped, corpus_name, target, generator) -> None:
    from rich.table import Table

    from situate.console import console
    from situate.questions.generate import summary

    rows = summary(result.questions)
    table = Table(title=f"{corpus_name}: questions written by {generator.name}")
    for col in ("strategy", "candidates", "kept", "rejected (by reason)", "paid now", "from store"):
        table.add_column(
            col, justify="left" if col.startswith(("strategy", "rejected")) else "right"
        )
    for strategy, row in rows.items():
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["rejected"].items())) or "-"
        table.add_row(
            strategy, str(row["candidates"]), str(row["kept"]), reasons,
            f"${row['cost_usd']:.6f}", str(row["from_store"]),
        )  # fmt: skip
    out = console()
    out.print(table)
    paid = sum(r["cost_usd"] for r in rows.values())
    kept = sum(r["kept"] for r in rows.values())
    lines = [
        f"questions: {len(result.questions)} candidates, {kept} kept, billed ${paid:.6f} "
        f"this run; written to {path}"
    ]
    if result.requested < target:
        lines.append(
            f"the documents hold {result.requested} passages of questions.passage_words: fewer "
            f"than questions.target={target}"
        )
    if dropped:
        lines.append(f"{dropped} unreviewed questions of the earlier file were not generated again")
    for report in result.reports:
        if report.count:
            first = report.removed[0][1]
            lines.append(f"filter {report.name}: removed {report.count} (first: {first})")
    for line in lines:
        out.print(line, highlight=False, markup=False)
