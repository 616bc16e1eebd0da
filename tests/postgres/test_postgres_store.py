"""``store: postgres`` on a real embedded server: the stores' semantics, four processes sharing one
context store against the Anthropic emulator (each context paid once, a killed peer's claims
taken over), and the faults: unreachable, wrong password, read-only, the server killed mid-write
(started again, the run goes on; more restarts in test_postgres_restart.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from situate.contexts.store import StoredContext
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.errors import SituateError
from situate.postgres.embedded import embedded_server
from situate.postgres.store import PostgresStores
from situate.stores.base import ChargeRows

psycopg = pytest.importorskip("psycopg")
RELIABILITY = Path(__file__).resolve().parents[1] / "reliability"
sys.path.insert(0, str(RELIABILITY))
from reliability_support import HANG, KEY, context, corpus  # noqa: E402

from conftest import wait_until  # noqa: E402

N_CHUNKS = 16  # corpus((6, 6, 4)): three documents, one chunk per paragraph
# the int8 ONNX MiniLM in the runs of `situate`: the store is the point here, not the embedder
NOT_THE_POINT = ("embedder=minilm_onnx",)


def one_line(e: pytest.ExceptionInfo) -> str:
    message = str(e.value)
    assert "\n" not in message
    return message


@pytest.fixture
def admin(pg_server: dict):
    with psycopg.connect(pg_server["dsn"], autocommit=True) as conn:
        yield conn


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def test_a_table_per_store_with_sqlite_semantics(pg: dict, admin) -> None:
    stores = PostgresStores(**pg)
    blobs = stores.blobs("outputs/cache/embeddings.sqlite", "embeddings")
    assert (
        blobs.where == f"table {pg['schema']}.embeddings on the embedded server in {pg['data_dir']}"
    )
    blobs.put_many([("a", b"\x00one"), ("b", b"two")])
    blobs.put_many([("a", b"uno")])  # replaced, as INSERT OR REPLACE does
    assert blobs.get_many(["a", "b", "c"]) == {"a": b"uno", "b": b"two"}
    blobs.move({"c": b"three"}, ["a"])
    assert sorted(blobs.items()) == [("b", b"two"), ("c", b"three")]
    blobs.delete_many(["b", "missing"])
    assert len(blobs) == 1
    # a second handle (another process's) sees the same rows: one table per kind, not per path
    assert PostgresStores(**pg).blobs("elsewhere.sqlite", "embeddings").get_many(["c"]) == {
        "c": b"three"
    }
    charges = ChargeRows(stores.blobs("x.sqlite", "context_charges"))
    row = charges.charge("k1", 0.25)
    charges.charge("k2", 0.5)
    assert charges.charged({"k1"}) == (0.25, 1)
    charges.clear(row)
    assert charges.charged({"k1", "k2"}) == (0.5, 1)
    (columns,) = admin.execute(
        "SELECT array_agg(column_name::text ORDER BY ordinal_position) FROM "
        "information_schema.columns WHERE table_schema = %s AND table_name = 'embeddings'",
        [pg["schema"]],
    ).fetchone()
    assert columns == ["key", "value"]


def test_store_postgres_keeps_the_saved_index_key_and_reaches_every_store(pg: dict) -> None:
    from hydra import compose, initialize_config_dir

    from situate.config.compose import CONF_DIR, instantiate_stage
    from situate.running.app import build_pipeline
    from situate.running.saved_index import index_key

    server = [f"store.{k}={v}" for k, v in pg.items()]
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        sqlite = compose("config", overrides=["context=llm"])
        postgres = compose("config", overrides=["context=llm", "store=postgres", *server])
    pipeline = build_pipeline(postgres)
    # where the stores live changes no answer: the persisted index is found under either backend
    assert index_key(sqlite, build_pipeline(sqlite)) == index_key(postgres, pipeline)
    where = f"on the embedded server in {pg['data_dir']}"
    assert pipeline.embeddings.store.where == f"table {pg['schema']}.embeddings {where}"
    assert pipeline.reranker_cached.store.where == f"table {pg['schema']}.scores {where}"
    assert pipeline.context.store.blobs.where == f"table {pg['schema']}.contexts {where}"
    judge = instantiate_stage(postgres, "judge")
    assert judge.store.blobs.where == f"table {pg['schema']}.judgments {where}"
    assert build_pipeline(sqlite).context.store.blobs.where.endswith("cache/contexts.sqlite")


# -- four processes, one store ---------------------------------------------------------------


def contextualizer(emu: AnthropicEmulator, pg: dict, out: Path) -> subprocess.Popen:
    """A process that contextualizes ``corpus()`` against ``emu`` into the shared Postgres store
    and writes its contexts (chunk id -> text) to ``out``."""
    code = f"""
