"""Deterministic stand-ins for models: hashed bag-of-words vectors, term-overlap relevance.

Good enough for plumbing and better than random: texts that share words get similar vectors,
and a document that contains the query's words scores higher.

Token counts are approximated as ``ceil(utf-8 bytes / 4)`` (OpenAI's rule of thumb for English
with cl100k/o200k; code and non-English text take more real tokens than this counts).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)
_MIN_PREFIX = 32


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def approx_tokens(text: str) -> int:
    """Approximate token count: ``ceil(len(utf-8 bytes) / 4)``, at least 1 for non-empty text."""
    n = len(text.encode("utf-8"))
    return 0 if n == 0 else max(1, math.ceil(n / 4))


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The start of ``text`` holding about ``max_tokens`` tokens (same approximation)."""
    raw = text.encode("utf-8")
    if len(raw) <= 4 * max_tokens:
        return text
    return raw[: 4 * max_tokens].decode("utf-8", errors="ignore")


def _prefix_sizes(dim: int) -> list[int]:
    sizes, p = [], _MIN_PREFIX
    while p < dim:
        sizes.append(p)
        p *= 2
    return [*sizes, dim]


@lru_cache(maxsize=500_000)
def _positions(feature: str, dim: int, salt: str) -> tuple[tuple[int, float], ...]:
    """One signed position inside every prefix (32, 64, 128, ... dim) of the vector.

    Because each feature lands in every prefix, a vector truncated to its first ``d``
    dimensions still carries every word (Matryoshka-style, like text-embedding-3).
    """
    sizes = _prefix_sizes(dim)
    digest = hashlib.blake2b(f"{salt}\x1f{feature}".encode(), digest_size=64).digest()
    out = []
    for i, size in enumerate(sizes):
        chunk = int.from_bytes(digest[(4 * i) % 60 : (4 * i) % 60 + 4], "little")
        out.append((chunk % size, 1.0 if (chunk >> 31) & 1 else -1.0))
    return tuple(out)


def hashed_vector(text: str, dim: int, salt: str = "") -> np.ndarray:
    """Unit float32 vector: hashed word counts (weight ``1 + log tf``) in ``dim`` dimensions."""
    counts = Counter(words(text)) or Counter({"\x00" + text: 1})
    v = np.zeros(dim, dtype=np.float64)
    for feature, tf in counts.items():
        w = 1.0 + math.log(tf)
        for idx, sign in _positions(feature, dim, salt):
            v[idx] += sign * w
    norm = np.linalg.norm(v)
    return (v / norm if norm > 0 else v).astype(np.float32)


def truncate_normalize(v: np.ndarray, dim: int) -> np.ndarray:
    """First ``dim`` components, rescaled to unit length."""
    head = np.asarray(v[:dim], dtype=np.float32)
    norm = float(np.linalg.norm(head))
    return head / norm if norm > 0 else head


def overlap_relevance(query: str, document: str) -> float:
    """Relevance in [0, 1]: share of query words found in the document, lifted by their density."""
    q = set(words(query))
    d = words(document)
    if not q or not d:
        return 0.0
    hits = [w for w in d if w in q]
    coverage = len(q.intersection(hits)) / len(q)
    density = len(hits) / len(d)
    return float(coverage * (0.9 + 0.1 * density))
