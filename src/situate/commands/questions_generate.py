"""``situate questions generate [group=option ...] [--out FILE]``: an evaluation set from the corpus.

Composed by Hydra like a run (:func:`situate.config.compose.compose`): the same ``dataset`` (and its
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
    from situate.datasets.generated import QUESTIONS_FILE

    chosen = out or cfg.questions.get("out")
    if chosen:
        return Path(str(chosen))
    return Path(str(cfg.output_dir)) / "questions" / corpus_name / QUESTIONS_FILE


def difficulty_settings(cfg) -> dict:
    """``questions.difficulty`` as a plain mapping (empty when the config has none)."""
    from omegaconf import OmegaConf

    node = cfg.questions.get("difficulty")
    return dict(OmegaConf.to_container(node, resolve=True)) if node is not None else {}


def prepare(overrides: list[str], paying: bool = True):
    """The composed config, the corpus, the generator and the requests (nothing is paid);
    ``paying`` (not an estimate): the generator's key is checked before the corpus is read."""
    from situate.config.compose import compose, instantiate_stage
    from situate.config.preflight import with_its_llm
    from situate.questions.difficulty.selection import oversample
    from situate.questions.generate import build_requests

    groups = ("dataset", "question_generator")
    cfg = compose(overrides, uses=with_its_llm(*groups) if paying else groups)
    q = cfg.questions
    factor = oversample(difficulty_settings(cfg))  # checked before anything is parsed
    corpus = instantiate_stage(cfg, "dataset").load()
    if not corpus.documents:
        raise SituateError(f"dataset {corpus.name}: no documents to write questions from")
    generator = instantiate_stage(cfg, "question_generator")
    # over-generating on documents with fewer passages: more than one question of each
    requests = build_requests(
        corpus.documents, int(q.target) * factor, dict(q.mix), int(q.passage_words), int(q.seed),
        str(q.language or ""), per_passage=factor,
    )  # fmt: skip
    return cfg, corpus, generator, requests


def main(verb: str, args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate questions generate",
        description="Write an evaluation set (questions with span gold) from the corpus. "
        + USAGE_EXAMPLE,
    )
    parser.add_argument("overrides", nargs="*", help="group=option overrides, as for `situate run`")
    parser.add_argument("--out", default=None, help="the questions.jsonl to write")
    ns = parser.parse_intermixed_args(args)
    from situate.config.compose import instantiate_stage
    from situate.datasets.generated import read_questions, write_questions
    from situate.questions.filters import build_filters
    from situate.questions.generate import generate, keep_reviews

    cfg, corpus, generator, requests = prepare(ns.overrides)
    q = cfg.questions
    from situate.questions.difficulty.selection import build as build_difficulty

    embedder = instantiate_stage(cfg, "embedder")
    filters = build_filters(q.filters, embedder=embedder, llm=instantiate_stage(cfg, "llm"))
    meter, target = build_difficulty(
        difficulty_settings(cfg), corpus.documents, embedder=embedder,
        passage_words=int(q.passage_words), human_options=human_options(cfg),
    )  # fmt: skip
    result = generate(
        corpus.documents, generator, filters, requests, quote_threshold=float(q.quote_threshold),
        meter=meter, target=target, keep=int(q.target),
    )  # fmt: skip
    path = output_path(cfg, corpus.name, ns.out)
    existing = read_questions(path) if path.is_file() else []
    questions, dropped = keep_reviews(result.questions, existing)
    write_questions(path, questions)
    print_summary(result, questions, path, dropped, corpus.name, int(q.target), generator)
    if meter is not None:
        print_difficulty(result, path, int(q.target), meter.windows)
    from situate.questions.llm_generator import LLMQuestionGenerator

    if isinstance(generator, LLMQuestionGenerator) and generator.budget_stop is not None:
        raise generator.budget_stop  # what was written is in the file and the store
    return 0


def human_options(cfg) -> dict:
    """How a human sample's gold is resolved: the dataset's quote threshold and chunk settings
    (those of ``dataset=folder``; the folder defaults for other datasets)."""
    d = cfg.dataset
    out = {"quote_threshold": float(d.get("quote_threshold", 90))}
    for key in ("max_words", "min_words"):
        if d.get(key) is not None:
            out[key] = int(d.get(key))
    return out


def difficulty_path(path: Path) -> Path:
    """The generation's difficulty report beside its questions file: ``<stem>.difficulty.md``."""
    return path.with_name(path.stem + ".difficulty.md")


