"""The context store: each context an LLM wrote, content addressed, one transaction each.

A SQLite file, or a Postgres table with ``store: postgres``; with a budget it also keeps the
charge rows of attempts that may have been billed without their answer kept (see
:class:`ContextStore`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from situate.contexts.prompts import PromptVariant, RenderedPrompt
from situate.errors import SituateError
from situate.paid.endpoints import recover_unverified
from situate.paid.llm import LLMProvider
from situate.records import Usage
from situate.stores.base import ChargeRows, Stores
from situate.stores.faults import decoded
from situate.stores.keys import content_hash
from situate.stores.sqlite import SqliteStores

log = logging.getLogger(__name__)


@dataclass
class StoredContext:
    text: str
    usage: Usage
    model: str
    prompt: str
    seconds: float
    retries: int
    batch: bool
    # where the answer came from (the provider's endpoint; "" for a local model or an entry
    # written before endpoints were recorded and adopted by the user)
    endpoint: str = ""

    def to_bytes(self) -> bytes:
        return json.dumps({**asdict(self), "usage": asdict(self.usage)}).encode()

    @classmethod
    def from_bytes(cls, blob: bytes) -> StoredContext:
        data = json.loads(blob)
        return cls(**{**data, "usage": Usage(**data["usage"])})


class ContextStore:
    """Contexts in a store (a SQLite file, or a Postgres table with ``store: postgres``; one
    transaction per context), content addressed.

    With a budget, the same file keeps *charges*: one row per attempt that may have been billed
    without its answer being stored (``<context key>#<attempt id>`` -> USD, the attempt's
    reserved estimate). A row is written before the attempt is sent; it is deleted when the
    attempt is answered with an error (nothing billed) or once its context is committed (the
    context's own cost counts from then on); it stays when the attempt got no answer (ambiguous)
    or when the process died with the attempt in flight. Every later run of the configuration
    counts the rows of its keys as spent.
    """

    def __init__(self, path: str | Path, stores: Stores | None = None):
        stores = stores or SqliteStores()
        self.blobs = stores.blobs(path, "contexts", paid=True)
        self.charges = ChargeRows(stores.blobs(path, "context_charges"))

    @staticmethod
    def key(
        rendered: RenderedPrompt,
        prompt: PromptVariant,
        llm: LLMProvider,
        identity: dict | None = None,
    ) -> str:
        """The store key: the prompt as sent and ``identity`` (the model's, endpoint included)."""
        return content_hash(
            "context",
            rendered.document,
            rendered.prompt,
            rendered.answer_prefix,
            prompt.max_tokens,
            llm.identity() if identity is None else identity,
        )

    def get_many(self, keys: list[str], endpoint: str = "") -> dict[str, StoredContext]:
        """The stored contexts of ``keys``; one recorded as written by another endpoint is refused."""
        found = {
            k: decoded(self.blobs.where, k, StoredContext.from_bytes, v)
            for k, v in self.blobs.get_many(keys).items()
        }
        for stored in found.values():
            self._check_writer(stored, endpoint)
        return found

    def _check_writer(self, stored: StoredContext, endpoint: str) -> None:
        if stored.endpoint and stored.endpoint != endpoint:
            raise SituateError(
                f"{self.blobs.where}: a context stored for {endpoint or 'a local model'} records "
                f"{stored.endpoint} as its writer (a corrupted or hand-edited store); "
                "move the file aside (Postgres: delete its row)"
            )

    @contextlib.contextmanager
    def claim(self, key: str, endpoint: str = "") -> Iterator[StoredContext | None]:
        """Hold ``key`` while the block pays for its context; yields the context another process
        stored meanwhile instead (Postgres: a live peer holding the key is waited on), else None."""
        with self.blobs.claim(key) as blob:
            stored = (
                None
                if blob is None
                else decoded(self.blobs.where, key, StoredContext.from_bytes, blob)
            )
            if stored is not None:
                self._check_writer(stored, endpoint)
            yield stored

    def recover_unverified(
        self, legacy_of: dict[str, str], policy: str, model: str, endpoint: str
    ) -> dict[str, StoredContext]:
        """Contexts stored before keys named the endpoint (see :mod:`situate.paid.endpoints`)."""

        def vouched(blob: bytes) -> bytes:
            return json.dumps({**json.loads(blob), "endpoint": endpoint}).encode()

        adopted = recover_unverified(
            self.blobs, legacy_of, policy, f"contexts for {model}", endpoint, vouched
        )
        if adopted:  # attempts charged under the old keys now count under the new ones
            new_of = {old: new for new, old in legacy_of.items() if new in adopted}
            charges = self.charges.rows
            rows = [(r, v) for r, v in charges.items() if r.split("#", 1)[0] in new_of]
            moved = {f"{new_of[r.split('#', 1)[0]]}#{r.split('#', 1)[1]}": v for r, v in rows}
            charges.move(moved, [r for r, _ in rows])
            log.warning(
                "contexts: %d stored without their endpoint adopted as written by %s "
                "(unverified_cache=adopt)",
                len(adopted),
                endpoint,
            )
        return {k: StoredContext.from_bytes(v) for k, v in adopted.items()}

    def put(self, key: str, stored: StoredContext) -> None:
        self.blobs.put_many([(key, stored.to_bytes())])
