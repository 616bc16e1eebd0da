"""A corpus with no gold at all, end to end: a folder of three Markdown files and a plain
``questions.txt``, two arms (dense alone, RRF), run without gold metrics and then scored on the
judgments alone by ``situate judge`` against the Anthropic emulator."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conftest import run_cli
from situate.emulators.anthropic_api import AnthropicEmulator

KEY = "emulator-key-test-judge-no-gold"
pytestmark = pytest.mark.slow
DOCS = {
    "setup.md": "# Setup\n\nInstall the command line tool with pip install situate-cli and check "
    "the version it prints.\n\n## Proxies\n\nBehind a proxy, set HTTPS_PROXY before installing, "
    "or the download of the wheels fails first.\n",
    "server.md": "# Server\n\nThe server listens on port 8765 by default; set SITUATE_PORT to move "
    "it elsewhere.\n\n## Restarts\n\nRestart the server with situate serve --restart after you "
    "change its configuration file.\n",
    "billing.md": "# Billing\n\nInvoices are sent on the first working day of each month to the "
    "address on the account.\n\n## Refunds\n\nRefunds are paid within ten days to the card that "
    "was charged.\n",
}
QUESTIONS = "How do I install the tool?\nWhich port does the server use?\nWhen are invoices sent?\n"


def options(folder: Path, out: Path) -> list[str]:
    return [
        "dataset=folder", f"dataset.path={folder}", "chunker=markdown", "dataset.max_words=20",
        "dataset.min_words=5", "context=none", "eval.ks=[1,3,6]", f"output_dir={out}",
        "embedder=minilm_onnx",  # the judge is the point here, not the embedder
    ]  # fmt: skip


def common(folder: Path, out: Path) -> list[str]:
    return [*options(folder, out), "study=no_gold", "baseline={fusion:dense_only}"]


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("docs")
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "questions.txt").write_text(QUESTIONS, encoding="utf-8")
    out = tmp_path_factory.mktemp("out")
    proc = run_cli("run", *common(folder, out), "-m", "fusion=dense_only,rrf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("no gold") == 2 * (2 * 3 + 1), proc.stdout  # every gold cell, 2 rows
    logs = sorted(out.glob("multirun/*/*/*/app.log"))
    assert len(logs) == 2
    for log in logs:  # the k-vs-chunks check still runs
        assert "eval.ks: k=6 not below the 6 chunks of folder" in log.read_text()
    return folder, out


def runs(out: Path):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{out / 'mlflow.db'}")
    exp = client.get_experiment_by_name("no_gold")
    found = client.search_runs([exp.experiment_id])
    return client, [r for r in found if r.data.tags.get("sweep") != "true"]


def test_a_run_without_gold_ranks_every_question_and_logs_no_gold_metric(study):
    _, out = study
    client, found = runs(out)
    assert len(found) == 2
    for r in found:
        m = r.data.metrics
        assert (m["n_questions"], m["questions_with_gold"]) == (3.0, 0.0)
        gold = [
            k for k in m if k.startswith(("pass_", "recall_", "ndcg_", "precision_", "failure_"))
        ]
        assert gold == [] and "mrr" not in m and "map" not in m
        folder = Path(client.download_artifacts(r.info.run_id, "", str(out / r.info.run_id)))
        run_lines = (folder / "run.trec").read_text().splitlines()
        assert len(run_lines) == 3 * 6  # every question, top 6
        assert (folder / "qrels.txt").read_text() == ""
        with open(folder / "per_question.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert [row["qid"] for row in rows] == ["q1", "q2", "q3"]
        for row in rows:
            assert row["top_6_chunk_ids"].count(" ") == 5
            assert row["gold"] == row["recall_at_3"] == row["pass_at_1"] == ""
            assert row["reciprocal_rank"] == row["average_precision"] == ""


def test_the_gold_report_points_at_the_judge(study):
    folder, out = study
    proc = run_cli("report", *common(folder, out))
    assert proc.returncode == 2
    assert (
        "study no_gold: no question has gold, so there is no Pass@1; score it on judgments "
        "instead: situate judge experiment=no_gold"
    ) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_judge_scores_every_arm_on_judgments_alone(study):
    folder, out = study
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        over = [*common(folder, out), f"llm.base_url={emu.url}", "judge.depth=3"]
        proc = run_cli("judge", *over, "--permutations", "200", env={"ANTHROPIC_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr[-3000:]
    md = (out / "reports" / "no_gold" / "judged.md").read_text()
    assert "The study has no gold: every arm is scored on the judgments alone" in md
    assert "judged nDCG@3" in md and "| dense_only (baseline) |" in md and "| rrf |" in md
    for gold in ("gold Pass", "gold Recall", "gold P@", "gold MAP", "gold MRR", "rank metrics on"):
        assert gold not in md, gold
    assert "at every judged metric except coverage" in md
    assert "The study has no gold: agreement cannot be measured." in md
    _, found = runs(out)
    for r in found:
        m = r.data.metrics
        assert m["unjudged_at_3"] == 0.0 and m["unjudged_at_1"] == 0.0  # pooled arms
        assert 0.0 <= m["judged_ndcg_at_3"] <= 1.0 and "judged_precision_at_3" in m
        assert "recall_at_3" not in m and "mrr" not in m


def test_unlabelled_questions_leave_the_gold_metrics_of_the_labelled_ones_unchanged(tmp_path):
    """The same folder twice: qa.json with two questions with gold, then the same two and one
    without gold between them; every gold metric is the same, over the two."""
    from situate.api import Result

    labelled = [
        {"id": "install", "q": "How do I install the tool?", "gold": ["pip install situate-cli"]},
        {"id": "invoices", "q": "When are invoices sent?", "gold": ["first working day"]},
    ]
    unlabelled = {"id": "port", "q": "Which port does the server use?"}
    results = {}
    for name, records in (("gold", labelled), ("mixed", [labelled[0], unlabelled, labelled[1]])):
        folder = tmp_path / name
        folder.mkdir()
        for doc, text in DOCS.items():
            (folder / doc).write_text(text, encoding="utf-8")
        (folder / "qa.json").write_text(json.dumps(records), encoding="utf-8")
        out = tmp_path / f"out_{name}"
        proc = run_cli("run", *options(folder, out))
        assert proc.returncode == 0, proc.stderr[-3000:]
        (run_dir,) = out.glob("runs/*/*")
        results[name] = Result.from_folder(run_dir)
    gold, mixed = results["gold"].metrics, results["mixed"].metrics
    assert (mixed["n_questions"], mixed["questions_with_gold"]) == (3.0, 2.0)
    assert (gold["n_questions"], gold["questions_with_gold"]) == (2.0, 2.0)
    named = [m for m in gold if m.startswith(("pass_", "recall_", "ndcg_", "precision_"))]
    assert len(named) == 4 * 3
    for m in [*named, "mrr", "map"]:
        assert mixed[m] == pytest.approx(gold[m]), m
    assert list(results["mixed"].scores("recall_at_3").index) == ["install", "invoices"]
