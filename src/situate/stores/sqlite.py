"""``store: sqlite`` (the default): each store a table of bytes in a SQLite file under ``cache_dir``.

``BlobStore`` holds many small values (one embedding, one context) in a SQLite table. Each batch is
one transaction, so a killed process leaves whole batches or nothing, never half an entry: an
uncommitted transaction is rolled back from the write-ahead log when the database is next opened.
(``synchronous=NORMAL``: a commit survives a killed process; after a power loss the last commits
may be rolled back, never half-applied.)
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from situate.stores import journal
from situate.stores.faults import (
    REPAIR,
    StorageError,
    damaged_file,
    guarded,
    sqlite_header_fault,
    storage_error,
)
from situate.stores.journal import journal_path

log = logging.getLogger(__name__)
T = TypeVar("T")

BUSY_TIMEOUT_S = 120.0  # how long a write waits for another process's lock before it is an error
IO_RETRY_PAUSE_S = 0.05  # before an I/O error is tried once more on a new connection
APPLIED = "_journal"  # per journaled table: the journal's id and how far into it the table is


def _wal(conn: sqlite3.Connection, attempts: int = 100) -> None:
    """Put the file in WAL mode. SQLite answers "database is locked" at once, without its busy
    timeout, when another connection is switching the same new file to WAL: tried again after
    a short pause (two jobs opening one new store side by side)."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or attempt == attempts - 1:
                raise
            time.sleep(0.02)


