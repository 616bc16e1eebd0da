"""What the LLM providers over a vendor's SDK share (``llm: claude_*``, ``llm: gpt_*``): the
endpoint and retry fields, the client built on first use, and the retry rule that turns a
refused key into one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from situate.errors import SituateError
from situate.providers import refused_key


class SdkProvider:
    """The base of an LLM provider over a vendor's SDK.

    ``vendor`` is the vendor module (``situate.providers.<vendor>``: ``VENDOR``, ``client``,
    ``retryable``) and ``sdk`` the SDK's import name, whose ``AuthenticationError`` means the
    key was refused.
    """

    vendor: ModuleType
    sdk: str

    def _connect(
        self,
        base_url: str | None,
        api_key_env: str,
        max_retries: int,
        backoff_base: float,
        backoff_max: float,
        timeout: float,
    ) -> None:
        """Set the endpoint (part of every context's store key), key variable and retries."""
        self.base_url = base_url
        self.endpoint = self.vendor.VENDOR.endpoint(base_url)
        self.api_key_env = api_key_env
        self.max_retries, self.backoff_base, self.backoff_max = (
            max_retries,
            backoff_base,
            backoff_max,
        )
        self.timeout = timeout
        self._client = None

    def client(self):
        if self._client is None:
            self._client = self.vendor.client(
                f"llm={self.model}", self.api_key_env, self.base_url, self.timeout
            )
        return self._client

    def _retryable(self, error: Exception) -> tuple[bool, float | None]:
        if isinstance(error, importlib.import_module(self.sdk).AuthenticationError):
            raise SituateError(refused_key(f"llm={self.model}", self.api_key_env)) from None
        return self.vendor.retryable(error)
