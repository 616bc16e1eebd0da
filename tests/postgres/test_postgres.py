"""Postgres faults on a real embedded server: unreachable, wrong password, no pgvector, a
read-only replica, a builder or the server killed mid-build, two builders of one table."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

from conftest import wait_until
from situate.dense.pgvector import PgvectorIndex
from situate.errors import SituateError
from situate.postgres.client import REGISTRY
from situate.postgres.embedded import embedded_server
from situate.sparse.postgres_fts import PostgresFtsEngine

psycopg = pytest.importorskip("psycopg")
REPO = Path(__file__).resolve().parents[2]
VECTORS = np.eye(4, dtype=np.float32)


def random_unit(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def one_line(e: pytest.ExceptionInfo) -> str:
    message = str(e.value)
    assert "\n" not in message
    return message


def count(conn, query: str, params=()) -> int:
    return conn.execute(query, params).fetchone()[0]


def waiting_on_locks(conn, schema: str) -> list[tuple[int, str]]:
    """Backends of other sessions waiting on a lock: (pid, lock type). From ``pg_locks`` alone:
    inside a transaction ``pg_stat_activity`` is a snapshot taken at its first read, so a backend
    that connects after the first poll would never show up in it."""
    return conn.execute(
        "SELECT pid, locktype FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()"
    ).fetchall()


@pytest.fixture
def admin(pg_server: dict):
    with psycopg.connect(pg_server["dsn"], autocommit=True) as conn:
        yield conn


def test_unreachable_server_is_one_line_without_the_password(monkeypatch) -> None:
    monkeypatch.setenv("SITUATE_PG_DSN", "postgresql://app:s3cret-pw@127.0.0.1:1/app")
    with pytest.raises(SituateError) as e:
        PgvectorIndex().build(VECTORS)
    message = one_line(e)
    assert message.startswith("Postgres: cannot connect to the server in $SITUATE_PG_DSN")
    assert "check the server is running and reachable" in message
    assert "s3cret-pw" not in message


@pytest.mark.parametrize(
    "dsn", ["postgresql//app:leak-pw@db.example/app", "host=x password=leak-pw x"]
)
def test_a_malformed_dsn_is_one_line_and_not_echoed(dsn: str, monkeypatch) -> None:
    monkeypatch.setenv("SITUATE_PG_DSN", dsn)
    with pytest.raises(SituateError) as e:
        PostgresFtsEngine().build(["a text"])
    message = one_line(e)
    assert message.startswith("$SITUATE_PG_DSN is not a valid Postgres connection string")
    assert "leak-pw" not in message


def test_wrong_password_over_tcp_is_one_line(pg_server: dict, admin, monkeypatch) -> None:
    admin.execute("CREATE ROLE app_user LOGIN PASSWORD 'right-password'")
    dsn = f"postgresql://app_user:wrong-password@127.0.0.1:{pg_server['port']}/postgres"
    monkeypatch.setenv("SITUATE_PG_DSN", dsn)
    with pytest.raises(SituateError) as e:
        PostgresFtsEngine().build(["a text"])
    message = one_line(e)
    assert 'password authentication failed for user "app_user"' in message
    assert "fix the user or password in $SITUATE_PG_DSN" in message
    assert "wrong-password" not in message and "right-password" not in message


def test_missing_extension_is_one_line(pg: dict) -> None:
    with pytest.raises(SituateError) as e:
        PgvectorIndex(extension="vector_not_installed", **pg).build(VECTORS)
    message = one_line(e)
    assert "cannot create extension vector_not_installed" in message
    assert 'extension "vector_not_installed" is not available' in message
    assert "the extension is not installed on that server" in message


def test_pgvector_a_role_may_not_create_is_one_line(pg_server: dict, admin, monkeypatch):
    admin.execute("CREATE DATABASE no_vector")
    admin.execute("CREATE ROLE plain_user LOGIN PASSWORD 'plain-pw'")
    admin.execute("GRANT CREATE ON DATABASE no_vector TO plain_user")
    dsn = f"postgresql://plain_user:plain-pw@127.0.0.1:{pg_server['port']}/no_vector"
    monkeypatch.setenv("SITUATE_PG_DSN", dsn)
    with pytest.raises(SituateError) as e:
        PgvectorIndex(index="exact").build(VECTORS)
    message = one_line(e)
    assert 'permission denied to create extension "vector"' in message
    assert "ask an admin of that server to run CREATE EXTENSION vector there" in message
    # full-text search needs no extension: the same role builds and searches
    engine = PostgresFtsEngine()
    engine.build(["cats and dogs", "birds"])
    assert engine.search(["dog"], depth=2).ids[0].tolist() == [0, -1]


def test_read_only_replica_serves_built_tables_and_refuses_new_ones(
    pg: dict, pg_server: dict, admin, tmp_path: Path, monkeypatch
) -> None:
    built = PgvectorIndex(index="exact", **pg)
    built.build(VECTORS)
    built.save(tmp_path)
    schema = pg["schema"]
    admin.execute("CREATE ROLE replica_user LOGIN PASSWORD 'replica-pw'")
    admin.execute("ALTER ROLE replica_user SET default_transaction_read_only = on")
    admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO replica_user")
    admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO replica_user")
    dsn = f"postgresql://replica_user:replica-pw@127.0.0.1:{pg_server['port']}/postgres"
    monkeypatch.setenv("SITUATE_PG_DSN", dsn)
    reader = PgvectorIndex(index="exact", schema=schema)
    reader.load(tmp_path)
    query = np.array([[1, 0, 0, 0]], dtype=np.float32)
    assert reader.search(query, 2).ids.tolist() == built.search(query, 2).ids.tolist()
    with pytest.raises(SituateError) as e:
        PgvectorIndex(index="exact", schema=schema).build(2 * VECTORS[:3])
    message = one_line(e)
    assert "read-only transaction" in message
    assert "it is read-only (a replica?): point $SITUATE_PG_DSN at the primary" in message
    assert "replica-pw" not in message


def test_a_table_situate_did_not_create_is_refused_and_kept(pg: dict, admin) -> None:
    probe = PgvectorIndex(index="exact", **{**pg, "schema": pg["schema"] + "_probe"})
    probe.build(VECTORS)  # learn the content-keyed name
    schema = pg["schema"]
    PgvectorIndex(index="exact", **pg).build(2 * VECTORS)  # the schema and its registry
    admin.execute(f"CREATE TABLE {schema}.{probe.table} (mine text)")
    admin.execute(f"INSERT INTO {schema}.{probe.table} VALUES ('keep me')")
    with pytest.raises(SituateError) as e:
        PgvectorIndex(index="exact", **pg).build(VECTORS)
    assert "exists but situate did not create it" in one_line(e)
    assert admin.execute(f"SELECT mine FROM {schema}.{probe.table}").fetchall() == [("keep me",)]


def test_builder_killed_mid_build_leaves_no_table_and_a_rerun_completes(pg: dict, admin) -> None:
    schema = pg["schema"]
    PgvectorIndex(index="exact", **pg).build(VECTORS)  # the schema and its registry
    script = (
        "import numpy as np\n"
        "from situate.dense.pgvector import PgvectorIndex\n"
        "v = np.random.default_rng(0).normal(size=(3000, 16)).astype(np.float32)\n"
        f"PgvectorIndex(index='hnsw', data_dir={pg['data_dir']!r}, listen='tcp', "
        f"schema={schema!r}).build(v)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    with admin.transaction():
        # hold the registry: the builder creates, copies and indexes, then waits to register
        admin.execute(f"LOCK TABLE {schema}.{REGISTRY} IN EXCLUSIVE MODE")
        builder = subprocess.Popen([sys.executable, "-c", script], env=env)
        try:
            wait_until(lambda: waiting_on_locks(admin, schema), "the builder waiting to register")
            (backend, _), *_ = waiting_on_locks(admin, schema)
        finally:
            builder.send_signal(signal.SIGKILL)
            builder.wait()
    # the lock is released: the orphaned backend finds its client gone and rolls back
    wait_until(
        lambda: not count(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend]),
        "the killed builder's backend ending",
    )
    assert count(admin, f"SELECT count(*) FROM {schema}.{REGISTRY}") == 1
    assert count(admin, "SELECT count(*) FROM pg_tables WHERE schemaname = %s", [schema]) == 2
    vectors = np.random.default_rng(0).normal(size=(3000, 16)).astype(np.float32)
    rerun = PgvectorIndex(index="hnsw", **pg)
    rerun.build(vectors)
    assert count(admin, f"SELECT count(*) FROM {schema}.{rerun.table}") == 3000
    assert count(admin, f"SELECT count(*) FROM {schema}.{REGISTRY}") == 2


def test_two_builders_of_one_table_build_it_once(pg: dict, admin, caplog) -> None:
    schema = pg["schema"]
    PgvectorIndex(index="exact", **pg).build(VECTORS)
    vectors = random_unit(500, 8, seed=1)
    engines = [PgvectorIndex(index="hnsw", **pg) for _ in range(2)]
    failures: list[BaseException] = []

    def build(engine: PgvectorIndex) -> None:
        try:
            engine.build(vectors)
        except BaseException as e:  # reported below
            failures.append(e)

    caplog.set_level(logging.INFO, logger="situate.postgres")
    with admin.transaction():
        admin.execute(f"LOCK TABLE {schema}.{REGISTRY} IN EXCLUSIVE MODE")
        threads = [threading.Thread(target=build, args=(e,)) for e in engines]
        for t in threads:
            t.start()
        # one builder waits to register its table, the other on the advisory lock of its key
        wait_until(
            lambda: (
                sorted(t for _, t in waiting_on_locks(admin, schema)) == ["advisory", "relation"]
            ),
            "both builders waiting",
        )
    for t in threads:
        t.join()
    assert not failures
    assert engines[0].table == engines[1].table
    built = [r.message for r in caplog.records if "built table" in r.message]
    assert len(built) == 1
    assert any("was built meanwhile" in r.message for r in caplog.records)
    assert count(admin, f"SELECT count(*) FROM {schema}.{engines[0].table}") == 500
    query = random_unit(2, 8, seed=2)
    assert engines[0].search(query, 5).ids.tolist() == engines[1].search(query, 5).ids.tolist()


@pytest.mark.slow
def test_server_killed_mid_build_is_one_line_and_a_rerun_recovers() -> None:
    import psutil

    data_dir = Path(tempfile.mkdtemp(prefix="situate-pg-kill-"))
    kwargs = {"data_dir": str(data_dir), "listen": "socket", "schema": "s"}
    server = embedded_server(data_dir)
    try:
        PgvectorIndex(index="exact", **kwargs).build(VECTORS)
        vectors = random_unit(2000, 8, seed=3)
        failures: list[SituateError] = []

        def build() -> None:
            try:
                PgvectorIndex(index="hnsw", **kwargs).build(vectors)
            except SituateError as e:
                failures.append(e)

        admin = psycopg.connect(**server.conninfo(), autocommit=True)
        admin.execute("BEGIN")
        admin.execute(f"LOCK TABLE s.{REGISTRY} IN EXCLUSIVE MODE")
        thread = threading.Thread(target=build)
        thread.start()
        wait_until(lambda: waiting_on_locks(admin, "s"), "the builder waiting to register")
        postmaster = psutil.Process(
            int((data_dir / "data" / "postmaster.pid").read_text().split()[0])
        )
        server_processes = [postmaster, *postmaster.children(recursive=True)]
        for process in server_processes:
            process.kill()  # the whole server, as an OOM killer or a power cut would
        # a SIGKILL is delivered, not awaited: the rerun must find the server gone, not dying
        _, alive = psutil.wait_procs(server_processes, timeout=120)
        assert not alive, alive
        thread.join()
        admin.close()
        (failure,) = failures
        message = str(failure)
        assert "\n" not in message
        assert message.startswith("Postgres: cannot build table s.dense_")
        assert "the server went away mid-way; nothing half-built is kept: run again" in message
        rerun = PgvectorIndex(index="hnsw", **kwargs)  # restarts the server, which recovers
        rerun.build(vectors)
        with psycopg.connect(**server.conninfo(), autocommit=True) as conn:
            assert count(conn, f"SELECT count(*) FROM s.{rerun.table}") == 2000
            assert count(conn, f"SELECT count(*) FROM s.{REGISTRY}") == 2
    finally:
        server.release()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.mark.slow
def test_cli_run_on_the_cookbook_slice_embedded_then_by_dsn(cookbook_dir: Path, pg_server: dict):
    """``situate run dense=pgvector sparse=postgres_fts``: first on the embedded server it starts
    and stops itself, then on a user's server by DSN, which gets the tables from the cached
    index folders; the DSN's password reaches no output."""
    from conftest import run_cli

    output = Path(tempfile.mkdtemp(prefix="situate-pg-cli-"))
    args = ("run", "dataset.max_documents=3", "dense=pgvector", "sparse=postgres_fts",
            "embedder=minilm_onnx")  # the store is the point, not the embedder  # fmt: skip
    try:
        embedded = run_cli(*args, "tracking=none", f"output_dir={output}")
        assert embedded.returncode == 0, embedded.stderr[-3000:]
        said = embedded.stdout + embedded.stderr
        assert "started the embedded server" in said
        assert "stopped the embedded server" in said
        assert not (output / "postgres" / "data" / "postmaster.pid").exists()
        by_dsn = run_cli(
            *args, f"output_dir={output}", "study=pg", env={"SITUATE_PG_DSN": pg_server["dsn"]}
        )
        assert by_dsn.returncode == 0, by_dsn.stderr[-3000:]
        said_by_dsn = by_dsn.stdout + by_dsn.stderr
        assert "started the embedded server" not in said_by_dsn
        assert said_by_dsn.count("postgres: built table situate.") == 2
        first, second = sorted(output.glob("runs/*/*/result.json"), key=os.path.getmtime)
        m1 = json.loads(first.read_text())["metrics"]
        m2 = json.loads(second.read_text())["metrics"]
        assert m2["texts_embedded"] == 0  # vectors and index folders came from the cache
        assert m1["pass_at_10"] == m2["pass_at_10"] > 0
        assert m1["mrr"] == m2["mrr"]
        password = pg_server["dsn"].split(":")[2].split("@")[0]
        assert password not in said + said_by_dsn
        for path in (p for p in output.rglob("*") if p.is_file()):
            assert password.encode() not in path.read_bytes(), path
    finally:
        shutil.rmtree(output, ignore_errors=True)
