"""The filings case on data with human questions: COVID-QA's papers as PDFs, people's gold as pages.

    .venv/bin/python benchmarks/covid_pdf.py [--seeds 0 1 2] [--sample 40] [--target 300]
        [--generator NAME="OVERRIDES"] ... [--sizes 64 128 256 512] [--name covid_pdf] [--work DIR]

The issue's filings run (PDF, ``file.pdf#page=N`` gold, sparse arms) on the data here that has
human questions:

1. each of the 98 COVID-QA papers rendered as a PDF with reportlab (its first line as the title,
   each line a paragraph: about 6 pages a paper, 585 in all), in ``--work``/kb;
2. each of the 1,380 human questions given the page(s) of its answer, found in the parsed PDF
   text by situate's quote rules (``qa-all.json``), and per seed a sample of ``--sample`` of
   them (``qa-sample-s<seed>.json``: the user's own questions);
3. per generator and seed, ``situate questions generate dataset=folder`` with the generator's
   overrides and ``questions.difficulty.match=<the sample>``;
4. the 16 arms (``chunker.size=64,128,256,512`` x ``context=none,heading_path`` x
   ``sparse=bm25s,pyserini``, ``fusion=sparse_only``; ``--sizes 150 300``: the filings run's 8)
   on all human questions, on each sample and each generated set (``dataset=folder``, the sets
   through ``dataset.qa``).

Reported per set (the samples, each generator's set per seed) and metric: Kendall's tau-b of its
arm order with all human questions' (with a bootstrap interval, evaluation/agreement.py), the
range of its Pass@5 minus the human questions' over the arms, the engine gap (bm25s minus
pyserini Pass@5, per chunk size and context) and the metric evaluation/informativeness.py
recommends for it, and per axis of the grid the pairs of arms differing in it alone that the
set orders as all human questions do at that metric; and two yardsticks: two random halves of all
the human questions against each other (evaluation/agreement.split_half, tau-a), and ``--target``
of them against all the others (tau-b, as a generated set of that size is compared: how far as
many more of people's own questions would agree). Writes
outputs/bench/NAME.json and .md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shlex
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from common import OUT, PY, REPO, split_tau, write_json

COVID = REPO.parent / "shared" / "data" / "covid-qa" / "200423_covidQA.json"
METRICS = ("pass_at_5", "pass_at_20", "mrr", "recall_at_10")
SIZES = (64, 128, 256, 512)


def arms_of(sizes) -> list[str]:
    """The grid: chunk sizes x ``context=none,heading_path`` x ``sparse=bm25s,pyserini``."""
    return [
        f"chunker.size={s} context={c} sparse={e}"
        for s, c, e in itertools.product(sizes, ("none", "heading_path"), ("bm25s", "pyserini"))
    ]


ARMS = arms_of(SIZES)
DEFAULT_GENERATORS = ["matched=questions=matched question_generator=extractive_matched"]


def render(job: tuple[Path, str]) -> str:
    """One paper as a PDF: its first line as the title, each further line a paragraph."""
    from xml.sax.saxutils import escape

    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    path, text = job
    styles = getSampleStyleSheet()
    lines = text.split("\n")
    story = [Paragraph(escape(lines[0]), styles["Title"])]
    story += [Paragraph(escape(line), styles["BodyText"]) for line in lines[1:] if line.strip()]
    SimpleDocTemplate(str(path), pagesize=letter, title=lines[0][:200]).build(story)
    return path.name


def build(kb: Path, cache: Path, sample: int, seeds: list[int]) -> int:
    """The PDFs, ``qa-all.json`` (page gold) and the seeded samples; the questions placed."""
    from situate.config.compose import compose, instantiate_stage
    from situate.datasets.quotes import QuoteFinder

    papers = [p["paragraphs"][0] for p in json.loads(COVID.read_text())["data"]]
    kb.mkdir(parents=True, exist_ok=True)
    jobs = [(kb / f"paper-{p['document_id']}.pdf", p["context"]) for p in papers]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(render, [j for j in jobs if not j[0].exists()]))
    cfg = compose(["dataset=folder", f"dataset.path={kb}", f"cache_dir={cache}", "tracking=none"])
    docs = {d.doc_id: d for d in instantiate_stage(cfg, "dataset").load().documents}
    qa = []
    for p in papers:
        doc = docs[f"paper-{p['document_id']}.pdf"]
        finder = QuoteFinder(doc.text)
        for q in p["qas"]:
            found = finder.first(q["answers"][0]["text"].strip())
            if found is None:
                continue
            pages = [g.number for g in doc.pages if g.start < found.end and found.start < g.end]
            gold = [f"{doc.doc_id}#page={n}" for n in pages]
            qa.append({"id": str(q["id"]), "q": q["question"], "gold": gold})
    (kb / "qa-all.json").write_text(json.dumps(qa, indent=0))
    for seed in seeds:
        picked = random.Random(seed).sample(qa, sample)
        (kb / f"qa-sample-s{seed}.json").write_text(json.dumps(picked, indent=0))
    print(f"{len(docs)} PDFs, {sum(len(d.pages) for d in docs.values())} pages; "
          f"{len(qa)} of {sum(len(p['qas']) for p in papers)} questions placed on a page")  # fmt: skip
    return len(qa)


def run_arms(qa: Path, kb: Path, work: Path, cache: Path) -> dict[str, object]:
    from situate.api import run

    common = [
        *("dataset=folder", f"dataset.path={kb}", f"dataset.qa={qa}", "chunker=fixed"),
        *("fusion=sparse_only", "tracking=none", f"output_dir={work / 'runs'}"),
        *(f"cache_dir={cache}", "eval.latency_sample=1"),
    ]
    return {arm: run([*common, *arm.split()]) for arm in ARMS}


def compare(name: str, human, scores: dict[str, dict[str, list[float]]]) -> dict:
    """A set's agreement with all human questions: tau per metric, gap and engine gap, and the
    metric evaluation/informativeness.py recommends for the set."""
    from situate.evaluation.agreement import set_agreement
    from situate.evaluation.informativeness import informativeness

    row: dict = {"set": name, "questions": len(scores["pass_at_5"][ARMS[0]])}
    info = informativeness({m: {a: np.asarray(scores[m][a]) for a in ARMS} for m in METRICS})
    row["recommended"] = info.headline
    # how stably the set orders the arms at each metric: its own halves against each other
    row["stability"] = {m: round(mi.stability, 3) for m, mi in info.metrics.items()}
    row["problems"] = {m: mi.problem for m, mi in info.metrics.items()}  # saturated, floored...
    for m in METRICS:
        everyone = {a: human[a].scores(m).to_numpy() for a in ARMS}
        agreement = set_agreement(everyone, scores[m], resamples=2000)
        row[m] = {"tau": round(agreement.tau, 3),
                  "tau_ci": [round(agreement.tau_low, 3), round(agreement.tau_high, 3)]}  # fmt: skip
    mean = {a: sum(v) / len(v) for a, v in scores["pass_at_5"].items()}
    gaps = [100 * (mean[a] - float(human[a].scores("pass_at_5").mean())) for a in ARMS]
    engine = [100 * (mean[a] - mean[a.replace("bm25s", "pyserini")]) for a in ARMS if "bm25s" in a]
    row["pass_at_5_gap"] = [round(min(gaps), 1), round(max(gaps), 1)]
    row["engine_gap"] = [round(min(engine), 1), round(max(engine), 1)]
    row["decisions"] = axis_decisions(human, scores, row["recommended"])
    return row


def axis_decisions(human, scores: dict[str, dict[str, list[float]]], metric: str) -> dict:
    """Per axis of the grid (chunk size, context, engine), at ``metric``: of the pairs of arms
    that differ in that axis alone, how many the set orders as all human questions do (both
    pick the same winner), as the issue's "does heading_path beat none?" counts them."""
    mean = {a: float(np.mean(v)) for a, v in scores[metric].items()}
    truth = {a: float(human[a].scores(metric).mean()) for a in ARMS}
    parsed = {a: dict(kv.split("=", 1) for kv in a.split()) for a in ARMS}
    out = {}
    for axis in ("chunker.size", "context", "sparse"):
        agree = total = 0
        for a, b in itertools.combinations(ARMS, 2):
            differ = [k for k in parsed[a] if parsed[a][k] != parsed[b][k]]
            if differ != [axis]:
                continue
            total += 1
            agree += np.sign(round(truth[a] - truth[b], 9)) == np.sign(round(mean[a] - mean[b], 9))
        out[axis] = [int(agree), total]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--sample", type=int, default=40, help="human questions per sample")
    ap.add_argument("--target", type=int, default=300, help="questions.target of each set")
    ap.add_argument("--generator", action="append", help='NAME="OVERRIDES" (repeatable)')
    ap.add_argument("--name", default="covid_pdf")
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=list(SIZES),
        help="chunker.size values of the grid (the filings run: 150 300)",
    )  # fmt: skip
    ap.add_argument("--work", type=Path, default=Path("/tmp/covid-pdf"))
    args = ap.parse_args()
    global ARMS
    ARMS = arms_of(args.sizes)
    kb, cache = args.work / "kb", args.work / "cache"
    build(kb, cache, args.sample, args.seeds)
    human = run_arms(kb / "qa-all.json", kb, args.work / "human", cache)
    # the yardsticks: two halves of all the human questions, and as many more of people's own
    # questions as a generated set asks against all the others
    halves = {m: split_tau(human, ARMS, m, tau_a=True) for m in METRICS}
    print("all human questions, half against half:", json.dumps(halves), flush=True)
    part = {m: split_tau(human, ARMS, m, part=args.target) for m in METRICS}
    print(f"{args.target} human questions against the others (tau-b):", json.dumps(part))
    rows = []
    for seed in args.seeds:
        ids = [q["id"] for q in json.loads((kb / f"qa-sample-s{seed}.json").read_text())]
        sampled = {m: {a: human[a].scores(m).loc[ids].tolist() for a in ARMS} for m in METRICS}
        rows.append(compare(f"sample s{seed}", human, sampled))
    for spec in args.generator or DEFAULT_GENERATORS:
        name, _, overrides = spec.partition("=")
        for seed in args.seeds:
            out = args.work / f"{name}-s{seed}.jsonl"
            cmd = [
                *(PY, "-m", "situate.cli", "questions", "generate", "dataset=folder"),
                f"dataset.path={kb}", f"questions.target={args.target}", f"cache_dir={cache}",
                f"questions.difficulty.match={kb / f'qa-sample-s{seed}.json'}",
                *shlex.split(overrides), "--out", str(out),
            ]  # fmt: skip
            env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
            done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
            if done.returncode:
                sys.exit(f"{name} s{seed}: generation failed:\n{done.stderr[-2000:]}")
            results = run_arms(out, kb, args.work / f"{name}-s{seed}", cache)
            scores = {m: {a: results[a].scores(m).tolist() for a in ARMS} for m in METRICS}
            (args.work / f"{name}-s{seed}.scores.json").write_text(json.dumps(scores))
            rows.append(compare(f"{name} s{seed}", human, scores))
            print(json.dumps(rows[-1]), flush=True)
    lines = ["| set | questions | recommended | " + " | ".join(f"tau {m}" for m in METRICS)
             + " | Pass@5 gap | bm25s - pyserini | decisions agreeing (size, context, engine) |",
             "|---" * (len(METRICS) + 6) + "|"]  # fmt: skip
    for r in rows:
        taus = " | ".join(f"{r[m]['tau']:+.2f} [{r[m]['tau_ci'][0]:+.2f}, {r[m]['tau_ci'][1]:+.2f}]" for m in METRICS)  # fmt: skip
        lines.append(f"| {r['set']} | {r['questions']} | {r['recommended']} | {taus} | {r['pass_at_5_gap'][0]:+.1f} .. "
                     f"{r['pass_at_5_gap'][1]:+.1f} | {r['engine_gap'][0]:+.1f} .. {r['engine_gap'][1]:+.1f} | "
                     + ", ".join(f"{k} of {n}" for k, n in r["decisions"].values()) + " |")  # fmt: skip
    halves_line = (
        "all human questions' halves (tau-a, median of 500 splits [95% range]): "
        + ", ".join(
            f"{m} {h['tau']:+.2f} [{h['range'][0]:+.2f}, {h['range'][1]:+.2f}]"
            for m, h in halves.items()
        )
    )
    lines.append("\n" + halves_line)
    others = len(human[ARMS[0]].scores(METRICS[0])) - args.target
    lines.append(
        f"{args.target} of people's questions against their other {others} (tau-b, as each set "
        "above is compared, median of 500 draws [95% range]): "
        + ", ".join(
            f"{m} {h['tau']:+.2f} [{h['range'][0]:+.2f}, {h['range'][1]:+.2f}]"
            for m, h in part.items()
        )
    )
    means = {m: {a: round(float(human[a].scores(m).mean()), 4) for a in ARMS} for m in METRICS}
    write_json(
        args.name,
        {
            "arms": ARMS,
            "human_means": means,
            "human_split_half": halves,
            "human_part": part,
            "rows": rows,
        },
    )
    (OUT / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