class BlobStore:
    """A SQLite key-value table of bytes, safe for several processes (WAL, busy timeout).

    A fault of the disk or the file (full, read-only, vanished, damaged, locked past
    ``timeout_s``) is raised as a one-line :class:`~situate.stores.faults.StorageError` naming
    the file; a write that fails leaves the table as it was before it.

    Parameters
    ----------
    path : Path
        The database file; created with its folder when missing.
    table : str
        Table name (one per kind of value, e.g. ``"embeddings"``).
    paid : bool
        The values cost money (contexts, generated questions, judgments, API embeddings): each
        write is also appended to the table's journal (:mod:`situate.stores.journal`), from which
        the table is rebuilt when its file is lost or damaged.
    timeout_s : float
        How long a write waits for another process's write lock before it is an error.
    """

    def __init__(
        self, path: str | Path, table: str, paid: bool = False, timeout_s: float = BUSY_TIMEOUT_S
    ):
        self.path = Path(path)
        self.table = table
        self.timeout_s = timeout_s
        self.journal = journal_path(self.path, table) if paid else None
        self._local = threading.local()
        with guarded(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            damage = sqlite_header_fault(self.path)  # cut short: SQLite would read zeros
        if damage is not None:
            raise damaged_file(self.path, damage)
        self._again_on_io(self._create)

    def _create(self) -> None:
        with self._transaction() as db:
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} "
                "(key TEXT PRIMARY KEY, value BLOB NOT NULL)"
            )
            if self.journal is not None:
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {APPLIED} "
                    "(tbl TEXT PRIMARY KEY, journal_id TEXT NOT NULL, applied INTEGER NOT NULL)"
                )
                self._sync_journal(db)

    def _again_on_io(self, operation: Callable[[], T]) -> T:
        """Run ``operation`` (one whole transaction); an I/O error is tried once more on a new
        connection before it is the store's fault. SQLite's "disk I/O error" is also what a
        connection meets when its view of the shared-memory index went stale under another
        process (seen once in a Ray run of several writers); a failing disk fails again."""
        try:
            return operation()
        except StorageError as e:
            if e.kind != "io":
                raise
            log.warning("%s; trying once more on a new connection", e)
            time.sleep(IO_RETRY_PAUSE_S)
            return operation()

    @property
    def where(self) -> str:
        """Where the entries live, for messages."""
        return str(self.path)

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[bytes | None]:
        """Hold ``key`` while the block pays for its answer. SQLite keeps no claims (processes
        sharing a file may both pay for an answer neither had stored); the Postgres backend's
        :meth:`situate.postgres.store.PostgresBlobStore.claim` waits for a live peer's answer
        instead."""
        yield None

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
            try:
                _wal(conn)
                conn.execute("PRAGMA synchronous=NORMAL")
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection (it is opened again on next use)."""
        self._drop_connection()

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction on this thread's connection: committed when the block ends,
        rolled back when it raises; a storage fault is raised as its one-line error (and the
        connection, which may be left in a failed state, is opened anew next time)."""
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
        except (OSError, sqlite3.Error) as e:
            self._drop_connection()
            error = storage_error(e, self.path)
            if error is None:
                raise
            raise error from e

    def _sync_journal(self, db: sqlite3.Connection) -> None:
        """Bring the table level with its journal (in the caller's write transaction): replay the
        records past the applied offset (a writer killed after its journal's fsync, before its
        commit; a lost file opened anew), cut a torn tail, start the journal of a table that has
        none (with every row the table holds)."""
        assert self.journal is not None
        row = db.execute(
            f"SELECT journal_id, applied FROM {APPLIED} WHERE tbl = ?", [self.table]
        ).fetchone()
        with guarded(self.journal):
            size = self.journal.stat().st_size if self.journal.exists() else None
        if size is None:  # no journal yet (a new store, or one an older situate wrote)
            rows = db.execute(f"SELECT key, value FROM {self.table}").fetchall()
            with guarded(self.journal):
                journal_id = journal.create(self.journal, rows)
                size = self.journal.stat().st_size
            self._applied(db, journal_id, size)
            return
        if row is not None and size == row[1]:
            return  # level (the common case: one SELECT and one stat)
        start = row[1] if row is not None else None
        with guarded(self.journal):
            found = journal.scan(self.journal, start)
        if found.journal_id is None:
            raise StorageError(
                self.journal,
                "damaged",
                f"{self.journal}: the journal of {self.path} is damaged (no header); run "
                f"`{REPAIR}`: it moves it aside and writes it anew from the store",
            )
        if row is not None and row[0] != found.journal_id:  # a journal written anew: all of it
            found = journal.scan(self.journal)
        self._apply(db, found.records)
        if found.torn_tail:  # we hold the write lock: no other writer is appending
            with guarded(self.journal):
                journal.cut(self.journal, found.end)
        if found.records:
            log.info(
                "%s: %d answers of table %s replayed from its journal",
                self.path,
                len(found.records),
                self.table,
            )
        self._applied(db, found.journal_id, found.end)

    def _apply(self, db: sqlite3.Connection, records: list[tuple[int, str, bytes]]) -> None:
        for op, key, value in records:
            if op == journal.PUT:
                db.execute(
                    f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", (key, value)
                )
            else:
                db.execute(f"DELETE FROM {self.table} WHERE key = ?", (key,))

    def _applied(self, db: sqlite3.Connection, journal_id: str, offset: int) -> None:
        db.execute(
            f"INSERT OR REPLACE INTO {APPLIED} (tbl, journal_id, applied) VALUES (?, ?, ?)",
            (self.table, journal_id, offset),
        )

    def _write(self, puts: list[tuple[str, bytes]], deletes: list[str]) -> None:
        """Store ``puts`` and delete ``deletes`` in one transaction; with a journal, append them
        to it (fsynced) first, in the same transaction, under the same write lock."""
        if not puts and not deletes:
            return
        self._again_on_io(lambda: self._write_once(puts, deletes))

    def _write_once(self, puts: list[tuple[str, bytes]], deletes: list[str]) -> None:
        with self._transaction() as db:
            if self.journal is not None:
                self._sync_journal(db)
                records = [*journal.puts(puts), *journal.deletes(deletes)]
                with guarded(self.journal):
                    end = journal.append(self.journal, records)
                (journal_id,) = db.execute(
                    f"SELECT journal_id FROM {APPLIED} WHERE tbl = ?", [self.table]
                ).fetchone()
                self._applied(db, journal_id, end)
            if puts:
                db.executemany(
                    f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", puts
                )
            if deletes:
                db.executemany(f"DELETE FROM {self.table} WHERE key = ?", [(k,) for k in deletes])

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """Values of the ``keys`` that are stored (missing keys are absent from the result)."""
        return self._again_on_io(lambda: self._get_many_once(keys))

    def _get_many_once(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._transaction() as db:
            for i in range(0, len(keys), 900):  # SQLite's bound-parameter limit
                batch = keys[i : i + 900]
                marks = ",".join("?" * len(batch))
                rows = db.execute(
                    f"SELECT key, value FROM {self.table} WHERE key IN ({marks})", batch
                )
                found.update(rows.fetchall())
        return found

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store all ``items`` in one transaction."""
        self._write(list(items), [])

    def delete_many(self, keys: Iterable[str]) -> None:
        """Remove ``keys`` (missing ones are ignored) in one transaction."""
        self._write([], list(keys))

    def move(self, items: dict[str, bytes], old_keys: Iterable[str]) -> None:
        """Store ``items`` and delete ``old_keys`` in one transaction (re-keying entries)."""
        self._write(list(items.items()), [k for k in old_keys if k not in items])

    def items(self) -> list[tuple[str, bytes]]:
        """Every (key, value) of the table (for small tables)."""
        return self._again_on_io(lambda: self._select(f"SELECT key, value FROM {self.table}"))

    def __len__(self) -> int:
        return self._again_on_io(lambda: self._select(f"SELECT COUNT(*) FROM {self.table}"))[0][0]

    def _select(self, sql: str) -> list:
        with self._transaction() as db:
            return db.execute(sql).fetchall()


class SqliteStores:
    """``store: sqlite`` (the default): each store a table in a SQLite file under ``cache_dir``
    (``contexts.sqlite``, ``embeddings.sqlite``...), shared by the processes of one machine."""

    name = "sqlite"

    def __init__(self, timeout_s: float = BUSY_TIMEOUT_S):
        self.timeout_s = timeout_s  # how long a write waits for another process's lock

    def blobs(self, path: str | Path, table: str, paid: bool = False) -> BlobStore:
        return BlobStore(path, table, paid=paid, timeout_s=self.timeout_s)
