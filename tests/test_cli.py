"""The command line: fast help, one-line errors with exit code 2, the chunks listing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import options, run_cli
from situate.config.compose import check_overrides
from situate.errors import SituateError


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit code 2, no traceback, exactly one line on stderr that starts with 'error:'."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def test_help_imports_nothing_heavy():
    code = (
        "import sys; from situate.cli import main; main(['--help']); "
        "heavy = {'hydra', 'torch', 'mlflow', 'numpy', 'faiss', 'omegaconf'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "situate run" in proc.stdout


def test_help_lists_every_verb_of_the_table_and_every_module_is_one(capsys):
    import importlib

    import situate.commands
    from situate.cli import DESCRIPTION
    from situate.commands import HELPERS, VERBS
    from situate.commands.questions import main as questions

    listed = DESCRIPTION.split("\nverbs:\n", 1)[1].split("\nconfig groups", 1)[0]
    heads = [line.split()[0] for line in listed.splitlines() if not line.startswith("   ")]
    assert heads == list(VERBS)
    rows = dict(VERBS)
    rows |= {f"{n} {s}": sub for n, verb in VERBS.items() for s, sub in verb.subverbs.items()}
    assert [name for name, verb in rows.items() if not verb.help.strip()] == []
    assert "  questions generate|review|export|import|validate " in listed
    assert questions(["--help"]) == 0
    shown = capsys.readouterr().out
    for name, sub in VERBS["questions"].subverbs.items():
        assert sub.help_block(name) in shown
    modules = {verb.module for verb in rows.values()}
    folder = Path(situate.commands.__file__).parent
    present = {f"situate.commands.{p.stem}" for p in folder.glob("*.py") if p.stem != "__init__"}
    assert present == modules | set(HELPERS), (
        "a module of commands/ that is no verb's: a row of VERBS, or HELPERS"
    )
    assert all(callable(importlib.import_module(m).main) for m in modules)


@pytest.mark.slow
def test_unknown_verb():
    proc = run_cli("frobnicate")
    assert proc.returncode == 2
    assert "unknown verb 'frobnicate'" in proc.stderr


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(
        SituateError,
        match=rf"unknown option fusion=foo; valid fusion options: {', '.join(options('fusion'))}",
    ):
        check_overrides(["fusion=foo"])
    with pytest.raises(SituateError, match="unknown option context=bogus"):
        check_overrides(["context=none,bogus"])
    check_overrides(
        ["fusion=rrf", "fusion.k=10", "context=none,replay", "+x=1", "hydra.verbose=true"]
    )


@pytest.mark.slow
def test_unknown_option_through_the_cli():
    assert_one_line_error(run_cli("run", "fusion=foo"), "unknown option fusion=foo", "rrf")


@pytest.mark.slow
def test_missing_data_path(tmp_path: Path):
    proc = run_cli("run", f"data_dir={tmp_path}/nowhere", "tracking=none", f"output_dir={tmp_path}")
    assert_one_line_error(
        proc, f"{tmp_path}/nowhere/cookbook-codebase", "situate data fetch cookbook"
    )


@pytest.mark.slow
def test_malformed_json_names_file_and_line(tmp_path: Path):
    bad = tmp_path / "cookbook"
    bad.mkdir()
    (bad / "codebase_chunks.json").write_text('[\n  {"doc_id": "d1",\n   "content": oops}\n]\n')
    (bad / "evaluation_set.jsonl").write_text("")
    proc = run_cli("run", f"dataset.path={bad}", "tracking=none", f"output_dir={tmp_path}")
    assert_one_line_error(proc, f"{bad}/codebase_chunks.json:3:", "invalid JSON")


@pytest.mark.slow
def test_gold_that_matches_no_chunk(tmp_path: Path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Title\n\nSome words here.\n\n\n\n")
    # characters 26..29 are the trailing blank lines: no chunk covers them
    (notes / "qa.json").write_text(
        json.dumps(
            [{"id": "blank", "q": "what?", "gold": [{"path": "a.md", "start": 26, "end": 29}]}]
        )
    )
    proc = run_cli(
        "run",
        "dataset=folder",
        f"dataset.path={notes}",
        "chunker=markdown",
        "context=none",
        "tracking=none",
        f"output_dir={tmp_path}",
    )
    assert_one_line_error(proc, "question blank", "matches no chunk")


@pytest.mark.slow
def test_bad_parameter_is_one_line(tmp_path: Path):
    proc = run_cli("run", "context.placement=middle", "tracking=none", f"output_dir={tmp_path}")
    assert_one_line_error(proc, "context.placement='middle'", "after, before")


@pytest.mark.slow
def test_debug_shows_the_traceback(tmp_path: Path):
    proc = run_cli(
        "run", "--debug", "context.placement=middle", "tracking=none", f"output_dir={tmp_path}"
    )
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr
    assert "SituateError" in proc.stderr


@pytest.mark.slow
def test_chunks_lists_ids_offsets_and_text(cookbook_dir: Path):
    proc = run_cli("chunks", "dataset.max_documents=1", env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "doc_1_chunk_0" in proc.stdout
    assert "//! Executor for differential fuzzing." in proc.stdout
    assert "13 chunks" in proc.stdout
    assert "not shown" not in proc.stdout  # 13 is under the default limit of 20


@pytest.mark.slow
def test_chunks_lists_the_first_20_and_says_how_many_more(cookbook_dir: Path):
    proc = run_cli("chunks", env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "737 chunks" in proc.stdout
    assert "doc_2_chunk_6" in proc.stdout  # doc_1 has 13 chunks: the 20th is doc_2's 7th
    assert "doc_2_chunk_7" not in proc.stdout
    assert "717 more not shown (--limit 20; --limit 0 for all)" in proc.stdout
    five = run_cli("chunks", "--limit", "5", env={"COLUMNS": "200"})
    assert "doc_1_chunk_4" in five.stdout and "doc_1_chunk_5" not in five.stdout
    assert "732 more not shown" in five.stdout
    every = run_cli("chunks", "--limit", "0", env={"COLUMNS": "200"})
    assert "doc_90_chunk_" in every.stdout and "not shown" not in every.stdout


@pytest.mark.slow
def test_contexts_export_and_show(cookbook_dir: Path, tmp_path: Path):
    out = tmp_path / "contexts.jsonl"
    proc = run_cli("contexts", "export", "dataset.max_documents=1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 13
    assert rows[0]["chunk_id"] == "doc_1_chunk_0"
    assert rows[0]["context"].startswith("This chunk describes the `DiffExecutor` struct")
    assert set(rows[0]["usage"]) == {"input_uncached", "cache_write", "cache_read", "output"}
    shown = run_cli(
        "contexts", "show", "dataset.max_documents=1", "--limit", "2", env={"COLUMNS": "200"}
    )
    assert shown.returncode == 0, shown.stderr
    assert "doc_1_chunk_1" in shown.stdout and "doc_1_chunk_2" not in shown.stdout


@pytest.mark.slow
def test_llm_contexts_are_read_from_the_store_without_a_key(cookbook_dir: Path, tmp_path: Path):
    proc = run_cli(
        "contexts", "export", "context=llm", "dataset.max_documents=1", f"output_dir={tmp_path}",
        env={"ANTHROPIC_API_KEY": ""},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # nothing stored yet, nothing spent, no key needed
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 13 and all(r["context"] is None for r in rows)


def test_search_shows_the_query_time_apart_from_start_up() -> None:
    from situate.commands.search import search_timing

    startup = {"jvm_start_seconds": 0.96, "index_open_seconds": 2.14, "model_load_seconds": 97.5}
    assert search_timing(0.0354, startup) == (
        "query 35 ms (before it: JVM start 1.0 s, index open 2.1 s, model load 97.5 s)"
    )


@pytest.mark.slow  # loads torch and the embedding model: seconds
def test_warm_up_loads_the_embedding_model_before_the_first_query(tmp_path: Path) -> None:
    from situate.config.compose import compose
    from situate.running.app import build_pipeline

    cfg = compose([f"output_dir={tmp_path}", "tracking=none"])
    pipeline = build_pipeline(cfg)
    searcher = pipeline.searcher([], [])
    assert pipeline.embedder._model is None
    searcher.warm_up()
    assert pipeline.embedder._model is not None  # the first query will not load it
    assert pipeline.embeddings.encoded == 0  # and nothing was embedded to get there


@pytest.mark.slow
def test_contexts_show_says_what_to_run_when_nothing_is_stored(cookbook_dir: Path, tmp_path: Path):
    proc = run_cli(
        "contexts", "show", "context=llm", "prompt=code", "dataset.max_documents=1", "--limit", "2",
        f"output_dir={tmp_path}", env={"ANTHROPIC_API_KEY": "", "COLUMNS": "300"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # no table of empty rows: one line saying what to run
    assert "(not stored yet)" not in proc.stdout and "┃ chunk" not in proc.stdout
    assert "no context of these 2 chunks is stored yet for this prompt and model" in proc.stdout
    assert "`situate run context=llm prompt=code dataset.max_documents=1 " in proc.stdout
    replayed = run_cli("contexts", "show", "--limit", "1", env={"COLUMNS": "300"})
    assert replayed.returncode == 0, replayed.stderr
    assert "This chunk describes the `DiffExecutor` struct" in replayed.stdout  # README's example
    assert "not stored yet" not in replayed.stdout