import json, sys
sys.path.insert(0, {str(RELIABILITY)!r})
from reliability_support import context, corpus
from situate.postgres.store import PostgresStores

class Remote:
    url = {emu.url!r}

corp, chunks = corpus()
ctx = context(Remote, "unused.sqlite", stores=PostgresStores(**{pg!r}), concurrency=2)
contexts = ctx.contextualize(corp, chunks)
with open({str(out)!r}, "w") as f:
    json.dump({{"contexts": {{c.chunk_id: c.text for c in contexts}}, "paid": len(ctx.calls)}}, f)
"""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "ANTHROPIC_API_KEY": KEY},
    )


def store_processes(admin) -> set[int]:
    """Pids of the situate processes connected to the server (``application_name``)."""
    rows = admin.execute(
        "SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'situate-%'"
    ).fetchall()
    return {int(name.split("-", 1)[1]) for (name,) in rows}


def claims_of(admin) -> dict[int, int]:
    """Pid of each situate process holding claims -> how many it holds."""
    rows = admin.execute(
        "SELECT a.application_name, count(*) FROM pg_locks l JOIN pg_stat_activity a "
        "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
        "AND a.application_name LIKE 'situate-%' GROUP BY a.application_name"
    ).fetchall()
    return {int(name.split("-", 1)[1]): n for name, n in rows}


def billed_keys(emu: AnthropicEmulator) -> dict[str, int]:
    return emu.stats()["paths"]["/v1/messages"]["billed_keys"]


def start_four_held(emu, pg, admin, tmp_path) -> tuple[list[subprocess.Popen], list[Path]]:
    """Four contextualizers, all connected, their first calls held at the emulator."""
    emu.hold(after=0)
    outs = [tmp_path / f"run{i}.json" for i in range(4)]
    procs = [contextualizer(emu, pg, out) for out in outs]
    pids = {p.pid for p in procs}
    wait_until(lambda: pids <= store_processes(admin), "all four processes on the store")
    assert emu.wait_held(1), "no call was sent"
    return procs, outs


def stored_contexts(pg: dict) -> dict[str, StoredContext]:
    rows = PostgresStores(**pg).blobs("x", "contexts").items()
    return {k: StoredContext.from_bytes(v) for k, v in rows}


@pytest.mark.slow
def test_four_processes_sharing_a_store_pay_each_context_once(pg, admin, key_env, tmp_path):
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        procs, outs = start_four_held(emu, pg, admin, tmp_path)
        emu.release()
        assert [p.wait(HANG) for p in procs] == [0, 0, 0, 0]
        billed = billed_keys(emu)
    runs = [json.loads(out.read_text()) for out in outs]
    assert len(billed) == N_CHUNKS and set(billed.values()) == {1}  # every context paid once
    assert sum(r["paid"] for r in runs) == N_CHUNKS  # ... by one of the four, the others waited
    assert all(r["contexts"] == runs[0]["contexts"] for r in runs[1:])
    assert len(runs[0]["contexts"]) == N_CHUNKS and len(stored_contexts(pg)) == N_CHUNKS


@pytest.mark.slow
def test_the_claims_of_a_killed_peer_are_taken_over(pg, admin, key_env, tmp_path):
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        procs, outs = start_four_held(emu, pg, admin, tmp_path)
        wait_until(lambda: claims_of(admin), "a process holding a claim")
        victim_pid, in_flight = next(iter(claims_of(admin).items()))
        victim = next(p for p in procs if p.pid == victim_pid)
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(HANG) == -signal.SIGKILL
        emu.release()  # the victim's calls are answered to no one; its peers pay them again
        survivors = [(p, out) for p, out in zip(procs, outs, strict=True) if p is not victim]
        assert [p.wait(HANG) for p, _ in survivors] == [0, 0, 0]
        billed = billed_keys(emu)
    runs = [json.loads(out.read_text()) for _, out in survivors]
    assert all(r["contexts"] == runs[0]["contexts"] for r in runs[1:])
    assert len(runs[0]["contexts"]) == N_CHUNKS
    stored = stored_contexts(pg)
    assert {s.text for s in stored.values()} == set(runs[0]["contexts"].values())
    assert len(billed) == N_CHUNKS
    # paid twice: at most the victim's calls in flight when it died, nothing else
    assert N_CHUNKS <= sum(billed.values()) <= N_CHUNKS + in_flight
    assert sum(r["paid"] for r in runs) == N_CHUNKS  # the victim kept nothing: all held


# -- faults ----------------------------------------------------------------------------------


def test_an_unreachable_server_is_one_line_without_the_password(monkeypatch) -> None:
    monkeypatch.setenv("SITUATE_PG_DSN", "postgresql://app:s3cret-pw@127.0.0.1:1/app")
    with pytest.raises(SituateError) as e:
        PostgresStores().blobs("contexts.sqlite", "contexts")
    message = one_line(e)
    assert message.startswith("Postgres: cannot connect to the server in $SITUATE_PG_DSN")
    assert "check the server is running and reachable" in message
    assert "s3cret-pw" not in message


def test_a_wrong_password_is_one_line(pg_server: dict, admin, monkeypatch) -> None:
    admin.execute("CREATE ROLE store_user LOGIN PASSWORD 'right-store-pw'")
    dsn = f"postgresql://store_user:wrong-store-pw@127.0.0.1:{pg_server['port']}/postgres"
    monkeypatch.setenv("SITUATE_PG_DSN", dsn)
    with pytest.raises(SituateError) as e:
        PostgresStores().blobs("contexts.sqlite", "contexts")
    message = one_line(e)
    assert 'password authentication failed for user "store_user"' in message
    assert "fix the user or password in $SITUATE_PG_DSN" in message
    assert "wrong-store-pw" not in message and "right-store-pw" not in message


def test_a_read_only_replica_serves_stored_contexts_and_refuses_new_ones(
    pg: dict, pg_server: dict, admin, key_env, monkeypatch
) -> None:
    corp, chunks = corpus((3,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        written = context(emu, "unused.sqlite", stores=PostgresStores(**pg))
        expected = [c.text for c in written.contextualize(corp, chunks[:2])]
        schema = pg["schema"]
        admin.execute("CREATE ROLE store_replica LOGIN PASSWORD 'replica-store-pw'")
        admin.execute("ALTER ROLE store_replica SET default_transaction_read_only = on")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO store_replica")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO store_replica")
        dsn = f"postgresql://store_replica:replica-store-pw@127.0.0.1:{pg_server['port']}/postgres"
        monkeypatch.setenv("SITUATE_PG_DSN", dsn)
        reader = context(emu, "unused.sqlite", stores=PostgresStores(schema=schema))
        assert [c.text for c in reader.contextualize(corp, chunks[:2])] == expected
        assert len(reader.calls) == 0
        with pytest.raises(SituateError) as e:
            reader.contextualize(corp, chunks)
        assert len(billed_keys(emu)) == 2  # refused before paying for what it could not keep
    message = one_line(e)
    assert f"cannot write store table {schema}.contexts" in message
    assert "the server is read-only" in message
    assert "it is read-only (a replica?): point $SITUATE_PG_DSN at the primary" in message
    assert "replica-store-pw" not in message


def test_an_emulators_answers_in_postgres_are_not_served_to_the_real_apis(
    pg: dict, key_env, monkeypatch
) -> None:
    """Issue 16, item 1, with ``store: postgres``: a table's keys name the endpoint as a SQLite
    file's do, so a run against the real API neither finds the emulator's contexts nor its vectors
    (it needs the key and pays for its own)."""
    from situate.embedding.base import CachedEmbeddings
    from situate.embedding.openai_embedder import OpenAIEmbedder
    from situate.emulators.openai_api import OpenAIEmulator
    from situate.llm.anthropic_provider import AnthropicProvider
    from situate.stores.keys import content_hash

    for variable in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    stores = PostgresStores(**pg)
    corp, chunks = corpus((3,))
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu, OpenAIEmulator(api_key=KEY) as openai:
        emulated = context(emu, "unused.sqlite", stores=stores)
        emulated.contextualize(corp, chunks)
        texts = ["alpha glaciers retreat", "baltic ports grow"]
        vectors = stores.blobs("unused.sqlite", "embeddings")
        CachedEmbeddings(OpenAIEmbedder(base_url=f"{openai.url}/v1"), vectors)(texts, "document")
    assert len(stored_contexts(pg)) == len(chunks) and len(vectors) == len(texts)
    real_llm = AnthropicProvider("claude-haiku-5-5", min_cacheable_tokens=512)
    real = context(None, "unused.sqlite", stores=PostgresStores(**pg), llm=real_llm)
    assert real.lookup(corp, chunks) == [None] * len(chunks)  # `situate contexts show`
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(SituateError, match="set ANTHROPIC_API_KEY"):
        real.contextualize(corp, chunks)
    real_embedder = OpenAIEmbedder()
    assert real_embedder.identity()["endpoint"] == "https://api.openai.com/v1"
    keys = [content_hash(real_embedder.identity(), "document", t) for t in texts]
    assert vectors.get_many(keys) == {}  # the emulator's vectors are under its own endpoint's keys


@pytest.mark.slow
def test_server_killed_mid_write_is_started_again_and_the_run_goes_on(key_env) -> None:
    """The whole embedded server killed (as an OOM killer would) while calls are in flight: their
    answers are stored on new connections (the client starts the server again; it recovers),
    the run finishes, and each context is paid once and stored whole. A server that stays away
    is one line: tests/postgres/test_postgres_restart.py."""
    import threading

    import psutil

    data_dir = Path(tempfile.mkdtemp(prefix="situate-pgstore-kill-"))
    kwargs = {"data_dir": str(data_dir), "listen": "socket", "schema": "s"}
    server = embedded_server(data_dir)
    corp, chunks = corpus((6,))
    try:
        with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
            first = context(emu, "unused.sqlite", stores=PostgresStores(**kwargs), concurrency=2)
            emu.hold(after=2)  # two contexts are answered and stored, the next calls wait
            failures: list[BaseException] = []
            texts: list[str] = []

            def run() -> None:
                try:
                    texts.extend(c.text for c in first.contextualize(corp, chunks))
                except BaseException as e:  # noqa: BLE001 - looked at below
                    failures.append(e)

            thread = threading.Thread(target=run)
            thread.start()
            assert emu.wait_held(1), "no call waited"
            wait_until(lambda: len(stored_contexts(kwargs)) == 2, "two contexts stored")
            postmaster = psutil.Process(
                int((data_dir / "data" / "postmaster.pid").read_text().split()[0])
            )
            processes = [postmaster, *postmaster.children(recursive=True)]
            for process in processes:
                process.kill()
            _, alive = psutil.wait_procs(processes, timeout=HANG)
            assert not alive, alive
            emu.release()  # the held calls are answered; their commits find no server
            thread.join(HANG)
            assert not thread.is_alive() and failures == []
            billed = billed_keys(emu)
        stored = stored_contexts(kwargs)  # every row whole: each parses
        assert len(stored) == len(chunks) == len(texts)
        assert {s.text for s in stored.values()} == set(texts)
        assert len(billed) == len(chunks) and set(billed.values()) == {1}
        assert len(first.calls) == len(chunks)
    finally:
        server.release()
        shutil.rmtree(data_dir, ignore_errors=True)


# -- MLflow on the same Postgres -------------------------------------------------------------


@pytest.mark.slow
def test_two_runs_in_two_processes_log_to_one_postgres_mlflow(
    cookbook_dir: Path, pg_server: dict, admin, tmp_path: Path
) -> None:
    """Two ``situate run`` at once against a fresh MLflow database on Postgres (one by
    ``tracking.tracking_uri``, one by ``MLFLOW_TRACKING_URI``): both runs are there, and the
    password reaches no param, tag, output or file."""
    import threading

    import mlflow

    from conftest import run_cli

    admin.execute("CREATE DATABASE team_mlflow")
    uri = pg_server["dsn"].rsplit("/", 1)[0] + "/team_mlflow"
    password = uri.split(":")[2].split("@")[0]
    args = (
        "run",
        "dataset.max_documents=3",
        "study=team",
        f"output_dir={tmp_path}",
        *NOT_THE_POINT,
    )
    done: dict[str, subprocess.CompletedProcess] = {}

    def run(name: str, *extra: str, env: dict | None = None) -> None:
        done[name] = run_cli(*args, f"hydra.run.dir={tmp_path / name}", *extra, env=env)

    threads = [
        threading.Thread(target=run, args=("override", f"tracking.tracking_uri='{uri}'")),
        threading.Thread(target=run, args=("env",), kwargs={"env": {"MLFLOW_TRACKING_URI": uri}}),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG)
    for name, proc in done.items():
        assert proc.returncode == 0, f"{name}: {proc.stderr[-3000:]}"
        assert password not in proc.stdout + proc.stderr
    client = mlflow.MlflowClient("postgresql+psycopg://" + uri.split("://", 1)[1])
    (experiment,) = [e for e in client.search_experiments() if e.name == "team"]
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}
    assert runs[0].data.metrics["pass_at_10"] == runs[1].data.metrics["pass_at_10"] > 0
    for r in runs:
        logged = json.dumps([r.data.params, r.data.tags])
        assert password not in logged
        assert ":***@127.0.0.1" in r.data.params["tracking.tracking_uri"]
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert password.encode() not in path.read_bytes(), path


def test_an_unreachable_postgres_tracking_database_is_one_line(pg_server: dict) -> None:
    from situate.tracking.mlflow_tracker import MlflowTracker

    uri = f"postgresql://team:team-secret@127.0.0.1:{pg_server['port']}/no_such_database"
    tracker = MlflowTracker(uri, "unused.db", "unused", "team")
    assert tracker.uri.startswith("postgresql+psycopg://team:team-secret@")
    with pytest.raises(SituateError) as e:
        tracker.check()
    message = one_line(e)
    assert message.startswith(
        f"tracking.tracking_uri=postgresql+psycopg://team:***@127.0.0.1:{pg_server['port']}/"
        "no_such_database: cannot connect to the MLflow database ("
    )
    assert "team-secret" not in message


@pytest.mark.slow
def test_mlflow_server_pg_keeps_runs_in_postgres(pg_server: dict, admin, tmp_path: Path) -> None:
    """``make mlflow-server-pg``'s module against the session's embedded server: a run logged
    over HTTP lands in its own database there; the printed URI hides the password."""
    import mlflow

    from conftest import free_port

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable, "-m", "situate.tracking.mlflow_server", "--data-dir",
            pg_server["data_dir"], "--database", "team_server", "--port", str(port),
            "--artifacts-destination", str(tmp_path / "artifacts"),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    said = []
    try:
        for line in server.stdout:
            said.append(line)
            if "Uvicorn running on" in line:
                break
        else:
            raise AssertionError("mlflow server exited: " + "".join(said)[-3000:])
        client = mlflow.MlflowClient(f"http://127.0.0.1:{port}")
        experiment = client.create_experiment("team")
        run = client.create_run(experiment, run_name="one")
        client.log_metric(run.info.run_id, "pass_at_10", 0.5)
        client.set_terminated(run.info.run_id)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=HANG)
    password = pg_server["dsn"].split(":")[2].split("@")[0]
    first = said[0]
    assert first.startswith("MLflow on postgresql+psycopg://postgres:***@127.0.0.1:")
    assert f"/team_server: MLFLOW_TRACKING_URI=http://127.0.0.1:{port}" in first
    assert password not in "".join(said)
    uri = pg_server["dsn"].rsplit("/", 1)[0] + "/team_server"
    with psycopg.connect(uri) as conn:
        rows = conn.execute("SELECT name, status FROM runs").fetchall()
    assert rows == [("one", "FINISHED")]


@pytest.mark.slow
def test_cli_run_with_store_postgres_keeps_vectors_in_postgres(cookbook_dir: Path) -> None:
    """``situate run store=postgres`` on the embedded server: no SQLite store is written, and a
    rerun without the cache folder embeds nothing (the vectors came from Postgres). The output
    folder is not under pytest's basetemp, which other sessions reset to 0700 (as root the
    server runs as another user)."""
    from conftest import run_cli

    output = Path(tempfile.mkdtemp(prefix="situate-pgstore-cli-"))
    args = ("run", "store=postgres", "dataset.max_documents=3", "tracking=none", *NOT_THE_POINT)
    try:
        first = run_cli(*args, f"output_dir={output}")
        assert first.returncode == 0, first.stderr[-3000:]
        assert not list((output / "cache").glob("*.sqlite"))
        shutil.rmtree(output / "cache")
        second = run_cli(*args, f"output_dir={output}")
        assert second.returncode == 0, second.stderr[-3000:]
        runs = sorted(output.glob("runs/*/*/result.json"), key=os.path.getmtime)
        m1, m2 = (json.loads(r.read_text())["metrics"] for r in runs)
    finally:
        shutil.rmtree(output, ignore_errors=True)
    assert m1["texts_embedded"] == 38 and m2["texts_embedded"] == 0  # 27 chunks + 11 questions
    assert m1["mrr"] == m2["mrr"]


def test_two_judges_sharing_a_store_pay_each_pair_once(pg: dict, admin, key_env) -> None:
    """Two judges of one study at once, each with its own connections (sessions, as two
    processes have): while the first's four calls are held at the emulator, the second's four
    workers wait on its claims; each pair is billed once and both get the same grades."""
    import threading

    from situate.judging.judge import Judge
    from situate.judging.pool import Pair
    from situate.llm.anthropic_provider import AnthropicProvider
    from situate.money.pricing import load_price_book

    question = "How do I stream tokens from the messages API?"
    pairs = [
        Pair("q1", question, "Stream tokens with client.messages.stream().", "a"),
        Pair("q1", question, "Tokens are counted by the messages endpoint.", "b"),
        Pair("q1", question, "def add(x, y): return x + y", "c"),
        Pair("q2", "What is a vector database?", "A vector database stores embeddings.", "d"),
    ]
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        llm = AnthropicProvider("claude-haiku-4-5", base_url=emu.url, backoff_base=0.005)
        judges = [
            Judge(llm, "unused.sqlite", load_price_book(), stores=PostgresStores(**pg))
            for _ in range(2)
        ]
        runs: list = [None, None]

        def judge(i: int) -> None:
            runs[i] = judges[i].judge(pairs)

        emu.hold(after=0)
        threads = [threading.Thread(target=judge, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        assert emu.wait_held(4), "the four pairs were never sent"
        # both judges' workers (4 each) and their openers (1 each) are on the server
        wait_until(lambda: len(connections(admin)) >= 10, "both judges' workers connected")
        emu.release()
        for t in threads:
            t.join(HANG)
        billed = billed_keys(emu)
    assert len(billed) == 4 and set(billed.values()) == {1}
    assert len(runs[0].calls) + len(runs[1].calls) == 4
    grades = [{k: j.grade for k, j in r.judgments.items()} for r in runs]
    assert grades[0] == grades[1] and sorted(grades[0].values()) == [0, 2, 3, 3]


def connections(admin) -> list[int]:
    """Backend pids of this process's situate connections."""
    name = f"situate-{os.getpid()}"
    rows = admin.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [name])
    return [pid for (pid,) in rows.fetchall()]
