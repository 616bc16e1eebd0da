"""Can synthetic questions be trusted? Do they rank configurations the way human questions do?

    .venv/bin/python benchmarks/synthetic_vs_human.py [--papers 15] [--target 120]
        [--arms "chunker.size=150,300 context=none,heading_path fusion=sparse_only,rrf"]
        [--common "embedder=minilm_onnx"] [--human-sample 40]
        [--generator NAME="OVERRIDES"] ... [--name synthetic_vs_human] [--work DIR]
        [--sample-seed 0] [--skip-papers 0]

On a slice of COVID-QA (the first ``--papers`` papers of /work/shared/data/covid-qa, after the
first ``--skip-papers``, which a held-out check sets to the papers a setting was tuned on; human
questions with span gold), each generator writes a synthetic set over the same papers with
``situate questions generate`` (its filters included), and the same arms run on the human
questions and on each synthetic set (``situate.api.run``, tracking=none): the product of the
``--arms`` grid (``run -m`` syntax: ``key=a,b`` per option; default context none / heading_path x
fusion dense_only / sparse_only / rrf), each with the ``--common`` overrides (also given to the
generator: its embedder is the near-duplicate filter's). The synthetic set is read as a
SQuAD file over the same papers (its gold: each kept question's quote span), so both sets share
every chunk, context and index. The default generators are the extractive baseline with the
default filters and with ``trivially_lexical`` off (the rule copies its sentence, which that
filter removes); a generator's overrides may set its own ``questions.target`` and mix.

``--human-sample N`` writes a seeded sample of N human questions (their span gold) as a
``qa.json``; a generator's overrides name it as ``{human_sample}``, e.g.
``questions.difficulty.match={human_sample}`` (difficulty matched to the sample).

Reported per generator and metric (Pass@5, Pass@20, MRR, Recall@10): Kendall's tau-b between
the two arm orderings (with its bootstrap interval), each arm's synthetic - human difference with
a bootstrap CI (unpaired: other questions), each set's range of arm means, what
``evaluation/informativeness.py`` says of each set (saturated, floored, underpowered; its
recommended metric), the same tau and differences for the seeded human sample itself against
all the human questions (the yardstick: what sampling alone does to a set of that size), the
same tau for ``--target`` random human questions against all the others (``human_part``: how far
as many more of people's own questions would agree, 500 draws), and per strategy the questions
kept, the rejection reasons, and how much each contextual arm gains over the same arm without
context on ``context_dependent`` vs ``factual`` questions (paired by question; on the human
questions, over all of them). Prints a table, writes outputs/bench/NAME.json (and .md) and adds to
outputs/bench/summary.json, per generator, ``synthetic_tau_<generator>`` (tau at the generated
set's recommended metric), ``synthetic_tau_<generator>_<metric>`` and
``synthetic_pass5_bias_<generator>`` (the largest |synthetic - human| Pass@5 over the arms).

With an API key (``ANTHROPIC_API_KEY``), a model generator is one more ``--generator``:
``--generator haiku="question_generator=llm llm=claude_haiku_4_5"``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shlex
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import OUT, PY, REPO, merge_summary, split_tau, write_json

COVID = REPO.parent / "shared" / "data" / "covid-qa" / "200423_covidQA.json"
METRICS = ("pass_at_5", "pass_at_20", "mrr", "recall_at_10")
DEFAULT_ARMS = "context=none,heading_path fusion=dense_only,sparse_only,rrf"
# the extractive rule writes factual and context_dependent questions (no paraphrase)
EXTRACTIVE_MIX = (
    "questions.mix.factual=0.5 questions.mix.context_dependent=0.5 questions.mix.paraphrase=0"
)
DEFAULT_GENERATORS = [
    f"extractive=question_generator=extractive {EXTRACTIVE_MIX}",
    # the questions the default filters keep are too few (the rule copies its sentence, which
    # trivially_lexical is there to remove): the same set with that one filter off
    f"extractive_lexical_kept=question_generator=extractive {EXTRACTIVE_MIX} "
    "questions.filters.trivially_lexical.enabled=false",
]


def papers_after(skip: int, folder: Path) -> Path:
    """COVID-QA without its first ``skip`` papers, as a SQuAD file in ``folder`` (the file
    itself when ``skip`` is 0)."""
    if skip == 0:
        return COVID
    data = json.loads(COVID.read_text())
    kept = [
        {**article, "paragraphs": [paragraph]}
        for article in data["data"]
        for paragraph in article["paragraphs"]
    ][skip:]
    path = folder / f"covid_qa_after_{skip}.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**data, "data": kept}, ensure_ascii=False))
    return path


def arms(grid: str = DEFAULT_ARMS) -> dict[str, list[str]]:
    """The arms of a ``run -m``-style grid (``key=a,b key2=c``): name ("a+c") -> overrides."""
    axes = []
    for option in shlex.split(grid):
        key, sep, values = option.partition("=")
        if not sep or not values:
            raise SystemExit(f"--arms: {option!r} is not key=value[,value...]")
        axes.append([f"{key}={v}" for v in values.split(",")])
    return {
        "+".join(o.partition("=")[2] for o in combo): list(combo)
        for combo in itertools.product(*axes)
    }


def without_context(overrides: list[str]) -> list[str]:
    return [("context=none" if o.startswith("context=") else o) for o in overrides]


def human_sample(source: Path, papers: int, n: int, path: Path, seed: int = 0) -> list[str]:
    """``n`` human questions of the slice (seeded), their span gold as a ``qa.json`` of
    ``dataset=folder`` (``{"path": doc_id, "start", "end"}``); the ids of those written."""
    import numpy as np

    from situate.datasets.squad import SquadLoader

    questions = [
        q for q in SquadLoader(str(source), max_documents=papers).load().questions if q.gold
    ]
    picked = sorted(
        np.random.default_rng(seed).choice(len(questions), min(n, len(questions)), replace=False)
    )
    records = [
        {"q": questions[i].text,
         "gold": [{"path": g.doc_id, "start": g.start, "end": g.end} for g in questions[i].gold]}
        for i in picked
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1))
    return [questions[i].qid for i in picked]


def generate(
    source: Path, name: str, overrides: str, work: Path, papers: int, target: int,
    common: list[str],
) -> Path:  # fmt: skip
    """``situate questions generate`` over the slice; the questions.jsonl it wrote. The
    generator's ``overrides`` may set its own ``questions.target`` (a slow local model)."""
    out = work / name / "questions.jsonl"
    own = shlex.split(overrides)
    targets = (
        []
        if any(o.startswith("questions.target=") for o in own)
        else [f"questions.target={target}"]
    )
    command = [
        PY, "-m", "situate.cli", "questions", "generate", "dataset=covid_qa",
        f"dataset.path={source}", f"dataset.max_documents={papers}", *targets,
        f"output_dir={work}", *common, *own, "--out", str(out),
    ]  # fmt: skip
    print("$", " ".join(command[2:]), flush=True)
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    print(proc.stdout[-3000:], flush=True)
    if proc.returncode != 0:
        raise SystemExit(f"generation {name} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return out


def gold_text(question, context: str, gold: str = "answer") -> tuple[str, int]:
    """The SQuAD answer (text, start) of a kept question: its quote (``gold="quote"``), or its
    answer phrase where the quote holds it (``"answer"``: the first occurrence, case aside),
    else the quote."""
    span = question.gold[0]
    quote = context[span.start : span.end]
    answer = question.answer.strip()
    found = re.search(re.escape(answer), quote, re.IGNORECASE) if gold == "answer" else None
    if not answer or found is None:
        return quote, span.start
    return found.group(), span.start + found.start()


def as_squad(
    source: Path, questions, papers: int, path: Path, gold: str = "quote"
) -> dict[str, str]:
    """The kept questions as a SQuAD file over the first ``papers`` papers; returns question id
    -> strategy. The gold, scored as SQuAD answers are (a chunk holding its text passes), is
    the quote (``gold="quote"``) or, as the human questions' gold is, the answer phrase inside
    it (``"answer"``: :func:`gold_text`)."""
    data = json.loads(source.read_text())
    paragraphs = [p for article in data["data"] for p in article["paragraphs"]][:papers]
    by_doc: dict[str, list] = {str(p["document_id"]): [] for p in paragraphs}
    strategy = {}
    for q in questions:
        if not q.usable or not q.gold:
            continue
        span = q.gold[0]
        context = next(p["context"] for p in paragraphs if str(p["document_id"]) == span.doc_id)
        text, start = gold_text(q, context, gold)
        answer = {"text": text, "answer_start": start}
        by_doc[span.doc_id].append({"id": q.id, "question": q.q, "answers": [answer]})
        strategy[q.id] = q.strategy
    squad = {
        "version": "synthetic",
        "data": [
            {"title": "", "paragraphs": [{**p, "qas": by_doc[str(p["document_id"])]}]}
            for p in paragraphs
        ],
    }
    path.write_text(json.dumps(squad, ensure_ascii=False))
    return strategy


def run_arms(
    dataset: list[str], work: Path, grid: dict[str, list[str]], common: list[str]
) -> dict[str, object]:
    from situate.api import run

    results = {}
    for name, overrides in grid.items():
        started = time.perf_counter()
        results[name] = run(
            ["dataset=covid_qa", *dataset, "chunker=fixed", "tracking=none", f"output_dir={work}",
             "eval.latency_sample=1", *common, *overrides]
        )  # fmt: skip
        print(f"  {name}: {time.perf_counter() - started:.0f} s", flush=True)
    return results


def strategy_gains(
    results, strategy: dict[str, str], metric: str, grid: dict[str, list[str]]
) -> dict[str, dict]:
    """Per contextual arm and strategy: mean paired gain over the same arm without context."""
    by_overrides = {tuple(o): name for name, o in grid.items()}
    gains: dict[str, dict] = {}
    for name, result in results.items():
        base = by_overrides.get(tuple(without_context(grid[name])))
        if base is None or base == name:
            continue
        a, b = results[base].scores(metric), result.scores(metric)
        row = {}
        for s in sorted(set(strategy.values())):
            ids = [q for q in a.index if strategy.get(q) == s]
            row[s] = {
                "n": len(ids),
                "gain": round(float((b.loc[ids] - a.loc[ids]).mean()), 4) if ids else None,
            }
        gains[name] = row
    return gains


def set_informativeness(results, grid: dict[str, list[str]]) -> dict:
    """What ``evaluation/informativeness.py`` says of one set over the arms (every pair)."""
    from situate.evaluation.informativeness import informativeness

    scores = {m: {a: results[a].scores(m).to_numpy() for a in grid} for m in METRICS}
    info = informativeness(scores)
    return {
        "headline": info.headline,
        "verdict": info.verdict,
        "per_metric": {
            m: {"problem": mi.problem, "separated_pairs": mi.separated, "pairs": len(mi.pairs),
                "median_mde": round(mi.median_mde, 4),
                "all_solved": round(mi.saturation.all_solved, 3),
                "none_solved": round(mi.saturation.none_solved, 3),
                "stability": round(mi.stability, 3)}
            for m, mi in info.metrics.items()
        },
    }  # fmt: skip


def reference(results, grid, metric: str, ids: list[str], resamples: int) -> dict:
    """How the ``ids`` of the human questions (the seeded sample) agree with all of them: what
    sampling alone does to a set of that size (tau, and each arm's sample - all difference),
    and the sample's halves against each other (what ``situate questions validate`` can see of
    it without the other human questions)."""
    from situate.evaluation.agreement import set_agreement, split_half

    sampled = {a: results[a].scores(metric).loc[ids].to_numpy() for a in grid}
    agreement = set_agreement(
        {a: results[a].scores(metric).to_numpy() for a in grid}, sampled, resamples=resamples
    )
    differences = [a.difference for a in agreement.arms]
    halves = split_half(sampled)
    return {
        "tau": round(agreement.tau, 3),
        "tau_ci": [round(agreement.tau_low, 3), round(agreement.tau_high, 3)],
        "bias_range": [round(min(differences), 4), round(max(differences), 4)],
        "split_half_tau": round(halves.tau, 3),
        "split_half_range": [round(halves.low, 3), round(halves.high, 3)],
    }


def arm_range(results, grid, metric: str) -> list[float]:
    means = [float(results[a].scores(metric).mean()) for a in grid]
    return [round(min(means), 4), round(max(means), 4)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=15, help="first N COVID-QA papers")
    parser.add_argument("--target", type=int, default=120, help="synthetic questions asked for")
    parser.add_argument(
        "--arms", default=DEFAULT_ARMS, help=f"the grid of arms, run -m style (default {DEFAULT_ARMS!r})"
    )  # fmt: skip
    parser.add_argument(
        "--common", default="", help="overrides of every arm and generation, e.g. embedder=minilm_onnx"
    )  # fmt: skip
    parser.add_argument(
        "--human-sample", type=int, default=40,
        help="human questions written to a qa.json that a generator names as {human_sample}",
    )  # fmt: skip
    parser.add_argument(
        "--generator", action="append", help="NAME=OVERRIDES of `situate questions generate` "
        "(repeatable; default: the extractive baseline, with and without trivially_lexical)",
    )  # fmt: skip
    parser.add_argument(
        "--sample-seed", type=int, default=0, help="the seed of the --human-sample draw"
    )
    parser.add_argument(
        "--gold",
        choices=("quote", "answer"),
        default="quote",
        help="a generated question's gold: its quote, or its answer phrase in the quote (as the "
        "human questions' gold is their answer)",
    )
    parser.add_argument(
        "--skip-papers", type=int, default=0,
        help="leave out the first N papers (a held-out slice: --skip-papers 30 --papers 30)",
    )  # fmt: skip
    parser.add_argument("--work", default=None, help="caches and runs (default: a temp folder)")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--name", default="synthetic_vs_human", help="outputs/bench/NAME.json")
    ns = parser.parse_args()
    from situate.datasets.generated import read_questions
    from situate.evaluation.agreement import set_agreement

    grid = arms(ns.arms)
    common = shlex.split(ns.common)
    work = Path(ns.work or tempfile.mkdtemp(prefix="situate-synthetic-"))
    source = papers_after(ns.skip_papers, work)
    started = time.perf_counter()
    sample = work / "human_sample" / "qa.json"
    sampled_ids = human_sample(source, ns.papers, ns.human_sample, sample, ns.sample_seed)
    sampled = len(sampled_ids)
    print(f"human questions on {ns.papers} papers ({len(grid)} arms)", flush=True)
    human = run_arms(
        [f"dataset.path={source}", f"dataset.max_documents={ns.papers}"], work, grid, common
    )
    first = next(iter(grid))
    report = {
        "papers": ns.papers, "target": ns.target, "arms": list(grid), "arms_grid": ns.arms,
        "common": ns.common, "human_sample": sampled, "sample_seed": ns.sample_seed,
        "skip_papers": ns.skip_papers,
        "gold": ns.gold,
        "human_questions": len(human[first].scores(METRICS[0])),
        "human_seconds": round(time.perf_counter() - started, 1),
        "human_informativeness": set_informativeness(human, grid),
        "human_range": {m: arm_range(human, grid, m) for m in METRICS},
        "human_gain": {
            m: strategy_gains(human, dict.fromkeys(human[first].scores(m).index, "all"), m, grid)
            for m in METRICS
        },
        "generators": {},
    }  # fmt: skip
    # the yardstick: the sampled human questions themselves, as a set of their size ranks
    report["human_sample_reference"] = {
        metric: reference(human, grid, metric, sampled_ids, ns.resamples) for metric in METRICS
    }
    # and as many of people's own questions as a generated set asks, against all the others
    report["human_part"] = {
        metric: split_tau(human, grid, metric, part=ns.target) for metric in METRICS
    }
    summary: dict[str, object] = {}
    for spec in ns.generator or DEFAULT_GENERATORS:
        name, _, overrides = spec.partition("=")
        overrides = overrides.replace("{human_sample}", str(sample))
        t0 = time.perf_counter()
        questions = read_questions(
            generate(source, name, overrides, work, ns.papers, ns.target, common)
        )
        generation_s = time.perf_counter() - t0
        squad = work / name / "synthetic_squad.json"
        strategy = as_squad(source, questions, ns.papers, squad, ns.gold)
        per_strategy: dict[str, dict] = {}
        for q in questions:
            row = per_strategy.setdefault(
                q.strategy, {"candidates": 0, "kept": 0, "rejected": Counter()}
            )
            row["candidates"] += 1
            row["kept"] += q.usable and bool(q.gold)
            if q.status == "rejected":
                row["rejected"][q.rejected_by] += 1
        entry = {
            "overrides": overrides, "generation_seconds": round(generation_s, 1),
            "kept": len(strategy), "per_strategy": per_strategy,
            "examples": [
                {"q": q.q, "answer": q.answer, "strategy": q.strategy}
                for q in questions if q.usable and q.gold
            ][:5],
        }  # fmt: skip
        difficulty = squad.parent / "questions.difficulty.md"
        if difficulty.exists():
            entry["difficulty_table"] = difficulty.read_text()
        report["generators"][name] = entry
        if len(strategy) < 10:
            entry["skipped"] = f"only {len(strategy)} questions kept: too few to rank arms"
            print(f"{name}: {entry['skipped']}", flush=True)
            continue
        print(f"{name}: {len(strategy)} kept questions", flush=True)
        synthetic = run_arms(
            [f"dataset.path={squad}", f"dataset.max_documents={ns.papers}"], work, grid, common
        )
        entry["informativeness"] = set_informativeness(synthetic, grid)
        for metric in METRICS:
            agreement = set_agreement(
                {a: human[a].scores(metric).to_numpy() for a in grid},
                {a: synthetic[a].scores(metric).to_numpy() for a in grid},
                resamples=ns.resamples,
            )
            differences = [a.difference for a in agreement.arms]
            entry[metric] = {
                "tau": round(agreement.tau, 3), "p_value": round(agreement.p_value, 4),
                "tau_ci": [round(agreement.tau_low, 3), round(agreement.tau_high, 3)],
                "range": arm_range(synthetic, grid, metric),
                "bias_range": [round(min(differences), 4), round(max(differences), 4)],
                "arms": [
                    {"arm": a.arm, "human": round(a.human, 4), "synthetic": round(a.synthetic, 4),
                     "difference": round(a.difference, 4), "ci": [round(a.ci_low, 4), round(a.ci_high, 4)]}
                    for a in agreement.arms
                ],
                "gain_by_strategy": strategy_gains(synthetic, strategy, metric, grid),
            }  # fmt: skip
            summary[f"synthetic_tau_{name}_{metric}"] = entry[metric]["tau"]
        headline = entry["informativeness"]["headline"]
        summary[f"synthetic_tau_{name}"] = entry[headline]["tau"]
        summary[f"synthetic_tau_ci_{name}"] = entry[headline]["tau_ci"]
        summary[f"synthetic_pass5_bias_{name}"] = max(
            abs(b) for b in entry["pass_at_5"]["bias_range"]
        )
        entry["seconds"] = round(time.perf_counter() - t0, 1)
    report["seconds"] = round(time.perf_counter() - started, 1)
    write_json(ns.name, report, OUT)
    merge_summary(summary, OUT)
    (OUT / f"{ns.name}.md").write_text(table(report))
    print(table(report))


def _problem(info: dict, metric: str) -> str:
    problem = info["per_metric"][metric]["problem"] or "informative"
    return problem + (" (recommended)" if info["headline"] == metric else "")


def table(report: dict) -> str:
    lines = [
        f"COVID-QA, {report['papers']} papers (after the first {report.get('skip_papers', 0)}), "
        f"{report['human_questions']} human questions, "
        f"{len(report['arms'])} arms ({report.get('arms_grid', '')} {report.get('common', '')}); "
        f"synthetic target {report['target']} unless a generator sets its own",
        "",
        "| set | metric | Kendall tau [95% CI] | arms' range | generated - human | set verdict |",
        "|---|---|---|---|---|---|",
    ]
    hi = report["human_informativeness"]
    for metric in METRICS:
        low, high = report["human_range"][metric]
        lines.append(
            f"| human ({report['human_questions']}) | {metric} | | {low:.3f} - {high:.3f} | | "
            f"{_problem(hi, metric)} |"
        )
    for metric, r in report.get("human_sample_reference", {}).items():
        lines.append(
            f"| human sample ({report['human_sample']}, of the human set) | {metric} | "
            f"{r['tau']:+.2f} [{r['tau_ci'][0]:+.2f}, {r['tau_ci'][1]:+.2f}] | | "
            f"{r['bias_range'][0]:+.3f} .. {r['bias_range'][1]:+.3f} | "
            f"its halves: tau {r['split_half_tau']:+.2f} |"
        )
    for metric, r in (report.get("human_part") or {}).items():
        if r is not None:
            lines.append(
                f"| {report['target']} human questions against the others | {metric} | "
                f"{r['tau']:+.2f} [{r['range'][0]:+.2f}, {r['range'][1]:+.2f}] (500 draws) | | | |"
            )
    for name, g in report["generators"].items():
        if "skipped" in g:
            continue
        for metric in METRICS:
            m = g[metric]
            lines.append(
                f"| {name} ({g['kept']}) | {metric} | {m['tau']:+.2f} [{m['tau_ci'][0]:+.2f}, "
                f"{m['tau_ci'][1]:+.2f}] | {m['range'][0]:.3f} - {m['range'][1]:.3f} | "
                f"{m['bias_range'][0]:+.3f} .. {m['bias_range'][1]:+.3f} | "
                f"{_problem(g['informativeness'], metric)} |"
            )
    lines.append("")
    for metric, gains in report["human_gain"].items():
        cells = ", ".join(f"{arm} {row['all']['gain']:+.3f}" for arm, row in gains.items())
        lines.append(f"human questions, {metric} gain of the contextual arms: {cells}")
    lines.append("")
    for name, g in report["generators"].items():
        rejected = Counter()
        for row in g["per_strategy"].values():
            rejected.update(row["rejected"])
        kept = ", ".join(f"{s} {r['kept']}/{r['candidates']}" for s, r in g["per_strategy"].items())
        lines += [f"### {name} ({g['overrides']})", f"kept: {kept}; rejected: {dict(rejected)}"]
        if "skipped" in g:
            lines += [g["skipped"], ""]
            continue
        lines += ["", f"set verdict: {g['informativeness']['verdict']}"]
        for metric in METRICS:
            m = g[metric]
            lines += [
                "",
                f"{metric}: Kendall's tau = {m['tau']:+.3f} [{m['tau_ci'][0]:+.3f}, "
                f"{m['tau_ci'][1]:+.3f}] (p = {m['p_value']:.3f})",
                "",
                "| arm | human | synthetic | synthetic - human [95% CI] |",
                "|---|---|---|---|",
            ]
            for a in m["arms"]:
                lines.append(
                    f"| {a['arm']} | {a['human']:.3f} | {a['synthetic']:.3f} | "
                    f"{a['difference']:+.3f} [{a['ci'][0]:+.3f}, {a['ci'][1]:+.3f}] |"
                )
            lines += ["", "| contextual arm | " + " | ".join(
                f"gain on {s} (n)" for s in sorted(g["per_strategy"])) + " |",
                "|---|" + "---|" * len(g["per_strategy"])]  # fmt: skip
            for arm, row in m["gain_by_strategy"].items():
                cells = [
                    f"{row[s]['gain']:+.3f} ({row[s]['n']})" if row.get(s, {}).get("gain") is not None else "-"
                    for s in sorted(g["per_strategy"])
                ]  # fmt: skip
                lines.append(f"| {arm} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
