"""Issue 11's whole path, as a user types it: a folder of PDF, HTML, DOCX and Markdown files ->
``situate questions generate`` (against the Anthropic emulator) -> a scripted review -> a sweep on
the reviewed set -> ``situate report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from document_fixtures import mixed_folder
from situate.datasets.generated import read_questions
from situate.emulators.anthropic_api import AnthropicEmulator

KEY = "emulator-key-test-own-documents"

pytestmark = pytest.mark.slow


def test_parse_generate_review_sweep_report(tmp_path: Path) -> None:
    docs, out = mixed_folder(tmp_path), tmp_path / "out"
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        proc = run_cli(
            "questions", "generate", "dataset=folder", f"dataset.path={docs}",
            f"output_dir={out}", f"llm.base_url={emu.url}", "questions.passage_words=12",
            "questions.target=8", env={"ANTHROPIC_API_KEY": KEY},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        billed = [r for r in emu.requests if r.path == "/v1/messages" and r.billed]
    qfile = out / "questions" / "folder" / "questions.jsonl"
    written = read_questions(qfile)
    kept = [q for q in written if q.status == "kept"]
    assert len(written) == len(billed) == 8 and len(kept) >= 4
    # every kept question's gold is its quote's characters in the parsed document
    assert all(q.gold and q.match in ("exact", "normalized", "fuzzy") for q in kept)

    # the reviewer rejects the first kept question and accepts the others, from a pipe
    proc = run_cli("questions", "review", str(qfile), input="r\n" + "a\n" * (len(kept) - 1))
    assert proc.returncode == 0, proc.stderr[-3000:]
    reviewed = [q for q in read_questions(qfile) if q.status == "kept"]
    assert [q.review for q in reviewed] == ["rejected"] + ["accepted"] * (len(kept) - 1)

    study = [
        "dataset=generated", f"dataset.path={docs}", f"dataset.qa={qfile}",
        "dataset.review=required", "chunker=markdown", "dataset.min_words=5",
        "embedder=minilm_onnx", f"output_dir={out}", "study=byod", "baseline={context:none}",
    ]  # fmt: skip
    proc = run_cli("run", "-m", *study, "context=none,heading_path")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(p.read_text()) for p in sorted(out.rglob("result.json"))]
    assert len(results) == 2
    for result in results:  # only the accepted questions are scored
        assert result["metrics"]["n_questions"] == len(kept) - 1

    proc = run_cli("report", *study, "--permutations", "200")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = out / "reports" / "byod"
    assert (report / "index.html").is_file()
    md = (report / "report.md").read_text()
    assert "heading_path" in md and f"{len(kept) - 1} questions" in md
