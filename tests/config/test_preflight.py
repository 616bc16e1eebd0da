"""Refuse before working: what a config's stages need is checked before a document is parsed or a
model loaded, in every verb; an optional part that is missing skips a sweep's job, not fails it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from situate import cli
from situate.config.compose import compose
from situate.config.preflight import check_stages, stages_of_run
from situate.errors import SituateError, Unavailable
from situate.parsing.reader import DocumentReader

DENSE_ONLY = ["sparse=bm25s", "fusion=dense_only", "reranker=none"]


@pytest.fixture
def pdf_folder(tmp_path: Path, monkeypatch) -> tuple[Path, list[Path]]:
    """A folder of 200 PDF files whose reader records every call (and parses nothing): a check
    that came after parsing would be seen here, whatever the machine's speed."""
    folder = tmp_path / "filings"
    folder.mkdir()
    for n in range(200):
        (folder / f"filing-{n:03}.pdf").write_bytes(b"%PDF-1.4\n% not parsed in this test\n")
    (folder / "qa.json").write_text(json.dumps([{"q": "What?", "gold": ["filing-000.pdf#0"]}]))
    parsed: list[Path] = []

    def read_folder(self, root, *args, **kwargs):
        parsed.append(Path(root))
        raise AssertionError(f"{root} was parsed before the config was refused")

    monkeypatch.setattr(DocumentReader, "read_folder", read_folder)
    monkeypatch.chdir(tmp_path)
    return folder, parsed


def verb_args(verb: str, overrides: list[str]) -> list[str]:
    return {
        "search": ["search", "a question", *overrides],
        "contexts": ["contexts", "show", *overrides],
        "questions generate": ["questions", "generate", *overrides],
    }.get(verb, [verb, *overrides])


VERBS = ["run", "index", "search", "chunks", "contexts", "estimate"]


@pytest.mark.parametrize("verb", VERBS)
def test_prechunked_on_a_folder_is_refused_in_every_verb_before_a_document_is_parsed(
    verb, pdf_folder, tmp_path, capsys
):
    folder, parsed = pdf_folder
    args = ["dataset=folder", f"dataset.path={folder}", f"output_dir={tmp_path / 'out'}"]
    assert cli.main(verb_args(verb, args)) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: chunker=prechunked: dataset=folder ships no chunks of its own; use "
        "chunker=markdown or chunker=fixed, with context=none or context=heading_path "
        "(context=replay, the default, only fits the chunks its contexts were recorded for)"
    )
    assert parsed == []


@pytest.mark.parametrize("verb", [*VERBS, "questions generate"])
def test_a_missing_questions_file_is_refused_before_a_document_is_parsed(
    verb, pdf_folder, tmp_path, capsys
):
    folder, parsed = pdf_folder
    args = [
        "dataset=folder", f"dataset.path={folder}", f"dataset.qa={tmp_path / 'nowhere.json'}",
        "chunker=fixed", "context=none", "question_generator=extractive",
        f"output_dir={tmp_path / 'out'}",
    ]  # fmt: skip
    assert cli.main(verb_args(verb, args)) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"error: {tmp_path / 'nowhere.json'}: questions file not found; set dataset.qa=<path to qa.json>"
    )
    assert parsed == []


def test_replayed_contexts_of_another_chunker_are_refused_before_a_document_is_parsed(
    pdf_folder, capsys
):
    folder, parsed = pdf_folder
    assert cli.main(["run", "dataset=folder", f"dataset.path={folder}", "chunker=markdown"]) == 2
    err = capsys.readouterr().err
    assert "context=replay: the contexts of" in err and "not chunker=markdown" in err
    assert parsed == []


