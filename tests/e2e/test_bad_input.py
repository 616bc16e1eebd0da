"""Bad input explains itself: each malformed case in tests/data/bad/ (and each bad option) goes
through the CLI as a user would type it and must end with exit code 2, no traceback and exactly one
``error:`` line of the expected shape, naming the file, the record and the fix. A failing run loses
nothing already stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import DATA_DIR, REPO, free_port, live_mlflow_server, options, run_cli
from situate.cli import INTERRUPTED
from situate.contexts.llm import LLMContext
from situate.contexts.prompts import PromptVariant
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.errors import SituateError
from situate.paid.llm import LLMRequest, LLMResponse
from situate.records import Chunk, Corpus, Document, Usage
from situate.tracking.mlflow_tracker import MlflowTracker
from test_cli import assert_one_line_error

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
# the bad cookbook folders use other file names than the real data set's
COOKBOOK_NAMES = ["dataset.chunks_file=chunks.json", "dataset.questions_file=questions.jsonl"]
NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "CO_API_KEY": ""}
FUSIONS = ", ".join(options("fusion"))


def p(case: str) -> str:
    """The case's path as the error prints it, escaped for a regex."""
    return re.escape(str(BAD / case))


def assert_error(proc: subprocess.CompletedProcess, pattern: str) -> str:
    line = assert_one_line_error(proc)
    assert re.fullmatch(pattern, line), f"\n{line}\ndoes not match\n{pattern}"
    return line


