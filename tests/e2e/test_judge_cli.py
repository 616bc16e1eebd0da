"""``situate judge`` end to end: the replication study on the cookbook set (6 documents, two of
its arms), judged against the Anthropic emulator; priced by ``situate estimate --judge`` first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import COOKBOOK, run_cli
from situate.emulators.anthropic_api import AnthropicEmulator

KEY = "emulator-key-test-judge-cli"
# the int8 ONNX MiniLM: the judge is the point here, and the default embedder is tested elsewhere
STUDY = ["experiment=cookbook_replication", "dataset.max_documents=6", "embedder=minilm_onnx"]
pytestmark = pytest.mark.slow


def run_study(out: Path, study: list[str]) -> Path:
    """Two arms of ``study`` run into ``out`` (skipped where the cookbook data is missing)."""
    if not (COOKBOOK / "codebase_chunks.json").exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK} (run `situate data fetch cookbook`)")
    proc = run_cli("run", *study, "arm=baseline,contextual_bm25", f"output_dir={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    return run_study(tmp_path_factory.mktemp("judge"), STUDY)


@pytest.fixture(scope="module")
def emulator():
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        yield emu


def judge(out: Path, emu, *args: str):
    env = {"ANTHROPIC_API_KEY": KEY}
    over = [*STUDY, f"output_dir={out}", f"llm.base_url={emu.url}"]
    return run_cli("judge", *over, "--permutations", "500", *args, env=env)


def runs(out: Path):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{out / 'mlflow.db'}")
    exp = client.get_experiment_by_name("cookbook_replication")
    found = client.search_runs([exp.experiment_id])
    return client, [r for r in found if r.data.tags.get("sweep") != "true"]


def test_every_run_writes_trec_files_any_ir_tool_reads(study: Path):
    client, found = runs(study)
    assert {"baseline", "contextual_bm25"} <= {r.data.tags["arm"] for r in found}
    for r in found:
        names = {a.path for a in client.list_artifacts(r.info.run_id)}
        assert {"run.trec", "qrels.txt", "chunks.jsonl"} <= names
        folder = client.download_artifacts(r.info.run_id, "run.trec", str(study / r.info.run_id))
        first = Path(folder).read_text().splitlines()[0].split()
        assert first[1] == "Q0" and first[3] == "1" and first[4] == "20"  # rank 1 scores 20


def test_estimate_then_judge_costs_the_same_and_a_rerun_pays_nothing(study: Path, emulator):
    env = {"ANTHROPIC_API_KEY": KEY}
    over = [*STUDY, f"output_dir={study}", f"llm.base_url={emulator.url}"]
    est = run_cli("estimate", *over, "--judge", env=env)
    assert est.returncode == 0, est.stderr[-3000:]
    pairs = int(re.search(r"(\d+) to judge", est.stdout).group(1))
    estimated = re.search(r"= \$(\d+\.\d+)\n", est.stdout).group(1)
    assert len(estimated.replace(".", "").lstrip("0")) == 4  # 4 significant digits, as all USD
    assert pairs > 0 and "exact" in est.stdout
    # the judge's model (Haiku 4.5 here), then Haiku 5.5, each at its own rates
    blocks = est.stdout.split("judging study cookbook_replication with ")[1:]
    rates = {"claude-haiku-4-5": ("1.00", "5.00"), "claude-haiku-5-5": ("0.10", "0.50")}
    assert [b.split()[0] for b in blocks] == list(rates)
    for block, (rate_in, rate_out) in zip(blocks, rates.values(), strict=True):
        n_in, r_in, n_out, r_out, usd = re.search(
            r"USD: ([\d,]+) x \$([\d.]+)/Mtok \+ ([\d,]+) x \$([\d.]+)/Mtok = \$([\d.]+)", block
        ).groups()
        assert (r_in, r_out) == (rate_in, rate_out)
        assert int(n_out.replace(",", "")) == pairs  # one output token a pair
        by_hand = int(n_in.replace(",", "")) * float(r_in) + pairs * float(r_out)
        assert float(usd) == pytest.approx(by_hand / 1e6, rel=5e-4)  # 4 significant digits

    proc = judge(study, emulator)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"judge: {pairs} pairs judged, 0 from the store, billed ${estimated}" in proc.stdout
    md = (study / "reports" / "cookbook_replication" / "judged.md").read_text()
    for needed in ("judged nDCG@20", "gold Recall@20", "gold MAP", "Cohen's kappa", "p_holm"):
        assert needed in md, needed
    for row in ("| baseline (baseline) |", "| contextual_bm25 |"):
        assert row in md
    # `situate report` shows the judged metrics beside gold, with the agreement
    report = run_cli("report", *STUDY, f"output_dir={study}", "--permutations", "200")
    assert report.returncode == 0, report.stderr[-3000:]
    html = (study / "reports" / "cookbook_replication" / "index.html").read_text()
    for needed in ("Judged relevance beside gold", "judged nDCG@20", "gold Recall@20", "kappa"):
        assert needed in html, needed
    # pooled arms: every top-20 chunk judged
    _, found = runs(study)
    pooled = [r for r in found if r.data.tags["arm"] in ("baseline", "contextual_bm25")]
    assert len(pooled) == 2
    for r in pooled:
        assert r.data.metrics["unjudged_at_20"] == 0.0
        assert 0.0 < r.data.metrics["judged_ndcg_at_20"] <= 1.0

    again = judge(study, emulator)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"judge: 0 pairs judged, {pairs} from the store, billed $0" in again.stdout


def test_hand_edited_judgments_are_read_back(study: Path, emulator, tmp_path: Path):
    exported = study / "reports" / "cookbook_replication" / "qrels_judged.txt"
    if not exported.exists():
        assert judge(study, emulator).returncode == 0
    lines = exported.read_text().splitlines()
    qid, _, chunk_id, grade = lines[0].split()
    edited = tmp_path / "edited.txt"
    new = (int(grade) + 1) % 4
    edited.write_text(f"# my grades\n{qid} 0 {chunk_id} {new}\n")
    proc = judge(study, emulator, "--qrels", str(edited), "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{qid} 0 {chunk_id} {new}" in (tmp_path / "r" / "qrels_judged.txt").read_text()
    assert "1 graded by hand" in (tmp_path / "r" / "judged.md").read_text()
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{qid} 0 no_such_chunk 2\n")
    proc = judge(study, emulator, "--qrels", str(bad))
    assert proc.returncode == 2
    assert "chunk no_such_chunk is in no run" in proc.stderr and "Traceback" not in proc.stderr


def test_an_arm_run_after_the_judging_shows_its_unjudged_share(study: Path, emulator):
    if not (study / "reports" / "cookbook_replication" / "judged.md").exists():
        assert judge(study, emulator).returncode == 0
    proc = run_cli("run", *STUDY, "arm=contextual_embeddings", f"output_dir={study}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = judge(study, emulator, "--all-runs", "--stored-only")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "judge: 0 pairs judged" in proc.stdout
    client, found = runs(study)
    by_arm = {r.data.tags["arm"]: r.data.metrics for r in found}
    assert by_arm["baseline"]["unjudged_at_20"] == 0.0
    assert by_arm["contextual_embeddings"]["unjudged_at_20"] > 0.0


def test_the_local_model_judges_the_study_offline(tmp_path: Path):
    pytest.importorskip("xllamacpp")
    # the study on its first two documents (9 questions): SmolLM2 takes about 3.5 s a pair on
    # one thread, and the six documents' 23 questions pool 28 pairs
    small = ["experiment=cookbook_replication", "dataset.max_documents=2"]
    study = run_study(tmp_path / "study", small)
    over = [*small, f"output_dir={study}", "judge=local", "llm=local_smollm2"]
    # a pool of each arm's top chunk and a 4-pair agreement sample, on one thread
    proc = run_cli(
        "judge", *over, "judge.depth=1", "judge.agreement_pairs=4", "--permutations", "200", "--all-runs",
        "--out", str(tmp_path), env={"HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    md = (tmp_path / "judged.md").read_text()
    assert "Judge: SmolLM2-135M-Instruct, prompt" in md and "Cohen's kappa" in md
    assert re.search(
        r"judge: \d+ pairs judged, \d+ from the store, billed \$0(?![.\d])", proc.stdout
    )
