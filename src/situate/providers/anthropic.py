"""Anthropic (Messages API): the client and retries of ``llm=claude_*``.

The SDK's own retries are off: 408, 409, 429, 529 and 5xx answers, timeouts and dropped
connections are retried by :func:`situate.paid.retry.with_retries`, honouring ``retry-after``.
"""

from __future__ import annotations

from situate.providers import Emulated, LeakScan, Vendor, sdk_client, status_retryable

MODELS = ("claude-haiku-5-5", "claude-haiku-4-5", "claude-3-haiku-20240307")  # price-book ids
VENDOR = Vendor(
    "anthropic", "ANTHROPIC_API_KEY", MODELS, "https://api.anthropic.com", "ANTHROPIC_BASE_URL",
    emulator=Emulated("anthropic_api:AnthropicEmulator", "sk-ant-emulator", "llm.base_url={url}"),
    scan=LeakScan(("context=llm", "llm=claude_haiku_5_5", "llm.base_url={url}"), "llm=claude-haiku-5-5"),
)  # fmt: skip


def client(option: str, api_key_env: str, base_url: str | None, timeout: float):
    """An ``anthropic.Anthropic`` with the key from ``api_key_env`` (and only from there)."""
    import anthropic

    return sdk_client(anthropic.Anthropic, VENDOR, option, api_key_env, base_url, timeout)


def retryable(error: Exception) -> tuple[bool, float | None]:
    """Whether ``error`` is worth another attempt, and the server's ``retry-after``."""
    import anthropic

    return status_retryable(error, anthropic.APIConnectionError, anthropic.APIStatusError)
