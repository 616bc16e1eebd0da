"""The report's view model: everything the HTML page and the Markdown show, as plain values
(:func:`build_context`), the charts included as inline SVG."""

from __future__ import annotations

from datetime import datetime, timezone

from situate.embedding.truncation import described
from situate.evaluation.informativeness_result import (
    Informativeness,
    metric_name,
    metric_table,
    pair_table,
)
from situate.judging.summary import JudgedStudy, agreement_line
from situate.money.costs import CONFIG, CONFIG_CONTEXT_COST, CONFIG_TOTAL_COST, RUN, USAGE_FIELDS
from situate.money.usd import usd
from situate.report.charts import cost_chart, failure_chart, prompt_chart
from situate.study.collect import RunData, spec_text
from situate.study.compare import StudyComparison, hit_rule, significance
from situate.study.informativeness import runs_informativeness, scope
from situate.study.labels import format_p, judged_label, metric_label
from situate.tracking.base import without_credentials

# what each configuration's contexts took and cost when written (config_*), whichever run paid,
# and what the run paid for embeddings and reranking (run_*)
TOKEN_METRICS = tuple(f"{CONFIG}tokens_{f}" for f in USAGE_FIELDS)
COST_METRICS = (
    CONFIG_CONTEXT_COST,
    f"{RUN}cost_usd_embedding",
    f"{RUN}cost_usd_rerank",
    CONFIG_TOTAL_COST,
    f"{RUN}cost_usd_per_1k_queries",
)
PASS_EQUALS_RECALL = (
    "On this study every question's pass@k equals its recall@k (gold spans are whole chunks), so "
    "the recall rows repeat the pass rows; Holm still counts them, which is conservative."
)
USAGE_HEADERS = dict(
    zip(
        TOKEN_METRICS + COST_METRICS,
        (
            "input tokens (uncached)",
            "cache-write tokens",
            "cache-read tokens",
            "output tokens",
            "context $",
            "embedding $",
            "rerank $",
            "total $",
            "$ per 1k queries",
        ),
        strict=True,
    )
)
WRITTEN_HEADER = "contexts written $"
SEPARATION = "How far these questions can separate the configurations"
SEPARATION_NOTE = (
    "Per metric: the configurations' means, the share of questions every configuration solves "
    "(scores the maximum), none does (scores 0) and they score differently on; the compared pairs "
    "whose difference reaches the smallest difference these questions can detect, that detectable "
    "difference (median over the pairs) and the questions it would take to detect 2 / 5 points "
    "(MRR: 0.02 / 0.05; Sakai's topic set size design), from the paired per-question differences"
)