def run(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(
        "run",
        "tracking=none",
        f"output_dir={tmp_path / 'out'}",
        *args,
        env={**NO_KEYS, **(env or {})},
    )


# (case, overrides, the exact error line as a regex); every path is under tests/data/bad/
DATA_CASES = [
    (
        "cookbook_invalid_json",
        ["dataset=cookbook", *COOKBOOK_NAMES],
        rf"error: {p('cookbook_invalid_json/chunks.json')}:4:15: invalid JSON "
        r"\(Expecting value\); fix the file at that line",
    ),
    (
        "folder_invalid_qa_json",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_invalid_qa_json/qa.json')}:4:24: invalid JSON \(Expecting value\); "
        r"fix the file at that line",
    ),
    (
        "beir_invalid_jsonl",
        ["dataset=beir", "chunker=fixed"],
        rf"error: {p('beir_invalid_jsonl/queries.jsonl')}:2: invalid JSON Lines record "
        r"\(Expecting value\); each line must be one JSON object",
    ),
    (
        "cookbook_wrong_fields",
        ["dataset=cookbook", *COOKBOOK_NAMES],
        rf"error: {p('cookbook_wrong_fields/chunks.json')}: document 0: missing field\(s\) "
        r"content \(fields present: chunks, doc_id, original_uuid, text\); rename or add them",
    ),
    (
        "squad_wrong_fields.json",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_wrong_fields.json')}: article 0 paragraph 0 question 0: missing "
        r"field\(s\) question \(fields present: answers, id, query\); rename or add them",
    ),
    (
        "beir_wrong_fields",
        ["dataset=beir", "chunker=fixed"],
        rf"error: {p('beir_wrong_fields/corpus.jsonl')}:2: missing field\(s\) _id \(fields "
        r"present: id, text, title\); rename or add them",
    ),
    (
        "folder_wrong_fields",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_wrong_fields/qa.json')}: question 0 \(id add\): missing field\(s\) "
        r"q, gold \(fields present: answers, id, question\); rename or add them",
    ),
    (
        "folder_quote_not_found",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_quote_not_found/qa.json')}: question 0 \(id add\), gold 0: quote "
        r"'the times sign' matches no text in a\.md; copy it exactly from the file or give "
        r'\{"path", "start", "end"\}',
    ),
    (
        "squad_answer_not_near_offset.json",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_answer_not_near_offset.json')}: question q-far: answer text 'humans' "
        r"not found at offset 5 or within 10 characters; fix answer_start or the text",
    ),
    (
        "squad_answer_start_past_end.json",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_answer_start_past_end.json')}: question q-end: answer_start 5000 is "
        r"past the end of document 101 \(85 characters\); fix answer_start",
    ),
    (
        "folder_offset_past_end",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_offset_past_end/qa.json')}: question 0 \(id add\), gold 0: start=10 "
        r"end=5000 out of range for a\.md \(75 characters\); use integers with "
        r"0 <= start < end <= 75",
    ),
    (
        "folder_empty_md",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_empty_md/empty.md')}: empty file \(no text\); add text to it or "
        r"remove it",
    ),
    (
        "squad_empty_context.json",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_empty_context.json')}: document 101: empty context; fill in its text "
        r"or remove the paragraph",
    ),
    (
        "folder_binary_md",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_binary_md/image.md')}: contains NUL bytes \(binary file\?\); convert "
        r"it to UTF-8 text or remove it",
    ),
    (
        "folder_latin1_txt",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_latin1_txt/notes.txt')}: not UTF-8 text \(byte 3\); convert it to "
        r"UTF-8 or remove it",
    ),
    (
        "squad_duplicate_qids.json",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_duplicate_qids.json')}: duplicate question id 'q-ok'; give every "
        r"question its own id",
    ),
    (
        "beir_duplicate_ids",
        ["dataset=beir", "chunker=fixed"],
        rf"error: {p('beir_duplicate_ids/corpus.jsonl')}:3: duplicate document id 'd1'; keep one "
        r"record per _id",
    ),
    (
        "folder_duplicate_qids",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_duplicate_qids/qa.json')}: question 1: duplicate question id 'add' "
        r"\(question 0 has it too\); give every question its own id",
    ),
    (
        "squad_empty_question.json",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_empty_question.json')}: question q-empty: empty question text; write "
        r"the question or remove the record",
    ),
    (
        "beir_empty_query",
        ["dataset=beir", "chunker=fixed"],
        rf"error: {p('beir_empty_query/queries.jsonl')}:2: query 'q2': empty question text; write "
        r"the question or remove the record",
    ),
    (  # stops before any index is built, naming the file it looked for
        "folder_no_qa_json",
        ["dataset=folder", "chunker=markdown", "context=none"],
        rf"error: {p('folder_no_qa_json/qa.json')}: no questions file, and `situate run` scores "
        r'retrieval against questions; write it \(a JSON list of \{"q": \.\.\., "gold": '
        r'\[\.\.\.\], "id": \.\.\.\}: docs/own-documents\.md\), write questions\.txt \(one '
        r"question per line, no gold\) or set dataset\.qa=<file>, "
        r"or build the indexes only with `situate index` \(same overrides\) and query them with "
        r"`situate search`",
    ),
    (
        "squad_json_lines.jsonl",
        ["dataset=squad", "chunker=fixed"],
        rf"error: {p('squad_json_lines.jsonl')}:2: this is JSON Lines \(one JSON value per line\), "
        r'but dataset=squad reads one SQuAD JSON document \(\{"data": \[\{"paragraphs": '
        r'\[\{"context": \.\.\., "qas": \[\.\.\.\]\}\]\}\]\}\); convert the file, or use '
        r"dataset=beir for a BEIR folder \(corpus\.jsonl, queries\.jsonl, qrels/\)",
    ),
]


def test_every_case_in_the_corpus_is_tested():
    assert sorted(p.name for p in BAD.iterdir()) == sorted(case for case, _, _ in DATA_CASES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case, args, pattern", DATA_CASES, ids=[Path(c).stem for c, _, _ in DATA_CASES]
)
def test_malformed_data(tmp_path, case, args, pattern):
    # no contexts: the data file's own error is what is checked (replay fits only the cookbook)
    context = [] if any(a.startswith("context=") for a in args) else ["context=none"]
    assert_error(run(tmp_path, *args, *context, f"dataset.path={BAD / case}"), pattern)
    assert not (tmp_path / "out" / "cache" / "index").exists()  # stopped before any index


# -- options and the environment ------------------------------------------------------------


def write_notes(folder: Path, extra: str = "") -> Path:
    """A small valid folder dataset: two Markdown files and a qa.json of quotes."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = {"glaciers": "ice moraine crevasse", "harbours": "quay pier tugboat"}
    for name, words in topics.items():
        paras = [
            f"Section {i} about {name}: "
            + " ".join(f"{w}{i}x{j}" for j in range(40) for w in words.split())
            for i in range(4)
        ]
        (folder / f"{name}.md").write_text(
            f"# {name.title()}\n\n" + "\n\n".join(paras) + extra + "\n"
        )
    qa = [
        {"id": "g", "q": "What about glaciers section 2?", "gold": ["Section 2 about glaciers"]},
        {"id": "h", "q": "What about harbours section 1?", "gold": ["Section 1 about harbours"]},
    ]
    (folder / "qa.json").write_text(json.dumps(qa))
    return folder


NOTES = ["dataset=folder", "chunker=markdown", "dataset.max_words=60", "dataset.min_words=10"]
SETUP_CASES = [
    (
        "unknown_option",
        ["fusion=nope"],
        rf"error: unknown option fusion=nope; valid fusion options: {FUSIONS} \(files in .*/conf/fusion\)",
    ),
    (
        "negative_k",
        ["eval.ks=[-5,10]"],
        r"error: eval\.ks=\[-5, 10\]: every k must be a positive integer \(e\.g\. \[5,10,20\]\)",
    ),
    (
        "negative_k_in_a_sweep",
        ["-m", "fusion=rrf,dense_only", "eval.ks=[-5,10]"],
        r"error: eval\.ks=\[-5, 10\]: every k must be a positive integer \(e\.g\. \[5,10,20\]\)",
    ),
    (
        "misspelt_option",
        ["fusion=rff"],
        rf"error: unknown option fusion=rff; did you mean rrf\?; valid fusion options: {FUSIONS} "
        r"\(files in .*/conf/fusion\)",
    ),
    (
        "misspelt_group",
        ["fusoin=rrf"],
        r"error: unknown config key fusoin; did you mean fusion\?; valid keys at the top level: "
        r"hydra, dataset, .*; fix the name, or add a new key with \+fusoin=\.\.\. .*",
    ),
    (
        "unknown_key",
        ["fusion.kk=3"],
        r"error: unknown config key fusion\.kk; did you mean fusion\.k\?; valid keys of fusion: "
        r"_target_, k, pool; fix the name, or add a new key with \+fusion\.kk=\.\.\. "
        r"\(`situate run --cfg job` prints the composed config\)",
    ),
    (
        "unknown_key_in_a_sweep",
        ["-m", "fusion=rrf,dense_only", "fusion.kk=3"],
        r"error: unknown config key fusion\.kk; did you mean fusion\.k\?; valid keys of fusion: "
        r"_target_, k, pool; .*",
    ),
    (
        "unknown_top_level_key",
        ["nothere=1"],
        r"error: unknown config key nothere; valid keys at the top level: hydra, dataset, .*; fix "
        r"the name, or add a new key with \+nothere=\.\.\. .*",
    ),
    (
        "added_unknown_parameter",
        ["+fusion.kk=3"],
        r"error: \+fusion\.kk=3: situate\.fusion\.rrf\.ReciprocalRankFusion takes no parameter "
        r"'kk'; did you mean k\?; valid fusion parameters: k, pool",
    ),
    (
        "added_unknown_parameter_in_a_sweep",
        ["-m", "fusion=rrf,dense_only", "+fusion.kk=3"],
        r"error: \+fusion\.kk=3: situate\.fusion\.rrf\.ReciprocalRankFusion takes no parameter "
        r"'kk'; did you mean k\?; valid fusion parameters: k, pool",
    ),
    (
        "wrong_type",
        ["fusion.k=abc"],
        r"error: fusion\.k=abc: fusion\.k takes a number, not the string 'abc'; e\.g\. fusion\.k=60",
    ),
    (
        "wrong_type_in_a_sweep",
        ["-m", "fusion.k=60,abc"],
        r"error: fusion\.k=60,abc: fusion\.k takes a number, not the string 'abc'; "
        r"e\.g\. fusion\.k=60",
    ),
    (
        "wrong_type_in_a_list",
        ["eval.ks=[5,x]"],
        r"error: eval\.ks=\[5,x\]: eval\.ks takes a list of integers, not the list \[5,'x'\]; "
        r"e\.g\. eval\.ks=\[5,10,20\]",
    ),
    (
        "null_for_a_number",
        ["fusion.k=null"],
        r"error: fusion\.k=null: fusion\.k takes a number, not null; e\.g\. fusion\.k=60",
    ),
    (
        "number_for_a_string",
        ["dataset.name=12"],
        r"error: dataset\.name=12: dataset\.name takes a string, not the integer 12; quote it to "
        r"pass a string; e\.g\. dataset\.name='cookbook'",
    ),
    (
        "missing_mandatory_value",
        ["dataset=folder", "chunker=markdown", "context=none"],
        r"error: dataset\.path is not set \(conf/dataset/folder\.yaml leaves it \?\?\?\); add "
        r"dataset\.path=<value> to the command",
    ),
    (  # a folder under a regular file cannot be made, even by root
        "output_dir_under_a_file",
        [f"output_dir={BAD / 'squad_empty_context.json'}/out"],
        rf"error: output_dir={p('squad_empty_context.json')}/out: cannot write there "
        rf"\({p('squad_empty_context.json')} is a file, not a folder\); set "
        r"output_dir=<a writable folder>",
    ),
    (
        "run_dir_under_a_file",
        [f"hydra.run.dir={BAD / 'squad_empty_context.json'}/run"],
        rf"error: hydra\.run\.dir={p('squad_empty_context.json')}/run: cannot write there "
        rf"\({p('squad_empty_context.json')} is a file, not a folder\); set "
        r"hydra\.run\.dir=<a writable folder>",
    ),
    (
        "sweep_dir_under_a_file",
        ["-m", "fusion=rrf,dense_only", f"hydra.sweep.dir={BAD / 'squad_empty_context.json'}/s"],
        rf"error: hydra\.sweep\.dir={p('squad_empty_context.json')}/s: cannot write there "
        rf"\({p('squad_empty_context.json')} is a file, not a folder\); set "
        r"hydra\.sweep\.dir=<a writable folder>",
    ),
    (  # /proc: os.access lets root write there, yet no folder can be made
        "output_dir_root_cannot_write",
        ["output_dir=/proc/situate-out"],
        r"error: output_dir=/proc/situate-out: cannot write there \(cannot create a folder in "
        r"/proc: No such file or directory\); set output_dir=<a writable folder>",
    ),
    (
        "cache_dir_root_cannot_write",
        ["cache_dir=/proc/situate-cache"],
        r"error: cache_dir=/proc/situate-cache: cannot write there \(cannot create a folder in "
        r"/proc: No such file or directory\); set cache_dir=<a writable folder>",
    ),
    (
        "added_existing_key",
        ["+fusion.k=3"],
        r"error: config: Could not append to config\. An item is already at 'fusion\.k'\. "
        r"\(Either remove \+ prefix: 'fusion\.k=3'; Or add a second \+ to add or override "
        r"'fusion\.k': '\+\+fusion\.k=3'\)",
    ),
    (
        "unparsable_override",
        ["fusion=["],
        r"error: config: cannot parse override 'fusion=\[': no viable alternative at input '\[' "
        r"\(See https://hydra\.cc/.*\)",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("case, args, pattern", SETUP_CASES, ids=[c for c, _, _ in SETUP_CASES])
def test_bad_setup(tmp_path, case, args, pattern):
    assert_error(run(tmp_path, *args), pattern)
    assert not (tmp_path / "out").exists()  # refused before any run folder or sweep started


@pytest.mark.slow
@pytest.mark.parametrize("verb", [["index"], ["chunks"], ["search", "port"]])
def test_the_other_verbs_refuse_an_unwritable_output_dir(verb):
    """They parse (parse cache), build or open indexes under output_dir: one line, not a trace."""
    assert_error(
        run_cli(*verb, "output_dir=/proc/situate-out"),
        r"error: output_dir=/proc/situate-out: cannot write there \(cannot create a folder in "
        r"/proc: No such file or directory\); set output_dir=<a writable folder>",
    )


@pytest.mark.slow
def test_unknown_key_in_other_verbs(tmp_path):
    proc = run_cli("chunks", "fusion.kk=3")
    assert_error(
        proc,
        r"error: unknown config key fusion\.kk; did you mean fusion\.k\?; valid keys of fusion: "
        r"_target_, k, pool; .*",
    )


@pytest.mark.slow
def test_search_k_zero():
    assert_error(
        run_cli("search", "how do I add?", "-k", "0"),
        r"error: search: -k 0 must be a positive integer",
    )


@pytest.mark.slow
def test_a_k_not_below_the_number_of_chunks_is_a_warning_the_run_records(tmp_path):
    """Pass@50 on a 4-chunk corpus is 100% for any ranking: the run goes on, but says so."""
    notes = write_notes(tmp_path / "notes")
    proc = run(tmp_path, *NOTES, f"dataset.path={notes}", "context=none", "fusion=sparse_only",
               "eval.ks=[1,50]")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        "[WARNING] - eval.ks: k=50 not below the 4 chunks of folder: a top 50 holds every chunk, "
        "so recall and pass there say nothing about the ranking; choose ks below 4 or a finer "
        "chunker"
    ) in proc.stdout
    (result,) = (tmp_path / "out" / "runs").glob("*/*/result.json")
    metrics = json.loads(result.read_text())["metrics"]
    assert metrics["ks_covering_all_chunks"] == 1 and metrics["n_chunks"] == 4
    assert metrics["pass_at_50"] == 1.0


@pytest.mark.slow
def test_missing_data_path(tmp_path):
    missing = tmp_path / "nowhere"
    assert_error(
        run(tmp_path, *NOTES, f"dataset.path={missing}"),
        rf"error: {re.escape(str(missing))}: dataset folder not found; set dataset\.path=<folder of "
        r"documents>",
    )


@pytest.mark.slow
def test_without_questions_the_other_verbs_still_work():
    proc = run_cli(
        "chunks", "dataset=folder", f"dataset.path={BAD / 'folder_no_qa_json'}", "chunker=markdown"
    )
    assert proc.returncode == 0, proc.stderr
    assert "a.md#0" in proc.stdout


@pytest.mark.slow
def test_the_default_context_on_another_dataset_names_the_real_fix(tmp_path, cookbook_dir):
    """The defaults (chunker=prechunked, context=replay) fit the cookbook only: each error names a
    fix that works when followed, never the option the user has just left."""
    notes = write_notes(tmp_path / "notes")
    folder = ["dataset=folder", f"dataset.path={notes}"]
    assert_error(
        run(tmp_path, *folder),
        r"error: chunker=prechunked: dataset=folder ships no chunks of its own; use "
        r"chunker=markdown or "
        r"chunker=fixed, with context=none or context=heading_path \(context=replay, the default, "
        r"only fits the chunks its contexts were recorded for\)",
    )
    assert_error(
        run(tmp_path, *folder, "chunker=markdown"),
        rf"error: context=replay: the contexts of {re.escape(str(cookbook_dir))}/recorded_contexts"
        r"\.json were recorded for chunker=prechunked, not chunker=markdown; use context=none or "
        r"context=heading_path with chunker=markdown \(or context=llm to write contexts for these "
        r"chunks\)",
    )
    proc = run(tmp_path, *folder, "chunker=markdown", "context=heading_path")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("source", ["MLFLOW_TRACKING_URI", "tracking.tracking_uri"])
def test_a_dead_tracking_server_stops_the_run_before_it_starts(tmp_path, source):
    uri = f"http://situate:hunter2@127.0.0.1:{free_port()}"
    # were the probe skipped, MLflow's own retries (7, backoff 2: minutes) end this test quickly
    env = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}
    args = [f"output_dir={tmp_path / 'out'}", "experiment=quickstart"]
    if source == "MLFLOW_TRACKING_URI":
        env[source] = uri
    else:
        args.append(f"{source}={uri}")
    proc = run_cli("run", *args, env=env)
    shown = re.escape(uri.replace("hunter2", "***"))
    assert_error(
        proc,
        rf"error: {re.escape(source)}={shown}: no MLflow tracking server answers \(.*Connection "
        rf"refused\); start it \(mlflow server\), fix {re.escape(source)}, or run with "
        r"tracking=none \(tracking\.probe_seconds=0 skips this check\)",
    )
    assert "hunter2" not in proc.stdout + proc.stderr  # the password never reaches a log
    assert not (tmp_path / "out").exists()  # no sweep folder, no job, no MLflow retries


@pytest.mark.slow
@pytest.mark.parametrize("verb", [["report"], ["judge", "--sample-only"]])
def test_the_verbs_that_read_a_study_probe_the_tracking_server_too(tmp_path, verb):
    """`situate report` and `situate judge` read the study from MLflow: a dead server is the same
    one line (without the probe MLflow's retries, cut short here, end in a traceback)."""
    uri = f"http://127.0.0.1:{free_port()}"
    env = {"MLFLOW_TRACKING_URI": uri, "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}
    proc = run_cli(*verb, f"output_dir={tmp_path / 'out'}", "experiment=quickstart", env=env)
    assert_error(
        proc,
        rf"error: MLFLOW_TRACKING_URI={re.escape(uri)}: no MLflow tracking server answers "
        r"\(.*Connection refused\); start it \(mlflow server\), fix MLFLOW_TRACKING_URI, or run "
        r"with tracking=none \(tracking\.probe_seconds=0 skips this check\)",
    )


@pytest.mark.slow
def test_a_live_tracking_server_passes_the_probe(tmp_path):
    with live_mlflow_server(tmp_path) as port:
        tracker = MlflowTracker(f"http://127.0.0.1:{port}", "unused.db", "unused", "probe")
        tracker.check()  # returns: the server answers /health


class StalledProvider:
    """A TCP server that accepts connections and never answers: an API hung in mid-call."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.called = threading.Event()
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # closed
                return
            self.connections.append(connection)
            self.called.set()

    def __enter__(self) -> StalledProvider:
        return self

    def __exit__(self, *exc) -> None:
        self.server.close()
        for c in self.connections:
            c.close()


def probe_error(url: str) -> str:
    tracker = MlflowTracker(url, "unused.db", "unused", "probe", probe_seconds=0.5)
    with pytest.raises(SituateError) as e:
        tracker.check()
    return str(e.value)


FIXES = (
    "start it (mlflow server), fix tracking.tracking_uri, or run with tracking=none "
    "(tracking.probe_seconds=0 skips this check)"
)


def test_a_hung_tracking_server_fails_the_probe():
    with StalledProvider() as server:  # accepts the connection, never answers
        assert probe_error(server.url) == (
            f"tracking.tracking_uri={server.url}: no MLflow tracking server answers (no answer "
            f"within 0.5 s); {FIXES}"
        )


def test_another_server_fails_the_probe():
    with AnthropicEmulator(api_key="emulator-key-probe") as emu:  # answers 404 at /health
        assert probe_error(emu.url) == (
            f"tracking.tracking_uri={emu.url}: no MLflow tracking server answers (HTTP 404 at "
            f"/health: another server, or a proxy with no server behind it); {FIXES}"
        )


@contextlib.contextmanager
def cores_busy(busy: bool = True) -> Iterator[None]:
    """Every core held by a busy loop (a process each, killed at the end): the load under which
    an interrupted sweep once did not exit."""
    hogs = []
    try:
        if busy:
            for _ in range(min(os.cpu_count() or 2, 16)):
                hogs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def interrupted_run(tmp_path: Path, *extra: str, busy: bool = False) -> subprocess.CompletedProcess:
    """A run stopped by SIGINT while it waits on a provider that never answers (with ``busy``,
    every core held busy from its start to its exit). A run that does not exit is stopped with
    SIGABRT, its threads' stacks (faulthandler) in the failure."""
    notes = write_notes(tmp_path / "notes")
    env = {**os.environ, "SITUATE_DATA_DIR": str(DATA_DIR), **NO_KEYS}
    env["ANTHROPIC_API_KEY"] = "stalled-provider-key"
    env["PYTHONFAULTHANDLER"] = "1"  # SIGABRT prints every thread's stack
    env.pop("MLFLOW_TRACKING_URI", None)
    with StalledProvider() as provider, cores_busy(busy):
        args = [
            "run", f"output_dir={tmp_path / 'out'}", *NOTES,
            f"dataset.path={notes}", "context=llm", "llm=claude_haiku_5_5",
            f"llm.base_url={provider.url}", *extra,
        ]  # fmt: skip
        proc = subprocess.Popen(
            [sys.executable, "-m", "situate.cli", *args],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            waited = 0.0
            while not provider.called.wait(timeout=1):  # or the run ended first: say how
                waited += 1
                if proc.poll() is not None or waited > 300:  # a hang guard only
                    proc.kill()
                    _, stderr = proc.communicate()
                    pytest.fail(f"the run never called the provider:\n{stderr[-6000:]}")
            proc.send_signal(signal.SIGINT)  # the run is now waiting on the provider's answer
            interrupted = time.monotonic()
            try:
                stdout, stderr = proc.communicate(timeout=120)  # a hang guard, not a speed check
                print(f"exited {time.monotonic() - interrupted:.1f} s after SIGINT")  # a report
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)
                _, stderr = proc.communicate(timeout=60)
                pytest.fail(f"no exit within 120 s of SIGINT; its threads:\n{stderr[-12000:]}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


@pytest.mark.slow
def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    proc = interrupted_run(tmp_path, "tracking=none")
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.strip()][-1] == INTERRUPTED


@pytest.mark.slow
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "cores_busy"])
def test_ctrl_c_in_a_sweep_leaves_its_runs_killed_not_running(tmp_path, busy):
    from mlflow.tracking import MlflowClient

    proc = interrupted_run(
        tmp_path, "-m", "fusion=rrf,dense_only", "tracking=mlflow", "study=stop", busy=busy
    )
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.strip()][-1] == INTERRUPTED
    client = MlflowClient(f"sqlite:///{tmp_path / 'out' / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("stop").experiment_id])
    statuses = {r.data.tags.get("sweep", "job"): r.info.status for r in runs}
    assert statuses == {"true": "KILLED", "job": "KILLED"}  # the first job, then the parent


@pytest.mark.slow
def test_missing_api_key_names_the_variable(tmp_path):
    notes = write_notes(tmp_path / "notes")
    proc = run(tmp_path, *NOTES, f"dataset.path={notes}", "context=none", "embedder=openai_small")
    assert_error(
        proc,
        r"error: embedder=openai_small needs its API key: set OPENAI_API_KEY \(the key is read "
        r"from the environment only\)",
    )


def huge_document(folder: Path, chars: int = 900_000) -> Path:
    """One Markdown file of ``chars`` characters of varied words (> 200k tokens)."""
    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ra", "te", "zu", "pe", "no", "shi", "va", "qu", "der", "ton"]
    words = ["".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(5000)]
    parts, n = ["# A very long document\n\n"], 0
    while n < chars:
        paragraph = " ".join(rng.choices(words, k=80)) + ".\n\n"
        parts.append(paragraph)
        n += len(paragraph)
    folder.mkdir(parents=True)
    (folder / "huge.md").write_text("".join(parts))
    return folder


@pytest.mark.slow
def test_a_document_larger_than_the_window_without_a_key(tmp_path):
    """Offline the missing key comes first (counting the document's tokens needs the API); the
    window around each chunk is tested below against LLMContext itself."""
    folder = huge_document(tmp_path / "huge")
    assert (folder / "huge.md").stat().st_size > 900_000
    (folder / "qa.json").write_text(json.dumps([{"q": "What is it?", "gold": ["huge.md#0"]}]))
    proc = run(
        tmp_path, "dataset=folder", f"dataset.path={folder}", "chunker=markdown", "context=llm",
        "llm=claude_haiku_5_5",
    )  # fmt: skip
    assert_error(
        proc,
        r"error: llm=claude_haiku_5_5 needs its API key: set ANTHROPIC_API_KEY \(the key is read "
        r"from the environment only\)",
    )


class SmallWindowLLM:
    """An LLM whose window is ``context_window`` tokens of 4 characters each."""

    name = "fake"
    model = "fake-small-window"
    cache_ttl = None

    def __init__(self, context_window: int):
        self.context_window = context_window
        self.counted: list[int] = []

    def identity(self) -> dict:
        return {"provider": self.name, "model": self.model}

    def count_tokens(self, text: str) -> int:
        self.counted.append(len(text))
        return len(text) // 4

    def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse("context", Usage(input_uncached=1, output=1), self.model)


PROMPT = PromptVariant(
    name="test",
    document_template="<document>\n{document}\n</document>",
    chunk_template="<chunk>\n{chunk}\n</chunk>",
    max_tokens=60,
)


def paragraphs_as_chunks(doc: Document) -> list[Chunk]:
    out, start = [], 0
    for i, para in enumerate(doc.text.split("\n\n")):
        begin = doc.text.index(para, start)
        out.append(Chunk(f"{doc.doc_id}-{i}", doc.doc_id, i, begin, begin + len(para), para))
        start = begin + len(para)
    return out


@pytest.mark.parametrize(
    "window, chars", [(3_000, 40_000), pytest.param(200_000, 900_000, marks=pytest.mark.slow)]
)
def test_a_document_larger_than_the_window_is_sent_as_a_window_around_each_chunk(
    tmp_path, window, chars
):
    text = (huge_document(tmp_path / "huge", chars) / "huge.md").read_text()
    doc = Document("huge.md", text, "A very long document")
    chunks = paragraphs_as_chunks(doc)
    llm = SmallWindowLLM(window)
    ctx = LLMContext(PROMPT, llm, str(tmp_path / "contexts.sqlite"))
    budget = window - PROMPT.max_tokens - 1024
    windows = ctx._document_text(doc, chunks)
    assert set(windows) == {c.index for c in chunks}
    for c in chunks:
        w = windows[c.index]
        assert llm.count_tokens(w) <= budget  # fits the model with room for the prompt
        assert len(w) < len(text)
        assert c.text in w  # the chunk is inside its window...
        begin = text.index(w)
        middle = (c.start + c.end) // 2
        if 0 < begin < len(text) - len(w):  # ...centred on it unless clamped at an end
            assert abs(begin + len(w) // 2 - middle) <= 1
    # the rendered prompts carry the window, not the whole document
    _, _, rendered, _ = ctx.plan(Corpus("huge", [doc], []), chunks)
    assert all(len(r.document) < len(text) for r in rendered)
    assert all(c.text in r.document for c, r in zip(chunks, rendered, strict=True))
    # a document that fits is sent whole
    small = Document("small.md", text[:1000], "small")
    assert ctx._document_text(small, paragraphs_as_chunks(small)) == {}


# -- a failing run loses nothing already stored ---------------------------------------------


def snapshot(cache: Path) -> dict[str, object]:
    """Row counts of every SQLite table and the sha256 of every index file under ``cache``."""
    state: dict[str, object] = {}
    for db_file in sorted(cache.glob("*.sqlite")):
        with sqlite3.connect(db_file) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
                state[f"{db_file.name}:{table}"] = db.execute(
                    f"SELECT COUNT(*) FROM {table}"
                ).fetchone()[0]
    for f in sorted((cache / "index").rglob("*")):
        if f.is_file():
            state[str(f.relative_to(cache))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return state


LOCAL_WORK = ("parsed.sqlite", "index/chunks/", "index/truncation/", "index/index_tokens/")


def paid_for(snapshot: dict) -> dict:
    """A cache snapshot without what is local work, not a paid answer (the parse cache, the
    chunks of a corpus, token and window counts): a failed run may add to those."""
    return {k: v for k, v in snapshot.items() if not k.startswith(LOCAL_WORK)}


@pytest.mark.slow
def test_a_failing_run_loses_nothing_already_stored(tmp_path):
    key = "emulator-key-test-bad-input"
    notes = write_notes(tmp_path / "notes")
    with AnthropicEmulator(api_key=key, ttft=0.0) as emu:
        llm = ["context=llm", "llm=claude_haiku_5_5", f"llm.base_url={emu.url}"]
        good = [*NOTES, f"dataset.path={notes}", *llm]
        proc = run(tmp_path, *good, env={"ANTHROPIC_API_KEY": key})
        assert proc.returncode == 0, proc.stderr
        calls = emu.calls("/v1/messages", ok_only=True)
        assert calls > 0
        cache = tmp_path / "out" / "cache"
        before = snapshot(cache)
        assert before["embeddings.sqlite:embeddings"] > 0
        assert before["contexts.sqlite:contexts"] == calls
        assert any(k.startswith("index/dense/") for k in before)

        # a bad file, a bad option, a missing key mid-run, and a 401 on new documents
        assert_one_line_error(
            run(tmp_path, *NOTES, f"dataset.path={BAD / 'folder_binary_md'}", *llm)
        )
        assert_one_line_error(run(tmp_path, *good, "+fusion.kk=3", env={"ANTHROPIC_API_KEY": key}))
        assert_one_line_error(
            run(tmp_path, *good, "embedder=openai_small", env={"ANTHROPIC_API_KEY": key}),
            "OPENAI_API_KEY",
        )
        changed = write_notes(tmp_path / "changed", extra="\n\nA new closing paragraph.")
        proc = run(
            tmp_path,
            *NOTES,
            f"dataset.path={changed}",
            *llm,
            env={"ANTHROPIC_API_KEY": "sk-ant-wrong"},
        )
        assert_one_line_error(proc, "ANTHROPIC_API_KEY", "401")
        after = snapshot(cache)  # the parse cache keeps the changed folder's files: only grows
        assert after["parsed.sqlite:parsed"] > before["parsed.sqlite:parsed"]
        assert paid_for(after) == paid_for(before)

        # and the good run is still free: every context and embedding comes from the stores
        proc = run(tmp_path, *good, env={"ANTHROPIC_API_KEY": key})
        assert proc.returncode == 0, proc.stderr
        assert emu.calls("/v1/messages", ok_only=True) == calls
        assert paid_for(snapshot(cache)) == paid_for(before)
