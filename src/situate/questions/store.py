"""Generated questions on disk (SQLite or ``store=postgres``, one transaction per answer), content
addressed.

The key is the hash of the generator model's identity (provider, model, generation parameters
and the endpoint, so an emulator's answers are never served to a run against the real API), the
hash of the rendered prompt (templates, strategy, language, document block) and the passage
text: a rerun pays nothing, a larger target pays only for its new passages, and a changed
document pays only for the passages whose text or prompt changed. The model's raw answer is
stored (parsed again on every read), so a better parser needs no new call. Like the context and
judgment stores, the same file keeps a charge row per attempt that may have been billed without
its answer stored (:class:`situate.store.ChargeRows`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from situate.errors import SituateError
from situate.records import Usage
from situate.store import ChargeRows, SqliteStores, Stores, content_hash


@dataclass
class StoredGeneration:
    text: str  # the model's answer as returned
    usage: Usage
    model: str
    batch: bool = False
    endpoint: str = ""

    def to_bytes(self) -> bytes:
        return json.dumps({**asdict(self), "usage": asdict(self.usage)}).encode()

    @classmethod
    def from_bytes(cls, blob: bytes) -> StoredGeneration:
        data = json.loads(blob)
        return cls(**{**data, "usage": Usage(**data["usage"])})


class GenerationStore:
    def __init__(self, path: str | Path, stores: Stores | None = None):
        stores = stores or SqliteStores()
        self.blobs = stores.blobs(path, "generations")
        self.charges = ChargeRows(stores.blobs(path, "generation_charges"))

    @staticmethod
    def key(identity: dict, prompt_sha256: str, passage_text: str) -> str:
        return content_hash("generation", identity, prompt_sha256, passage_text)

    def get_many(self, keys: list[str], endpoint: str) -> dict[str, StoredGeneration]:
        found = {k: StoredGeneration.from_bytes(v) for k, v in self.blobs.get_many(keys).items()}
        for stored in found.values():
            if stored.endpoint != endpoint:
                raise SituateError(
                    f"{self.blobs.where}: a question stored for {endpoint or 'a local model'} "
                    f"records {stored.endpoint or 'a local model'} as its writer (a corrupted or "
                    "hand-edited store); move the file aside (Postgres: delete its row)"
                )
        return found

    def put(self, key: str, stored: StoredGeneration) -> None:
        self.blobs.put_many([(key, stored.to_bytes())])
