"""What a user sees of situate's runs in the MLflow UI, checked in a real browser (headless
Chromium driven by Playwright).

A real ``situate run -m`` sweep of two runs is looked at.

* The experiment's runs page, in its "Artifact evaluation" mode (``compareRunsMode=ARTIFACT``),
  puts the per-question tables (``per_question_table.json``, logged as ``log_table`` does) of
  the runs side by side, one row per ``question_id`` and one column per run.
* A run's Traces tab lists one trace per question; opening one shows its ``RETRIEVER`` spans
  (``dense``, ...) with their outputs as retrieved documents (text, ``chunk_id`` and, once a
  document is opened, the rest of its metadata: ``doc_uri``, ``score``, ``rank``, ``gold``).

Every step waits on what the page shows (generous timeouts: a busy machine loads the UI's
bundle slowly), never on the clock. With ``SITUATE_SCREENSHOTS=<folder>`` the two views are
saved there (``mlflow-evaluation-view.png``, ``mlflow-traces-tab.png``: the images of the docs).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import free_port, run_cli, wait_for_health

CHROMIUM = Path("/usr/bin/chromium")
# as root and on a closed network: no sandbox, no GPU, and none of the browser's own traffic
# (its background connections are refused here, and slow it down)
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
WAIT_MS = 120_000  # the longest any one step may wait for the page
VIEWPORT = {"width": 1600, "height": 1000}
# MLflow 3.18 opens its assistant panel on a browser's first visit: marked as done, and closed
NO_ASSISTANT = (
    "localStorage.setItem('mlflow.assistant.fab.autoOpenedOnFirstLoad_v1', 'true');"
    "localStorage.setItem('mlflow.assistant.panelOpen_v1', 'false');"
)

NO_TELEMETRY = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
# the server without its job runner (a second process, for scheduled GenAI jobs)
QUIET_SERVER = {**NO_TELEMETRY, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}

STUDY = "ui"
TABLE = "per_question_table.json"


def situate_sweep(out: Path) -> dict:
    """A real sweep of two runs on the first two cookbook files (plain chunks and Claude's
    recorded contexts, each dense + BM25 fused with RRF), tracked under ``out``; returns what
    the browser should show, read back from the store: the experiment, the runs' names and
    ids, the first run's questions and, of its first question's trace, the dense span's first
    document."""
    proc = run_cli(
        "run", "-m", "context=none,replay", "fusion=rrf", "embedder=minilm_onnx",
        "dataset.max_documents=2", f"output_dir={out}", f"study={STUDY}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{out / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(STUDY).experiment_id
    runs = [
        r
        for r in client.search_runs([experiment], order_by=["attributes.start_time ASC"])
        if r.data.tags.get("sweep") != "true"
    ]
    assert len(runs) == 2
    first = runs[0]
    table = client.load_table(experiment, TABLE, [first.info.run_id])
    traces = client.search_traces(locations=[experiment], run_id=first.info.run_id)
    trace = next(t for t in traces if t.info.tags["situate.question_id"] == table["question_id"][0])
    dense = next(s for s in trace.data.spans if s.name == "dense")
    document = dense.outputs[0]
    return {
        "experiment": experiment,
        "names": [r.info.run_name for r in runs],
        "question_ids": list(table["question_id"]),
        "questions": list(table["question"]),
        "stages": [s.name for s in trace.data.spans if s.parent_id is not None],
        "first_line": next(x for x in document["page_content"].splitlines() if x.strip()).strip(),
        "chunk_id": document["metadata"]["chunk_id"],
    }


@contextlib.contextmanager
def mlflow_ui(store: Path) -> Iterator[str]:
    """``mlflow ui`` on a free port of 127.0.0.1 over the store under ``store``; yields its
    address once ``/health`` answers and always stops it."""
    port = free_port()
    log = (store / "mlflow-ui.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable, "-m", "mlflow", "ui", "--host", "127.0.0.1", "--port", str(port),
            "--workers", "1",
            "--backend-store-uri", f"sqlite:///{store / 'mlflow.db'}",
            "--default-artifact-root", str(store / "mlartifacts"),
        ],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, **QUIET_SERVER},
    )  # fmt: skip
    try:
        wait_for_health(f"http://127.0.0.1:{port}/health", server=server)
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def screenshot(page, name: str) -> None:
    """Save the page as ``name`` under ``$SITUATE_SCREENSHOTS``, when it is set."""
    folder = os.environ.get("SITUATE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        # animations (a tooltip fading in) finished first
        page.screenshot(path=str(Path(folder) / name), animations="disabled")


def evaluation_view(ui: str, experiment_id: str) -> str:
    """The experiment's runs page in its artifact-evaluation mode (the per-question tables)."""
    from situate.tracking.mlflow_tracker import runs_url

    return runs_url(ui, experiment_id) + "&compareRunsMode=ARTIFACT"


