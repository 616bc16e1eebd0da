"""``situate judge --human-labels`` end to end: a folder of three Markdown files and six questions
without gold, two arms (dense alone, RRF), judged against the Anthropic emulator, then corrected
by a few human grades (prediction-powered inference); judged.json's ``ppi`` checked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_judge_no_gold import DOCS  # the same three Markdown files

from conftest import run_cli
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.evaluation.judged import judged_scores
from situate.evaluation.trec import read_qrels, read_run

KEY = "emulator-key-test-judge-human-labels"
pytestmark = pytest.mark.slow
QUESTIONS = (
    "How do I install the tool?\nWhich port does the server use?\nWhen are invoices sent?\n"
    "How do I install behind a proxy?\nHow do I restart the server?\nWhen are refunds paid?\n"
)
KS, DEPTH = (1, 3, 6), 3


def common(folder: Path, out: Path) -> list[str]:
    return [
        "dataset=folder", f"dataset.path={folder}", "chunker=markdown", "dataset.max_words=20",
        "dataset.min_words=5", "context=none", "eval.ks=[1,3,6]", f"output_dir={out}",
        "study=human_labels", "baseline={fusion:dense_only}",
        "embedder=minilm_onnx",  # the judge is the point here, not the embedder
    ]  # fmt: skip


@pytest.fixture(scope="module")
def emulator():
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        yield emu


@pytest.fixture(scope="module")
def study(tmp_path_factory, emulator) -> tuple[list[str], Path]:
    folder = tmp_path_factory.mktemp("docs")
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "questions.txt").write_text(QUESTIONS, encoding="utf-8")
    out = tmp_path_factory.mktemp("out")
    proc = run_cli("run", *common(folder, out), "-m", "fusion=dense_only,rrf")
    assert proc.returncode == 0, proc.stderr[-3000:]
    over = [*common(folder, out), f"llm.base_url={emulator.url}", f"judge.depth={DEPTH}"]
    proc = judge(over)  # the judge alone first: judged.json as it always was
    assert proc.returncode == 0, proc.stderr[-3000:]
    return over, out


def judge(over: list[str], *args: str):
    return run_cli(
        "judge", *over, "--permutations", "200", *args, env={"ANTHROPIC_API_KEY": KEY}
    )  # fmt: skip


def reports(out: Path) -> Path:
    return out / "reports" / "human_labels"


def rankings(out: Path) -> dict[str, dict[str, list[str]]]:
    """Each run's ranking (run.trec), by run id."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{out / 'mlflow.db'}")
    exp = client.get_experiment_by_name("human_labels")
    found = [
        r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("sweep") != "true"
    ]
    return {
        r.info.run_id: read_run(
            client.download_artifacts(r.info.run_id, "run.trec", str(out / r.info.run_id))
        )
        for r in found
    }


def per_question(ranked, qrels, qid) -> dict[str, float]:
    """The judged metrics of one question, recomputed from the run and the qrels as written."""
    texts = ranked.get(qid, [])[: max(KS)]
    grades = qrels.get(qid, {})
    return judged_scores([grades.get(c) for c in texts], list(grades.values()), KS)


def test_without_human_labels_judged_json_has_no_correction(study):
    _, out = study
    record = json.loads((reports(out) / "judged.json").read_text())
    assert "ppi" not in record
    assert "Corrected by human labels" not in (reports(out) / "judged.md").read_text()
    # each run's judged scores per question, for the report's separation of the judged metrics
    for run in record["runs"]:
        assert run["qids"] and set(run["scores"]) == {
            m for m in run["means"] if m.startswith("judged_")
        }
        for m, values in run["scores"].items():
            assert len(values) == len(run["qids"])
            assert sum(values) / len(values) == pytest.approx(run["means"][m])


