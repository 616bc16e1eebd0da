"""Cohere (API v2, ``cohere.ClientV2``): the client, retries and error text of ``embedder=cohere``
and ``reranker=cohere``.

The SDK's own retries are off: 429 and 5xx answers, refused, dropped and reset connections and
timeouts are retried by :func:`situate.paid.retry.send` (embed and rerank are idempotent, so
replaying such a request is safe), honouring ``retry-after``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from situate.errors import SituateError
from situate.providers import (
    RETRYABLE_STATUS,
    Emulated,
    LeakScan,
    Vendor,
    sdk_client,
    status_retryable,
)

OPTIONS = "embedder.base_url={url} reranker.base_url={url}"  # what the emulator serves
MODELS = ("embed-english-v3.0", "rerank-english-v3.0")  # price-book ids
VENDOR = Vendor(
    "cohere", "CO_API_KEY", MODELS, "https://api.cohere.com", "CO_API_URL",
    emulator=Emulated("cohere_api:CohereEmulator", "co-emulator", OPTIONS, streams=False),
    scan=LeakScan(("reranker=cohere", "reranker.base_url={url}", "reranker.pool=20"), "reranker"),
)  # fmt: skip


def client(option: str, api_key_env: str, base_url: str | None, timeout: float):
    """A ``cohere.ClientV2`` with the key from ``api_key_env`` (and only from there)."""
    import cohere

    return sdk_client(
        cohere.ClientV2, VENDOR, option, api_key_env, base_url, timeout,
        log_warning_experimental_features=False,
    )  # fmt: skip


def retryable(error: Exception) -> tuple[bool, float | None]:
    """Whether ``error`` is worth another attempt, and the server's ``retry-after``."""
    return status_retryable(error, *api_errors()[::-1])  # refused, reset, dropped, timed out


@contextlib.contextmanager
def one_line(stage, who: str) -> Iterator[None]:
    """A failed call of ``stage`` inside (after its retries) as one :class:`SituateError` line
    (``who``: the config group)."""
    try:
        yield
    except api_errors() as error:
        line = error_line(who, error, stage.api_key_env, stage.model, stage.base_url)
        raise SituateError(line) from None


def api_errors() -> tuple[type[Exception], ...]:
    """What a failed call raises: an HTTP error answered by the API, or no answer at all."""
    import httpx
    from cohere.core.api_error import ApiError

    return ApiError, httpx.TransportError


def error_line(who: str, error: Exception, key_env: str, model: str, base_url: str | None) -> str:
    """One line for a failed call (``who``: ``embedder`` or ``reranker``); never the key."""
    import httpx

    if isinstance(error, httpx.TransportError):
        where = base_url or "the Cohere API"
        return (
            f"{who}=cohere: cannot reach {where} ({type(error).__name__}: {error}); "
            f"check the network or {who}.base_url"
        )
    status = getattr(error, "status_code", None)
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else body
    if status == 401:
        return f"{who}=cohere: the API refused the key in {key_env} ({message}); set a valid key"
    if status == 404:
        return f"{who}.model={model}: {message}"
    if status in RETRYABLE_STATUS:
        return f"{who}=cohere: HTTP {status} after the retries ({message}); retry later"
    return f"{who}=cohere: the API refused the request: HTTP {status} {message}"


def billed(response, unit: str) -> float:
    """``meta.billed_units.<unit>`` of a response (``input_tokens``, ``search_units``), or 0."""
    units = response.meta.billed_units if response.meta else None
    value = getattr(units, unit, None) if units is not None else None
    return float(value) if value is not None else 0.0


# tokens of one text each embedding model reads (Cohere's model pages); past them, the request's
# ``truncate`` drops the end (END), the start (START) or refuses the text (NONE)
EMBEDDING_WINDOWS = {
    "embed-english-v3.0": 512,
    "embed-english-light-v3.0": 512,
    "embed-multilingual-v3.0": 512,
    "embed-multilingual-light-v3.0": 512,
    "embed-v4.0": 128_000,
}
DEFAULT_EMBEDDING_WINDOW = 512  # a model not listed: the v3 models' window
