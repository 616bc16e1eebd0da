"""Content-addressed caches for everything expensive.

Keys are sha256 hashes of everything that determines a result (model, parameters, input text), so
a sweep only pays for what changed and an interrupted run resumes where it stopped. Two kinds of
store:

- ``BlobStore``: many small values (one embedding, one context) in a SQLite table. Each batch is
  one transaction, so a killed process leaves whole batches or nothing, never half an entry.
- ``DirectoryCache``: whole artefacts (an index folder) built in a temporary sibling folder and
  renamed into place only when complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def content_hash(*parts: Any) -> str:
    """sha256 (hex) of ``parts`` serialised as canonical JSON (strings, numbers, lists, dicts)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


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

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
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

    def __len__(self) -> int:
        with self._connect() as db:
            return db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]


class _Transaction:
    """``with`` block = one IMMEDIATE transaction on a shared connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


class DirectoryCache:
    """Folders under ``root/<kind>/<key>`` that exist only once fully written."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def has(self, kind: str, key: str) -> bool:
        return self.path(kind, key).is_dir()

    @contextlib.contextmanager
    def writing(self, kind: str, key: str) -> Iterator[Path]:
        """Yield a temporary folder to fill; it becomes ``path(kind, key)`` only if the block succeeds."""
        final = self.path(kind, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=final.parent))
        try:
            yield tmp
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():  # another process finished the same build first: keep theirs
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
