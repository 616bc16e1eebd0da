"""``python benchmarks/mlflow_evidence.py``: what the evidence a run leaves in MLflow costs.

Two figures, each from real ``situate run`` processes (this tree's ``src/``), written to
``outputs/bench/mlflow_evidence.json`` and merged into ``outputs/bench/summary.json``:

- **Traces' overhead on a warm cookbook run** (248 questions, Claude's recorded contexts, dense +
  BM25 fused with RRF): the same run with ``tracking.traces=none``, ``sample`` (100 questions)
  and ``all``, interleaved, after a first run that fills the caches; the median over
  ``--repeats`` of the command's wall time (start to exit, as a user waits for it) and of
  ``run_seconds`` (the job alone: loading, searching, evaluating, logging), the traces' own
  seconds and the count the store holds, compared with the questions (a trace lost is a
  failure of this benchmark).
- **The per-question table's size on COVID-QA's 1,380 questions** (98 papers, BM25 alone: the
  table does not depend on the retriever): the bytes of ``per_question_table.json`` and the
  seconds ``MlflowClient.load_table`` takes to read it back, and the seconds MLflow's UI takes to
  show it in its evaluation view (headless Chromium).

    python benchmarks/mlflow_evidence.py [--work /tmp/situate-evidence] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import merge_summary, write_json  # noqa: E402  (puts this tree's src/ on the path)

REPO = Path(__file__).resolve().parents[1]
COOKBOOK = ["context=replay", "fusion=rrf"]
COVID = ["dataset=covid_qa", "chunker=fixed", "context=none", "fusion=sparse_only"]


def situate_run(out: Path, study: str, *overrides: str) -> tuple[dict, float]:
    """One ``situate run`` in a fresh process; returns its run's MLflow metrics (with
    ``run_id``) and the process's wall seconds (start to exit, as a user waits for it)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MLFLOW_DISABLE_TELEMETRY": "true"}
    env.setdefault("SITUATE_DATA_DIR", str(REPO.parent / "shared" / "data"))
    folder = out / "runs" / str(time.time_ns())
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "situate.cli", "run", *overrides, f"output_dir={out}",
         f"study={study}", f"hydra.run.dir={folder}"],
        capture_output=True, text=True, cwd=REPO, env=env,
    )  # fmt: skip
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"situate run {' '.join(overrides)} failed:\n{proc.stderr[-3000:]}")
    run_id = json.loads((folder / "result.json").read_text())["run_id"]
    import mlflow

    metrics = mlflow.MlflowClient(f"sqlite:///{out / 'mlflow.db'}").get_run(run_id).data.metrics
    return {**metrics, "run_id": run_id}, wall


def traces_overhead(work: Path, repeats: int) -> dict:
    out = work / "cookbook"
    situate_run(out, "evidence", *COOKBOOK, "tracking.traces=none")  # fills the caches
    modes = ("none", "sample", "all")
    got: dict[str, list[tuple[dict, float]]] = {m: [] for m in modes}
    for _ in range(repeats):  # interleaved: a machine that slows down weighs on every mode
        for mode in modes:
            got[mode].append(situate_run(out, "evidence", *COOKBOOK, f"tracking.traces={mode}"))
    figures: dict[str, dict] = {}
    for mode, runs in got.items():
        figures[mode] = {
            "wall_seconds": statistics.median(w for _, w in runs),
            "run_seconds": statistics.median(m["run_seconds"] for m, _ in runs),
            "traces_seconds": statistics.median(m.get("traces_seconds", 0.0) for m, _ in runs),
            "traces_logged": min(m.get("traces_logged", 0.0) for m, _ in runs),
            "questions": runs[0][0]["n_questions"],
        }
    for mode in ("sample", "all"):
        for key in ("wall_seconds", "run_seconds"):
            base = figures["none"][key]
            figures[mode][f"{key.split('_')[0]}_overhead"] = figures[mode][key] / base - 1
    expected = {"sample": min(100, figures["all"]["questions"]), "all": figures["all"]["questions"]}
    for mode, n in expected.items():
        if figures[mode]["traces_logged"] != n:
            raise SystemExit(f"traces={mode}: {figures[mode]['traces_logged']} of {n} in the store")
    return figures


def table_size(work: Path) -> dict:
    out = work / "covid"
    row, _ = situate_run(out, "evidence_covid", *COVID, "tracking.traces=none")
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{out / 'mlflow.db'}")
    run = client.get_run(row["run_id"])
    path = Path(run.info.artifact_uri.removeprefix("file://")) / "per_question_table.json"
    t = time.perf_counter()
    table = client.load_table(run.info.experiment_id, "per_question_table.json", [row["run_id"]])
    seconds = time.perf_counter() - t
    return {
        "questions": len(table),
        "columns": len(table.columns),
        "bytes": path.stat().st_size,
        "bytes_per_question": path.stat().st_size / max(1, len(table)),
        "load_table_seconds": seconds,
    }


def ui_load(work: Path, table: dict) -> dict:
    """Seconds until MLflow's UI (``mlflow ui``, headless Chromium through Playwright, as
    ``tests/e2e/test_mlflow_ui.py`` drives it) shows the COVID-QA run's per-question table in
    its evaluation view: the page opened, the table chosen, a question's row shown."""
    sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "e2e")]
    import test_mlflow_ui as ui_test
    from playwright.sync_api import expect, sync_playwright

    out = work / "covid"
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{out / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("evidence_covid").experiment_id
    questions = set(client.load_table(experiment, TABLE)["question"])
    expect.set_options(timeout=ui_test.WAIT_MS)
    with ui_test.mlflow_ui(out) as ui, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(ui_test.CHROMIUM), args=ui_test.CHROMIUM_FLAGS
        )
        try:
            context = browser.new_context(viewport=ui_test.VIEWPORT)
            context.add_init_script(ui_test.NO_ASSISTANT)
            page = context.new_page()
            t = time.perf_counter()
            page.goto(ui_test.evaluation_view(ui, experiment))
            expect(page.get_by_test_id("dropdown-tables")).to_contain_text(TABLE)
            shown = page.get_by_role("gridcell").filter(has_text="?").first  # a question's cell
            expect(shown).to_be_visible()
            assert shown.inner_text().strip() in questions
            seconds = time.perf_counter() - t
        finally:
            browser.close()
    return {"questions": table["questions"], "bytes": table["bytes"], "seconds": seconds}


TABLE = "per_question_table.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/situate-evidence")
    parser.add_argument("--repeats", type=int, default=3)
    ns = parser.parse_args()
    work = Path(ns.work)
    figures = {"traces": traces_overhead(work, ns.repeats), "table_covid_qa": table_size(work)}
    figures["ui_covid_qa"] = ui_load(work, figures["table_covid_qa"])
    figures["command"] = f"python benchmarks/mlflow_evidence.py --repeats {ns.repeats}"
    print(json.dumps(figures, indent=1))
    write_json("mlflow_evidence", figures)
    merge_summary({"mlflow_evidence": figures})


if __name__ == "__main__":
    main()
