"""``situate report`` on a tiny synthetic study logged to a temporary MLflow store.

The study: 8 questions, ks = [5, 10]; a baseline (context=none) and two LLM-context runs that
differ in prompt (default, code), nested under one sweep parent. Every per-question score is
written by hand below, so the flips and the pairing can be checked by eye.
"""

from __future__ import annotations

import csv
import json
import re
from html import unescape
from pathlib import Path
from xml.etree import ElementTree

import pytest

from situate.errors import SituateError
from situate.evaluation.statistics import holm
from situate.judging.agreement import agreement
from situate.judging.summary import JUDGED_FILE, JudgedRun, JudgedStudy, read_judged
from situate.report.charts import pareto_front
from situate.report.render import write_report
from situate.study.collect import load_study
from situate.study.compare import compare_study, gold_contexts, parse_span

PERMUTATIONS = 2000
STUDY = "synthetic"
QIDS = [f"q{i}" for i in range(8)]
GOLD = {  # one span per question; q5 has two (half found by the baseline)
    "q0": "doc_a:0-100",
    "q1": "doc_b:100-200",
    "q2": "doc_a:100-200",
    "q3": "doc_c:0-100",
    "q4": "doc_b:0-100",
    "q5": "doc_c:100-200 doc_a:0-100",
    "q6": "doc_b:0-100",
    "q7": "doc_c:0-100",
}
# pass@10 per question; pass@5 is the same except where noted, recall = pass
PASS10 = {
    "base": [1, 0, 1, 0, 1, 0.5, 1, 0],
    "default": [1, 1, 1, 1, 0, 1, 1, 0],  # miss->hit q1 q3 q5; hit->miss q4
    "code": [1, 0, 0, 1, 1, 0.5, 1, 1],  # miss->hit q3 q7; hit->miss q2
}
EXPECTED_FLIPS = {"default": (["q1", "q3", "q5"], ["q4"]), "code": (["q3", "q7"], ["q2"])}
COSTS = {"base": 0.0, "default": 0.12, "code": 0.10}
CHUNKS = [(d, i, 100 * i, 100 * (i + 1)) for d in ("doc_a", "doc_b", "doc_c") for i in range(2)]


def _questions(name: str) -> list[dict]:
    rows = []
    for i, qid in enumerate(QIDS):
        p10 = PASS10[name][i]
        p5 = 0.0 if (name == "default" and qid == "q1") else p10  # q1 found only at rank 6..10
        rank = "" if p10 == 0 else ("7" if p5 == 0 else "2")
        rows.append(
            {
                "qid": qid,
                "question": f"What does question {qid} ask?",
                "gold": GOLD[qid],
                "top_10_chunk_ids": "doc_a_chunk_0 doc_b_chunk_1",
                "first_relevant_rank": rank,
                "reciprocal_rank": f"{1 / int(rank):.4f}" if rank else "0.0000",
                "recall_at_5": f"{p5:.4f}",
                "recall_at_10": f"{p10:.4f}",
                "pass_at_5": f"{p5:.4f}",
                "pass_at_10": f"{p10:.4f}",
            }
        )
    if name == "code":  # another question order: the report must pair by qid
        rows.reverse()
    return rows


# what the embedder's window cut, as a run logs it: 3 of 8 texts, 2 of them lose their context
WINDOWS = {
    "code": {
        "texts_truncated": 3, "texts_truncated_share": 3 / 8,
        "contexts_truncated": 2, "contexts_truncated_share": 2 / 8,
    }
}  # fmt: skip