def build_context(sc: StudyComparison, judged: JudgedStudy | None = None) -> dict:
    """Everything both renderings show, as plain values."""
    study = sc.study
    metrics = sc.metrics
    best = {m: sc.best(m) for m in metrics}
    rows = []
    for run in study.runs:
        s = sc.summary_of(run)
        row = {
            "label": run.label,
            "run_id": run.run_id,
            "choices": [run.tags.get(g, "-") for g in study.varying],
            "baseline": run is study.baseline,
            "failed": s is None,
            "error": run.error or "",
            "status": run.status,
            "cells": [],
            "n_questions": len(run.questions or []),
            "window": described(run.metrics),  # what the embedder's and reranker's windows cut
        }
        if s is not None:
            for m in metrics:
                lo, hi = s.cis[m]
                row["cells"].append(
                    {
                        "value": _value(m, s.means[m]),
                        "ci": f"[{_value(m, lo)}, {_value(m, hi)}]",
                        "best": run.run_id in best[m] and len(sc.summaries) > 1,
                    }
                )
        rows.append(row)
    comparisons = []
    for v in sc.versus:
        if v.note:
            comparisons.append({"label": v.run.label, "note": v.note, "rows": []})
            continue
        items = []
        for c in v.comparisons:
            items.append(
                {
                    "metric": metric_label(c.metric),
                    "baseline": _value(c.metric, c.baseline),
                    "value": _value(c.metric, c.value),
                    "difference": _diff(c.metric, c.difference),
                    "ci": f"[{_diff(c.metric, c.ci_low)}, {_diff(c.metric, c.ci_high)}]",
                    "p": format_p(c.p_value),
                    "p_holm": format_p(c.p_holm if c.p_holm is not None else c.p_value),
                    "significant": c.significant,
                    "significance": significance(c, sc.alpha),
                    "wtl": f"{c.wins}/{c.ties}/{c.losses}",
                    "headline": c.metric == sc.headline,
                }
            )
        comparisons.append({"label": v.run.label, "note": None, "rows": items})
    flips = []
    for v in sc.versus:
        if v.note:
            continue
        flips.append(
            {
                "label": v.run.label,
                "has_contexts": v.run.contexts is not None,
                "gained": [_flip_dict(f) for f in v.gained],
                "lost": [_flip_dict(f) for f in v.lost],
            }
        )
    inform = _informativeness(sc)
    parent = study.parent
    dataset = sorted({r.tags.get("dataset", "?") for r in study.runs})
    return {
        "title": f"situate report: {study.name}",
        "study": study.name,
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "started": _fmt_date(
            parent.start_time if parent else min(r.start_time for r in study.runs)
        ),
        "git_commits": study.git_commits or ["unknown"],
        "source": (
            f"latest sweep (MLflow parent run {parent.run_id}, {parent.tags.get('overrides') or parent.name})"
            if parent
            else "every FINISHED run of the experiment (newest of each configuration)"
        ),
        "tracking_uri": without_credentials(study.tracking_uri),
        "dataset": ", ".join(dataset) + _sample_note(study),
        "n_questions": len(study.baseline.questions or []),
        "baseline_spec": spec_text(study.baseline_spec),
        "baseline_label": study.baseline.label,
        "jobs": len(study.runs),
        "jobs_failed": len(study.failed_runs),
        "varying": study.varying,
        "metric_labels": [metric_label(m) for m in metrics],
        "metrics": metrics,
        "rows": rows,
        "window_column": any(r["window"] for r in rows),
        "window_note": _window_note(study.runs),
        "comparisons": comparisons,
        "n_comparisons": sc.n_comparisons,
        "pass_equals_recall": sc.pass_equals_recall,
        "pass_equals_recall_note": PASS_EQUALS_RECALL,
        "findings": sc.findings(),
        "selection": sc.selection.sentences() if sc.selection else [],
        "scope": sc.scope(),
        "headline": sc.headline,
        "flips": flips,
        "k": sc.k_flip,
        "hit_rule": hit_rule(sc.k_flip),
        "permutations": f"{sc.permutations:,}",
        "min_p": format_p(1 / (1 + sc.permutations)),
        "failed": [
            {"label": r.label, "run_id": r.run_id, "status": r.status, "error": r.error or ""}
            for r in study.failed_runs
        ],
        "usage": _usage_table(sc),
        "charts": {
            "failure": failure_chart(sc),
            "cost": cost_chart(sc),
            "prompt": prompt_chart(sc),
        },
        "prompt_note": _prompt_note(sc),
        "judged": _judged_table(sc, judged),
        "informativeness": inform,
        "separation": SEPARATION,
        "separation_note": SEPARATION_NOTE,
    }


def _informativeness(sc: StudyComparison) -> dict | None:
    """How far the questions can separate the configurations (on the test questions with a
    dev/test split: ``sc.study`` holds them then): the paragraph, a row per metric, a row per pair
    compared at the recommended metric, and the warning the Findings open with when they cannot;
    None with fewer than two finished configurations."""
    return _separation(
        runs_informativeness(sc.study.ok_runs, sc.study.baseline, sc.metrics), _test_questions(sc)
    )


def _test_questions(sc: StudyComparison) -> int | None:
    split = sc.selection is not None and sc.selection.split == "dev_test"
    return sc.selection.n_reported_on if split else None


def _separation(r: Informativeness | None, test_questions: int | None) -> dict | None:
    """What both renderings show of one informativeness (None: nothing to separate)."""
    if r is None:
        return None
    header, rows = metric_table(r)
    pair_header, pair_rows = pair_table(r)
    paragraph = r.paragraph
    if test_questions is not None:
        paragraph += (
            f" Computed on the {test_questions} test questions the figures are reported on."
        )
    return {
        "paragraph": paragraph,
        "warning": None
        if r.warning is None
        else f"Warning: {scope(test_questions)}the {r.warning}.",
        "header": header,
        "rows": [
            {"cells": row, "headline": m == r.headline}
            for m, row in zip(r.metrics, rows, strict=True)
        ],
        "pair_metric": metric_name(r.headline),
        "pair_header": pair_header,
        "pair_rows": pair_rows,
        "power": f"paired t-test, {100 * r.thresholds.power:.0f}% power, alpha {r.thresholds.alpha:g}",
    }


