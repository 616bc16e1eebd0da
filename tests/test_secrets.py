"""API keys never leak: not into files, params, logs, artifacts, stdout or stderr.

A full run against the local emulators (Anthropic contexts, OpenAI embeddings, Cohere rerank,
MLflow tracking) with distinctive random keys, then every byte it wrote is searched for them.
A wrong key (401) gives a one-line error that names the variable, never the key.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import run_cli
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.cohere_api import CohereEmulator
from situate.emulators.openai_api import OpenAIEmulator
from test_cli import assert_one_line_error

SLICE = ("dataset.max_documents=2", "eval.ks=[5,10]")


def secret_keys() -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": f"sk-ant-SECRET-{uuid.uuid4()}",
        "OPENAI_API_KEY": f"sk-openai-SECRET-{uuid.uuid4()}",
        "CO_API_KEY": f"co-SECRET-{uuid.uuid4()}",
    }


def fragments(key: str, width: int = 8) -> list[bytes]:
    """The key and every ``width``-character piece of its random part.

    A masked echo such as OpenAI's ``sk-********e9fa`` (its last 4 characters) is allowed; any 8
    characters of the random part in a row are a leak.
    """
    random_part = key.rsplit("SECRET-", 1)[1]
    pieces = {random_part[i : i + width] for i in range(len(random_part) - width + 1)}
    return [key.encode(), *sorted(p.encode() for p in pieces)]


def leaks(keys: dict[str, str], places: dict[str, bytes]) -> list[str]:
    found = []
    for variable, key in keys.items():
        for fragment in fragments(key):
            for where, data in places.items():
                if fragment in data:
                    found.append(f"{variable} ({fragment.decode()!r}) in {where}")
    return found


def test_the_scan_finds_a_key_or_a_piece_of_it():
    keys = secret_keys()
    key = keys["CO_API_KEY"]
    assert leaks(keys, {"log": f"auth: Bearer {key}".encode()})
    assert leaks(keys, {"db": b"\x00" + key[-12:].encode() + b"\x00"})
    assert not leaks(keys, {"error": f"key sk-********{key[-4:]} refused".encode()})


def everything_written(root: Path, proc: subprocess.CompletedProcess) -> dict[str, bytes]:
    places = {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    places["stdout"] = proc.stdout.encode()
    places["stderr"] = proc.stderr.encode()
    return places


@pytest.fixture
def emulators():
    keys = secret_keys()
    with (
        AnthropicEmulator(api_key=keys["ANTHROPIC_API_KEY"], ttft=0.0) as anthropic,
        OpenAIEmulator(api_key=keys["OPENAI_API_KEY"]) as openai,
        CohereEmulator(api_key=keys["CO_API_KEY"]) as cohere,
    ):
        yield keys, anthropic, openai, cohere


def overrides(anthropic, openai, cohere, out: Path) -> list[str]:
    return [
        "context=llm",
        "llm=claude_haiku_5_5",
        f"llm.base_url={anthropic.url}",
        "embedder=openai_small",
        f"embedder.base_url={openai.url}/v1",
        "reranker=cohere",
        f"reranker.base_url={cohere.url}",
        "reranker.pool=20",
        "tracking=mlflow",
        f"output_dir={out}",
        *SLICE,
    ]


@pytest.mark.slow
def test_a_full_run_writes_no_key_anywhere(cookbook_dir, emulators, tmp_path):
    keys, anthropic, openai, cohere = emulators
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    cwd.mkdir()
    proc = run_cli(
        "run",
        *overrides(anthropic, openai, cohere, out),
        cwd=cwd,
        env={**keys, "MLFLOW_TRACKING_URI": ""},
    )
    assert proc.returncode == 0, proc.stderr
    # the run really used every provider and every store
    for emulator in (anthropic, openai, cohere):
        assert emulator.calls(ok_only=True) > 0, emulator.name
    assert (out / "mlflow.db").stat().st_size > 0
    assert list((out / "mlartifacts").rglob("contexts.jsonl"))
    assert list((out / "runs").rglob("app.log"))
    assert (out / "cache" / "contexts.sqlite").exists()
    places = everything_written(tmp_path, proc)
    assert len(places) > 20
    assert not leaks(keys, places)


@pytest.mark.slow
@pytest.mark.parametrize(
    "variable, stage",
    [
        ("ANTHROPIC_API_KEY", "llm=claude-haiku-5-5"),
        ("OPENAI_API_KEY", "embedder=openai"),
        ("CO_API_KEY", "reranker"),
    ],
)
def test_a_wrong_key_is_one_line_that_names_the_variable_not_the_key(
    cookbook_dir, emulators, tmp_path, variable, stage
):
    keys, anthropic, openai, cohere = emulators
    wrong = secret_keys()[variable]  # the emulator answers it with 401
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        *overrides(anthropic, openai, cohere, out),
        env={**keys, variable: wrong, "MLFLOW_TRACKING_URI": ""},
    )
    line = assert_one_line_error(proc, variable, stage)
    assert "401" in line or "refused" in line or "rejected" in line, line
    assert not leaks({variable: wrong}, {"error line": line.encode()})
    assert not leaks({variable: wrong, **keys}, everything_written(tmp_path, proc))


@pytest.mark.slow
def test_a_password_in_the_tracking_uri_reaches_no_param_artifact_or_log(cookbook_dir, tmp_path):
    from mlflow.tracking import MlflowClient

    from conftest import live_mlflow_server

    password = f"pw-SECRET-{uuid.uuid4()}"
    with live_mlflow_server(tmp_path) as port:
        uri = f"http://team:{password}@127.0.0.1:{port}"
        out = tmp_path / "out"
        proc = run_cli(
            "run", "tracking=mlflow", f"output_dir={out}", f"tracking.tracking_uri={uri}",
            "dataset.max_documents=1", "eval.ks=[5]",
            env={"MLFLOW_TRACKING_URI": uri},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        client = MlflowClient(f"http://127.0.0.1:{port}")
        (run,) = client.search_runs(
            [e.experiment_id for e in client.search_experiments()], "attributes.status='FINISHED'"
        )
        logged = json.dumps([run.data.params, run.data.tags]).encode()
        assert b"team:***@127.0.0.1" in logged  # the URI is there, its password is not
        places = {
            "params and tags": logged,
            **everything_written(tmp_path / "server-artifacts", proc),
        }
        places.update(everything_written(out, proc))
        assert password not in proc.stdout, [x for x in proc.stdout.splitlines() if password in x]
        assert not leaks({"password": password}, places)