def test_labels_equal_to_the_judge_leave_its_means_and_show_no_bias(study, tmp_path):
    over, out = study
    lines = (reports(out) / "qrels_judged.txt").read_text().splitlines()
    qids = list(dict.fromkeys(line.split()[0] for line in lines))[:3]
    labels = tmp_path / "same.txt"  # TREC form, the judge's own grades of three questions
    labels.write_text("".join(f"{line}\n" for line in lines if line.split()[0] in qids))
    proc = judge(over, "--human-labels", str(labels), "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "judge: 0 pairs judged" in proc.stdout  # every labelled pair was pooled and stored
    record = json.loads((tmp_path / "r" / "judged.json").read_text())
    ppi = record["ppi"]
    assert (ppi["method"], ppi["questions"], ppi["half_width"]) == ("PPI", 3, 0.02)
    assert ppi["pairs"] == sum(1 for line in lines if line.split()[0] in qids)
    assert len(ppi["runs"]) == 2 and len(ppi["versus"]) == 1
    for run in record["runs"]:
        by_metric = ppi["runs"][run["run_id"]]
        assert sorted(by_metric) == sorted(m for m in record["metrics"] if m.startswith("judged_"))
        for m, e in by_metric.items():
            assert (e["n"], e["big_n"], e["lam"]) == (3, 6, 1.0)
            assert e["bias"] == 0.0 and e["var_rectifier"] == 0.0
            assert e["mean"] == pytest.approx(run["means"][m]) == pytest.approx(e["judge_mean"])
    md = (tmp_path / "r" / "judged.md").read_text()
    assert "## Corrected by human labels (prediction-powered inference)" in md
    assert "human labels would narrow the interval to +-2 points" in md  # N = 6 is too few
    assert "| dense_only (baseline) | judged nDCG@6 |" in md
    assert "human labels: " in proc.stdout and "corrected" in proc.stdout


def test_a_person_who_finds_nothing_relevant_moves_the_estimate_by_the_judges_bias(study, tmp_path):
    over, out = study
    qrels = read_qrels(reports(out) / "qrels_judged.txt")
    qids = list(qrels)[:3]
    labels = tmp_path / "zeros.csv"  # CSV form: every pooled chunk of three questions graded 0
    labels.write_text(
        "qid,chunk_id,grade\n"
        + "".join(f"{q},{c},0\n" for q in qids for c in qrels[q])
    )  # fmt: skip
    proc = judge(over, "--human-labels", str(labels), "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((tmp_path / "r" / "judged.json").read_text())
    ranked = rankings(out)
    all_qids = list(next(iter(ranked.values())))
    assert len(all_qids) == 6
    f = {rid: {q: per_question(r, qrels, q) for q in all_qids} for rid, r in ranked.items()}
    for rid, by_metric in record["ppi"]["runs"].items():
        for m, e in by_metric.items():
            # y = 0 on the labelled questions, so the bias is the judge's mean over them
            bias = np.mean([f[rid][q][m] for q in qids])
            judge_mean = np.mean([f[rid][q][m] for q in all_qids])
            assert e["bias"] == pytest.approx(bias) and e["judge_mean"] == pytest.approx(judge_mean)
            assert e["mean"] == pytest.approx(judge_mean - bias)
            var = np.var([f[rid][q][m] for q in qids], ddof=1)
            assert e["var_rectifier"] == pytest.approx(var)
            half = 1.959963984540054 * np.sqrt(np.var(list(
                f[rid][q][m] for q in all_qids), ddof=1) / 6 + var / 3)  # fmt: skip
            assert (e["ci_low"], e["ci_high"]) == pytest.approx(
                (e["mean"] - half, e["mean"] + half)
            )
    # the emulator grades by word overlap: it finds answers the person denied
    base = next(r["run_id"] for r in record["runs"] if r["baseline"])
    assert record["ppi"]["runs"][base]["judged_ndcg_at_6"]["bias"] > 0
    other = next(r["run_id"] for r in record["runs"] if not r["baseline"])
    diff = record["ppi"]["versus"][other]["judged_ndcg_at_6"]
    d = [f[other][q]["judged_ndcg_at_6"] - f[base][q]["judged_ndcg_at_6"] for q in all_qids]
    d_lab = [f[other][q]["judged_ndcg_at_6"] - f[base][q]["judged_ndcg_at_6"] for q in qids]
    assert diff["judge_mean"] == pytest.approx(np.mean(d))
    assert diff["mean"] == pytest.approx(np.mean(d) - np.mean(d_lab))  # y_b - y_a = 0


def test_a_labelled_pair_outside_the_pool_is_judged_too_and_ppi_plus_plus_tunes(study, tmp_path):
    over, out = study
    qrels = read_qrels(reports(out) / "qrels_judged.txt")
    ranked = next(iter(rankings(out).values()))
    qid = next(q for q in ranked if any(c not in qrels[q] for c in ranked[q]))
    outside = next(c for c in ranked[qid] if c not in qrels[qid])
    other = next(q for q in qrels if q != qid)
    labels = tmp_path / "labels.jsonl"
    rows = [{"qid": qid, "chunk_id": outside, "grade": 3}]
    rows += [{"qid": other, "chunk_id": c, "grade": 1} for c in qrels[other]]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = judge(over, "--human-labels", str(labels), "--power-tuning", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "judge: 1 pairs judged" in proc.stdout  # the pair no arm pooled at depth 3
    ppi = json.loads((tmp_path / "judged.json").read_text())["ppi"]
    assert (ppi["method"], ppi["questions"], ppi["pairs"]) == ("PPI++", 2, len(rows))
    for by_metric in ppi["runs"].values():
        for e in by_metric.values():
            assert 0.0 <= e["lam"] <= 1.0 and e["n"] == 2
    assert "PPI++ (Angelopoulos, Duchi and Zrnic 2023)" in (tmp_path / "judged.md").read_text()


def test_bad_human_labels_are_one_line_errors(study, tmp_path):
    over, out = study
    qrels = read_qrels(reports(out) / "qrels_judged.txt")
    qid = next(iter(qrels))
    one = tmp_path / "one.txt"
    one.write_text(f"{qid} 0 {next(iter(qrels[qid]))} 2\n")
    unknown = tmp_path / "unknown.txt"
    unknown.write_text(f"{qid} 0 no_such_chunk 2\n")
    broken = tmp_path / "broken.csv"
    broken.write_text("qid,chunk,grade\nq1,c1,2\n")
    for path, message in (
        (one, "needs at least 2 labelled questions"),
        (unknown, "chunk no_such_chunk is in no run"),
        (broken, "line 2 has no qid, chunk_id and whole-number grade"),
        (tmp_path / "missing.txt", "no such file"),
    ):
        proc = judge(over, "--human-labels", str(path), "--stored-only", "--out", str(tmp_path))
        assert proc.returncode == 2, (path, proc.stderr[-2000:])
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
