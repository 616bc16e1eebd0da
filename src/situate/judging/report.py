"""What ``situate judge`` writes and prints: judged and gold metrics side by side with their CIs,
the paired comparisons with the baseline, the judge's agreement with gold, and what it cost;
and what ``situate estimate --judge`` prints before anything is spent."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from situate.evaluation.judged import judged_names, judged_scores
from situate.evaluation.trec import write_qrels
from situate.judging.agreement import Agreement, agreement
from situate.judging.prompt import render
from situate.judging.summary import JudgedRun, JudgedStudy, PPISummary, agreement_line
from situate.money.usd import usd
from situate.records import Usage
from situate.study.labels import judged_label

GOLD = ("pass", "recall", "precision")


def gold_names(ks: list[int], columns) -> list[str]:
    """The gold metrics the runs' per_question.csv holds (MAP and P@k from this version on)."""
    names = [f"{n}_at_{k}" for n in GOLD for k in ks if f"{n}_at_{k}" in columns]
    return names + [m for m in ("average_precision",) if m in columns] + ["mrr"]


def score_and_write(
    j, grades, run, n_by_hand: int, out: Path, permutations: int, seed: int,
    labels=None, tuned: bool = False,
):  # fmt: skip
    """Score every arm on ``grades`` ((qid, chunk text) -> grade or None), compare, write, print;
    with ``labels`` (:class:`situate.judging.human.HumanLabels`), correct every judged metric by
    prediction-powered inference (``tuned``: PPI++)."""
    from situate.evaluation.statistics import bootstrap_ci
    from situate.study.compare import compare_study

    study, judge, ks = j.study, j.judge, j.study.ks
    # the ideal ranking and recall's denominator: every grade known for the question (the pool,
    # the agreement sample, hand grades), so no arm can score above 1
    pool_grades: dict[str, list[int]] = {}
    for (qid, _), g in grades.items():
        if g is not None:
            pool_grades.setdefault(qid, []).append(g)
    depth = max(ks)
    for arm in j.arms:
        for row in arm.run.questions:
            ranked = arm.ranked_texts(row["qid"], depth)
            row.update(
                judged_scores(
                    [grades.get((row["qid"], t)) for t in ranked],
                    pool_grades.get(row["qid"], []), ks, judge.relevant_from,
                )
            )  # fmt: skip
    metrics = judged_names(ks)
    if any(arm.gold for arm in j.arms):  # gold metrics beside the judged ones where gold exists
        metrics += gold_names(ks, study.baseline.questions[0])
    # coverage is reported, not tested: it is 0 for every pooled arm
    tested = [m for m in metrics if not m.startswith("unjudged_")]
    sc = compare_study(study, permutations=permutations, seed=seed, metrics=tested)
    for s in sc.summaries:
        for m in metrics:
            if m not in s.means:
                values = s.run.column(m)
                s.means[m] = float(values.mean())
                s.cis[m] = bootstrap_ci(np.zeros_like(values), values, permutations, seed=seed)
    agree = sample_agreement(j, grades)
    ppi = None
    if labels is not None:
        from situate.judging.human import correct

        ppi = correct(j, grades, labels, sc, metrics, tuned)
    out.mkdir(parents=True, exist_ok=True)
    write_qrels(out / "qrels_judged.txt", _qrels(j.pool.all_pairs(), grades))
    _log_to_runs(j, grades, sc, metrics)
    md = out / "judged.md"
    corrected = _ppi_markdown(sc, ppi, labels, tuned) if ppi is not None else []
    md.write_text(_markdown(j, sc, metrics, agree, run, n_by_hand, corrected), encoding="utf-8")
    summary = judged_study(j, sc, metrics, agree)
    if ppi is not None:
        summary = replace(summary, ppi=ppi_summary(ppi, labels, tuned))
    summary.write(out)  # for `situate report`
    _print(j, sc, agree, run, md)
    if ppi is not None:
        _print_ppi(sc, ppi, labels, tuned)
    return sc, agree


