"""The report's charts: matplotlib figures as inline SVG (text as paths, ids unique to each chart,
no namespace URLs), and each as an SVG file of its own.

- :func:`failure_chart`: failure rate @k = 1 - recall@k per configuration, with its change
  against the baseline;
- :func:`cost_chart`: each configuration's cost (with the estimate of writing replayed contexts)
  against recall@k, the Pareto front drawn as a step line;
- :func:`prompt_chart`: pass@k per prompt variant, when the prompt varies.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import numpy as np

from situate.money.costs import CONFIG_TOTAL_COST
from situate.money.usd import usd
from situate.study.collect import RunData
from situate.study.compare import StudyComparison

FONT_PT = 11  # every chart's base font size (ticks and labels >= 10 pt)
ESTIMATE_LEGEND = "replayed contexts: + estimated cost of writing them"
BASELINE_COLOR = "#8c8c8c"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")  # fmt: skip


def _colors(sc: StudyComparison) -> dict[str, str]:
    out, i = {}, 0
    for r in sc.study.runs:
        if r is sc.study.baseline:
            out[r.run_id] = BASELINE_COLOR
        else:
            out[r.run_id] = PALETTE[i % len(PALETTE)]
            i += 1
    return out


def _name(s) -> str:
    """A configuration's label in charts, marked when it is the baseline."""
    return (
        s.run.label
        if not s.is_baseline or "baseline" in s.run.label
        else f"{s.run.label} (baseline)"
    )


def configuration_cost(run: RunData) -> tuple[float, bool]:
    """The configuration's cost plus, for replayed contexts, the estimate of writing them; estimated?"""
    spent = run.metrics.get(CONFIG_TOTAL_COST, 0.0)
    return (spent + run.writing.usd, True) if run.writing else (spent, False)


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


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


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


_CHART = 0


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


def standalone_svg(inline: str) -> str:
    """An inline chart as an SVG file of its own: the namespaces HTML does without, back."""
    return inline.replace(
        "<svg ",
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ',
        1,
    )
