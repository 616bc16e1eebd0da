"""benchmarks/peer_grid.py on its BM25 arm (issue 23, item 5): each tool in a fresh process, cold
then warm, the wall ratio beside each tool's Pass@k, in summary.json and printed as a table."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "cookbook-codebase"


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("contextgrid") is None,
    reason="context-grid: pip install -e '.[bench]'",
)
@pytest.mark.skipif(not DATA.is_dir(), reason=f"the cookbook set is not at {DATA}")
def test_the_bm25_arm_is_timed_in_both_tools_beside_its_pass_at_k(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "peer_grid.py"), "--arms", "bm25",
         "--no-grid", "--repeat", "2", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    rows = summary["peer_grid_arms"]
    assert [(r["arm"], r["phase"], r["repeat"]) for r in rows] == [
        ("bm25", "cold", 0), ("bm25", "warm", 0), ("bm25", "cold", 1), ("bm25", "warm", 1),
    ]  # fmt: skip
    for m in summary["peer_grid_arm_medians"]:  # per arm and phase, over the repeats
        runs = [r for r in rows if (r["arm"], r["phase"]) == (m["arm"], m["phase"])]
        expected = sorted(r["situate_seconds"] for r in runs)
        assert m["situate_seconds"] == pytest.approx(sum(expected) / 2)  # the median of two
        assert m["ratio"] == pytest.approx(m["peer_seconds"] / m["situate_seconds"], rel=0.01)
    for r in rows:
        assert r["situate_seconds"] > 0 and r["peer_seconds"] > 0
        assert r["ratio"] == pytest.approx(r["peer_seconds"] / r["situate_seconds"], rel=0.01)
        # BM25 over the same texts: both tools find most golden chunks in their top 5
        assert 0.7 < r["situate_pass_at_5"] <= r["situate_pass_at_10"] <= r["situate_pass_at_20"]
        assert 0.7 < r["peer_pass_at_5"] <= r["peer_pass_at_10"] <= r["peer_pass_at_20"]
        assert len(r["load_average"]) == 2
    assert len({r["situate_pass_at_5"] for r in rows}) == 1  # the cache: the same answer
    assert "peer/sit" in proc.stdout and proc.stdout.count("bm25 ") >= 2  # the printed table