def judged_study(j, sc, metrics: list[str], agree: Agreement | None) -> JudgedStudy:
    """What ``situate report`` shows of this judging: every scored run's means and intervals."""
    runs = [
        JudgedRun(
            s.run.run_id,
            s.run.label,
            s.is_baseline,
            {m: s.means[m] for m in metrics},
            {m: tuple(s.cis[m]) for m in metrics},
            s.run.qids,
            {
                m: [_score(q.get(m)) for q in s.run.questions or []]
                for m in metrics
                if m.startswith("judged_")
            },
        )  # fmt: skip
        for s in sc.summaries
    ]
    judge = j.judge
    return JudgedStudy(
        j.study.name, judge.llm.model, judge.endpoint, judge.prompt_hash, judge.relevant_from,
        judge.depth, len(j.pool.pairs), list(j.study.ks), metrics, runs, agree,
    )  # fmt: skip


def _score(value) -> float | None:
    """A per-question score as judged.json keeps it (None: not scored)."""
    return None if value in (None, "") else float(value)


def ppi_summary(ppi, labels, tuned: bool) -> PPISummary:
    """What ``judged.json`` keeps of the correction by human labels."""
    from situate.judging.human import HALF_WIDTH, records

    return PPISummary(
        labels.path, len(labels.grades), len(labels.questions), "PPI++" if tuned else "PPI",
        0.95, HALF_WIDTH, records(ppi.runs), records(ppi.versus),
    )  # fmt: skip


def _ci(e) -> str:
    return f"{_pct(e.mean)} [{_pct(e.ci_low)}, {_pct(e.ci_high)}]"


def _needed(e, labels) -> str:
    from situate.evaluation.ppi import labels_needed
    from situate.judging.human import HALF_WIDTH

    return labels_needed(e, HALF_WIDTH).line(labels.per_question)


def _method(tuned: bool) -> str:
    if tuned:
        return (
            "PPI++ (Angelopoulos, Duchi and Zrnic 2023): theta = lambda * mean_N(f) - "
            "mean_n(lambda * f - y), lambda tuned to the least variance (clipped to [0, 1])"
        )
    return (
        "classic PPI (Angelopoulos et al. 2023, as ARES does): theta = mean_N(f) - mean_n(f - y), "
        "95% interval theta +- z sqrt(var_N(f)/N + var_n(f - y)/n)"
    )


