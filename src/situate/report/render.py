"""Write a study's report: ``index.html`` (one self-contained file) and ``report.md``.

The HTML carries its CSS inline and its charts as inline SVG drawn by matplotlib (text as paths:
no font, script, stylesheet or image is fetched from anywhere); collapsible sections are plain
``<details>``. ``report.md`` holds the same tables in Markdown, for pasting into a document.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from situate.judging.report import label
from situate.judging.summary import JudgedStudy, agreement_line
from situate.money.costs import CONFIG, CONFIG_CONTEXT_COST, CONFIG_TOTAL_COST, RUN, USAGE_FIELDS
from situate.money.usd import usd
from situate.report.collect import RunData, spec_text
from situate.report.compare import StudyComparison, hit_rule, significance
from situate.report.labels import format_p, metric_label
from situate.tracking.base import without_credentials

FONT_PT = 11  # every chart's base font size (ticks and labels >= 10 pt)
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
ESTIMATE_LEGEND = "replayed contexts: + estimated cost of writing them"
BASELINE_COLOR = "#8c8c8c"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")  # fmt: skip


def write_report(
    sc: StudyComparison, out_dir: str | Path, judged: JudgedStudy | None = None
) -> tuple[Path, Path]:
    """Render ``index.html`` and ``report.md`` into ``out_dir`` (with the judged metrics of
    ``judged``, what ``situate judge`` wrote for the study); return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = build_context(sc, judged)
    html = out / "index.html"
    html.write_text(render_html(ctx), encoding="utf-8")
    md = out / "report.md"
    md.write_text(render_markdown(sc, ctx), encoding="utf-8")
    for name, svg in ctx["charts"].items():  # each chart on its own, to paste into documents
        if svg:
            (out / f"{name}_chart.svg").write_text(standalone_svg(svg), encoding="utf-8")
    return html, md


# ----------------------------------------------------------------------------- shared content


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _value(metric: str, x: float) -> str:
    return f"{x:.3f}" if metric == "mrr" else _pct(x)


def _diff(metric: str, x: float) -> str:
    return f"{x:+.3f}" if metric == "mrr" else f"{100 * x:+.1f}"


def _colors(sc: StudyComparison) -> dict[str, str]:
    out, i = {}, 0
    for r in sc.study.runs:
        if r is sc.study.baseline:
            out[r.run_id] = BASELINE_COLOR
        else:
            out[r.run_id] = PALETTE[i % len(PALETTE)]
            i += 1
    return out


def _fmt_date(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


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
    }


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
        "header": [label(m) for m in shown],
        "rows": rows,
        "note": note,
        "agreement": agree[0].upper() + agree[1:],
    }


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


def configuration_cost(run: RunData) -> tuple[float, bool]:
    """The configuration's cost plus, for replayed contexts, the estimate of writing them; estimated?"""
    spent = run.metrics.get(CONFIG_TOTAL_COST, 0.0)
    return (spent + run.writing.usd, True) if run.writing else (spent, False)


def _prompt_note(sc: StudyComparison) -> str:
    prompts = sorted({r.tags["prompt"] for r in sc.study.ok_runs if "prompt" in r.tags})
    if len(prompts) > 1:
        return ""
    if prompts:
        return f"This study has a single prompt ({prompts[0]}): no prompt variants to compare."
    return "This study has a single prompt: no run made LLM contexts (context=llm), so no prompt varies."


# ----------------------------------------------------------------------------- charts


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


_CHART = 0


def standalone_svg(inline: str) -> str:
    """An inline chart as an SVG file of its own: the namespaces HTML does without, back."""
    return inline.replace(
        "<svg ",
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ',
        1,
    )


def _svg(fig) -> str:
    """The figure as inline SVG: no XML prolog, no namespace URLs, ids unique to this chart."""
    global _CHART
    _CHART += 1
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(
        buf,
        format="svg",
        bbox_inches="tight",
        pad_inches=0.15,
        metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
    )
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    prefix = f"c{_CHART}-"
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}\1"', svg)
    return svg.replace("<svg ", '<svg role="img" class="chart" ', 1)


