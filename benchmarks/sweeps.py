"""Sweeps: situate's 12-configuration grid against the naive notebook script, and against one run.

    .venv/bin/python benchmarks/sweeps.py [--work DIR] [--phase both|situate|naive]
                                          [--naive-deadline EPOCH_SECONDS]

Every situate command runs as a subprocess from cold caches (a fresh ``output_dir``), MLflow
tracking on (a fresh SQLite store in that folder), as a user would run it:

1. one run: ``situate run fusion=rrf`` (replayed contexts, bm25s);
2. sweep_cost.py's downstream grid (fusion x pool, 12 jobs): ``sweep_cost_ratio`` = 2 / 1;
3. the grid a user sweeps, ``situate run -m context=none,replay fusion=dense_only,sparse_only,
   rrf,weighted_rank,minmax_sum,zscore_sum`` (12 jobs, 2 distinct upstreams);
4. benchmarks/naive_sweep.py on the same 12 configurations (re-embeds and re-indexes each):
   ``naive_sweep_ratio`` = 4 / 3, and Pass@k of each configuration from both, side by side.

The grid's folder (``--work``/grid, with its warm cache) is kept for query_path.py. run_all.py
runs the situate phase first and the naive phase later (``--phase``), with a deadline: a naive
sweep cut short is extrapolated (setup + mean configuration x 12) and flagged as such.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import OUT, PY, REPO, write_json
from sweep_cost import GRID as DOWNSTREAM_GRID

CONTEXTS = "none,replay"
FUSIONS = "dense_only,sparse_only,rrf,weighted_rank,minmax_sum,zscore_sum"
KS = (5, 10, 20)


def situate_run(args: list[str], label: str) -> float:
    """Wall seconds of ``situate run ARGS`` in a fresh process (imports included)."""
    cmd = [PY, "-m", "situate.cli", "run", *args]
    print(f"$ situate run {' '.join(args)}", flush=True)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{label}: situate run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    print(f"  {label}: {seconds:.1f} s", flush=True)
    return seconds


def grid_results(folder: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for f in folder.rglob("result.json"):
        row = json.loads(f.read_text())
        if "metrics" not in row:
            sys.exit(f"grid job failed: {row.get('error')}")
        out[(row["choices"]["context"], row["choices"]["fusion"])] = row["metrics"]
    return out


def situate_phase(work: Path) -> dict:
    common = ["tracking=mlflow", "study=bench"]
    with tempfile.TemporaryDirectory() as one_dir, tempfile.TemporaryDirectory() as down_dir:
        one = situate_run([*common, "fusion=rrf", f"output_dir={one_dir}"], "one run (cold)")
        down = situate_run(
            ["-m", *common, *DOWNSTREAM_GRID, f"output_dir={down_dir}"],
            "downstream 12-job sweep (cold)",
        )
        down_jobs = len(list(Path(down_dir).rglob("result.json")))
    grid_dir = work / "grid"
    grid = situate_run(
        ["-m", *common, f"context={CONTEXTS}", f"fusion={FUSIONS}", f"output_dir={grid_dir}"],
        "12-configuration grid (cold)",
    )
    rows = grid_results(grid_dir)
    print(
        f"sweep_cost_ratio = {down / one:.2f} (downstream sweep / one run); grid = "
        f"{grid / one:.2f} x one run",
        flush=True,
    )
    state = {
        "one_run_seconds": one,
        "downstream_sweep_seconds": down,
        "downstream_sweep_jobs": down_jobs,
        "situate_grid_seconds": grid,
        "grid_rows": [{"context": c, "fusion": f, "metrics": m} for (c, f), m in rows.items()],
    }
    (work / "situate_sweeps.json").write_text(json.dumps(state, indent=1))
    return state


def naive_phase(work: Path, state: dict, deadline: float | None) -> dict:
    one, down, grid = (
        state["one_run_seconds"],
        state["downstream_sweep_seconds"],
        state["situate_grid_seconds"],
    )
    situate_rows = {(r["context"], r["fusion"]): r["metrics"] for r in state["grid_rows"]}
    naive_json = work / "naive.json"
    cmd = [PY, str(REPO / "benchmarks" / "naive_sweep.py"), "--out", str(naive_json)]
    if deadline:
        cmd += ["--deadline", str(deadline)]
    print("$ python benchmarks/naive_sweep.py", flush=True)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, check=True)
    naive_wall = time.perf_counter() - t
    naive = json.loads(naive_json.read_text())
    measured = naive["configs_measured"]
    per_config = [r["seconds"] for r in naive["configs"]]
    extrapolated = measured < naive["configs_total"]
    if extrapolated:  # the deadline cut it: the setup once, plus the mean configuration x 12
        setup = naive_wall - sum(per_config)
        naive_total = setup + sum(per_config) / measured * naive["configs_total"]
    else:
        naive_total = naive_wall

    comparison, worst = [], 0.0
    for r in naive["configs"]:
        s = situate_rows[(r["context"], r["fusion"])]
        diffs = {k: 100 * (r[f"pass_at_{k}"] - s[f"pass_at_{k}"]) for k in KS}
        worst = max(worst, *(abs(d) for d in diffs.values()))
        comparison.append(
            {
                "context": r["context"],
                "fusion": r["fusion"],
                **{f"situate_pass_at_{k}": round(100 * s[f"pass_at_{k}"], 2) for k in KS},
                **{f"naive_pass_at_{k}": round(100 * r[f"pass_at_{k}"], 2) for k in KS},
                "max_abs_diff_points": round(max(abs(d) for d in diffs.values()), 2),
            }
        )
    print("\nPass@5 / @10 / @20, situate vs naive (same configuration):")
    print(f"  {'context':<7} {'fusion':<13} {'situate':>20}   {'naive':>20}   max |diff|")
    for c in comparison:
        sit = " / ".join(f"{c[f'situate_pass_at_{k}']:.1f}" for k in KS)
        nai = " / ".join(f"{c[f'naive_pass_at_{k}']:.1f}" for k in KS)
        print(
            f"  {c['context']:<7} {c['fusion']:<13} {sit:>20}   {nai:>20}   {c['max_abs_diff_points']:.1f}"
        )
    within = sum(1 for c in comparison if c["max_abs_diff_points"] <= 1.0)
    result = {
        "one_run_seconds": round(one, 2),
        "downstream_sweep_seconds": round(down, 2),
        "downstream_sweep_jobs": state["downstream_sweep_jobs"],
        "downstream_grid": " ".join(DOWNSTREAM_GRID),
        "sweep_cost_ratio": round(down / one, 3),
        "grid": f"context={CONTEXTS} fusion={FUSIONS}",
        "grid_jobs": len(situate_rows),
        "situate_grid_seconds": round(grid, 2),
        "grid_vs_one_run_ratio": round(grid / one, 3),
        "naive_sweep_seconds": round(naive_total, 2),
        "naive_configs_measured": measured,
        "naive_extrapolated": extrapolated,
        "naive_seconds_per_config_mean": round(sum(per_config) / measured, 2),
        "naive_sweep_ratio": round(naive_total / grid, 3),
        "pass_at_k": comparison,
        "pass_at_k_max_abs_diff_points": round(worst, 2),
        "configs_within_one_point": within,
        "configs_compared": len(comparison),
    }
    print(
        f"\none run {one:.1f} s | downstream sweep ({state['downstream_sweep_jobs']} jobs) "
        f"{down:.1f} s -> sweep_cost_ratio {down / one:.2f}"
    )
    print(
        f"situate grid (12 jobs, 2 upstreams) {grid:.1f} s ({grid / one:.2f} x one run) | naive "
        f"{naive_total:.1f} s"
        + (f" (extrapolated from {measured} configs)" if extrapolated else "")
        + f" -> naive_sweep_ratio {naive_total / grid:.2f}"
    )
    print(f"Pass@k: {within}/{len(comparison)} configurations within 1 point (worst {worst:.1f})")
    print(f"wrote {write_json('sweeps', result, OUT)}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="folder kept for the grid (default: temp)")
    parser.add_argument("--phase", choices=("both", "situate", "naive"), default="both")
    parser.add_argument("--naive-deadline", type=float, default=None)
    ns = parser.parse_args()
    work = Path(ns.work or tempfile.mkdtemp(prefix="situate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if ns.phase in ("both", "situate"):
        state = situate_phase(work)
    else:
        state = json.loads((work / "situate_sweeps.json").read_text())
    if ns.phase in ("both", "naive"):
        naive_phase(work, state, ns.naive_deadline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