def print_difficulty(result, path: Path, target: int | None = None, windows: str = "") -> None:
    """The kept set's difficulty beside the human sample's (and the candidates'), printed and
    written to :func:`difficulty_path` (Markdown) and ``<stem>.difficulty.json``; where the match
    shrank the set below ``target`` (questions.target), why. ``windows``: what the ranks were
    measured over."""
    import json

    from rich.table import Table

    from situate.console import console
    from situate.questions.difficulty.matching import bin_distance
    from situate.questions.difficulty.measures import difficulty_of
    from situate.questions.difficulty.report import comparison_rows, describe, markdown_report

    measured = [(q, d) for q in result.questions if (d := difficulty_of(q)) is not None]
    columns = {
        "kept": [d for q, d in measured if q.status == "kept"],
        "candidates": [d for _, d in measured],
    }
    bins = []
    if result.selection is not None and result.selection.human:
        columns["human sample"] = result.selection.human
        bins = result.selection.bins
    table = Table(
        title="difficulty: median (quartiles)", caption=f"ranks over {windows}" if windows else None
    )
    table.add_column("", justify="left")
    for name in columns:
        table.add_column(name, justify="right")
    for row in comparison_rows(columns):
        table.add_row(*row)
    out = console()
    out.print(table)
    varied = sum(1 for q in result.questions if q.status == "kept" and q.unvaried_q)
    if varied:
        out.print(
            f"word forms: {varied} kept questions asked with a noun's number or a verb's "
            "tense changed (questions.difficulty.word_forms; each one's first wording is its "
            "unvaried_q)",
            highlight=False, markup=False,
        )  # fmt: skip
    report = difficulty_path(path)
    report.write_text(markdown_report(columns, bins, windows), encoding="utf-8")
    figures = {name: describe(values) for name, values in columns.items()}
    figures["windows"] = windows
    figures["bin_distance"] = bin_distance(bins)
    figures["bins"] = [
        {"bin": b.label, "human": b.human, "quota": b.quota, "kept": b.kept} for b in bins
    ]
    report.with_suffix(".json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
    matched = sum(b.quota for b in bins)
    if bins and target is not None and matched < target:
        out.print(
            f"difficulty: matched {matched} of the {target} asked (questions.target): the "
            "human sample's harder bins have too few candidates, and filling the others would "
            "make the set easier than the sample; raise questions.difficulty.oversample (or "
            "questions.difficulty.tolerance, up to 1)",
            highlight=False, markup=False,
        )  # fmt: skip
    distance = bin_distance(bins)
    if distance is not None:
        out.print(
            f"difficulty: the kept set's bins differ from the human sample's by {distance:.0%} "
            "of its questions (total variation; questions.difficulty.tolerance=0.1 keeps the "
            "largest set within 10%)",
            highlight=False, markup=False,
        )  # fmt: skip
    short = [b for b in bins if b.kept < b.quota]
    if short:
        missing = sum(b.quota - b.kept for b in short)
        out.print(
            f"difficulty: {len(short)} bins of the human sample had too few candidates "
            f"({missing} questions short); raise questions.difficulty.oversample",
            highlight=False, markup=False,
        )  # fmt: skip
    out.print(f"difficulty: written to {report}", highlight=False, markup=False)


def estimate(generator, requests, counter: str = "auto"):
    """What generating ``requests`` will cost (those not stored yet), and how many are stored:
    the document block of ``context_dependent`` requests priced as written by a document's first
    call and read by the others (and, without caching, paid by every call), the output at
    ``max_tokens`` (a ceiling). Spends nothing."""
    from situate.money.estimate import estimate_calls
    from situate.money.tokens import token_counter
    from situate.questions.llm_generator import LLMQuestionGenerator

    if not isinstance(generator, LLMQuestionGenerator):  # a rule-based generator pays nothing
        return None, len(requests)
    rendered, _, keys = generator.plan(requests)
    stored = generator.stored(keys)
    first = {k: row for row, k in reversed(list(enumerate(keys)))}
    todo = sorted(row for k, row in first.items() if k not in stored)
    count, how = token_counter(generator.llm, counter)
    blocks = list(dict.fromkeys(rendered[r].document for r in todo if rendered[r].document))
    counted = count([*blocks, *(rendered[r].prompt for r in todo)]) if todo else []
    block_tokens = dict(zip(blocks, counted[: len(blocks)], strict=True))
    prompt_tokens = dict(zip(todo, counted[len(blocks) :], strict=True))
    groups: dict[str, tuple[int, list[int]]] = {"(no document block)": (0, [])}
    for r in todo:
        block = rendered[r].document
        name = f"document {requests[r].document.doc_id}" if block else "(no document block)"
        groups.setdefault(name, (block_tokens.get(block, 0), []))[1].append(prompt_tokens[r])
    price = generator.pricing.price(generator.llm.model)
    strategies = sorted({requests[r].strategy for r in todo})
    result = estimate_calls(
        price,
        [(name, prefix, calls) for name, (prefix, calls) in groups.items()],
        output_tokens=generator.max_tokens,
        counter=how,
        ttl=generator.paid.ttl,
        shape_lines=[
            f"questions: {len(first)} distinct requests, {len(first) - len(todo)} stored already, "
            f"{len(todo)} to write ({', '.join(strategies) or 'none'}); output at "
            f"question_generator.max_tokens {generator.max_tokens} each (a ceiling)"
        ],
    )
    return result, len(first) - len(todo)


def estimate_main(args: list[str]) -> int:
    """``situate estimate [overrides] --questions``: what ``situate questions generate`` costs."""
    parser = argparse.ArgumentParser(
        prog="situate estimate --questions", description="Price question generation first."
    )
    parser.add_argument("overrides", nargs="*")
    parser.add_argument("--counter", default="auto", help="auto, provider, local or chars4")
    ns = parser.parse_intermixed_args(args)
    from situate.console import console
    from situate.money.estimate import render

    _, corpus, generator, requests = prepare(ns.overrides, paying=False)
    result, stored = estimate(generator, requests, ns.counter)
    if result is None:
        console().print(
            f"questions: {len(requests)} requests to generator {generator.name}, which makes no "
            "paid call: $0", highlight=False, markup=False,
        )  # fmt: skip
        return 0
    render(result)
    budget = generator.paid.budget_usd
    console().print(
        f"question_generator.budget_usd={budget}; {stored} questions stored already cost "
        "nothing; no call is made by this estimate", highlight=False, markup=False,
    )  # fmt: skip
    return 0


def print_summary(result, questions, path, dropped, corpus_name, target, generator) -> None:
    from rich.table import Table

    from situate.console import console
    from situate.money.usd import usd
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
            usd(row["cost_usd"]), str(row["from_store"]),
        )  # fmt: skip
    out = console()
    out.print(table)
    paid = sum(r["cost_usd"] for r in rows.values())
    kept = sum(r["kept"] for r in rows.values())
    lines = [
        f"questions: {len(result.questions)} candidates, {kept} kept, billed {usd(paid)} "
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
