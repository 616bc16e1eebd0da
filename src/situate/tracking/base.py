"""The tracker protocol and the flattening of configs into params."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Protocol


class Tracker(Protocol):
    def check(self) -> None:
        """Fail in one line, within seconds, when the store cannot be reached (before any work)."""
        ...

    def prepare(self) -> None:
        """Create the store (before parallel jobs start)."""
        ...

    def run(
        self, name: str, params: Mapping[str, Any], tags: Mapping[str, str]
    ) -> contextlib.AbstractContextManager[str | None]:
        """A context that opens a run (yielding its id) and always closes it, FAILED on error."""
        ...

    def log_metrics(self, metrics: Mapping[str, float]) -> None: ...

    def log_artifact_files(self, folder: str) -> None: ...


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": 1, "c": [1, 2]}}`` -> ``{"a.b": "1", "a.c": "[1, 2]"}``."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = str(value)
    return flat