def _ppi_markdown(sc, ppi, labels, tuned: bool) -> list[str]:
    """judged.md's section of the correction by human labels."""
    n = len(labels.questions)
    lines = [
        "## Corrected by human labels (prediction-powered inference)",
        "",
        f"{len(labels.grades)} human labels on {n} questions ({labels.path}); f = the judged "
        "per-question metric (every question), y = the same metric with the human grades where "
        "given (the labelled questions). Estimate: " + _method(tuned) + ". The judge alone is "
        "the bootstrap interval above (sampling of questions only); the judge's bias is "
        "mean(f - y) on the labelled questions with its 95% interval (points, + = the judge "
        "grades higher than the person).",
        "",
        "| configuration | metric | judge alone | PPI | lambda | judge's bias | labels for +-2 points |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in sc.summaries:
        name = f"{s.run.label} (baseline)" if s.is_baseline else s.run.label
        for m, e in ppi.runs[s.run.run_id].items():
            lines.append(
                f"| {name} | {judged_label(m)} | {_pct(s.means[m])} [{_pct(s.cis[m][0])}, "
                f"{_pct(s.cis[m][1])}] | {_ci(e)} | {e.lam:.3f} | {100 * e.bias:+.1f} "
                f"[{100 * e.bias_ci[0]:+.1f}, {100 * e.bias_ci[1]:+.1f}] | {_needed(e, labels)} |"
            )
    if ppi.versus:
        base = next(s for s in sc.summaries if s.is_baseline).run.label  # versus has one
        lines += [
            "",
            f"Differences with {base}, paired by question (points), judge alone (normal "
            "interval) and corrected:",
            "",
            "| configuration | metric | judge alone | PPI | judge's bias | labels for +-2 points |",
            "|---|---|---|---|---|---|",
        ]
        for s in sc.summaries:
            for m, e in ppi.versus.get(s.run.run_id, {}).items():
                lines.append(
                    f"| {s.run.label} | {judged_label(m)} | {100 * e.judge_mean:+.1f} "
                    f"[{100 * e.judge_ci[0]:+.1f}, {100 * e.judge_ci[1]:+.1f}] | "
                    f"{100 * e.mean:+.1f} [{100 * e.ci_low:+.1f}, {100 * e.ci_high:+.1f}] | "
                    f"{100 * e.bias:+.1f} [{100 * e.bias_ci[0]:+.1f}, {100 * e.bias_ci[1]:+.1f}]"
                    f" | {_needed(e, labels)} |"
                )
    return lines


def _print_ppi(sc, ppi, labels, tuned: bool) -> None:
    """One line per run: its judged nDCG at the largest k, the judge alone and corrected."""
    from situate.console import console

    m = f"judged_ndcg_at_{max(sc.study.ks)}"
    out = console()
    out.print(
        f"human labels: {len(labels.grades)} on {len(labels.questions)} questions "
        f"({'PPI++' if tuned else 'PPI'})",
        highlight=False,
    )
    for s in sc.summaries:
        e = ppi.runs[s.run.run_id][m]
        out.print(
            f"  {s.run.label}: {judged_label(m)} judge alone {_pct(e.judge_mean)}, corrected {_ci(e)}, "
            f"judge's bias {100 * e.bias:+.1f} points; {_needed(e, labels)}",
            highlight=False,
        )


def sample_agreement(j, grades) -> Agreement | None:
    """The judge's agreement with gold on the pool's stratified sample (None without gold)."""
    sample = [(grades.get((p.qid, p.text)), is_gold) for p, is_gold in j.pool.sample]
    return agreement(sample, j.judge.relevant_from) if sample else None


def print_agreement(j, grades, run) -> None:
    """``situate judge --sample-only``: the agreement alone, and what it cost."""
    from situate.console import console

    agree = sample_agreement(j, grades)
    grade_counts = {g: 0 for g in (0, 1, 2, 3, None)}
    for p, _ in j.pool.sample:
        grade_counts[grades.get((p.qid, p.text))] += 1
    out = console()
    out.print(_agreement_line(j, agree), highlight=False)
    out.print(
        "grades of the sample: "
        + ", ".join(f"{g}: {n}" for g, n in grade_counts.items() if g is not None)
        + f", no grade: {grade_counts[None]}",
        highlight=False,
    )
    out.print(
        f"judge: {len(run.calls)} pairs judged, {run.from_store} from the store, billed "
        f"{usd(run.cost_usd)}",
        highlight=False,
    )


def _agreement_line(j, agree: Agreement) -> str:
    return agreement_line(j.judge.llm.model, j.judge.endpoint, j.judge.relevant_from, agree)


def _qrels(pairs, grades) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for p in pairs:
        g = grades.get((p.qid, p.text))
        if g is not None:
            out.setdefault(p.qid, {})[p.chunk_id] = g
    return out


def _log_to_runs(j, grades, sc, metrics) -> None:
    """Each run's ``qrels_judged.txt`` (its own chunk ids) and judged metric means in MLflow."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=j.study.tracking_uri)
    for arm in j.arms:
        qrels: dict[str, dict[str, int]] = {}
        for qid, ids in arm.ranked.items():
            for chunk_id in ids[: j.pool.depth]:
                g = grades.get((qid, arm.texts[chunk_id]))
                if g is not None:
                    qrels.setdefault(qid, {})[chunk_id] = g
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "qrels_judged.txt"
            write_qrels(path, qrels)
            client.log_artifact(arm.run.run_id, str(path))
        s = sc.summary_of(arm.run)
        if s is not None:
            for m in metrics:
                if m.startswith(("judged_", "unjudged_")):
                    client.log_metric(arm.run.run_id, m, s.means[m])


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _markdown(
    j, sc, metrics, agree: Agreement | None, run, n_by_hand: int, corrected: list[str] = ()
) -> str:
    judge, study = j.judge, j.study
    ident = judge.llm.identity()
    where = f" at {ident['endpoint']}" if ident.get("endpoint") else ""
    lines = [
        f"# {study.name}: judged relevance",
        "",
        f"Judge: {judge.llm.model}{where}, prompt {judge.prompt_hash[:12]}, pool = top "
        f"{judge.depth} of {len(j.arms)} arm(s) per question over {len(j.pool.questions)} "
        f"questions: {len(j.pool.pairs)} distinct (question, chunk) pairs, plus "
        f"{len(j.pool.all_pairs()) - len(j.pool.pairs)} agreement-sample pairs outside the pool.",
        f"This run: {len(run.calls)} pairs judged ({usd(run.cost_usd)} billed, "
        f"{sum(r.usage.input_uncached + r.usage.cache_write + r.usage.cache_read for r in run.calls)} "
        f"input and {sum(r.usage.output for r in run.calls)} output tokens), {run.from_store} from "
        f"the store, {n_by_hand} graded by hand. Relevant = grade >= {judge.relevant_from}.",
        "",
        "Values are % (MRR and MAP as fractions x 100) with 95% bootstrap intervals.",
        "",
        _gold_note(study.baseline),
        "",
    ]
    for k in study.ks:
        at_k = [m for m in metrics if m.endswith(f"_at_{k}")]
        lines += _table(sc, at_k, f"k = {k}")
    rest = [m for m in metrics if "_at_" not in m]
    if rest:
        lines += _table(sc, rest, "rank metrics on gold")
    scope = (
        f"Paired comparisons with {study.baseline.label} at every judged "
        + ("and gold metric" if "mrr" in metrics else "metric")  # gold_names ends with mrr
        + " except "
        f"coverage (unjudged@k): {sc.n_comparisons} in all, randomization test, Holm-corrected "
        f"together at α = {sc.alpha}; 95% bootstrap interval of the difference (points)."
    )
    lines += ["## Against the baseline", "", scope, ""]
    lines += ["| configuration | metric | difference | 95% CI | p_holm |", "|---|---|---|---|---|"]
    for v in sc.versus:
        for c in v.comparisons:
            lines.append(
                f"| {v.run.label} | {judged_label(c.metric)} | {100 * c.difference:+.1f} | "
                f"{100 * c.ci_low:+.1f} to {100 * c.ci_high:+.1f} | {c.p_holm:.3g} |"
            )
    lines += ["", "## The judge's agreement with gold", ""]
    if agree is None:
        lines.append("The study has no gold: agreement cannot be measured.")
    else:
        lines += [
            f"Stratified sample of {agree.n_gold} (question, gold chunk) pairs and {agree.n_other} "
            f"pooled pairs without gold (seed {judge.seed}):",
            "",
            f"- gold chunks judged relevant (grade >= {judge.relevant_from}): "
            f"{_pct(agree.gold_judged_relevant)}%",
            f"- pooled chunks without gold judged relevant: {_pct(agree.other_judged_relevant)}% "
            "(false misses of gold, or the judge's mistakes)",
            f"- Cohen's kappa (judged relevant vs gold): {agree.kappa:.3f}",
            f"- answers without a grade: {agree.unparsed}",
        ]
    lines += ["", *corrected] if corrected else []
    lines += ["", "## The prompt", "", "```", render("QUESTION", "CHUNK TEXT"), "```", ""]
    return "\n".join(lines)


def _gold_note(base) -> str:
    """How many questions the gold metrics (if any) stand on."""
    n, labelled = len(base.qids), int(base.scored("reciprocal_rank").sum())
    if not labelled:
        return (
            "The study has no gold: every arm is scored on the judgments alone (no gold metric, "
            "no agreement with gold)."
        )
    if labelled < n:
        return (
            f"Gold metrics average the {labelled} of {n} questions that have gold; judged "
            "metrics all of them."
        )
    return f"All {n} questions have gold."


def _table(sc, metrics: list[str], title: str) -> list[str]:
    head = "| configuration | " + " | ".join(judged_label(m) for m in metrics) + " |"
    lines = [f"## {title}", "", head, "|---|" + "---|" * len(metrics)]
    for s in sc.summaries:
        cells = [f"{_pct(s.means[m])} [{_pct(s.cis[m][0])}, {_pct(s.cis[m][1])}]" for m in metrics]
        name = f"{s.run.label} (baseline)" if s.is_baseline else s.run.label
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""]


def _print(j, sc, agree, run, md: Path) -> None:
    from rich.table import Table

    from situate.console import console

    k = max(sc.study.ks)
    shown = [f"judged_ndcg_at_{k}", f"judged_recall_at_{k}", f"unjudged_at_{k}", f"recall_at_{k}"]
    shown = [m for m in shown if sc.summaries and m in sc.summaries[0].means]
    table = Table(title=f"{sc.study.name}: judged by {j.judge.llm.model}")
    table.add_column("configuration")
    for m in shown:
        table.add_column(judged_label(m), justify="right")
    for s in sc.summaries:
        table.add_row(
            s.run.label,
            *[f"{_pct(s.means[m])} [{_pct(s.cis[m][0])}, {_pct(s.cis[m][1])}]" for m in shown],
        )
    out = console()
    out.print(table)
    if agree is not None:
        out.print(_agreement_line(j, agree), highlight=False)
    out.print(
        f"judge: {len(run.calls)} pairs judged, {run.from_store} from the store, "
        f"billed {usd(run.cost_usd)}",
        highlight=False,
    )
    out.print(f"report: {md.resolve()}", highlight=False)


def estimate_lines(j, counter: str = "auto") -> list[str]:
    """Pairs, tokens and USD of judging ``j``'s pool, with the arithmetic; spends nothing."""
    from fractions import Fraction

    from situate.money.tokens import token_counter
    from situate.money.usd import exact, rate_text

    judge = j.judge
    pairs = list({judge.key(p): p for p in j.pool.all_pairs()}.items())
    stored = judge.stored([p for _, p in pairs])
    todo = [p for k, p in pairs if k not in stored]
    count, how = token_counter(judge.llm, counter)
    tokens = count([judge.request(p).prompt + judge.answer_prefix for p in todo]) if todo else []
    price = judge.pricing.price(judge.llm.model)
    standard = sum(
        (exact(price.call_cost(Usage(input_uncached=t, output=judge.max_tokens), ttl=judge.ttl).total) for t in tokens),
        Fraction(0),
    )  # fmt: skip
    batched = sum(
        (exact(price.call_cost(Usage(input_uncached=t, output=judge.max_tokens), ttl=judge.ttl, batch=True).total) for t in tokens),
        Fraction(0),
    )  # fmt: skip
    n_in, n_out = sum(tokens), judge.max_tokens * len(todo)
    rate_in, rate_out = price.rate("uncached"), price.rate("output")
    extra = len(j.pool.all_pairs()) - len(j.pool.pairs)
    return [
        f"judging study {j.study.name} with {price.model}"
        + (f" at {judge.endpoint}" if judge.endpoint else ""),
        f"  pairs: {len(j.pool.pairs)} pooled (top {judge.depth} of {len(j.arms)} arm(s) over "
        f"{len(j.pool.questions)} questions) + {extra} agreement-sample pairs: {len(pairs)} "
        "distinct (pairs of one question text and one chunk text are judged once); "
        f"{len(stored)} stored already, {len(todo)} to judge",
        f"  input tokens: {n_in:,} ({how})",
        f"  output tokens: {len(todo)} pairs x judge.max_tokens {judge.max_tokens} = {n_out:,} "
        "(a ceiling: the answer is one digit)",
        f"  USD: {n_in:,} x {rate_text(rate_in)}/Mtok + {n_out:,} x {rate_text(rate_out)}/Mtok = "
        f"{usd(standard)}"
        + (
            ""
            if price.long_prompt is None
            else " (long-prompt tier applied per call where reached)"
        ),
        f"  with the batch API (judge.batch=true): {usd(batched)}",
        f"  judge.budget_usd={judge.budget_usd}; no call is made by this estimate",
    ]