def test_a_missing_key_is_refused_before_a_document_is_parsed(pdf_folder, monkeypatch, capsys):
    folder, parsed = pdf_folder
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["dataset=folder", f"dataset.path={folder}", "chunker=fixed", "context=none"]
    assert cli.main(["index", *args, "embedder=openai_small"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: embedder=openai_small needs its API key: set OPENAI_API_KEY (the key is read "
        "from the environment only)"
    )
    assert parsed == []


def test_a_config_mistake_is_said_before_a_missing_part(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = tmp_path / "docs"
    folder.mkdir()
    cfg = compose(
        ["dataset=folder", f"dataset.path={folder}", "embedder=openai_small"], with_hydra=True
    )
    with pytest.raises(SituateError) as e:
        check_stages(cfg, stages_of_run(cfg))
    assert not isinstance(e.value, Unavailable)
    assert "chunker=prechunked" in str(e.value)


def reranked(tmp_path: Path, monkeypatch, folder: Path | None) -> list[str]:
    monkeypatch.setenv("SITUATE_RERANKER_PATH", str(folder or tmp_path / "no-such-model"))
    return ["experiment=cookbook_replication", "arm=contextual_reranked"]


def test_the_reranked_arm_needs_its_cross_encoder_folder(tmp_path, monkeypatch):
    with pytest.raises(Unavailable) as e:
        compose(reranked(tmp_path, monkeypatch, None), uses=stages_of_run)
    assert e.value.needs.startswith(
        f"a cross-encoder model folder (reranker.path={tmp_path / 'no-such-model'} is no folder; "
        "set SITUATE_RERANKER_PATH=/folder"
    )
    model = tmp_path / "model"
    model.mkdir()
    compose(reranked(tmp_path, monkeypatch, model), uses=stages_of_run)  # found: no error


def test_a_sweep_lists_its_skipped_jobs_before_it_starts(tmp_path, monkeypatch, capsys):
    from situate.commands.run import check_sweep_jobs, sweep_jobs

    monkeypatch.setenv("SITUATE_RERANKER_PATH", str(tmp_path / "no-such-model"))
    cfg = compose(["experiment=cookbook_replication"], with_hydra=True)
    jobs = sweep_jobs(cfg, ["experiment=cookbook_replication"])
    assert [swept for _, swept in jobs] == [
        "arm=baseline", "arm=contextual_embeddings", "arm=contextual_bm25",
        "arm=contextual_reranked",
    ]  # fmt: skip
    check_sweep_jobs(cfg, ["experiment=cookbook_replication"])
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        "situate: skipped: arm=contextual_reranked: needs a cross-encoder model folder"
    )


@pytest.mark.parametrize(("fusion", "composes"), [("sparse_only", 1), ("sparse_only,rrf", 2)])
def test_the_precheck_composes_each_job_of_a_sweep_once(tmp_path, monkeypatch, fusion, composes):
    """The sweep's first values are composed with Hydra's node and checked; check_sweep_jobs
    composes the other jobs only (a one-job sweep composed once: 0.25-0.4 s of its start)."""
    from situate.commands import run

    composed = []

    def counting(overrides, **kwargs):
        composed.append(list(overrides))
        return compose(overrides, **kwargs)

    monkeypatch.setattr(run, "compose", counting)
    run.precheck(["-m", f"fusion={fusion}", "tracking=none", f"output_dir={tmp_path}"])
    assert len(composed) == composes
    assert [o for o in composed[-1] if o.startswith("fusion=")] == [
        f"fusion={fusion.split(',')[-1]}"
    ]


def test_a_config_mistake_in_one_job_stops_the_sweep_before_it_starts(tmp_path):
    from situate.commands.run import check_sweep_jobs

    folder = tmp_path / "docs"
    folder.mkdir()
    folder_ = ["dataset=folder", f"dataset.path={folder}", "context=none"]
    overrides = [*folder_, "chunker=fixed,prechunked"]
    cfg = compose([*folder_, "chunker=fixed"], with_hydra=True)
    with pytest.raises(SituateError, match=r"^sweep job chunker=prechunked: chunker=prechunked: "):
        check_sweep_jobs(cfg, overrides)


def test_a_job_of_a_sweep_that_needs_a_missing_part_is_skipped_not_failed(tmp_path, monkeypatch):
    from situate.running.app import Job, run_job
    from situate.study.results_table import ResultsTable

    overrides = [*reranked(tmp_path, monkeypatch, None), "tracking=none"]
    cfg = compose(overrides, with_hydra=True)
    sweep = tmp_path / "sweep"
    (sweep / "0").mkdir(parents=True)
    choices = dict(cfg.hydra.runtime.choices)
    job = Job(sweep / "0", choices, tuple(overrides), sweep_dir=sweep)
    task = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    row = run_job(task, job)
    assert row["skipped"].startswith("needs a cross-encoder model folder")
    assert "error" not in row and "run_id" not in row  # no MLflow run was opened
    assert json.loads((sweep / "0" / "result.json").read_text())["skipped"] == row["skipped"]

    from situate.commands.run import sweep_exit_code
    from situate.study.results_table import SWEEP_OUTCOME

    hydra = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}, "tracking": None})
    ResultsTable().on_multirun_end(hydra)
    assert SWEEP_OUTCOME == {"jobs": 1, "failed": 0, "skipped": 1}
    assert sweep_exit_code() == 0  # a skipped job is no failure of the sweep


