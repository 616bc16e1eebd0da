"""Judgments in a store (SQLite or Postgres, one transaction per judgment), content addressed.

The key is the hash of the judge's identity (provider, model, generation parameters and the
endpoint, so an emulator's grades are never served to a run against the real API), the prompt's
hash, the question and the chunk text: a pair is judged once whichever arms retrieve it, and an
arm added to a study pays only for the pairs it adds. Like the context store, the same file keeps
a charge row per attempt that may have been billed without its answer stored
(:class:`situate.contexts.store.ContextStore` explains the protocol).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from situate.llm.answer_store import AnswerStore, StoredAnswer
from situate.stores.base import Stores
from situate.stores.keys import content_hash


@dataclass
class StoredJudgment(StoredAnswer):
    grade: int | None = None  # None: the answer held no grade (kept, so it is not paid again)


class JudgeStore(AnswerStore[StoredJudgment]):
    def __init__(self, path: str | Path, stores: Stores | None = None):
        super().__init__(
            path, "judgments", "judgment_charges", StoredJudgment, "a judgment", stores
        )

    @staticmethod
    def key(identity: dict, prompt_hash: str, question: str, chunk_text: str) -> str:
        return content_hash("judgment", identity, prompt_hash, question, chunk_text)
