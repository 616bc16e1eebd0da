"""A store of one kind of paid LLM answer (judgments, generated questions), content addressed.

Each answer is one row (SQLite or ``store=postgres``, one transaction per answer) under a key its
owner computes from the model's identity with its endpoint (so an emulator's answers are never
served to a run against the real API) and what was asked. The same file keeps a charge row per
attempt that may have been billed without its answer stored (:class:`situate.stores.base.ChargeRows`;
:class:`situate.contexts.store.ContextStore` explains the protocol), and a key can be claimed
while it is paid for, so two processes sharing a Postgres store pay for it once.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Generic, TypeVar

from situate.errors import SituateError
from situate.records import Usage
from situate.stores.base import ChargeRows, Stores
from situate.stores.faults import decoded
from situate.stores.sqlite import SqliteStores


@dataclass
class StoredAnswer:
    """A model's answer as returned, what it was billed, and who wrote it."""

    text: str
    usage: Usage
    model: str
    batch: bool = False
    endpoint: str = ""

    def to_bytes(self) -> bytes:
        return json.dumps({**asdict(self), "usage": asdict(self.usage)}).encode()

    @classmethod
    def from_bytes(cls, blob: bytes):
        data = json.loads(blob)
        return cls(**{**data, "usage": Usage(**data["usage"])})


A = TypeVar("A", bound=StoredAnswer)


class AnswerStore(Generic[A]):
    """Answers of type ``record`` in table ``table`` of ``path`` (charge rows in
    ``<table>_charges``); ``what`` names one in messages ("a judgment")."""

    def __init__(
        self, path: str | Path, table: str, charges: str, record: type[A], what: str,
        stores: Stores | None = None,
    ):  # fmt: skip
        stores = stores or SqliteStores()
        self.blobs = stores.blobs(path, table, paid=True)
        self.charges = ChargeRows(stores.blobs(path, charges))
        self.record, self.what = record, what

    def get_many(self, keys: list[str], endpoint: str) -> dict[str, A]:
        found = {
            k: decoded(self.blobs.where, k, self.record.from_bytes, v)
            for k, v in self.blobs.get_many(keys).items()
        }
        for stored in found.values():
            self._check_writer(stored, endpoint)
        return found

    @contextlib.contextmanager
    def claim(self, key: str, endpoint: str) -> Iterator[A | None]:
        """Hold ``key`` while the block pays for its answer; yields the one another process
        stored meanwhile instead (see :meth:`situate.contexts.store.ContextStore.claim`)."""
        with self.blobs.claim(key) as blob:
            stored = (
                None
                if blob is None
                else decoded(self.blobs.where, key, self.record.from_bytes, blob)
            )
            if stored is not None:
                self._check_writer(stored, endpoint)
            yield stored

    def put(self, key: str, stored: A) -> None:
        self.blobs.put_many([(key, stored.to_bytes())])

    def _check_writer(self, stored: A, endpoint: str) -> None:
        if stored.endpoint != endpoint:
            raise SituateError(
                f"{self.blobs.where}: {self.what} stored for {endpoint or 'a local model'} "
                f"records {stored.endpoint or 'a local model'} as its writer (a corrupted or "
                "hand-edited store); move the file aside (Postgres: delete its row)"
            )
