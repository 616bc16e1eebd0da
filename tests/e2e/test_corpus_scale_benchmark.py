"""benchmarks/corpus_scale.py end to end on a 40-page corpus (issue 23, item 4): the corpus built
as filings, the 8-job sparse grid cold and warm, the figures in summary.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_benchmark_times_the_grid_on_a_small_corpus(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "corpus_scale.py"), "--pages", "40",
         "--work", str(tmp_path / "work"), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    corpus = out / "corpus_scale" / "pages-40"
    pdfs = sorted(corpus.glob("*.pdf"))
    assert len(pdfs) == 2 and len(json.loads((corpus / "qa.json").read_text())) == 100
    summary = json.loads((out / "summary.json").read_text())
    assert summary["corpus_grid_seconds"] > 0 and summary["corpus_grid_warm_seconds"] > 0
    # the share itself (under 5% on an idle machine) is the benchmark's figure: on a busy one a
    # 0.1 s job's few milliseconds outside the timers are more, so no test bounds it
    assert 0 <= summary["corpus_grid_unaccounted_share"] < 1
    figures = json.loads((out / "corpus_scale.json").read_text())
    assert len(figures["jobs_cold"]) == len(figures["jobs_warm"]) == 8
    assert len({j["job"] for j in figures["jobs_cold"]}) == 8
    # the second sweep reads documents, gold and chunks from the caches; its load time is the
    # benchmark's figure (under 2 s a job on an idle machine), reported, not bounded here
    assert isinstance(summary["corpus_grid_warm_load_seconds_max"], float)