def test_a_single_run_that_needs_a_missing_part_stops_on_it(tmp_path, monkeypatch, capsys):
    overrides = reranked(tmp_path, monkeypatch, None)
    assert cli.main(["run", *overrides, f"output_dir={tmp_path / 'out'}"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: reranker=cross_encoder needs a cross-encoder model folder"
    )


def test_the_results_table_shows_a_skipped_job_and_the_report_names_it(tmp_path):
    from situate.study.collect import RunData, _attach_sweep_errors
    from situate.study.results_table import results_table

    skipped = {
        "choices": {"arm": "contextual_reranked", "dataset": "cookbook"},
        "overrides": ["arm=contextual_reranked"],
        "ks": [5],
        "skipped": "needs a cross-encoder model folder",
    }
    done = {**skipped, "choices": {"arm": "baseline", "dataset": "cookbook"}, "run_id": "a" * 32}
    done.pop("skipped")
    done["metrics"] = {"pass_at_5": 0.5, "recall_at_5": 0.5, "mrr": 0.25}
    from rich.console import Console

    out = Console(width=160, record=True, color_system=None)
    out.print(results_table([done, skipped]))
    text = out.export_text()
    assert "skipped" in text and "needs a cross-encoder model folder" in text

    sweep = tmp_path / "sweep"
    for n, row in enumerate([done, skipped]):
        (sweep / str(n)).mkdir(parents=True)
        (sweep / str(n) / "result.json").write_text(json.dumps(row))
    parent = RunData("p", "sweep", "FINISHED", tags={"sweep_dir": str(sweep)})
    runs = [RunData("a" * 32, "baseline", "FINISHED", tags={"arm": "baseline"})]
    _attach_sweep_errors(runs, parent, tmp_path)
    assert [(r.tags.get("arm"), r.status, r.error) for r in runs] == [
        ("baseline", "FINISHED", None),
        ("contextual_reranked", "SKIPPED", "needs a cross-encoder model folder"),
    ]


def test_the_judge_without_its_key_is_refused_before_the_study_is_read(
    tmp_path, monkeypatch, capsys
):
    import situate.study.collect

    def load_study(*args, **kwargs):
        raise AssertionError("the study was read before the missing key was said")

    monkeypatch.setattr(situate.study.collect, "load_study", load_study)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    args = ["experiment=cookbook_replication", "llm=claude_haiku_4_5", f"output_dir={tmp_path}"]
    assert cli.main(["judge", *args]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: llm=claude_haiku_4_5 needs its API key: set ANTHROPIC_API_KEY (the key is read "
        "from the environment only)"
    )


def test_the_sweeper_validates_only_the_jobs_not_composed_before(monkeypatch):
    """Hydra's validation (``Sweeper.validate_batch_is_legal``) sees the batch less the jobs in
    ``COMPOSED_JOBS``; a job is matched without its ``hydra`` overrides and in any order."""
    from hydra.plugins.sweeper import Sweeper

    from hydra_plugins.situate_sweeper import CheckedBasicSweeper
    from situate.commands import run

    validated = []
    monkeypatch.setattr(Sweeper, "validate_batch_is_legal", lambda self, b: validated.append(b))
    monkeypatch.setattr(run, "COMPOSED_JOBS", {run.job_key(["fusion=rrf", "fusion.k=60"])})
    sweeper = CheckedBasicSweeper(max_batch_size=None)
    batch = [["fusion.k=60", "fusion=rrf", "hydra.sweep.dir=x"], ["fusion=rrf", "fusion.k=10"]]
    sweeper.validate_batch_is_legal(batch)
    assert validated == [[["fusion=rrf", "fusion.k=10"]]]
    validated.clear()
    sweeper.validate_batch_is_legal(batch[:1])
    assert validated == []  # every job composed already: Hydra composes none


@pytest.mark.parametrize(
    ("args", "composed", "results"),
    [
        (["fusion=sparse_only"], 1, 1),  # a run: Hydra composes it twice (its mode, the run)
        (["-m", "fusion=sparse_only"], 1, 1),  # a one-job sweep: Hydra four times
        (["-m", "fusion=sparse_only", "fusion.pool=100,150"], 3, 2),  # the master and each job
    ],
)
def test_situate_run_composes_each_config_once(tmp_path, args, composed, results):
    """``situate run`` composes a run's config once, and a sweep's master config and each job's
    once (situate.running.launch), where ``hydra.main`` composes a run twice and a sweep of n jobs
    2 + 2n times (its mode, the master, each job in its sweeper's validation and its launcher)."""
    import subprocess
    import sys

    from conftest import DATA_DIR

    script = f"""
from collections import Counter
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from situate.commands import run
calls = Counter()
load = ConfigLoaderImpl.load_configuration
def counting(self, *args, **kwargs):
    calls["composed"] += 1
    return load(self, *args, **kwargs)
ConfigLoaderImpl.load_configuration = counting
code = run.main({args!r} + ["tracking=none", "data_dir={DATA_DIR}", "output_dir={tmp_path}"])
print("COUNTS", calls["composed"], code)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("COUNTS")]
    assert line, out.stderr[-2000:]
    assert line[0].split()[1:] == [str(composed), "0"]
    assert len(list(tmp_path.rglob("result.json"))) == results
