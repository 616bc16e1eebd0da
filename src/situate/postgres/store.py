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
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from situate.errors import SituateError
from situate.postgres import DSN_ENV, psycopg_module
from situate.postgres.client import Postgres, lock_id

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # how often a process waiting on a peer's claim looks for its answer


class PostgresStores:
    """Where ``store: postgres`` keeps every store (see the module docstring).

    Parameters
    ----------
    dsn_env, data_dir, listen, schema : str
        The server and schema, as for ``dense: pgvector`` (:class:`situate.postgres.client.Postgres`).
    claim_wait_s : float
        The longest a process waits for the answer of a key a live peer has claimed before it
        stops with an error (a peer's call with all its retries ends well before).
    """

    name = "postgres"

    def __init__(
        self,
        dsn_env: str = DSN_ENV,
        data_dir: str = "outputs/postgres",
        listen: str = "socket",
        schema: str = "situate",
        claim_wait_s: float = 900.0,
    ):
        if claim_wait_s <= 0:
            raise SituateError(f"store.claim_wait_s={claim_wait_s} must be > 0")
        self.server = Postgres(dsn_env, data_dir, listen, schema)
        self.claim_wait_s = claim_wait_s
        self._local = threading.local()  # one connection per thread (a claim is its session's)
        self._pid = os.getpid()

    def blobs(self, path: str | Path, table: str, paid: bool = False) -> PostgresBlobStore:
        """The table standing for ``table`` of the SQLite file ``path`` (the path names no table:
        keys are content hashes, so every run shares one table per kind). ``paid`` needs nothing
        more here: the server's own write-ahead log keeps a committed answer."""
        return PostgresBlobStore(self, table)

    def connection(self):
        """This thread's connection (autocommit), opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or self._pid != os.getpid():  # a forked child: its own
            conn = self.server.connect()
            conn.execute(
                "SELECT set_config('application_name', %s, false)", [f"situate-{os.getpid()}"]
            )
            self._local.conn, self._pid = conn, os.getpid()
        return conn


class PostgresBlobStore:
    """One store as a Postgres table, with the methods of :class:`situate.stores.sqlite.BlobStore`."""

    def __init__(self, stores: PostgresStores, table: str):
        from psycopg import sql

        self.stores, self.table = stores, table
        server = stores.server
        self.qualified = sql.Identifier(server.schema, table)
        self.where = f"table {server.schema}.{table} on {server.where()}"
        conn = stores.connection()
        with self._errors("open"):
            present, read_only = conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL, current_setting('transaction_read_only')",
                [f"{server.schema}.{table}"],
            ).fetchone()
            self.read_only = read_only == "on"  # a replica: it serves what is stored, no more
            if not present:  # created once, under the schema's lock (a replica only reads)
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

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except psycopg_module().Error as e:
            raise self.stores.server.error(
                f"{action} store table {self.stores.server.schema}.{self.table}", e
            ) from None

    def _sql(self, text: str):
        from psycopg import sql

        return sql.SQL(text).format(table=self.qualified)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """Values of the ``keys`` that are stored (missing keys are absent from the result)."""
        with self._errors("read"):
            rows = self.stores.connection().execute(
                self._sql("SELECT key, value FROM {table} WHERE key = ANY(%s)"), [list(keys)]
            )
            return {k: bytes(v) for k, v in rows.fetchall()}

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store all ``items`` in one transaction."""
        self.move(dict(items), [])

    def delete_many(self, keys: Iterable[str]) -> None:
        """Remove ``keys`` (missing ones are ignored) in one transaction."""
        self.move({}, keys)

    def move(self, items: dict[str, bytes], old_keys: Iterable[str]) -> None:
        """Store ``items`` and delete ``old_keys`` in one transaction (re-keying entries)."""
        conn = self.stores.connection()
        with self._errors("write"), conn.transaction(), conn.cursor() as cur:
            if items:
                cur.executemany(
                    self._sql(
                        "INSERT INTO {table} (key, value) VALUES (%s, %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
                    ),
                    list(items.items()),
                )
            old = [k for k in old_keys if k not in items]
            if old:
                cur.execute(self._sql("DELETE FROM {table} WHERE key = ANY(%s)"), [old])

    def items(self) -> list[tuple[str, bytes]]:
        """Every (key, value) of the table (for small tables)."""
        with self._errors("read"):
            rows = self.stores.connection().execute(self._sql("SELECT key, value FROM {table}"))
            return [(k, bytes(v)) for k, v in rows.fetchall()]

    def __len__(self) -> int:
        with self._errors("read"):
            return (
                self.stores.connection()
                .execute(self._sql("SELECT count(*) FROM {table}"))
                .fetchone()[0]
            )

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[bytes | None]:
        """Hold ``key`` while the block pays for its answer; yields the answer a peer stored
        instead (then nothing is to be paid), else None.

        The claim is ``pg_try_advisory_lock`` on this thread's connection. A key a live peer
        holds is waited on, looking for its answer every ``POLL_SECONDS``: the answer is yielded
        once it is stored; a claim let go without an answer (the peer failed, or was killed and
        its connection closed) is taken over. Waiting longer than ``claim_wait_s`` is an error.
        """
        if self.read_only:  # refused before anything is paid for an answer it could not keep
            raise SituateError(
                f"Postgres: cannot write store table {self.stores.server.schema}.{self.table} on "
                f"{self.stores.server.where()} (the server is read-only: a hot standby, or "
                "default_transaction_read_only=on); it is read-only (a replica?): point "
                f"${self.stores.server.dsn_env} at the primary"
            )
        conn = self.stores.connection()
        lock = lock_id(f"claim:{self.stores.server.schema}.{self.table}:{key}")
        deadline = time.monotonic() + self.stores.claim_wait_s
        waited = False
        while True:
            with self._errors("claim a key of"):
                (mine,) = conn.execute("SELECT pg_try_advisory_lock(%s)", [lock]).fetchone()
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
            if time.monotonic() > deadline:
                raise SituateError(
                    f"{self.where}: another process has held key {key[:12]} for over "
                    f"store.claim_wait_s={self.stores.claim_wait_s:g} s without storing its answer; "
                    "if that process hangs, stop it (its claim ends with its connection) and run again"
                )
            time.sleep(POLL_SECONDS)
        try:
            yield self.get_many([key]).get(key)  # stored by a peer between our read and the claim
        finally:
            with contextlib.suppress(
                psycopg_module().Error
            ):  # a lost connection lost its locks too
                conn.execute("SELECT pg_advisory_unlock(%s)", [lock])
