"""``embedder: cohere``: Cohere embeddings through the official SDK (``cohere.ClientV2``, API v2).

Documents are embedded with ``input_type="search_document"`` and queries with
``"search_query"``, as Cohere's v3+ models require. The key is read from the environment
variable ``api_key_env`` (``CO_API_KEY``) only. ``base_url`` (e.g. ``http://127.0.0.1:PORT``, an
emulator; the SDK appends ``/v2/embed``) replaces the SDK's default ``https://api.cohere.com``.

At most 96 texts go in one request (the API's limit). Client, retries (429, 5xx, dropped
connections, timeouts: embedding is idempotent) and error text are :mod:`situate.providers.cohere`;
every request passes the ``rpm``/``tpm`` gate of :class:`situate.providers.ApiGate`.
"""

from __future__ import annotations

import numpy as np

from situate.contexts.budget import estimated_tokens
from situate.embedding.base import Kind, normalize
from situate.endpoints import endpoint
from situate.errors import SituateError
from situate.llm.ratelimit import RateCeiling
from situate.money.billing import Billed
from situate.providers import ApiGate
from situate.providers import cohere as vendor
from situate.truncation import APPROXIMATE, TokenWindow, approximate_counter

MAX_TEXTS = 96
INPUT_TYPES = {"document": "search_document", "query": "search_query"}


class CohereEmbedder:
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

    provider = "cohere"

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
        RateCeiling(rpm, tpm, option="embedder")  # validates both
        if not 1 <= batch_size <= MAX_TEXTS:
            raise SituateError(
                f"embedder.batch_size={batch_size}: must be within 1..{MAX_TEXTS} "
                "(Cohere's limit of texts per request)"
            )
        if truncate not in ("END", "START", "NONE"):
            raise SituateError(f"embedder.truncate={truncate}: use END, START or NONE")
        self.name = model
        self.model = model
        self.dimensions = dimensions
        self.truncate = truncate
        self.batch_size = batch_size
        self.base_url = base_url
        self.endpoint = endpoint(self.provider, base_url)
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.timeout = timeout
        self.rpm, self.tpm = rpm, tpm
        self.tokens_used = 0  # meta.billed_units.input_tokens summed over this instance's requests
        self.requests = 0
        self._client = None
        self._gate: ApiGate | None = None

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

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def billed(self) -> Billed:
        """The input tokens Cohere billed this instance (``meta.billed_units.input_tokens``)."""
        return Billed(model=self.model, tokens=self.tokens_used)

    def _load(self):
        if self._client is None:
            self._client = vendor.client(
                "embedder=cohere", self.api_key_env, self.base_url, self.timeout
            )
            self._gate = ApiGate("embedder", self.rpm, self.tpm)
        return self._client

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
        response = vendor.request(
            self, "embedder", tokens, lambda: client.embed(embedding_types=["float"], **params)
        )
        self.requests += 1
        self.tokens_used += int(vendor.billed(response, "input_tokens"))
        vectors = response.embeddings.float_
        if vectors is None or len(vectors) != len(batch):
            raise SituateError(
                f"embedder=cohere: asked for {len(batch)} float vectors, got "
                f"{0 if vectors is None else len(vectors)}; check embedder.base_url"
            )
        return vectors
