"""``embedder: cohere``: Cohere embeddings through the official SDK (``cohere.ClientV2``, API v2).

Documents are embedded with ``input_type="search_document"`` and queries with
``"search_query"``, as Cohere's v3+ models require. The key is read from the environment
variable ``api_key_env`` (``CO_API_KEY``) only. ``base_url`` (e.g. ``http://127.0.0.1:PORT``, an
emulator; the SDK appends ``/v2/embed``) replaces the SDK's default ``https://api.cohere.com``.

At most 96 texts go in one request (the API's limit). 429 and 5xx answers and refused or
dropped connections are retried by the SDK (``max_retries``); a connection reset while waiting
for the answer and timeouts, which the SDK does not retry, are retried here (embedding is
idempotent, so replaying such a request is safe).
"""

from __future__ import annotations

import random
import time

import numpy as np

from situate.billing import Billed
from situate.embedding.base import Kind, normalize
from situate.endpoints import base_url as resolved_base_url
from situate.endpoints import endpoint
from situate.errors import SituateError
from situate.llm.api_key import api_key

MAX_TEXTS = 96
INPUT_TYPES = {"document": "search_document", "query": "search_query"}


def cohere_client(
    option: str, api_key_env: str, base_url: str | None, timeout: float, max_retries: int
):
    """A ``cohere.ClientV2`` with the key from ``api_key_env`` (and only from there)."""
    import cohere

    return cohere.ClientV2(
        api_key=api_key(api_key_env, option),
        base_url=resolved_base_url("cohere", base_url),  # exactly the endpoint cache keys name
        timeout=timeout,
        max_retries=max_retries,
        log_warning_experimental_features=False,
    )


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
        Retries of the SDK on 429, 5xx and dropped connections.
    timeout : float
        Seconds per request.
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
    ):
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
        self.tokens_used = 0  # meta.billed_units.input_tokens summed over this instance's requests
        self.requests = 0
        self._client = None

    def identity(self) -> dict:
        return {
            "provider": self.provider,
            "model": self.model,
            "dimensions": self.dimensions,
            "truncate": self.truncate,
            "input_types": dict(INPUT_TYPES),
            "endpoint": self.endpoint,
        }

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def billed(self) -> Billed:
        """The input tokens Cohere billed this instance (``meta.billed_units.input_tokens``)."""
        return Billed(model=self.model, tokens=self.tokens_used)

    def _load(self):
        if self._client is None:
            self._client = cohere_client(
                "embedder=cohere", self.api_key_env, self.base_url, self.timeout, self.max_retries
            )
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
        import httpx
        from cohere.core.api_error import ApiError

        kwargs = {"output_dimension": self.dimensions} if self.dimensions is not None else {}
        try:
            response = call_with_retries(
                lambda: client.embed(
                    model=self.model,
                    input_type=input_type,
                    texts=batch,
                    embedding_types=["float"],
                    truncate=self.truncate,
                    request_options={"retry_remote_protocol_errors": True},
                    **kwargs,
                ),
                self.max_retries,
            )
        except ApiError as exc:
            raise SituateError(_describe("embedder", exc, self.api_key_env, self.model)) from None
        except httpx.TransportError as exc:  # still failing after the retries
            raise SituateError(_unreachable("embedder", exc, self.base_url)) from None
        self.requests += 1
        billed = response.meta.billed_units if response.meta else None
        if billed is not None and billed.input_tokens is not None:
            self.tokens_used += int(billed.input_tokens)
        vectors = response.embeddings.float_
        if vectors is None or len(vectors) != len(batch):
            raise SituateError(
                f"embedder=cohere: asked for {len(batch)} float vectors, got "
                f"{0 if vectors is None else len(vectors)}; check embedder.base_url"
            )
        return vectors


def call_with_retries(call, max_retries: int, initial_delay: float = 0.5):
    """``call()``, retried on the transport errors that the cohere SDK does not retry itself.

    The SDK retries 429, 5xx, refused connections and (with ``retry_remote_protocol_errors``)
    a server that hangs up before answering, but not a connection reset while it waits for the
    answer (``httpx.ReadError``), nor timeouts. Embed and rerank are idempotent, so those are
    retried here with exponential backoff (0.5 s, 1 s, 2 s... at most 8 s, 20 % jitter).
    """
    import httpx

    for attempt in range(max_retries + 1):
        try:
            return call()
        except (httpx.ReadError, httpx.WriteError, httpx.TimeoutException):
            if attempt == max_retries:
                raise
            delay = min(initial_delay * 2**attempt, 8.0)
            time.sleep(delay * (1 - 0.2 * random.random()))
    raise AssertionError("unreachable")


def _describe(who: str, exc, key_env: str, model: str) -> str:
    """One line for an HTTP error answered by the Cohere API."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else body
    if status == 401:
        return f"{who}=cohere: the API refused the key in {key_env} ({message}); set a valid key"
    if status == 404:
        return f"{who}.model={model}: {message}"
    if status in (429,) or (status or 0) >= 500:
        return f"{who}=cohere: HTTP {status} after the SDK's retries ({message}); retry later"
    return f"{who}=cohere: the API refused the request: HTTP {status} {message}"


def _unreachable(who: str, exc, base_url: str | None) -> str:
    where = base_url or "the Cohere API"
    return (
        f"{who}=cohere: cannot reach {where} ({type(exc).__name__}: {exc}); "
        f"check the network or {who}.base_url"
    )
