"""What every backend of the stores offers (config group ``store``), and the charge rows kept in
either."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Protocol

from situate.stores.sqlite import BlobStore


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
    :class:`situate.postgres.store.PostgresStores`."""

    name: str

    def blobs(self, path: str | Path, table: str, paid: bool = False) -> BlobStore:
        """The store ``table`` of ``path`` (a SQLite file, or what stands for it); ``paid``: its
        values cost money, and are kept where they survive the loss of the store (a journal
        beside a SQLite file; a Postgres server's own write-ahead log)."""
        ...