def _rc():
    plt = _plt()
    return plt.rc_context(
        {
            "font.size": FONT_PT,
            "axes.titlesize": FONT_PT + 1,
            "axes.labelsize": FONT_PT,
            "xtick.labelsize": FONT_PT - 1,
            "ytick.labelsize": FONT_PT,
            "legend.fontsize": FONT_PT - 1,
            "svg.fonttype": "path",
            "svg.hashsalt": "situate-report",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def _name(s) -> str:
    """A configuration's label in charts, marked when it is the baseline."""
    return (
        s.run.label
        if not s.is_baseline or "baseline" in s.run.label
        else f"{s.run.label} (baseline)"
    )


def failure_chart(sc: StudyComparison) -> str | None:
    """Failure rate @k = 1 - recall@k per configuration, with its change against the baseline."""
    summaries = sc.summaries
    if not summaries:
        return None
    plt = _plt()
    colors = _colors(sc)
    ks = sc.study.ks
    base = next(s for s in summaries if s.is_baseline)
    n = len(summaries)
    names = [_name(s) for s in summaries]
    label_in = 0.085 * max(len(t) for t in names)  # room for the configuration names
    with _rc():
        fig, axes = plt.subplots(
            1,
            len(ks),
            figsize=(label_in + 3.9 * len(ks), 0.55 * n + 1.4),
            sharey=True,
            squeeze=False,
        )
        y = np.arange(n)[::-1]
        for ax, k in zip(axes[0], ks, strict=True):
            m = f"recall_at_{k}"
            fail = np.array([1 - s.means[m] for s in summaries])
            lo = np.array([1 - s.cis[m][1] for s in summaries])
            hi = np.array([1 - s.cis[m][0] for s in summaries])
            fb = 1 - base.means[m]
            ax.barh(
                y, 100 * fail, color=[colors[s.run.run_id] for s in summaries], height=0.7,
                xerr=[100 * (fail - lo), 100 * (hi - fail)], error_kw={"ecolor": "#444", "lw": 1, "capsize": 2},
            )  # fmt: skip
            top = 100 * max(hi.max(), 1e-6) / 0.58  # bars and intervals in 58% of the width
            for yi, s, f, h in zip(y, summaries, fail, hi, strict=True):
                text = f"{100 * f:.1f}%"
                if not s.is_baseline and fb > 0:
                    change = (f - fb) / fb
                    text += f"  {'−' if change < 0 else '+'}{abs(change):.0%}"
                ax.text(100 * h + top * 0.025, yi, text, va="center", fontsize=FONT_PT - 1)
            ax.set_xlim(0, top)
            ax.set_title(f"failure rate @{k}")
            ax.set_xlabel("% of gold spans missed")
            ax.grid(axis="x", color="#ddd", lw=0.6)
            ax.set_axisbelow(True)
        axes[0][0].set_yticks(y, names)
        fig.tight_layout()
        return _svg(fig)


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both cost (lower) and quality (higher),
    sorted by cost."""
    idx = []
    for i, (c, q) in enumerate(points):
        dominated = any(
            (c2 <= c and q2 >= q) and (c2 < c or q2 > q)
            for j, (c2, q2) in enumerate(points)
            if j != i
        )
        if not dominated:
            idx.append(i)
    return sorted(idx, key=lambda i: (points[i][0], -points[i][1]))


def cost_chart(sc: StudyComparison) -> str | None:
    """Cost of each run against recall@K (largest k), the Pareto front drawn as a step line."""
    runs = [s for s in sc.summaries if CONFIG_TOTAL_COST in s.run.metrics or s.run.writing]
    if not runs:
        return None
    plt = _plt()
    colors = _colors(sc)
    m = f"recall_at_{sc.k_flip}"
    cost = np.array([configuration_cost(s.run)[0] for s in runs])
    estimated = np.array([configuration_cost(s.run)[1] for s in runs], dtype=bool)
    qual = np.array([100 * s.means[m] for s in runs])
    lo = np.array([100 * s.cis[m][0] for s in runs])
    hi = np.array([100 * s.cis[m][1] for s in runs])
    front = np.array(pareto_front(list(zip(cost, qual, strict=True))), dtype=int)
    with _rc():
        fig, ax = plt.subplots(figsize=(9.5, 4.8))
        all_free = cost.max() == 0
        right = 1.0 if all_free else cost.max() * 1.3
        ax.errorbar(
            cost,
            qual,
            yerr=[qual - lo, hi - qual],
            fmt="none",
            ecolor="#aaa",
            lw=1,
            capsize=3,
            zorder=1,
        )
        for marks, marker in ((~estimated, "o"), (estimated, "D")):
            if marks.any():
                ax.scatter(
                    cost[marks], qual[marks], s=70, marker=marker, zorder=4, edgecolors="white",
                    c=[colors[s.run.run_id] for s, x in zip(runs, marks, strict=True) if x],
                )  # fmt: skip
        if estimated.any():  # the legend's diamond in grey: the colours are the configurations'
            ax.scatter([], [], s=70, marker="D", c="#777", label=ESTIMATE_LEGEND)
        ax.scatter(
            cost[front], qual[front], s=190, facecolors="none", edgecolors="#2ca02c", lw=1.8, zorder=3,
            label="on the Pareto front (no run is both cheaper and better)",
        )  # fmt: skip
        if len(front) > 1:
            ax.step(
                cost[front], qual[front], where="post", color="#2ca02c", lw=1.4, ls="--", zorder=2
            )
        # labels to the right of their points, pushed apart vertically so none overlaps
        ymin, ymax = min(lo.min(), qual.min()), max(hi.max(), qual.max())
        gap = max((ymax - ymin) * 0.09, 0.6)
        placed: list[float] = []
        label_y = np.empty(len(runs))
        for i in np.argsort(qual):
            yl = qual[i] + 0.4 * gap  # above the step line leaving the point
            yl = yl if not placed else max(yl, placed[-1] + gap)
            placed.append(yl)
            label_y[i] = yl
        for i, s in enumerate(runs):
            text = f"{_name(s)}  {qual[i]:.1f}%, {usd(cost[i])}{' (est.)' if estimated[i] else ''}"
            ax.annotate(
                text, (cost[i], qual[i]), xytext=(cost[i] + right * 0.05, label_y[i]), va="center",
                fontsize=FONT_PT - 1, zorder=5, bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                arrowprops={"arrowstyle": "-", "color": "#bbb", "lw": 0.8},
            )  # fmt: skip
        ax.set_ylim(ymin - gap, max(label_y.max(), ymax) + 2 * gap)
        ax.set_xlim(-0.05 * right, right)
        if all_free:
            ax.set_xticks([0], ["$0"])
            ax.text(
                0.98, 0.04, "every run cost $0 (recorded contexts, local models)",
                transform=ax.transAxes, ha="right", fontsize=FONT_PT - 1, color="#555",
            )  # fmt: skip
        else:
            ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: usd(v)))
        ax.set_xlabel(
            f"cost of the configuration ({CONFIG_TOTAL_COST}, USD)"
            + (" + writing its replayed contexts (estimate)" if estimated.any() else "")
        )
        ax.set_ylabel(f"recall@{sc.k_flip} (%)")
        ax.grid(color="#eee", lw=0.6)
        ax.legend(loc="upper right", frameon=False)
        fig.tight_layout()
        return _svg(fig)


def prompt_chart(sc: StudyComparison) -> str | None:
    """pass@k per run that made LLM contexts, labelled by prompt, when the prompt varies."""
    runs = [s for s in sc.summaries if "prompt" in s.run.tags]
    if len({s.run.tags["prompt"] for s in runs}) < 2:
        return None
    plt = _plt()
    ks = sc.study.ks
    others = [
        g for g in sc.study.varying
        if g != "prompt" and len({s.run.tags.get(g) for s in runs}) > 1
    ]  # fmt: skip
    labels = []
    for s in runs:
        extra = ", ".join(f"{g}={s.run.tags[g]}" for g in others if g in s.run.tags)
        labels.append(s.run.tags["prompt"] + (f"\n{extra}" if extra else ""))
    base = next(s for s in sc.summaries if s.is_baseline)
    with _rc():
        fig, ax = plt.subplots(figsize=(max(7.0, 0.9 * len(runs) * len(ks) + 2), 4.4))
        width = 0.8 / len(ks)
        x = np.arange(len(runs))
        shades = ("#9ecae1", "#4292c6", "#08519c", "#08306b")
        for j, k in enumerate(ks):
            m = f"pass_at_{k}"
            v = np.array([100 * s.means[m] for s in runs])
            lo = np.array([100 * s.cis[m][0] for s in runs])
            hi = np.array([100 * s.cis[m][1] for s in runs])
            ax.bar(
                x + (j - (len(ks) - 1) / 2) * width, v, width * 0.95, label=f"pass@{k}",
                color=shades[j % len(shades)], yerr=[v - lo, hi - v], capsize=2, ecolor="#444",
            )  # fmt: skip
        ax.axhline(100 * base.means[f"pass_at_{ks[-1]}"], color=BASELINE_COLOR, ls="--", lw=1.2,
                   label=f"baseline pass@{ks[-1]}")  # fmt: skip
        ax.set_xticks(x, labels)
        ax.set_ylabel("pass@k (%)")
        ax.set_ylim(0, 105)
        ax.set_title("prompt variants (95% bootstrap CI)")
        ax.grid(axis="y", color="#eee", lw=0.6)
        ax.set_axisbelow(True)
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        return _svg(fig)


# ----------------------------------------------------------------------------- HTML and Markdown


def render_html(ctx: dict) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("situate.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from markupsafe import Markup

    charts = {k: Markup(v) if v else None for k, v in ctx["charts"].items()}
    return env.get_template("report.html.j2").render(**{**ctx, "charts": charts})


def _md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(sc: StudyComparison, ctx: dict | None = None) -> str:
    ctx = ctx or build_context(sc)
    out = [
        f"# {ctx['title']}",
        "",
        f"- Study: `{ctx['study']}` ({ctx['dataset']}, {ctx['n_questions']} questions)",
        f"- Generated: {ctx['generated']}; runs started {ctx['started']}",
        f"- Git commit: {', '.join(ctx['git_commits'])}",
        f"- Runs: {ctx['source']}; {ctx['jobs']} job(s), {ctx['jobs_failed']} failed",
        f"- Baseline: `{ctx['baseline_spec']}` ({ctx['baseline_label']})",
        "",
        "## Findings",
        "",
        *[f"- **{s}**" for s in ctx["selection"]],
        *[f"- {f}" for f in ctx["findings"]],
        "",
        ctx["scope"],
        "",
        "## Configurations",
        "",
        "Mean over questions (%; MRR as a fraction) with its 95% bootstrap interval; "
        "**bold** is the best of each column.",
        "",
    ]
    header = (
        [*ctx["varying"], *ctx["metric_labels"]]
        if ctx["varying"]
        else ["run", *ctx["metric_labels"]]
    )
    rows = []
    for r in ctx["rows"]:
        first = r["choices"] if ctx["varying"] else [r["label"]]
        if r["baseline"] and first[0] != "baseline":
            first = [f"{first[0]} (baseline)", *first[1:]]
        if r["failed"]:
            what = "skipped" if r["status"] == "SKIPPED" else "failed"  # skipped: needs ...
            rows.append([*first, f"{what}: {r['error']}", *[""] * (len(ctx["metrics"]) - 1)])
            continue
        cells = []
        for c in r["cells"]:
            v = f"**{c['value']}**" if c["best"] else c["value"]
            cells.append(f"{v} {c['ci']}")
        rows.append([*first, *cells])
    out += [_md_table(header, rows), ""]
    out += [
        "## Comparisons with the baseline",
        "",
        f"Paired over questions: difference (points; MRR as a fraction), 95% bootstrap CI of the "
        f"difference, randomization-test p ({ctx['permutations']} permutations), Holm-adjusted "
        f"across all {ctx['n_comparisons']} comparisons, wins/ties/losses per question.",
        "",
    ]
    if ctx["pass_equals_recall"]:
        out += [PASS_EQUALS_RECALL, ""]
    crow = []
    for c in ctx["comparisons"]:
        if c["note"]:
            crow.append([c["label"], "-", "-", "-", "-", "-", "-", "-", c["note"], "-"])
        for r in c["rows"]:
            crow.append(
                [c["label"], r["metric"], r["baseline"], r["value"], r["difference"], r["ci"],
                 r["p"], r["p_holm"], r["significance"], r["wtl"]]
            )  # fmt: skip
    out += [
        _md_table(
            ["configuration", "metric", "baseline", "value", "difference", "95% CI", "p", "p_holm",
             "significance", "W/T/L"],
            crow,
        ),
        "",
    ]  # fmt: skip
    if ctx["judged"]:
        jt = ctx["judged"]
        out += ["## Judged relevance beside gold", "", jt["note"], ""]
        judged_rows = [
            [f"{r['label']} (baseline)" if r["baseline"] else r["label"],
             *[f"{c['value']} {c['ci']}" for c in r["cells"]]]
            for r in jt["rows"]
        ]  # fmt: skip
        out += [_md_table(["configuration", *jt["header"]], judged_rows), "", jt["agreement"], ""]
    if ctx["usage"]:
        u = ctx["usage"]
        out += ["## Tokens and cost", "", u["note"], ""]
        out += [
            _md_table(
                ["configuration", *u["header"]], [[r["label"], *r["cells"]] for r in u["rows"]]
            ),
            "",
        ]
    out += ["## Flipped questions", "", f"At k = {ctx['k']}: {ctx['hit_rule']}.", ""]
    for f in ctx["flips"]:
        out.append(f"### {f['label']}: {len(f['gained'])} miss→hit, {len(f['lost'])} hit→miss")
        out.append("")
        for name, items in (("miss→hit", f["gained"]), ("hit→miss", f["lost"])):
            for q in items:
                out.append(
                    f"- {name} `{q['qid']}` {q['question']} (gold {q['gold']}; pass@{ctx['k']} "
                    f"{q['baseline_pass']} → {q['passed']}; first relevant rank {q['baseline_rank']} → {q['rank']})"
                )
                if name == "miss→hit":
                    for c in q["contexts"]:
                        out.append(f"  - context of `{c['chunk_id']}`: {c['context'] or '(empty)'}")
        out.append("")
    if ctx["failed"]:
        out += ["## Failed or unavailable runs", ""]
        out += [
            f"- {r['label']} ({r['status']}, run {r['run_id'] or '-'}): {r['error']}"
            for r in ctx["failed"]
        ]
        out.append("")
    return "\n".join(out)
