"""API keys never leak: not into files, params, logs, artifacts, stdout or stderr.

A full run against the local emulator of every paid vendor (``situate.providers``: Anthropic
contexts, OpenAI embeddings, Cohere rerank... each vendor's ``scan``) with MLflow
tracking and distinctive random keys, then every byte it wrote is searched for them. A wrong key
(401) gives a one-line error that names the variable, never the key.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import run_cli
from situate.providers import emulated, emulator
from test_cli import assert_one_line_error

PAID = {name: v for name, v in emulated().items() if v.scan}  # every vendor with a key to leak

SLICE = ("dataset.max_documents=2", "eval.ks=[5,10]")


def secret_keys() -> dict[str, str]:
    return {v.key_env: f"{v.name}-SECRET-{uuid.uuid4()}" for v in PAID.values()}


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
    key = keys[PAID["cohere"].key_env]
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
    """The keys and each paid vendor's emulator (started, taking its key), by vendor name."""
    keys = secret_keys()
    with contextlib.ExitStack() as stack:
        servers = {
            name: stack.enter_context(emulator(v, keys[v.key_env])) for name, v in PAID.items()
        }
        yield keys, servers


def overrides(servers, out: Path) -> list[str]:
    chosen = [o.format(url=servers[name].url) for name, v in PAID.items() for o in v.scan.overrides]
    return [*chosen, "tracking=mlflow", f"output_dir={out}", *SLICE]


@pytest.mark.slow
def test_a_full_run_writes_no_key_anywhere(cookbook_dir, emulators, tmp_path):
    keys, servers = emulators
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    cwd.mkdir()
    proc = run_cli(
        "run",
        *overrides(servers, out),
        cwd=cwd,
        env={**keys, "MLFLOW_TRACKING_URI": ""},
    )
    assert proc.returncode == 0, proc.stderr
    # the run really used every provider and every store
    for server in servers.values():
        assert server.calls(ok_only=True) > 0, server.name
    assert (out / "mlflow.db").stat().st_size > 0
    assert list((out / "mlartifacts").rglob("contexts.jsonl"))
    assert list((out / "runs").rglob("app.log"))
    assert (out / "cache" / "contexts.sqlite").exists()
    places = everything_written(tmp_path, proc)
    assert len(places) > 20
    assert not leaks(keys, places)


@pytest.mark.slow
@pytest.mark.parametrize("variable, stage", [(v.key_env, v.scan.stage) for v in PAID.values()])
def test_a_wrong_key_is_one_line_that_names_the_variable_not_the_key(
    cookbook_dir, emulators, tmp_path, variable, stage
):
    keys, servers = emulators
    wrong = secret_keys()[variable]  # the emulator answers it with 401
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        *overrides(servers, out),
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
            "dataset.max_documents=1", "eval.ks=[5]", "embedder=minilm_onnx",  # not the point
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
