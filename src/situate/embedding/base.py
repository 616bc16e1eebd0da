"""The embedder protocol and the cache every embedder goes through."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal, Protocol

import numpy as np

from situate.embedding.truncation import TokenWindow
from situate.money.billing import Billed
from situate.paid.endpoints import legacy_identity, recover_unverified
from situate.stores.keys import content_hash
from situate.stores.sqlite import BlobStore

Kind = Literal["document", "query"]
# encodes texts in runs of at most ``size``: yields (offset of the run in texts, its vectors)
Batches = Callable[[list[str], Kind, int], Iterator[tuple[int, np.ndarray]]]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of shape ``(len(texts), dim)``.

    ``batch_size`` is how many texts one request (or forward pass) takes: the embedding cache
    commits after each batch of that size. ``tokens_used`` is what ``billed()`` reports as tokens
    (0 for a local model); ``execution=ray`` adds its tasks' to the driver's embedder.
    """

    name: str
    batch_size: int
    tokens_used: int

    def identity(self) -> dict:
        """Everything that changes a vector (provider, model, dimensions, truncation...)."""
        ...

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray: ...

    def window(self) -> TokenWindow:
        """How many tokens of a text it reads, which end it keeps and how tokens are counted
        (without loading the model): what the run's ``texts_truncated`` is counted with."""
        ...

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        ...

    def billed(self) -> Billed:
        """The tokens this instance was billed for so far (:class:`situate.money.billing.Unbilled`
        for a local model)."""
        ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class CachedEmbeddings:
    """Embeds texts through ``embedder``, paying only for texts not in the store.

    The key of a vector is ``sha256(embedder.identity(), kind, text)``; an API embedder's identity
    names its endpoint, so an emulator's vectors are never served to a run against the real API.
    Missing texts are encoded in batches, and each batch is stored as soon as it is done, so an
    interrupted run resumes. ``unverified`` acts on vectors an older situate stored without their
    endpoint (:mod:`situate.paid.endpoints`).
    """

    def __init__(
        self,
        embedder: Embedder,
        store: BlobStore,
        batch_size: int = 256,
        unverified: str = "refuse",
    ):
        self.embedder = embedder
        self.store = store
        self.batch_size = batch_size
        self.unverified = unverified
        self.encoded = 0  # texts actually sent to the model (cache misses) in this process

    def __call__(
        self,
        texts: list[str],
        kind: Kind,
        progress: Callable[[int, int], None] | None = None,
        batches: Batches | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts``; ``progress(advance, total)`` is told of each finished batch.
        ``batches`` encodes the missing texts (default: this process's embedder, in order; Ray
        tasks in ``situate.running.execution``); each batch is stored as it arrives."""
        ident = self.embedder.identity()
        keys = [content_hash(ident, kind, t) for t in texts]
        unique = list(dict.fromkeys(keys))
        found = self.store.get_many(unique)
        text_of = dict(zip(keys, texts, strict=True))
        legacy = legacy_identity(ident)
        if legacy is not None:
            legacy_of = {
                k: content_hash(legacy, kind, text_of[k]) for k in unique if k not in found
            }
            found.update(
                recover_unverified(
                    self.store,
                    legacy_of,
                    self.unverified,
                    f"{kind} vectors of {self.embedder.name}",
                    ident["endpoint"],
                )  # fmt: skip
            )
        missing = [k for k in unique if k not in found]
        if progress:
            progress(len(unique) - len(missing), len(unique))
        encode = batches or self.local_batches
        for i, vectors in encode([text_of[k] for k in missing], kind, self.batch_size):
            batch = missing[i : i + len(vectors)]
            blobs = [
                (k, v.astype(np.float32).tobytes()) for k, v in zip(batch, vectors, strict=True)
            ]
            self.store.put_many(blobs)
            found.update(blobs)
            self.encoded += len(batch)
            if progress:
                progress(len(batch), len(unique))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def local_batches(self, texts: list[str], kind: Kind, size: int):
        """``(offset, vectors)`` of consecutive runs of ``size`` texts, encoded in this process."""
        for i in range(0, len(texts), size):
            yield i, self.embedder.encode(texts[i : i + size], kind)