def _window_note(runs) -> str:
    """A sentence for stakeholders when a window cut contexts: those rows understate what
    contexts buy."""
    cut = [r.label for r in runs if r.metrics.get("contexts_truncated", 0) > 0]
    if not cut:
        return ""
    return (
        f"In {', '.join(cut)} the embedder read only the start of each text and the context of "
        'some chunks sat past it (column "cut by the window"): their vectors never saw it, so '
        "these rows understate contextual retrieval. Put the context first "
        "(context.placement=before) or let the model read more (embedder.max_seq_length)."
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _value(metric: str, x: float) -> str:
    return f"{x:.3f}" if metric == "mrr" else _pct(x)


def _diff(metric: str, x: float) -> str:
    return f"{x:+.3f}" if metric == "mrr" else f"{100 * x:+.1f}"


def _fmt_date(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _judged_table(sc: StudyComparison, judged: JudgedStudy | None) -> dict | None:
    """The judged metrics at the largest k beside the gold ones, per run the judge scored, with
    their 95% intervals and the judge's agreement with gold; None when the study was not judged."""
    if judged is None:
        return None
    k = max(judged.ks)
    shown = [m for m in judged.metrics if m.endswith(f"_at_{k}") or "_at_" not in m]
    rows, unjudged = [], []
    for run in sc.study.runs:
        if sc.summary_of(run) is None:
            continue
        found = judged.run(run.run_id)
        if found is None:
            unjudged.append(run.label)
            continue
        cells = [
            {
                "value": _value(m, found.means[m]),
                "ci": f"[{_value(m, found.cis[m][0])}, {_value(m, found.cis[m][1])}]",
            }
            for m in shown
        ]
        rows.append({"label": run.label, "baseline": run is sc.study.baseline, "cells": cells})
    where = f" at {judged.endpoint}" if judged.endpoint else ""
    note = (
        f"Judged by {judged.model}{where} (prompt {judged.prompt_hash[:12]}): the top "
        f"{judged.depth} chunks of every run per question, {judged.pairs:,} distinct "
        f"(question, chunk) pairs graded 0-3, relevant = grade >= {judged.relevant_from}. "
        f"Mean over questions at k = {k} (%; MRR as a fraction) with its 95% bootstrap interval; "
        f"judged.md has every k and the paired comparisons."
    )
    if unjudged:
        note += (
            f" Not judged: {', '.join(unjudged)} (run after `situate judge`: rerun it, with "
            "--all-runs for runs outside the latest sweep)."
        )
    agree = (
        agreement_line(judged.model, judged.endpoint, judged.relevant_from, judged.agreement)
        if judged.agreement
        else "The study has no gold: the judge's agreement with gold cannot be measured."
    )
    return {
        "header": [judged_label(m) for m in shown],
        "rows": rows,
        "note": note,
        "agreement": agree[0].upper() + agree[1:],
        **_judged_separation(sc, judged, [m for m in shown if m.startswith("judged_")]),
    }


def _judged_separation(sc: StudyComparison, judged: JudgedStudy, metrics: list[str]) -> dict:
    """How far the questions separate the configurations on the judged metrics (``metrics``),
    from each judged run's per-question scores in judged.json; a note where it holds none."""
    labels = {r.run_id: r.label for r in sc.study.runs}
    runs, baseline = [], None
    for j in judged.runs:
        if j.run_id not in labels or not all(m in j.scores for m in metrics):
            continue
        questions = [
            {"qid": q, **{m: j.scores[m][i] for m in metrics}} for i, q in enumerate(j.qids)
        ]
        run = RunData(j.run_id, j.label, "FINISHED", questions=questions, label=labels[j.run_id])
        runs.append(run)
        baseline = run if j.baseline else baseline
    if len(runs) < 2 and len([j for j in judged.runs if j.run_id in labels]) >= 2:
        note = (
            "judged.json holds no per-question judged scores (an older situate judge wrote it): "
            "rerun situate judge to see how far these questions separate the configurations on "
            "the judged metrics."
        )
        return {"separation": None, "separation_note": note}
    r = runs_informativeness(runs, baseline, metrics) if metrics else None
    return {"separation": _separation(r, _test_questions(sc)), "separation_note": ""}


def _sample_note(study) -> str:
    """', dataset.max_questions=100, dataset.sample=stratified, dataset.seed=0' when the runs
    kept a sample of the questions, '' when they kept every one (``max_questions`` unset: an
    empty param, or ``None`` as an older situate logged it)."""
    keys = ("dataset.max_questions", "dataset.sample", "dataset.seed")
    used = sorted(
        {
            ", ".join(f"{k}={r.params[k]}" for k in keys if k in r.params)
            for r in study.runs
            if r.params.get("dataset.max_questions", "") not in ("", "None")
        }
    )
    return f", {'; '.join(used)}" if used else ""


def _flip_dict(f) -> dict:
    return {
        "qid": f.qid,
        "question": f.question,
        "gold": " ".join(f.gold),
        "baseline_rank": f.baseline_rank or "none",
        "baseline_pass": f"{f.baseline_pass:.2f}",
        "passed": f"{f.passed:.2f}",
        "rank": f.rank or "none",
        "contexts": [
            {"span": c.span, "chunk_id": c.chunk_id, "context": c.context} for c in f.contexts
        ],
    }


def _usage_table(sc: StudyComparison) -> dict | None:
    runs = [s.run for s in sc.summaries]
    present = [m for m in TOKEN_METRICS + COST_METRICS if any(m in r.metrics for r in runs)]
    written = [r for r in runs if r.writing]
    if not present and not written:
        return None
    header = [USAGE_HEADERS[m] for m in present]
    if written:
        header.append(WRITTEN_HEADER)
    rows = []
    for r in runs:
        cells = []
        for m in present:
            v = r.metrics.get(m)
            if v is None:
                cells.append("-")
            elif m in TOKEN_METRICS:
                cells.append(f"{int(round(v)):,}")
            else:
                cells.append(usd(v))
        if written:
            cells.append(f"{usd(r.writing.usd)} (estimate)" if r.writing else "-")
        rows.append({"label": r.label, "cells": cells})
    total = [r.metrics.get(CONFIG_TOTAL_COST) for r in runs]
    zero = all((t or 0.0) == 0.0 for t in total) and not any(
        r.metrics.get(m) for r in runs for m in TOKEN_METRICS
    )
    note = (
        "Every configuration cost $0 and its contexts took no LLM tokens (recorded contexts, "
        "local embedders and rerankers)."
        if zero
        else "Tokens and context $ are what each configuration's contexts cost when written, "
        "whichever run paid for them; embedding and rerank $ are what the run was billed."
    )
    notes = [note, *_writing_notes(runs)]
    return {"header": header, "rows": rows, "note": " ".join(notes)}


def _writing_notes(runs: list[RunData]) -> list[str]:
    """How the cost of writing replayed contexts was estimated, once per distinct way."""
    ways = sorted({f"with {r.writing.model}, from {r.writing.how}" for r in runs if r.writing})
    notes = [
        f"{WRITTEN_HEADER}: replayed contexts cost nothing in their run; this estimates what "
        f"writing them cost {'; '.join(ways)}. From counted tokens it bills as prompt caching "
        "does: each document written to the cache once, by its first chunk's call, and read back "
        "by its other chunks' calls (documents under the model's minimum cacheable length paid "
        "as uncached input), chunk and instructions uncached."
    ] if ways else []  # fmt: skip
    notes += sorted({f"{r.label}: {r.writing_error}." for r in runs if r.writing_error})
    return notes


def _prompt_note(sc: StudyComparison) -> str:
    prompts = sorted({r.tags["prompt"] for r in sc.study.ok_runs if "prompt" in r.tags})
    if len(prompts) > 1:
        return ""
    if prompts:
        return f"This study has a single prompt ({prompts[0]}): no prompt variants to compare."
    return "This study has a single prompt: no run made LLM contexts (context=llm), so no prompt varies."
