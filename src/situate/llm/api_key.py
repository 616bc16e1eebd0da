"""API keys come from the environment only, and never appear in logs, params or errors."""

from __future__ import annotations

import os

from situate.errors import SituateError


def api_key(variable: str, option: str) -> str:
    """The key in environment variable ``variable``, or a one-line error naming it."""
    value = os.environ.get(variable, "").strip()
    if not value:
        raise SituateError(f"{option}: set {variable} (the key is read from the environment only)")
    return value
