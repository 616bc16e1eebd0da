"""A question set as hard as a user's own, at corpus scale: the matched recipe on ~10,000 PDF pages.

    .venv/bin/python benchmarks/questions_scale.py [--pages 10000] [--sample 40] [--work DIR]
        [--out DIR]

The corpus of benchmarks/corpus_scale.py (generated annual reports as PDF, built there unless
already built), and its first ``--sample`` questions with page gold as the user's human sample.
The recipe of docs/own-documents.md, in a fresh process: ``situate questions generate
dataset=folder questions=matched question_generator=extractive_matched
questions.difficulty.match=<sample>``, cold (a fresh cache folder: PDFs parsed, the difficulty
windows embedded with MiniLM and indexed for BM25), then warm (the same cache folder: parsed
documents and window vectors from the stores). Per pass: wall seconds and the process's peak
resident memory; then the windows measured, the candidates, the questions kept.

Figures go to ``outputs/bench/questions_scale.json`` and the ``questions_scale_*`` keys of
``outputs/bench/summary.json``, with the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import OUT, PY, REPO, merge_summary, write_json
from corpus_scale import build_corpus


def generate(folder: Path, sample: Path, out: Path, cache: Path) -> tuple[float, float]:
    """Wall seconds of one ``situate questions generate`` (the recipe), and the peak resident MB
    of this script's children so far (the largest generation's)."""
    cmd = [
        *(PY, "-m", "situate.cli", "questions", "generate", "dataset=folder"),
        *(f"dataset.path={folder}", "questions=matched", "question_generator=extractive_matched"),
        *(f"questions.difficulty.match={sample}", f"cache_dir={cache}", "--out", str(out)),
    ]
    print("$ situate questions generate ... questions=matched (cache " + str(cache) + ")")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"generation failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far
    print(f"  {seconds:.1f} s", flush=True)
    return seconds, peak_kb / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=10_000, help="pages of the corpus (~)")
    ap.add_argument("--sample", type=int, default=40, help="human questions to match")
    ap.add_argument("--work", type=Path, help="folder of the caches and sets (default: temporary)")
    ap.add_argument("--out", type=Path, default=OUT, help="where the corpus and figures go")
    args = ap.parse_args()
    folder, _ = build_corpus(args.pages, args.out / "corpus_scale")
    work = args.work or Path(tempfile.mkdtemp(prefix="questions-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    sample = folder / f"qa-sample-{args.sample}.json"  # beside the PDFs: its gold names them
    sample.write_text(json.dumps(json.loads((folder / "qa.json").read_text())[: args.sample]))
    load = os.getloadavg()
    cold, cold_mb = generate(folder, sample, work / "cold.jsonl", work / "cache")
    warm, warm_mb = generate(folder, sample, work / "warm.jsonl", work / "cache")
    report = json.loads((work / "warm.difficulty.json").read_text())
    rows = [json.loads(line) for line in (work / "warm.jsonl").read_text().splitlines()]
    result = {
        "pages": args.pages,
        "corpus": str(folder),
        "human_sample": args.sample,
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "questions_scale_cold_seconds": round(cold, 1),
        "questions_scale_warm_seconds": round(warm, 1),
        "questions_scale_peak_rss_mb": round(max(cold_mb, warm_mb)),  # the larger pass's
        "windows": report["windows"],
        "candidates": len(rows),
        "kept": sum(r["status"] == "kept" for r in rows),
        "bin_distance": report["bin_distance"],
    }
    write_json("questions_scale", result, args.out)
    merge_summary({k: v for k, v in result.items() if k.startswith("questions_scale_")}, args.out)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
