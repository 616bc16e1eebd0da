"""Judgments in a store (SQLite or Postgres, one transaction per judgment), content addressed.

The key is the hash of the judge's identity (provider, model, generation parameters and the
endpoint, so an emulator's grades are never served to a run against the real API), the prompt's
hash, the question and the chunk text: a pair is judged once whichever arms retrieve it, and an
arm added to a study pays only for the pairs it adds. Like the context store, the same file keeps
a charge row per attempt that may have been billed without its answer stored
(:class:`situate.contexts.store.ContextStore` explains the protocol).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from situate.errors import SituateError
from situate.records import Usage
from situate.store import ChargeRows, SqliteStores, Stores, content_hash


@dataclass
class StoredJudgment:
    grade: int | None  # None: the answer held no grade (kept, so it is not paid for again)
    text: str
    usage: Usage
    model: str
    batch: bool = False
    endpoint: str = ""

    def to_bytes(self) -> bytes:
        return json.dumps({**asdict(self), "usage": asdict(self.usage)}).encode()

    @classmethod
    def from_bytes(cls, blob: bytes) -> StoredJudgment:
        data = json.loads(blob)
        return cls(**{**data, "usage": Usage(**data["usage"])})


class JudgeStore:
    def __init__(self, path: str | Path, stores: Stores | None = None):
        stores = stores or SqliteStores()
        self.blobs = stores.blobs(path, "judgments")
        self.charges = ChargeRows(stores.blobs(path, "judgment_charges"))

    @staticmethod
    def key(identity: dict, prompt_hash: str, question: str, chunk_text: str) -> str:
        return content_hash("judgment", identity, prompt_hash, question, chunk_text)

    def get_many(self, keys: list[str], endpoint: str) -> dict[str, StoredJudgment]:
        found = {k: StoredJudgment.from_bytes(v) for k, v in self.blobs.get_many(keys).items()}
        for stored in found.values():
            self._check_writer(stored, endpoint)
        return found

    def _check_writer(self, stored: StoredJudgment, endpoint: str) -> None:
        if stored.endpoint != endpoint:
            raise SituateError(
                f"{self.blobs.where}: a judgment stored for {endpoint or 'a local model'} "
                f"records {stored.endpoint or 'a local model'} as its writer (a corrupted or "
                "hand-edited store); move the file aside (Postgres: delete its row)"
            )

    @contextlib.contextmanager
    def claim(self, key: str, endpoint: str) -> Iterator[StoredJudgment | None]:
        """Hold ``key`` while the block pays for its judgment; yields the one another process
        stored meanwhile instead (see :meth:`situate.contexts.store.ContextStore.claim`)."""
        with self.blobs.claim(key) as blob:
            stored = None if blob is None else StoredJudgment.from_bytes(blob)
            if stored is not None:
                self._check_writer(stored, endpoint)
            yield stored

    def put(self, key: str, stored: StoredJudgment) -> None:
        self.blobs.put_many([(key, stored.to_bytes())])
