"""Generated questions on disk (SQLite or ``store=postgres``, one transaction per answer), content
addressed.

The key is the hash of the generator model's identity (provider, model, generation parameters
and the endpoint, so an emulator's answers are never served to a run against the real API), the
hash of the rendered prompt (templates, strategy, language, document block) and the passage
text: a rerun pays nothing, a larger target pays only for its new passages, and a changed
document pays only for the passages whose text or prompt changed. The model's raw answer is
stored (parsed again on every read), so a better parser needs no new call. Like the context and
judgment stores, the same file keeps a charge row per attempt that may have been billed without
its answer stored (:class:`situate.stores.base.ChargeRows`).
"""

from __future__ import annotations

from pathlib import Path

from situate.llm.answer_store import AnswerStore, StoredAnswer
from situate.stores.base import Stores
from situate.stores.keys import content_hash


class StoredGeneration(StoredAnswer):
    """The model's answer as returned (parsed again on every read)."""


class GenerationStore(AnswerStore[StoredGeneration]):
    def __init__(self, path: str | Path, stores: Stores | None = None):
        super().__init__(
            path, "generations", "generation_charges", StoredGeneration, "a question", stores
        )

    @staticmethod
    def key(identity: dict, prompt_sha256: str, passage_text: str) -> str:
        return content_hash("generation", identity, prompt_sha256, passage_text)
