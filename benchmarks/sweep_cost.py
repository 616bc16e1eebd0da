"""What a sweep costs against one run: a 12-job grid that varies only downstream settings (fusion
and its candidate pool) against one run of the same config, both from cold caches.

    .venv/bin/python benchmarks/sweep_cost.py [--docs N]

Prints both wall times and their ratio, and writes outputs/bench/sweep_cost.json. The goal is a
ratio of at most 1.3: the sweep pays for the contexts, embeddings and indexes once.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SITUATE = [sys.executable, "-m", "situate.cli", "run"]
GRID = ["fusion=rrf,weighted_rank,zscore_sum,dbsf", "fusion.pool=50,100,150"]  # 4 x 3 = 12 jobs


def timed(args: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(SITUATE + args, cwd=REPO, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"situate run failed:\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--docs", type=int, default=None, help="first N cookbook documents (default all)"
    )
    ns = parser.parse_args()
    common = ["tracking=mlflow", "study=sweep_cost"]
    if ns.docs:
        common.append(f"dataset.max_documents={ns.docs}")
    with tempfile.TemporaryDirectory() as one_dir, tempfile.TemporaryDirectory() as sweep_dir:
        one = timed([*common, "fusion=rrf", f"output_dir={one_dir}"])
        print(f"one run (cold caches): {one:.1f} s")
        sweep = timed(["-m", *common, *GRID, f"output_dir={sweep_dir}"])
        jobs = len(list(Path(sweep_dir, "multirun").rglob("result.json")))
        print(f"{jobs}-job sweep (cold caches): {sweep:.1f} s")
        shutil.rmtree(one_dir, ignore_errors=True)
    ratio = sweep / one
    print(f"sweep_cost_ratio = {ratio:.2f} (goal <= 1.3)")
    out = REPO / "outputs" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "one_run_seconds": one,
        "sweep_seconds": sweep,
        "jobs": jobs,
        "sweep_cost_ratio": ratio,
    }
    (out / "sweep_cost.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
