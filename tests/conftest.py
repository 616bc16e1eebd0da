"""Shared fixtures: where the real data lives, and a way to run the CLI as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("SITUATE_DATA_DIR", REPO.parent / "shared" / "data"))
COOKBOOK = DATA_DIR / "cookbook-codebase"
COVID_QA = DATA_DIR / "covid-qa" / "200423_covidQA.json"


@pytest.fixture
def cookbook_dir() -> Path:
    if not (COOKBOOK / "codebase_chunks.json").exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK} (run `situate data fetch cookbook`)")
    return COOKBOOK


@pytest.fixture
def covid_qa_file() -> Path:
    if not COVID_QA.exists():
        pytest.skip(f"COVID-QA not found at {COVID_QA} (run `situate data fetch covid-qa`)")
    return COVID_QA


def run_cli(
    *args: str, cwd: Path = REPO, env: dict | None = None, timeout: int = 600
) -> subprocess.CompletedProcess:
    """``situate ARGS`` in a fresh process, as a user would type it."""
    full_env = {**os.environ, "SITUATE_DATA_DIR": str(DATA_DIR), **(env or {})}
    # mlflow.set_tracking_uri() in a test exports MLFLOW_TRACKING_URI; a run must use its own store
    if "MLFLOW_TRACKING_URI" not in (env or {}):
        full_env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run(
        [sys.executable, "-m", "situate.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
