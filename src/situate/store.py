"""Content-addressed caches for everything expensive.

Keys are sha256 hashes of everything that determines a result (model, parameters, input text), so
a sweep only pays for what changed and an interrupted run resumes where it stopped. Two kinds of
store:

- ``BlobStore``: many small values (one embedding, one context) in a SQLite table. Each batch is
  one transaction, so a killed process leaves whole batches or nothing, never half an entry: an
  uncommitted transaction is rolled back from the write-ahead log when the database is next
  opened. (``synchronous=NORMAL``: a commit survives a killed process; after a power loss the
  last commits may be rolled back, never half-applied.)
- ``DirectoryCache``: whole artefacts (an index folder) built in a temporary sibling folder
  (``.<key>-<host>-<pid>-...``), flushed to disk and renamed into place only when complete, so
  a folder under its final name is always whole. A temporary folder left by a killed process is
  never read (its name is not a key) and is deleted by the next build of the same key.
- :func:`atomic_write_bytes` / :func:`atomic_write_text`: single files (``result.json``) written
  to a temporary sibling, flushed, then renamed over the target: readers see the old file or the
  new one, never a prefix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol


def content_hash(*parts: Any) -> str:
    """sha256 (hex) of ``parts`` serialised as canonical JSON (strings, numbers, lists, dicts)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


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


def texts_hash(texts: Iterable[str]) -> str:
    """sha256 of a sequence of texts (order matters), without building one large string."""
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


class BlobStore:
    """A SQLite key-value table of bytes, safe for several processes (WAL, busy timeout).

    Parameters
    ----------
    path : Path
        The database file; created with its folder when missing.
    table : str
        Table name (one per kind of value, e.g. ``"embeddings"``).
    """

    def __init__(self, path: str | Path, table: str):
        self.path = Path(path)
        self.table = table
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value BLOB NOT NULL)"
            )

    @property
    def where(self) -> str:
        """Where the entries live, for messages."""
        return str(self.path)

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[bytes | None]:
        """Hold ``key`` while the block pays for its answer. SQLite keeps no claims (processes
        sharing a file may both pay for an answer neither had stored); the Postgres backend's
        :meth:`situate.pgstore.PostgresBlobStore.claim` waits for a live peer's answer instead."""
        yield None

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            _wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return _Transaction(conn)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """Values of the ``keys`` that are stored (missing keys are absent from the result)."""
        found: dict[str, bytes] = {}
        with self._connect() as db:
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
        with self._connect() as db:
            db.executemany(
                f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", list(items)
            )

    def delete_many(self, keys: Iterable[str]) -> None:
        """Remove ``keys`` (missing ones are ignored) in one transaction."""
        with self._connect() as db:
            db.executemany(f"DELETE FROM {self.table} WHERE key = ?", [(k,) for k in keys])

    def move(self, items: dict[str, bytes], old_keys: Iterable[str]) -> None:
        """Store ``items`` and delete ``old_keys`` in one transaction (re-keying entries)."""
        with self._connect() as db:
            db.executemany(
                f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", items.items()
            )
            db.executemany(f"DELETE FROM {self.table} WHERE key = ?", [(k,) for k in old_keys])

    def items(self) -> list[tuple[str, bytes]]:
        """Every (key, value) of the table (for small tables)."""
        with self._connect() as db:
            return db.execute(f"SELECT key, value FROM {self.table}").fetchall()

    def __len__(self) -> int:
        with self._connect() as db:
            return db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]


class ChargeRows:
    """Attempts that may have been billed without their answer stored: one row per attempt,
    ``<answer key>#<attempt id>`` -> USD (the attempt's reserved estimate), in ``rows`` (a table
    of either backend). A row is written before the attempt is sent and deleted once its answer
    is stored or it is answered with an error; a row left behind (no answer, or a killed process)
    counts as spent for every later run."""

    def __init__(self, rows: BlobStore):
        self.rows = rows

    def charge(self, key: str, usd: float) -> str:
        """Record a possibly billed attempt for ``key``; returns its row's key."""
        row = f"{key}#{uuid.uuid4().hex[:16]}"
        self.rows.put_many([(row, repr(float(usd)).encode())])
        return row

    def clear(self, row: str) -> None:
        """The attempt of ``row`` was answered (stored, or an error: not billed)."""
        self.rows.delete_many([row])

    def charged(self, keys: set[str]) -> tuple[float, int]:
        """USD and number of possibly billed attempts recorded for ``keys``."""
        rows = [float(v) for r, v in self.rows.items() if r.split("#", 1)[0] in keys]
        return sum(rows), len(rows)


class Stores(Protocol):
    """Where the stores live (config group ``store``): :class:`SqliteStores` or
    :class:`situate.pgstore.PostgresStores`."""

    name: str

    def blobs(self, path: str | Path, table: str) -> BlobStore:
        """The store ``table`` of ``path`` (a SQLite file, or what stands for it)."""
        ...


class SqliteStores:
    """``store: sqlite`` (the default): each store a table in a SQLite file under ``cache_dir``
    (``contexts.sqlite``, ``embeddings.sqlite``...), shared by the processes of one machine."""

    name = "sqlite"

    def blobs(self, path: str | Path, table: str) -> BlobStore:
        return BlobStore(path, table)


class _Transaction:
    """``with`` block = one IMMEDIATE transaction on a shared connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


def _fsync_dir(folder: Path) -> None:
    """Make a rename or creation in ``folder`` durable (no-op where directories can't be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    """fsync every file under ``folder``, then the folders themselves."""
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                os.fsync(f.fileno())
        _fsync_dir(Path(dirpath))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old content or the new, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


class DirectoryCache:
    """Folders under ``root/<kind>/<key>`` that exist only once fully written."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def has(self, kind: str, key: str) -> bool:
        return self.path(kind, key).is_dir()

    @staticmethod
    def _prefix(key: str) -> str:
        return f".{key[:12]}-{_HOST}-"

    def stale_temporaries(self, kind: str, key: str) -> list[Path]:
        """Temporary folders of ``key`` left by processes of this host that are gone (killed)."""
        parent = self.path(kind, key).parent
        if not parent.is_dir():
            return []
        stale = []
        for tmp in parent.glob(f"{self._prefix(key)}*"):
            pid = tmp.name[len(self._prefix(key)) :].split("-", 1)[0]
            if pid.isdigit() and not _pid_alive(int(pid)):
                stale.append(tmp)
        return stale

    @contextlib.contextmanager
    def writing(self, kind: str, key: str, replace: bool = False) -> Iterator[Path]:
        """Yield a temporary folder to fill; it becomes ``path(kind, key)`` only if the block succeeds.

        The folder's files are flushed to disk before the rename. With ``replace``, an existing
        folder of the same key is swapped out (renamed aside, then deleted) rather than deleted
        in place, so a kill never leaves a half-deleted folder under the final name. Without it,
        a folder another process finished first is kept.
        """
        final = self.path(kind, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        for stale in self.stale_temporaries(kind, key):  # left by a killed build of this key
            shutil.rmtree(stale, ignore_errors=True)
        prefix = f"{self._prefix(key)}{os.getpid()}-"
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
        old = None
        try:
            yield tmp
            _fsync_tree(tmp)
            if replace and final.is_dir():
                old = Path(tempfile.mkdtemp(prefix=f"{prefix}old-", dir=final.parent))
                os.rename(final, old / key)
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():  # another process finished the same build first: keep theirs
                    raise
            _fsync_dir(final.parent)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