def check_evaluation_view(page, expect, shown: dict) -> None:
    """The runs' per-question tables side by side, one row per question."""
    # the runs of a sweep are folded under its parent run, whose table (results_table.json, one
    # row per job) the view shows first: the parent is unfolded, the per-question table chosen
    tables = page.get_by_test_id("dropdown-tables")
    expect(tables).to_contain_text("results_table.json")
    parent = page.get_by_role("gridcell").filter(
        has=page.get_by_role("link", name=re.compile(r"^sweep "))
    )
    parent.get_by_role("button").first.click()  # unfold
    for name in shown["names"]:
        expect(page.get_by_role("link", name=name, exact=True).first).to_be_visible()
    tables.click()
    page.get_by_role("option", name=TABLE, exact=True).click()  # ticked
    page.get_by_role("option", name="results_table.json", exact=True).click()  # unticked
    page.keyboard.press("Escape")
    expect(tables).to_contain_text(TABLE)
    expect(tables).not_to_contain_text("results_table.json")
    group_by = page.get_by_role("combobox", name='Select "group by" columns')
    expect(group_by).to_contain_text("question_id")
    # one row per question; the compared column is the next one, the question, once per run
    expect(page.get_by_text(shown["question_ids"][0], exact=True)).to_be_visible()
    question = shown["questions"][0]
    expect(page.get_by_text(question, exact=True)).to_have_count(len(shown["names"]))
    for name in shown["names"]:  # each run's column header names it
        expect(page.get_by_role("link", name=name, exact=True)).not_to_have_count(0)
    # grouped by the question's text too (one row per question: the runs share them), compared
    # by the rank of the first relevant chunk
    group_by.click()
    page.get_by_role("option", name="question", exact=True).click()
    page.keyboard.press("Escape")
    expect(group_by).to_contain_text("+1")  # question_id and one more
    compare = page.get_by_role("combobox").filter(has_text="Compare:")
    compare.click()
    page.get_by_role("option", name="first_relevant_rank", exact=True).click()
    page.keyboard.press("Escape")
    expect(compare).to_contain_text("first_relevant_rank")
    expect(page.get_by_text(question, exact=True)).to_have_count(1)
    page.mouse.move(0, 0)  # no tooltip in the picture
    expect(page.get_by_role("tooltip")).to_have_count(0)
    screenshot(page, "mlflow-evaluation-view.png")


def check_traces_tab(page, expect, shown: dict) -> None:
    """The first run's Traces tab: one trace per question, its RETRIEVER spans' documents."""
    page.get_by_role("link", name=shown["names"][0], exact=True).first.click()
    page.get_by_role("tab", name="Traces").click()
    # one trace per question, its request the question: open the first question's
    for question in shown["questions"][:3]:
        expect(page.get_by_text(question).first).to_be_visible()
    page.get_by_text(shown["questions"][0]).first.click()
    # its spans: the root, then one RETRIEVER span per stage
    nodes = page.get_by_test_id(re.compile(r"^timeline-tree-node-"))
    for stage in shown["stages"]:
        expect(nodes.filter(has=page.get_by_text(stage, exact=True))).to_have_count(1)
    nodes.filter(has=page.get_by_text("dense", exact=True)).click()
    # a span whose output is Documents: shown as retrieved documents, best first
    documents = page.get_by_test_id("model-trace-explorer-retriever-field-renderer")
    expect(documents.first).to_contain_text(shown["first_line"])
    expect(documents.first).to_contain_text("chunk_id")  # the first metadata key, beside it
    # opening a document shows its metadata (chunk_id, score, rank, gold), each value cut to a
    # few characters: its tooltip holds it whole
    documents.get_by_text(shown["first_line"]).first.click()
    for key in ("chunk_id", "score", "rank", "gold"):
        expect(documents.get_by_text(key, exact=True).first).to_be_visible()
    documents.get_by_text("chunk_id", exact=True).first.hover()
    expect(page.get_by_role("tooltip")).to_contain_text(f'chunk_id: "{shown["chunk_id"]}"')
    screenshot(page, "mlflow-traces-tab.png")
    # the spans' type: the trace's span-type filter names it, and hides the stages
    page.get_by_role("button", name="Trace display settings").click()
    page.get_by_text("Filter by span type", exact=True).click()
    retriever = page.get_by_role("menuitemcheckbox", name="Retriever", exact=True)
    expect(retriever).to_have_attribute("aria-checked", "true")
    retriever.click()
    for stage in shown["stages"]:
        expect(nodes.filter(has=page.get_by_text(stage, exact=True))).to_have_count(0)
    expect(nodes).to_have_count(1)  # the root


@pytest.mark.slow
def test_mlflow_ui_shows_the_per_question_tables_and_the_retriever_traces(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (`make install` installs Debian's chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (`make install`)"
    )
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)  # each assertion waits for the page this long
    shown = situate_sweep(tmp_path)
    assert shown["stages"] == ["dense", "sparse", "fusion"]
    with mlflow_ui(tmp_path) as ui, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(NO_ASSISTANT)
            context.set_default_timeout(WAIT_MS)
            page = context.new_page()
            page.goto(evaluation_view(ui, shown["experiment"]))
            check_evaluation_view(page, expect, shown)
            check_traces_tab(page, expect, shown)  # from the runs page, as a user goes there
        finally:
            browser.close()
