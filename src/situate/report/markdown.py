"""``report.md``: the report's tables in Markdown, for pasting into a document."""

from __future__ import annotations

from situate.report.view import PASS_EQUALS_RECALL, SEPARATION, SEPARATION_NOTE, build_context
from situate.study.compare import StudyComparison


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
        *(
            [f"- **{inform['warning']}**"]
            if (inform := ctx["informativeness"]) and inform["warning"]
            else []
        ),
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
    if ctx["window_column"]:
        header = [*header, "cut by the window"]
    rows = []
    for r in ctx["rows"]:
        first = r["choices"] if ctx["varying"] else [r["label"]]
        if r["baseline"] and first[0] != "baseline":
            first = [f"{first[0]} (baseline)", *first[1:]]
        if r["failed"]:
            what = "skipped" if r["status"] == "SKIPPED" else "failed"  # skipped: needs ...
            rows.append(
                [*first, f"{what}: {r['error']}", *[""] * (len(ctx["metrics"]) - 1)]
                + ([r["window"] or "-"] if ctx["window_column"] else [])
            )
            continue
        cells = []
        for c in r["cells"]:
            v = f"**{c['value']}**" if c["best"] else c["value"]
            cells.append(f"{v} {c['ci']}")
        rows.append([*first, *cells, *([r["window"] or "-"] if ctx["window_column"] else [])])
    out += [_md_table(header, rows), ""]
    if ctx["window_note"]:
        out += [f"**Cut by the window:** {ctx['window_note']}", ""]
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
    if inform:
        out += [f"## {SEPARATION}", "", *_separation(inform)]
    if ctx["judged"]:
        jt = ctx["judged"]
        out += ["## Judged relevance beside gold", "", jt["note"], ""]
        judged_rows = [
            [f"{r['label']} (baseline)" if r["baseline"] else r["label"],
             *[f"{c['value']} {c['ci']}" for c in r["cells"]]]
            for r in jt["rows"]
        ]  # fmt: skip
        out += [_md_table(["configuration", *jt["header"]], judged_rows), "", jt["agreement"], ""]
        if jt["separation"]:
            out += [f"### {SEPARATION} on the judged metrics", "", *_separation(jt["separation"])]
        elif jt["separation_note"]:
            out += [jt["separation_note"], ""]
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


def _separation(inform: dict) -> list[str]:
    """The paragraph and tables of how far the questions separate the configurations."""
    return [
        inform["paragraph"],
        "",
        f"{SEPARATION_NOTE} ({inform['power']}).",
        "",
        _md_table(
            inform["header"],
            [[f"**{r['cells'][0]}**" if r["headline"] else r["cells"][0], *r["cells"][1:]]
             for r in inform["rows"]],
        ),
        "",
        f"Each configuration against the baseline at {inform['pair_metric']}, the recommended "
        "metric:",
        "",
        _md_table(inform["pair_header"], inform["pair_rows"]),
        "",
    ]  # fmt: skip


def _md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
