"""``embedder: cohere``: Cohere embeddings through the official SDK (``cohere.ClientV2``, API v2).

Documents are embedded with ``input_type="search_document"`` and queries with
``"search_query"``, as Cohere's v3+ models require. The key is read from the environment
variable ``api_key_env`` (``CO_API_KEY``) only. ``base_url`` (e.g. ``http://127.0.0.1:PORT``, an
emulator; the SDK appends ``/v2/embed``) replaces the SDK's default ``https://api.cohere.com``.

At most 96 texts go in one request (the API's limit). Client, retries (429, 5xx, dropped
connections, timeouts: embedding is idempotent) and error text are :mod:`situate.providers.cohere`;
fields, client and the ``rpm``/``tpm`` gate of every request are
:class:`situate.paid.adapter.ApiAdapter`'s.
"""

from __future__ import annotations

import numpy as np

from situate.embedding.base import Kind, normalize
from situate.embedding.truncation import APPROXIMATE, TokenWindow, approximate_counter
from situate.errors import SituateError
from situate.paid.adapter import ApiAdapter
from situate.paid.budget import estimated_tokens
from situate.providers import cohere as vendor

MAX_TEXTS = 96
INPUT_TYPES = {"document": "search_document", "query": "search_query"}


class CohereEmbedder(ApiAdapter):
    """Embed with ``ClientV2.embed(..., embedding_types=["float"])``.

    Parameters
    ----------
    model : str
        ``embed-english-v3.0`` (1024 dims), ``embed-english-light-v3.0`` (384),
        ``embed-multilingual-v3.0``, ``embed-v4.0``...
    dimensions : int or None
        ``output_dimension`` (embed-v4.0 and later: 256, 512, 1024 or 1536); ``None`` is the
        model's default.
    truncate : str
        ``END`` (drop the end of a text past the model's length), ``START`` or ``NONE`` (error).
    batch_size : int
        Texts per request (at most 96).
    base_url : str or None
        API base URL; ``None`` is the SDK default.
    api_key_env : str
        Environment variable holding the API key.
    max_retries : int
        Retries on 429, 5xx, dropped connections and timeouts.
    timeout : float
        Seconds per request.
    rpm, tpm : int or None
        At most this many requests / estimated tokens a minute; None is no ceiling.
    """

    def __init__(
        self,
        model: str = "embed-english-v3.0",
        dimensions: int | None = None,
        truncate: str = "END",
        batch_size: int = MAX_TEXTS,
        base_url: str | None = None,
        api_key_env: str = "CO_API_KEY",
        max_retries: int = 5,
        timeout: float = 60,
        rpm: int | None = None,
        tpm: int | None = None,
    ):
        super().__init__(
            vendor, "embedder", model, base_url, api_key_env, max_retries, timeout, rpm, tpm
        )
        if not 1 <= batch_size <= MAX_TEXTS:
            raise SituateError(
                f"embedder.batch_size={batch_size}: must be within 1..{MAX_TEXTS} "
                "(Cohere's limit of texts per request)"
            )
        if truncate not in ("END", "START", "NONE"):
            raise SituateError(f"embedder.truncate={truncate}: use END, START or NONE")
        self.dimensions = dimensions
        self.truncate = truncate
        self.batch_size = batch_size

    def identity(self) -> dict:
        return {
            "provider": self.provider,
            "model": self.model,
            "dimensions": self.dimensions,
            "truncate": self.truncate,
            "input_types": dict(INPUT_TYPES),
            "endpoint": self.endpoint,
        }

    def window(self) -> TokenWindow:
        """The model's window (``providers.cohere.EMBEDDING_WINDOWS``); ``truncate=START`` keeps
        a long text's end. Cohere's tokenizer does not ship, so tokens are counted locally."""
        tokens = vendor.EMBEDDING_WINDOWS.get(self.model, vendor.DEFAULT_EMBEDDING_WINDOW)
        keeps = "tail" if self.truncate == "START" else "head"
        counter = APPROXIMATE.format(vendor="Cohere")
        return TokenWindow(tokens, keeps, self.model, counter, approximate_counter())

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        client = self._load()
        parts = []
        for i in range(0, len(texts), self.batch_size):
            parts.extend(self._embed(client, texts[i : i + self.batch_size], INPUT_TYPES[kind]))
        return normalize(np.asarray(parts, dtype=np.float32))

    def _embed(self, client, batch: list[str], input_type: str) -> list:
        params = {"output_dimension": self.dimensions} if self.dimensions is not None else {}
        params.update(model=self.model, input_type=input_type, texts=batch, truncate=self.truncate)
        tokens = sum(estimated_tokens(t) for t in batch)
        with vendor.one_line(self, "embedder"):
            response = self._send(tokens, lambda: client.embed(embedding_types=["float"], **params))
        self.tokens_used += int(vendor.billed(response, "input_tokens"))
        vectors = response.embeddings.float_
        if vectors is None or len(vectors) != len(batch):
            raise SituateError(
                f"embedder=cohere: asked for {len(batch)} float vectors, got "
                f"{0 if vectors is None else len(vectors)}; check embedder.base_url"
            )
        return vectors
