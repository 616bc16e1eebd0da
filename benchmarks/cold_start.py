"""Cold start: ``situate --help``, and ``situate run`` up to its first stage, with and without Lucene.

    .venv/bin/python benchmarks/cold_start.py [--repeats 5]

* ``help_seconds``: median wall time of ``situate --help`` (the console script) over
  ``--repeats`` fresh processes.
* first stage: from launching ``situate run ... output_dir=<empty temp folder>`` until its log
  line ``cookbook: 90 documents`` appears (stdout and stderr read line by line as they come); the
  process is then stopped. Median of 3 each for: ``tracking=none`` with ``sparse=bm25s``, the same
  with ``sparse=pyserini`` (Lucene: the JVM starts only when the sparse index is built or loaded,
  so it must not delay the first stage), and the default tracking (MLflow on a new SQLite store in
  the empty folder, its first-ever run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import OUT, REPO, write_json

SITUATE = str(Path(sys.executable).parent / "situate")
LINE = "cookbook: 90 documents"


def help_once() -> float:
    t = time.perf_counter()
    subprocess.run([SITUATE, "--help"], check=True, capture_output=True)
    return time.perf_counter() - t


def first_stage(overrides: list[str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [SITUATE, "run", *overrides, f"output_dir={tmp}"]
        t = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        seen, tail = None, []
        for line in proc.stdout:
            if LINE in line:
                seen = time.perf_counter() - t
                break
            tail.append(line)
        proc.terminate()  # our own child, by its handle
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if seen is None:
            sys.exit(
                f"`situate run {' '.join(overrides)}` never logged {LINE!r}:\n{''.join(tail)[-2000:]}"
            )
        return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--stage-repeats", type=int, default=3)
    ns = parser.parse_args()
    helps = [help_once() for _ in range(ns.repeats)]
    help_s = statistics.median(helps)
    print(f"situate --help: median {help_s * 1000:.0f} ms over {ns.repeats} runs", flush=True)
    variants = {
        "first_stage_bm25s_seconds": ["tracking=none", "sparse=bm25s"],
        "first_stage_pyserini_seconds": ["tracking=none", "sparse=pyserini"],
        "first_stage_mlflow_seconds": ["sparse=bm25s"],
    }
    result: dict = {"help_seconds": round(help_s, 4), "help_runs": [round(h, 4) for h in helps]}
    for name, overrides in variants.items():
        runs = [first_stage(overrides) for _ in range(ns.stage_repeats)]
        result[name] = round(statistics.median(runs), 3)
        result[name.replace("_seconds", "_runs")] = [round(r, 3) for r in runs]
        print(
            f"situate run {' '.join(overrides)}: first stage after {result[name]:.2f} s "
            f"(median of {ns.stage_repeats})",
            flush=True,
        )
    print(f"wrote {write_json('cold_start', result, OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
