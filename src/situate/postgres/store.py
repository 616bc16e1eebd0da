"""``store: postgres``: the content-addressed stores as tables of one Postgres server, shared by
every process and machine that reaches it.

The server is the one ``dense: pgvector`` uses (:class:`situate.postgres.client.Postgres`):
``$SITUATE_PG_DSN`` when set (never logged), else the embedded server under ``data_dir``. Each
store of :class:`situate.stores.sqlite.BlobStore` (contexts, charge rows, embeddings, rerank scores,
judgments, parsed documents) is a table ``<schema>.<its SQLite table>`` of ``(key text PRIMARY
KEY, value bytea)``, keyed as in SQLite, so the same run finds the same entries on either
backend. Semantics are SQLite's: every ``put_many``, ``delete_many`` and ``move`` is one
transaction, so a killed process or server leaves whole answers or none.

Claims. A process about to pay for an answer takes a session-level advisory lock on its key
(:meth:`PostgresBlobStore.claim`); a peer that finds the key claimed waits for the answer instead
of paying again, polling the table until it appears or the claim is free. A claim lives as long
as its holder's connection: a killed process's connection closes, Postgres releases its locks,
and the next peer takes the key over. (A pooler in transaction mode, such as Supabase's port
6543, does not keep session locks: use the direct or session-mode port.)

A server that restarts. Every operation runs on this thread's connection; when it fails because
the connection is gone (the server restarted or crashed, the backend was terminated, the network
dropped), the connection is opened again, waiting up to ``reconnect_s`` for the server to come
back (the embedded server is started again at once), and the operation runs again. That is safe:
a write is one transaction, so it committed whole or not at all, and writing it again is an
upsert of the same rows (a delete of the same keys). A server still away after ``reconnect_s``
stops the run with one line (a :class:`~situate.stores.faults.StorageError` naming the server,
never its password); what is stored is kept. A server never reached by this process is not
waited for (a wrong address is a mistake to say at once), unless it answers that it is starting.

Claims across a lost connection: the session's advisory locks went with it, so the new
connection takes this thread's claims again (``pg_try_advisory_lock``) and the calls in flight go
on and store their answers. A peer that looked while the key was free may have claimed it and be
paying for it too: then that answer is paid twice and stored once (the same key), as when a
claimant is killed mid-call; a warning says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from situate.errors import SituateError
from situate.postgres import DSN_ENV, psycopg_module
from situate.postgres.client import Postgres, connection_lost, lock_id, may_come_back
from situate.stores.faults import KEPT, StorageError

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # how often a process waiting on a peer's claim looks for its answer
RETRY_FIRST_S, RETRY_MAX_S = 0.1, 2.0  # the pauses between attempts to reach a server again
MAX_LOSSES = 10  # one operation losing its connection this often in a row: the server is failing
T = TypeVar("T")

_reached: set[str] = set()  # the servers this process has connected to (a digest of each)
_reached_lock = threading.Lock()


class PostgresStores:
    """Where ``store: postgres`` keeps every store (see the module docstring).

    Parameters
    ----------
    dsn_env, data_dir, listen, schema : str
        The server and schema, as for ``dense: pgvector`` (:class:`situate.postgres.client.Postgres`).
    claim_wait_s : float
        The longest a process waits for the answer of a key a live peer has claimed before it
        stops with an error (a peer's call with all its retries ends well before).
    reconnect_s : float
        The longest an operation waits for a server it lost (restarting, or the network
        dropped) to take connections again before the run stops with a one-line error.
    clock, sleep : callable
        Seconds and pauses for both waits (tests pass virtual ones).
    """

    name = "postgres"

    def __init__(
        self,
        dsn_env: str = DSN_ENV,
        data_dir: str = "outputs/postgres",
        listen: str = "socket",
        schema: str = "situate",
        claim_wait_s: float = 900.0,
        reconnect_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] = time.sleep,
    ):
        if claim_wait_s <= 0:
            raise SituateError(f"store.claim_wait_s={claim_wait_s} must be > 0")
        if reconnect_s < 0:
            raise SituateError(f"store.reconnect_s={reconnect_s} must be >= 0")
        self.server = Postgres(dsn_env, data_dir, listen, schema)
        self.claim_wait_s, self.reconnect_s = claim_wait_s, reconnect_s
        self.clock, self.sleep = clock, sleep
        self._local = threading.local()  # one connection per thread (a claim is its session's)
        self._pid = os.getpid()

    def blobs(self, path: str | Path, table: str, paid: bool = False) -> PostgresBlobStore:
        """The table standing for ``table`` of the SQLite file ``path`` (the path names no table:
        keys are content hashes, so every run shares one table per kind). ``paid`` needs nothing
        more here: a commit is in the server's write-ahead log before it returns, and the server
        (its backups, its replicas) is what keeps it; no journal is written beside it."""
        return PostgresBlobStore(self, table)

    # --- connections ----------------------------------------------------------------------------

    def connection(self):
        """This thread's connection (autocommit), opened on first use or when it was lost."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or self._pid != os.getpid():  # a forked child: its own
            conn = self._connect()
        return conn

    def run(self, operation: Callable[[Any], T]) -> T:
        """``operation(conn)`` on this thread's connection; when it fails because the connection
        is gone, again on a new one (the server waited for up to ``reconnect_s``). Its other
        errors are psycopg's own, for the caller to put in words."""
        deadline, losses = None, 0
        while True:
            conn = self.connection()
            try:
                return operation(conn)
            except psycopg_module().Error as e:
                if not connection_lost(e, conn):
                    raise
                self._drop(conn)
                now, losses = self.clock(), losses + 1
                if deadline is None:
                    deadline = now + self.reconnect_s
                elif now >= deadline or losses >= MAX_LOSSES:  # lost again and again
                    raise self.gone(e) from None
                log.warning(
                    "postgres: lost the connection to %s (%s); connecting again",
                    self.server.where(),
                    self.server.detail(e),
                )

    def _connect(self):
        """A new connection for this thread; a server this process reached before (or one
        saying it is starting) is waited for up to ``reconnect_s``. This thread's claims are
        taken again on it."""
        psycopg = psycopg_module()
        reached = self._identity() in _reached
        deadline, pause = None, RETRY_FIRST_S
        while True:
            conn = None
            try:
                conn = self.server.open()
                conn.execute(
                    "SELECT set_config('application_name', %s, false)", [f"situate-{os.getpid()}"]
                )
                self._reclaim(conn)
                break
            except psycopg.Error as e:
                lost = conn is not None and connection_lost(e, conn)  # opened, then lost
                if conn is not None:
                    self._drop(conn)
                if not (lost or may_come_back(e, reached)):
                    raise self.server.error("connect", e) from None
                now = self.clock()
                if deadline is None:
                    deadline = now + self.reconnect_s
                    log.warning(
                        "postgres: %s does not answer (%s); waiting up to store.reconnect_s=%g s",
                        self.server.where(),
                        self.server.detail(e),
                        self.reconnect_s,
                    )
                if now >= deadline:
                    raise self.gone(e) from None
                self.sleep(min(pause, deadline - now))
                pause = min(2 * pause, RETRY_MAX_S)
        with _reached_lock:
            _reached.add(self._identity())
        self._local.conn, self._pid = conn, os.getpid()
        if deadline is not None:
            log.warning("postgres: %s is back", self.server.where())
        return conn

    def _drop(self, conn) -> None:
        with contextlib.suppress(Exception):
            conn.close()
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def _identity(self) -> str:
        dsn = os.environ.get(self.server.dsn_env)
        which = f"dsn:{dsn}" if dsn else f"embedded:{Path(self.server.data_dir).resolve()}"
        return hashlib.sha256(which.encode()).hexdigest()

    def claims(self) -> list[int]:
        """The advisory locks this thread's claims hold (taken again on a new connection)."""
        if getattr(self._local, "claims", None) is None or self._pid != os.getpid():
            self._local.claims = []
        return self._local.claims

    def _reclaim(self, conn) -> None:
        for lock in self.claims():
            (mine,) = conn.execute("SELECT pg_try_advisory_lock(%s)", [lock]).fetchone()
            if not mine:
                log.warning(
                    "postgres: a claim lost with the connection was taken by another process "
                    "meanwhile: that answer may be paid for twice (stored once)"
                )

    def gone(self, e: BaseException) -> StorageError:
        """The one line for a server that stayed away past ``reconnect_s``."""
        server = self.server
        where = server.where()
        if os.environ.get(server.dsn_env):
            fix = f"start it / check ${server.dsn_env}, then run again: {KEPT}"
        else:
            fix = (
                f"see its log ({Path(server.data_dir) / 'server.log'}), start it again or "
                f"check store.data_dir, then run again: {KEPT}"
            )
        return StorageError(
            where,
            "server",
            f"Postgres: {where} is down or unreachable ({server.detail(e)}) and did not come "
            f"back within store.reconnect_s={self.reconnect_s:g} s; {fix}",
        )


class PostgresBlobStore:
    """One store as a Postgres table, with the methods of :class:`situate.stores.sqlite.BlobStore`.

    Each method is one operation of :meth:`PostgresStores.run`: a lost connection is opened again
    and the operation repeated; any other failure is a one-line
    :class:`~situate.stores.faults.StorageError`, and a failed write leaves the table as it was.
    """

    def __init__(self, stores: PostgresStores, table: str):
        from psycopg import sql

        self.stores, self.table = stores, table
        server = stores.server
        self.qualified = sql.Identifier(server.schema, table)
        self.where = f"table {server.schema}.{table} on {server.where()}"

        def open_table(conn) -> bool:
            present, read_only = conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL, current_setting('transaction_read_only')",
                [f"{server.schema}.{table}"],
            ).fetchone()
            if not present:  # created once, under the schema's lock (a replica refuses)
                with conn.transaction():
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(%s)", [lock_id(f"situate:{server.schema}")]
                    )
                    conn.execute(
                        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                            sql.Identifier(server.schema)
                        )
                    )
                    conn.execute(
                        sql.SQL(
                            "CREATE TABLE IF NOT EXISTS {} (key text PRIMARY KEY, value bytea NOT NULL)"
                        ).format(self.qualified)
                    )
            return read_only == "on"

        self.read_only = self._run("open", open_table)  # a replica: it serves what is stored

    def _run(self, action: str, operation: Callable[[Any], T]) -> T:
        """``operation(conn)`` through :meth:`PostgresStores.run`, its errors as one line."""
        try:
            return self.stores.run(operation)
        except psycopg_module().Error as e:
            raise self.stores.server.error(
                f"{action} store table {self.stores.server.schema}.{self.table}", e
            ) from None

    def _sql(self, text: str):
        from psycopg import sql

        return sql.SQL(text).format(table=self.qualified)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """Values of the ``keys`` that are stored (missing keys are absent from the result)."""
        query = self._sql("SELECT key, value FROM {table} WHERE key = ANY(%s)")

        def read(conn) -> dict[str, bytes]:
            rows = conn.execute(query, [list(keys)]).fetchall()
            return {k: bytes(v) for k, v in rows}

        return self._run("read", read)

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store all ``items`` in one transaction."""
        self.move(dict(items), [])

    def delete_many(self, keys: Iterable[str]) -> None:
        """Remove ``keys`` (missing ones are ignored) in one transaction."""
        self.move({}, keys)

    def move(self, items: dict[str, bytes], old_keys: Iterable[str]) -> None:
        """Store ``items`` and delete ``old_keys`` in one transaction (re-keying entries). A lost
        connection rolled it back or it committed whole: either way it is written again."""
        rows = list(items.items())
        old = [k for k in old_keys if k not in items]
        upsert = self._sql(
            "INSERT INTO {table} (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
        )
        delete = self._sql("DELETE FROM {table} WHERE key = ANY(%s)")

        def write(conn) -> None:
            with conn.transaction(), conn.cursor() as cur:
                if rows:
                    cur.executemany(upsert, rows)
                if old:
                    cur.execute(delete, [old])

        if rows or old:
            self._run("write", write)

    def items(self) -> list[tuple[str, bytes]]:
        """Every (key, value) of the table (for small tables)."""
        query = self._sql("SELECT key, value FROM {table}")
        return self._run(
            "read", lambda conn: [(k, bytes(v)) for k, v in conn.execute(query).fetchall()]
        )

    def __len__(self) -> int:
        query = self._sql("SELECT count(*) FROM {table}")
        return self._run("read", lambda conn: conn.execute(query).fetchone()[0])

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[bytes | None]:
        """Hold ``key`` while the block pays for its answer; yields the answer a peer stored
        instead (then nothing is to be paid), else None.

        The claim is ``pg_try_advisory_lock`` on this thread's connection (taken again on a new
        one if the connection is lost while the block runs: see the module docstring). A key a
        live peer holds is waited on, looking for its answer every ``POLL_SECONDS``: the answer
        is yielded once it is stored; a claim let go without an answer (the peer failed, or was
        killed and its connection closed) is taken over. Waiting longer than ``claim_wait_s``
        is an error.
        """
        stores = self.stores
        if self.read_only:  # refused before anything is paid for an answer it could not keep
            raise StorageError(
                stores.server.where(),
                "server",
                f"Postgres: cannot write store table {stores.server.schema}.{self.table} on "
                f"{stores.server.where()} (the server is read-only: a hot standby, or "
                "default_transaction_read_only=on); it is read-only (a replica?): point "
                f"${stores.server.dsn_env} at the primary",
            )
        lock = lock_id(f"claim:{stores.server.schema}.{self.table}:{key}")
        deadline = stores.clock() + stores.claim_wait_s
        waited = False
        while True:
            mine = self._run(
                "claim a key of",
                lambda conn: conn.execute("SELECT pg_try_advisory_lock(%s)", [lock]).fetchone()[0],
            )
            if mine:
                break
            found = self.get_many([key]).get(key)
            if found is not None:  # the peer's answer: nothing to pay
                yield found
                return
            if not waited:
                log.info(
                    "%s: %s is being paid for by another process: waiting for its answer",
                    self.table,
                    key[:12],
                )
                waited = True
            if stores.clock() > deadline:
                raise StorageError(
                    stores.server.where(),
                    "locked",
                    f"{self.where}: another process has held key {key[:12]} for over "
                    f"store.claim_wait_s={stores.claim_wait_s:g} s without storing its answer; "
                    "if that process hangs, stop it (its claim ends with its connection) and run again",
                )
            stores.sleep(POLL_SECONDS)
        claims = stores.claims()
        claims.append(lock)  # taken again by a new connection, should this one be lost
        try:
            yield self.get_many([key]).get(key)  # stored by a peer between our read and the claim
        finally:
            claims.remove(lock)
            conn = getattr(stores._local, "conn", None)
            if conn is not None and not conn.closed:  # a lost connection lost its locks too
                with contextlib.suppress(psycopg_module().Error):
                    conn.execute("SELECT pg_advisory_unlock(%s)", [lock])