def _log_run(
    client, exp_id: str, parent_id: str, name: str, tags: dict, folder: Path, rows: list[dict]
) -> str:
    run = client.create_run(exp_id, run_name=name, tags={**tags, "mlflow.parentRunId": parent_id})
    rid = run.info.run_id
    folder.mkdir(parents=True)
    with open(folder / "per_question.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if tags["context"] == "llm":
        with open(folder / "contexts.jsonl", "w") as f:
            for doc, i, start, end in CHUNKS:
                line = {"chunk_id": f"{doc}_chunk_{i}", "doc_id": doc, "start": start, "end": end}
                f.write(
                    json.dumps({**line, "context": f"{name} context of {doc} chunk {i}"}) + "\n"
                )
    for f in folder.iterdir():
        client.log_artifact(rid, str(f))
    scores = [c for c in rows[0] if c == "reciprocal_rank" or re.fullmatch(r"(pass|recall)_at_\d+", c)]  # fmt: skip
    scored = {k: [float(r[k]) for r in rows if r[k] != ""] for k in scores}  # blank: no gold
    means = {
        ("mrr" if k == "reciprocal_rank" else k): sum(v) / len(v) for k, v in scored.items() if v
    }
    cost = COSTS.get(name, 0.0)
    metrics = {**means, "config_cost_usd_total": cost, **WINDOWS.get(name, {})}
    metrics["config_cost_usd_context"] = cost
    if tags["context"] == "llm":
        metrics.update(config_tokens_input_uncached=1200, config_tokens_cache_write=800, config_tokens_cache_read=5000, config_tokens_output=300)  # fmt: skip
    for k, v in metrics.items():
        client.log_metric(rid, k, float(v))
    client.set_terminated(rid, "FINISHED")
    return rid


def make_store(root: Path, study: str = STUDY, failed_job: bool = False) -> str:
    """A sqlite store under ``root`` (``root/mlflow.db``, as ``output_dir=root`` composes it)."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{(root / 'mlflow.db').resolve()}"
    client = MlflowClient(tracking_uri=uri)
    exp_id = client.create_experiment(
        study, artifact_location=(root / "mlartifacts").resolve().as_uri()
    )
    sweep = root / "multirun" / study
    parent = client.create_run(exp_id, run_name="sweep", tags={"sweep": "true", "sweep_dir": str(sweep), "overrides": "-m prompt=default,code"})  # fmt: skip
    pid = parent.info.run_id
    common = {"dataset": "toy", "chunker": "fixed", "embedder": "minilm", "fusion": "rrf", "git_commit": "abc123"}  # fmt: skip
    base_tags = {**common, "context": "none"}
    runs = [("base", base_tags)] + [
        (prompt, {**common, "context": "llm", "prompt": prompt, "llm": "claude_haiku_4_5"})
        for prompt in ("default", "code")
    ]
    rids = [
        _log_run(client, exp_id, pid, name, tags, root / study / name, _questions(name))
        for name, tags in runs
    ]
    for rid in rids:  # every question kept: max_questions unset, as the flattened config logs it
        for key, value in {"max_questions": "", "sample": "stratified", "seed": "0"}.items():
            client.log_param(rid, f"dataset.{key}", value)
    if failed_job:
        run = client.create_run(exp_id, run_name="rerank", tags={**common, "context": "llm", "prompt": "default", "reranker": "cross_encoder", "mlflow.parentRunId": pid})  # fmt: skip
        client.set_terminated(run.info.run_id, "FAILED")
        (sweep / "3").mkdir(parents=True)
        error = "reranker=cross_encoder: model 'x' is not available offline; set reranker.path"
        (sweep / "3" / "result.json").write_text(json.dumps({"run_id": run.info.run_id, "choices": {}, "error": error}))  # fmt: skip
    client.set_terminated(pid, "FAILED" if failed_job else "FINISHED")
    return uri


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, str]:
    """One store, two studies: ``synthetic`` and ``with_failure`` (a 4th job that failed)."""
    root = tmp_path_factory.mktemp("report_store")
    uri = make_store(root)
    make_store(root, study="with_failure", failed_job=True)
    return root, uri


@pytest.fixture(scope="module")
def compared(store):
    _, uri = store
    study = load_study(STUDY, {"context": "none"}, uri)
    return compare_study(study, permutations=PERMUTATIONS)


@pytest.mark.slow
def test_the_report_finds_the_baseline_and_every_run(compared):
    study = compared.study
    assert study.baseline.name == "base" and study.baseline.tags["context"] == "none"
    assert [r.name for r in study.runs] == ["base", "default", "code"]
    assert study.ks == [5, 10]
    assert study.varying == ["context", "prompt", "llm"]
    assert [r.label for r in study.runs] == [
        "context=none",
        "context=llm, prompt=default",
        "context=llm, prompt=code",
    ]
    assert study.parent is not None and not study.failed_runs


def test_holm_adjusts_all_the_comparisons_at_once(compared):
    comparisons = [c for v in compared.versus for c in v.comparisons]
    assert len(comparisons) == 2 * 5  # pass@5, pass@10, recall@5, recall@10, mrr per run
    raw = [c.p_value for c in comparisons]
    assert [c.p_holm for c in comparisons] == pytest.approx(holm(raw))
    default = compared.versus[0].get("pass_at_10")
    assert default.baseline == pytest.approx(4.5 / 8) and default.value == pytest.approx(6 / 8)
    assert (default.wins, default.ties, default.losses) == (3, 4, 1)


def test_flipped_questions_at_the_largest_k_match_the_hand_count(compared):
    for v in compared.versus:
        gained, lost = EXPECTED_FLIPS[v.run.name]
        assert [f.qid for f in v.gained] == gained
        assert [f.qid for f in v.lost] == lost
    q1 = compared.versus[0].gained[0]
    assert q1.question == "What does question q1 ask?" and q1.rank == "7" and q1.baseline_rank == ""
    # gold doc_b:100-200 overlaps chunk 1 of doc_b only (chunk 0 ends where the span starts)
    assert [(c.chunk_id, c.context) for c in q1.contexts] == [
        ("doc_b_chunk_1", "default context of doc_b chunk 1")
    ]
    q5 = compared.versus[0].gained[2]
    assert [c.chunk_id for c in q5.contexts] == ["doc_c_chunk_1", "doc_a_chunk_0"]
    # the "code" run's CSV is in reverse order: pairing is by qid
    assert [f.qid for f in compared.versus[1].gained] == ["q3", "q7"]


def test_span_parsing_and_overlap_edges(compared):
    assert parse_span("doc:with:colons:10-20") == ("doc:with:colons", 10, 20)
    assert parse_span("not a span") is None
    run = compared.study.runs[1]
    assert [c.chunk_id for c in gold_contexts(run, ["doc_a:99-101"])] == [
        "doc_a_chunk_0",
        "doc_a_chunk_1",
    ]


def test_pareto_front_keeps_the_undominated_points():
    points = [(0.0, 80.0), (0.0, 82.0), (0.1, 90.0), (0.2, 85.0), (0.3, 93.0)]
    assert pareto_front(points) == [1, 2, 4]


def test_the_html_is_self_contained_and_the_markdown_has_the_tables(compared, tmp_path):
    html_path, md_path = write_report(compared, tmp_path / "out")
    html = html_path.read_text()
    assert "<script" not in html.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "url(http" not in html and "@import" not in html and "<link" not in html
    assert html.count("<svg") == 3  # failure rate, cost vs recall, prompt variants
    assert "not significant (p_holm = " in html
    assert "<details" in html and "default context of doc_b chunk 1" in html
    md = md_path.read_text()
    assert "- Study: `synthetic` (toy, 8 questions)\n" in md  # every question kept: no sample
    assert "| context | prompt | llm | Pass@5 | Pass@10 | Recall@5 | Recall@10 | MRR |" in md
    assert (
        "| configuration | metric | baseline | value | difference | 95% CI | p | p_holm | significance | W/T/L |"
        in md
    )
    assert "| context=llm, prompt=default | Pass@10 | 56.2 | 75.0 | +18.8 |" in md
    assert "input tokens (uncached)" in md and "$0.1200" in md
    # beside each arm, what the embedder's window cut; a sentence says what it means
    assert "| MRR | cut by the window |" in md
    cut = "dense: 3 texts (37.5%) cut, 2 of them lose their context (25.0% of contexts)"
    (code_row,) = [line for line in md.splitlines() if line.startswith("| llm | code |")]
    assert code_row.endswith(f"| {cut} |")
    assert all(line.endswith("| - |") for line in md.splitlines() if line.startswith("| none |"))
    assert "**Cut by the window:** In context=llm, prompt=code the embedder read only" in md
    assert cut in html and "<strong>Cut by the window:</strong>" in html
    # each chart is also a file of its own, to paste into documents: an SVG document as it stands
    charts = sorted((tmp_path / "out").glob("*_chart.svg"))
    assert [c.name for c in charts] == ["cost_chart.svg", "failure_chart.svg", "prompt_chart.svg"]
    for chart in charts:
        root = ElementTree.parse(chart).getroot()  # inline SVG lacks the namespaces: not XML
        assert root.tag == "{http://www.w3.org/2000/svg}svg"


def judged_of(compared, labels: list[str], scores: list[list[float]] | None = None) -> JudgedStudy:
    """What `situate judge` would write for the runs named ``labels``, with hand-set values: the
    n-th of them scores judged nDCG@10 (n+1)/8 in [n/8, (n+2)/8] and MRR 0.5; with ``scores``,
    the n-th's judged nDCG@10 per question of ``QIDS`` (without, judged.json as an older situate
    wrote it: no per-question scores)."""
    runs = []
    for n, name in enumerate(labels):
        run = next(r for r in compared.study.runs if r.label == name)
        means = {"judged_ndcg_at_5": 0.9, "judged_ndcg_at_10": (n + 1) / 8, "unjudged_at_10": 0.0, "recall_at_10": 0.5, "mrr": 0.5}  # fmt: skip
        cis = {"judged_ndcg_at_5": (0.8, 1.0), "judged_ndcg_at_10": (n / 8, (n + 2) / 8), "unjudged_at_10": (0.0, 0.0), "recall_at_10": (0.25, 0.75), "mrr": (0.25, 0.75)}  # fmt: skip
        per_question = {}
        if scores is not None:
            per_question = {"judged_ndcg_at_5": [0.9] * 8, "judged_ndcg_at_10": scores[n]}
        baseline = run is compared.study.baseline
        qids = QIDS if scores is not None else []
        runs.append(JudgedRun(run.run_id, name, baseline, means, cis, qids, per_question))
    # judged relevant: 3 of 4 gold chunks, 1 of 4 others; observed agreement 6/8, chance 1/2
    agree = agreement([(3, True), (2, True), (2, True), (0, True), (2, False), (1, False), (0, False), (None, False)])  # fmt: skip
    assert agree.kappa == pytest.approx(0.5)
    return JudgedStudy(
        STUDY, "claude-haiku-4-5", "http://127.0.0.1:9", "0123456789abcdef", 2, 20, 37, [5, 10],
        list(runs[0].means), runs, agree,
    )  # fmt: skip


def test_the_report_shows_judged_beside_gold_metrics_and_the_agreement(compared, tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    judged_of(compared, [compared.study.baseline.label, "context=llm, prompt=default"]).write(
        folder
    )
    html_path, md_path = write_report(compared, folder, read_judged(folder))
    md = md_path.read_text()
    assert "## Judged relevance beside gold" in md
    assert "| configuration | judged nDCG@10 | unjudged@10 | gold Recall@10 | gold MRR |" in md
    assert "| context=none (baseline) | 12.5 [0.0, 25.0] | 0.0 [0.0, 0.0] | 50.0 [25.0, 75.0] | 0.500 [0.250, 0.750] |" in md  # fmt: skip
    assert "| context=llm, prompt=default | 25.0 [12.5, 37.5] |" in md
    assert "Not judged: context=llm, prompt=code" in md
    agreement_text = (
        "Agreement of claude-haiku-4-5 at http://127.0.0.1:9 with gold: 75.0% of 4 gold chunks "
        "judged relevant (grade >= 2), 25.0% of 4 pooled chunks without gold; Cohen's kappa 0.500"
    )
    assert agreement_text in md
    html = unescape(html_path.read_text())  # Cohen&#39;s
    assert "<h2>Judged relevance beside gold</h2>" in html and agreement_text in html
    assert '25.0<span class="ci">[12.5, 37.5]</span>' in html
    assert "judged nDCG@5" not in html  # the largest k only: judged.md has every k
    assert "judged.json holds no per-question judged scores (an older situate judge wrote it)" in md


def test_a_report_without_judgments_has_no_judged_section_and_a_bad_file_is_one_line(
    compared, tmp_path
):
    html_path, md_path = write_report(compared, tmp_path / "plain", read_judged(tmp_path))
    assert "Judged relevance" not in html_path.read_text() + md_path.read_text()
    (tmp_path / JUDGED_FILE).write_text('{"study": "synthetic"}')
    with pytest.raises(SituateError, match=r"judged.json: not a judged.json situate judge writes"):
        read_judged(tmp_path)


def test_a_missing_baseline_is_one_line_naming_study_and_baseline(store):
    _, uri = store
    with pytest.raises(SituateError) as e:
        load_study(STUDY, {"context": "heading_path"}, uri)
    msg = str(e.value)
    assert "\n" not in msg and STUDY in msg and "{context: heading_path}" in msg
    with pytest.raises(SituateError, match="declares no baseline.*experiment=tune_fusion"):
        load_study(STUDY, None, uri)
    with pytest.raises(SituateError, match="no MLflow experiment"):
        load_study("no_such_study", {"context": "none"}, uri)


def test_a_failed_job_is_listed_with_its_error(store, tmp_path):
    _, uri = store
    study = load_study("with_failure", {"context": "none"}, uri)
    (failed,) = study.failed_runs
    assert failed.status == "FAILED" and "not available offline" in failed.error
    sc = compare_study(study, permutations=200)
    assert len(sc.versus) == 2  # the failed run is not compared
    html_path, md_path = write_report(sc, tmp_path / "out")
    assert "not available offline" in html_path.read_text()
    assert "## Failed or unavailable runs" in md_path.read_text()
    # --all-runs reads FINISHED runs only: no failure to show
    assert not load_study("with_failure", {"context": "none"}, uri, all_runs=True).failed_runs


def test_the_cli_writes_the_report_under_output_dir(store, monkeypatch, capsys):
    from situate.commands.report import main

    root, _ = store
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    rc = main(
        [f"output_dir={root}", f"study={STUDY}", "baseline={context:none}", "--permutations", "500"]
    )
    assert rc == 0
    html = root / "reports" / STUDY / "index.html"
    assert html.exists() and (html.parent / "report.md").exists()
    out = capsys.readouterr().out.replace("\n", "")
    assert str(html.resolve()) in out
    # the report is attached to the sweep's parent run, for whoever opens the sweep in MLflow
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    (parent,) = client.search_runs(
        [client.get_experiment_by_name(STUDY).experiment_id], "tags.sweep = 'true'"
    )
    listed = [a.path for a in client.list_artifacts(parent.info.run_id, "report")]
    assert listed == ["report/index.html", "report/report.md"]
    assert f"attached to the sweep's MLflow run {parent.info.run_id}" in out
    got = client.download_artifacts(parent.info.run_id, "report/report.md", str(root / "dl"))
    assert Path(got).read_text() == (html.parent / "report.md").read_text()


# -- a gain at k = 1 that the largest k hides --------------------------------------------------

AT1 = "recall_at_1_study"
N_AT1 = 20  # baseline: half the questions at rank 1, half at rank 2; arm: all at rank 1


def _ranked_rows(ranks: list[int], ks: tuple[int, ...] = (1, 5)) -> list[dict]:
    rows = []
    for i, rank in enumerate(ranks):
        hit = {f"{m}_at_{k}": f"{float(rank <= k):.4f}" for m in ("pass", "recall") for k in ks}
        rows.append({"qid": f"q{i}", "question": f"question {i}?", "gold": f"doc:{i}-{i + 1}",
                     "first_relevant_rank": str(rank), "reciprocal_rank": f"{1 / rank:.4f}", **hit})  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def at1_store(tmp_path_factory) -> str:
    """Arms baseline, arm (Recall@1 50% -> 100%, Recall@5 100% in both) and dup (q0 twice)."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("at1_store")
    uri = f"sqlite:///{(root / 'mlflow.db').resolve()}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment(AT1, artifact_location=(root / "art").resolve().as_uri())
    pid = client.create_run(exp, run_name="sweep", tags={"sweep": "true"}).info.run_id
    base = _ranked_rows([1, 2] * (N_AT1 // 2))
    dup = _ranked_rows([1] * N_AT1)
    dup[1]["qid"] = "q0"
    for arm, rows in (("baseline", base), ("arm", _ranked_rows([1] * N_AT1)), ("dup", dup)):
        tags = {"arm": arm, "context": "none", "dataset": "covid_qa", "git_commit": "abc123"}
        rid = _log_run(client, exp, pid, arm, tags, root / arm, rows)
        sample = {"max_questions": 20, "sample": "stratified", "seed": 0}
        for key, value in sample.items():  # as the flattened config logs them
            client.log_param(rid, f"dataset.{key}", str(value))
    client.set_terminated(pid, "FINISHED")
    return uri


@pytest.mark.slow
def test_every_k_is_compared_and_the_findings_name_each_metric(at1_store):
    study = load_study(AT1, {"arm": "baseline"}, at1_store)
    sc = compare_study(study, permutations=PERMUTATIONS)
    assert sc.headline is None and sc.compared == [
        "pass_at_1", "pass_at_5", "recall_at_1", "recall_at_5", "mrr",
    ]  # fmt: skip
    (arm,) = sc.versus
    assert [c.metric for c in arm.comparisons] == sc.compared
    r1 = arm.get("recall_at_1")
    assert (r1.baseline, r1.value, r1.difference) == (0.5, 1.0, 0.5)
    assert (r1.wins, r1.ties, r1.losses) == (10, 10, 0) and r1.significant
    assert arm.get("recall_at_5").p_holm == 1.0  # 100% in both: nothing to find at @5
    sig = r"significant \(p_holm = 0\.0\d+\)"
    (finding,) = sc.findings()
    assert re.fullmatch(
        rf"arm vs baseline: Pass@1 \+50\.0 pts, {sig}; Pass@5 \+0\.0 pts, not significant "
        rf"\(p_holm = 1\.00\); Recall@1 \+50\.0 pts, {sig}; Recall@5 \+0\.0 pts, not "
        rf"significant \(p_holm = 1\.00\); MRR \+0\.250, {sig}; 0 questions gained, 0 lost at "
        r"Pass@5\.",
        finding,
    ), finding
    assert sc.scope() == (
        "Compared with the baseline at every metric and k of the study (Pass@1, Pass@5, "
        "Recall@1, Recall@5, MRR; set report.headline to compare at one); 5 comparison(s) in "
        "all, Holm-corrected together at α = 0.05."
    )


def test_a_headline_metric_is_the_only_comparison_and_sets_the_flip_k(at1_store, tmp_path):
    study = load_study(AT1, {"arm": "baseline"}, at1_store)
    sc = compare_study(study, permutations=PERMUTATIONS, headline="recall_at_1")
    (arm,) = sc.versus
    assert [c.metric for c in arm.comparisons] == ["recall_at_1"]
    assert arm.comparisons[0].p_holm == arm.comparisons[0].p_value  # one comparison: Holm is p
    assert sc.k_flip == 1 and [f.qid for f in arm.gained] == [f"q{i}" for i in range(1, 20, 2)]
    (finding,) = sc.findings()
    assert re.fullmatch(
        r"arm vs baseline: Recall@1 100\.0% vs 50\.0% \(\+50\.0 pts, 95% CI \+\d+\.\d to "
        r"\+\d+\.\d; failure rate @1 100% lower; 10 questions gained, 0 lost at Pass@1\): "
        r"significant \(p_holm = 0\.0\d+\)\.",
        finding,
    ), finding
    md = write_report(sc, tmp_path / "out")[1].read_text()
    assert (  # the runs kept a sample of their questions: the report says which
        "- Study: `recall_at_1_study` (covid_qa, dataset.max_questions=20, dataset.sample="
        "stratified, dataset.seed=0, 20 questions)\n" in md
    )
    assert (
        "Compared with the baseline at the headline metric Recall@1 only (report.headline); "
        "1 comparison(s) in all, Holm-corrected together at α = 0.05." in md
    )
    with pytest.raises(SituateError) as e:
        compare_study(study, permutations=200, headline="recall_at_20")
    assert str(e.value) == (
        "report.headline='recall_at_20': study recall_at_1_study has no such metric (its runs are "
        "scored at k = 1, 5); choose one of pass_at_1, pass_at_5, recall_at_1, recall_at_5, mrr, "
        "or null to compare at every one"
    )


def test_duplicate_question_ids_in_per_question_csv_are_not_paired(at1_store):
    study = load_study(AT1, {"arm": "baseline"}, at1_store)
    (dup,) = study.failed_runs
    assert dup.label == "dup" and dup.error == (
        "per_question.csv has question id 'q0' in rows 1 and 2; comparisons pair questions by "
        "id: give every question its own id and rerun"
    )
    assert [v.run.label for v in compare_study(study, permutations=200).versus] == ["arm"]
    with pytest.raises(SituateError) as e:
        load_study(AT1, {"arm": "dup"}, at1_store)
    assert str(e.value) == (
        f"study {AT1}: the baseline run {{arm: dup}} cannot be compared ({dup.error}); rerun it "
        "before reporting"
    )


def test_the_cli_reads_report_headline(at1_store, tmp_path, monkeypatch, capsys):
    from situate.commands.report import main

    monkeypatch.setenv("MLFLOW_TRACKING_URI", at1_store)
    args = [f"output_dir={tmp_path}", f"study={AT1}", "baseline={arm:baseline}",
            "report.headline=recall_at_1", "--permutations", "500"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "vs baseline (Recall@1, Holm)" in out and "+50.0 pts, significant" in out
    assert "headline metric Recall@1 only" in (tmp_path / "reports" / AT1 / "report.md").read_text()


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory) -> str:
    """Gold for 4 of 6 questions (q4, q5 blank, as a run writes them): the baseline finds q0..q3
    at ranks 1, 2, 1, 2; the arm at rank 1 each. A second study has no gold at all."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("mixed_store")
    uri = f"sqlite:///{(root / 'mlflow.db').resolve()}"
    client = MlflowClient(tracking_uri=uri)

    def unlabelled(rows: list[dict], n: int) -> list[dict]:
        for row in rows[-n:]:
            row.update({k: "" for k in row if k not in ("qid", "question")})
        return rows

    for study, n_blank in (("mixed_gold", 2), ("no_gold", 6)):
        exp = client.create_experiment(study, artifact_location=(root / study).resolve().as_uri())
        pid = client.create_run(exp, run_name="sweep", tags={"sweep": "true"}).info.run_id
        for arm, ranks in (("baseline", [1, 2, 1, 2, 1, 1]), ("arm", [1] * 6)):
            tags = {"arm": arm, "context": "none", "dataset": "folder", "git_commit": "abc123"}
            rows = unlabelled(_ranked_rows(ranks), n_blank)
            _log_run(client, exp, pid, arm, tags, root / study / arm, rows)
        client.set_terminated(pid, "FINISHED")
    return uri


def test_questions_without_gold_are_left_out_of_gold_means_and_pairs(mixed_store):
    sc = compare_study(
        load_study("mixed_gold", {"arm": "baseline"}, mixed_store), permutations=PERMUTATIONS
    )
    base = next(s for s in sc.summaries if s.is_baseline)
    assert base.means["recall_at_1"] == 0.5  # 2 of 4, not 4 of 6 nor 2 of 6
    assert base.means["mrr"] == 0.75  # (1 + 1/2 + 1 + 1/2) / 4
    r1 = sc.versus[0].get("recall_at_1")
    assert (r1.baseline, r1.value) == (0.5, 1.0)
    assert (r1.wins, r1.ties, r1.losses) == (2, 2, 0)  # the 2 unlabelled questions are no ties


def test_a_study_without_gold_is_one_line_pointing_at_the_judge(mixed_store):
    study = load_study("no_gold", {"arm": "baseline"}, mixed_store)
    with pytest.raises(SituateError) as e:
        compare_study(study, permutations=PERMUTATIONS)
    assert str(e.value) == (
        "study no_gold: no question has gold, so there is no Pass@1; score it on judgments "
        "instead: situate judge experiment=no_gold"
    )


def test_the_report_says_how_far_its_questions_separate_the_configurations(compared, tmp_path):
    html_path, md_path = write_report(compared, tmp_path / "inform")
    md = md_path.read_text()
    # Pass@10 against the baseline [1, 0, 1, 0, 1, 0.5, 1, 0], paired by qid:
    # default: d = [0, 1, 0, 1, -1, 0.5, 0, 0], mean 1.5 / 8 = +18.8 points, sum (d - 0.1875)^2 =
    #   4 * 0.0352 + 2 * 0.6602 + 1.4102 + 0.0977 = 2.96875, sd = sqrt(2.96875 / 7) = 0.651;
    # code: d = [0, 0, -1, 1, 0, 0, 0, 1], mean +12.5 points, sd = sqrt((3 - 8 * 0.125^2) / 7) =
    #   0.641. MDE: 2.80158 * sd / sqrt(8) = 64.5 / 63.5 points by the normal approximation; the
    #   exact t with 7 df: 75.3 / 74.1 points, median 74.7. Questions for 2 points (Sakai):
    #   (2.80158 * 0.651 / 0.02)^2 + 1.92 = 8,323 (~8,300); 5 points: 1,333 (~1,300).
    # Every arm solves q0 and q6 (25%), none misses every question (0%), they differ on q1-q5, q7
    # (75%); 0 of 2 pairs separated on 8 questions: too small, and Pass@10 is the best of the five
    # (each of them underpowered; its halves agree best). Halves: over all 70 splits of the 8
    # questions in two of 4, tau-a is -2/3 on 28, -1/3 on 14, 0 on 18 and +1/3 on 10: the median
    # (of the 500 seeded splits as of all 70) -1/3; Pass@5 and MRR -2/3
    warning = (
        "Warning: the question set cannot separate the arms: too small to separate the arms at "
        "Pass@10; differences under 74.7 points cannot be detected with 8 questions (detecting 2 "
        "points would take ~8,200 questions, 5 points ~1,300): do not pick a configuration from it."
    )
    findings = md.split("## Findings\n\n")[1]
    assert findings.startswith(f"- **{warning}**\n")
    section = md.split("## How far these questions can separate the configurations\n\n")[1]
    assert section.startswith("This question set is too small to separate the arms at Pass@10.")
    assert (
        "| **Pass@10** | 8 | 56.2-75.0% | 25% | 0% | 75% | -0.33 | 0 of 2 | 74.7 points "
        "| ~8,200 / ~1,300 | underpowered |"
    ) in section
    assert (
        "| context=llm, prompt=default - context=none | +18.8 points | 0.651 | 75.3 points | no | "
        "~8,300 | ~1,300 |"
    ) in section
    assert (
        "| context=llm, prompt=code - context=none | +12.5 points | 0.641 | 74.1 points | no | "
        "~8,100 | ~1,300 |"
    ) in section
    html = unescape(html_path.read_text())
    assert "<h2>How far these questions can separate the configurations</h2>" in html
    assert f'<li class="warning"><strong>{warning}</strong></li>' in html
    assert '<td class="num">+18.8 points</td><td class="num">0.651</td>' in html


def test_the_judged_section_says_how_far_the_questions_separate_on_judged_metrics(
    compared, tmp_path
):
    folder = tmp_path / "reports"
    folder.mkdir()
    labels = [r.label for r in compared.study.runs]  # baseline, default, code
    scores = [[0, 0, 0, 0, 1, 1, 1, 1], [1] * 8, [0, 0, 0, 1, 1, 1, 1, 1]]
    judged_of(compared, labels, scores).write(folder)
    html_path, md_path = write_report(compared, folder, read_judged(folder))
    md = md_path.read_text()
    section = md.split(
        "### How far these questions can separate the configurations on the judged metrics\n\n"
    )[1]
    # judged nDCG@10 against the baseline: default d = [1, 1, 1, 1, 0, 0, 0, 0], mean +50.0
    # points, sd = sqrt(8 * 0.25 / 7) = 0.535; code d = [0, 0, 0, 1, 0, 0, 0, 0], +12.5 points,
    # sd = sqrt((1 - 8 * 0.125^2) / 7) = 0.354. MDE: 2.80158 * sd / sqrt(8) = 52.9 / 35.0 points
    # by the normal approximation, 61.8 / 40.9 by the exact t with 7 df (17% larger): 50.0 < 61.8
    # and 12.5 < 40.9, neither pair separated on 8 questions. Halves: code beats the baseline on
    # q3 alone, so one half of every split ties them (that pair counts 0); default beats both
    # where they miss (q0-q3, q0-q2), which splits into both halves in 60 of the 70 splits:
    # tau-a 2/3 there (0 or 1/3 in the other 10), the median 2/3
    assert (
        "| context=llm, prompt=default - context=none | +50.0 points | 0.535 | 61.8 points | no |"
    ) in section
    assert (
        "| context=llm, prompt=code - context=none | +12.5 points | 0.354 | 40.9 points | no |"
    ) in section
    assert "| **judged nDCG@10** | 8 | 50.0-100.0% | 50% | 0% | 50% | +0.67 | 0 of 2 |" in section
    html = unescape(html_path.read_text())
    assert "on the judged metrics</h3>" in html
