"""The difficulty report: the quartiles of each measure and the top-1 shares of a question set
(:func:`describe`), several sets side by side (:func:`comparison_rows`), and the Markdown the
command writes beside ``questions.jsonl``, with the match's bins (:func:`markdown_report`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from situate.questions.difficulty.matching import Bin, bin_distance
from situate.questions.difficulty.measures import MEASURES, Difficulty, shifted_share

QUARTILES = (0.25, 0.5, 0.75)


def describe(values: Sequence[Difficulty]) -> dict[str, Any]:
    """Quartiles of each measure, and the share of questions whose gold is the lexical top 1."""
    out: dict[str, Any] = {"questions": len(values)}
    for m in MEASURES:
        xs = [v.value(m) for v in values]
        xs = [x for x in xs if not math.isnan(x)]
        out[m] = [float(np.quantile(xs, q)) for q in QUARTILES] if xs else None
    lexical = [v for v in values if not math.isnan(v.value("lexical_rank"))]
    out["lexical_top1"] = (
        sum(v.lexical_rank == 1 for v in lexical) / len(lexical) if lexical else None
    )
    dense = [v for v in values if v.dense_rank is not None]
    out["dense_top1"] = sum(v.dense_rank == 1 for v in dense) / len(dense) if dense else None
    out["form_shifted"] = shifted_share(values)
    return out


def comparison_rows(columns: Mapping[str, Sequence[Difficulty]]) -> list[list[str]]:
    """The difficulty table: a row per figure (medians with quartiles, top-1 shares), a column per
    question set (e.g. kept, human sample)."""
    described = {name: describe(values) for name, values in columns.items()}

    def quartiles(d: dict, m: str) -> str:
        q = d[m]
        if q is None:
            return "-"
        f = (lambda x: f"{x:g}") if m.endswith("rank") else (lambda x: f"{x:.2f}")
        return f"{f(q[1])} ({f(q[0])}-{f(q[2])})"

    def share(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    rows = [["questions", *(str(d["questions"]) for d in described.values())]]
    for m in MEASURES:
        if m == "title_gain" and all(d[m] is None for d in described.values()):
            continue  # measured only where match_on names it
        rows.append([f"{m}: median (q1-q3)", *(quartiles(d, m) for d in described.values())])
    rows.append(
        ["gold is the lexical top 1", *(share(d["lexical_top1"]) for d in described.values())]
    )
    rows.append(["gold is the dense top 1", *(share(d["dense_top1"]) for d in described.values())])
    rows.append(
        [
            "a word in another form than the passage's",
            *(share(d["form_shifted"]) for d in described.values()),
        ]
    )
    return rows


def markdown_report(
    columns: Mapping[str, Sequence[Difficulty]], bins: Sequence[Bin] = (), windows: str = ""
) -> str:
    """The difficulty table (and the match's cells) as Markdown: what the command writes beside
    ``questions.jsonl``; ``windows``: what the ranks were measured over
    (:attr:`DifficultyMeter.windows`)."""
    rows = comparison_rows(columns)
    lines = [
        "# Difficulty of the generated questions",
        "",
        "overlap: share of the question's content words in its gold passage (overlap_idf: IDF "
        "weighted); ranks: where the gold's first window comes under BM25 / the embedder "
        "(1 = top; beyond the depth is depth + 1)" + (f", over {windows}." if windows else "."),
        "",
        "| | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    if bins:
        lines += [
            "",
            "## Quantile bins of the human sample",
            "",
            "| bin | human questions | quota | kept |",
            "|---|---|---|---|",
            *(f"| {b.label} | {b.human} | {b.quota} | {b.kept} |" for b in bins),
        ]
        distance = bin_distance(bins)
        if distance is not None:
            lines += [
                "",
                f"The kept set's bins differ from the human sample's by {distance:.0%} of its "
                "questions (total variation distance).",
            ]
    return "\n".join(lines) + "\n"
