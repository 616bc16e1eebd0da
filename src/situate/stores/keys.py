"""Keys of the content-addressed stores: sha256 hashes of everything that determines a result
(model, parameters, input text), so a sweep only pays for what changed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any


def content_hash(*parts: Any) -> str:
    """sha256 (hex) of ``parts`` serialised as canonical JSON (strings, numbers, lists, dicts)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def texts_hash(texts: Iterable[str]) -> str:
    """sha256 of a sequence of texts (order matters), without building one large string."""
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()
