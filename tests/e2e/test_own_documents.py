"""``experiment=own_documents``, as the "your own documents" page types it: an offline evaluation
set from a folder of PDF, HTML, DOCX and Markdown files, the preset's six runs on it, the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_cli
from document_fixtures import mixed_folder

pytestmark = pytest.mark.slow
EVERY_BATCH = {"SITUATE_PROGRESS_EVERY_S": "0"}  # a progress line after every batch


def test_generate_a_set_run_the_preset_open_the_report(tmp_path: Path) -> None:
    docs, out = mixed_folder(tmp_path), tmp_path / "out"
    proc = run_cli(
        "questions", "generate", "dataset=folder", f"dataset.path={docs}",
        "question_generator=extractive", "questions.passage_words=12", "questions.target=12",
        f"output_dir={out}", env=EVERY_BATCH,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    # stderr is a pipe, not a terminal: each stage's progress is lines (one per batch here)
    assert re.search(r"parsing \d+ files in .*: \d+/\d+ \(\d+%\)", proc.stderr), proc.stderr
    assert re.search(r"writing [\d,]+ questions by the extractive rule: [\d,]+/", proc.stderr)
    qfile = out / "questions" / "folder" / "questions.jsonl"
    assert qfile.is_file()

    proc = run_cli(
        "run", "experiment=own_documents", f"dataset.path={docs}", f"dataset.qa={qfile}",
        "dataset.min_words=5", f"output_dir={out}", env=EVERY_BATCH,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    # and the jobs' log files hold the embedding's lines (an index build is one call: its lines
    # come from the ticker while it runs, tests/test_progress.py)
    logs = "".join(p.read_text() for p in out.rglob("*.log"))
    assert re.search(r"embedding \d+ chunks.*: \d+/\d+ \(\d+%\)", logs), logs[-3000:]
    rows = [json.loads(p.read_text()) for p in sorted(out.rglob("result.json"))]
    runs = {(r["choices"]["context"], r["choices"]["fusion"]) for r in rows}
    assert runs == {
        (c, f) for c in ("none", "heading_path") for f in ("dense_only", "sparse_only", "rrf")
    }
    for row in rows:
        assert not row.get("error"), row["error"]
        assert "dev_pass_at_5" in row["metrics"] and "test_pass_at_5" in row["metrics"]
    # the run ends on the command of the report (its "where to look next" lines)
    report_line = f"situate report experiment=own_documents output_dir={out}"
    assert report_line in " ".join(proc.stdout.split()), proc.stdout[-3000:]

    proc = run_cli(
        "report", "experiment=own_documents", f"output_dir={out}", "--permutations", "200"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    md = (out / "reports" / "own_documents" / "report.md").read_text()
    assert "heading_path" in md and "sparse_only" in md
