"""Synthetic corpus shapes for ``situate estimate estimate=<shape>`` (``conf/estimate/*.yaml``):
every document the same size, every chunk the same size."""

from __future__ import annotations

from dataclasses import dataclass

from situate.errors import SituateError

SHAPE_KEYS = (
    "document_tokens",
    "chunk_tokens",
    "instruction_tokens",
    "output_tokens",
    "total_document_tokens",
)


@dataclass(frozen=True)
class Shape:
    """A synthetic corpus: every document the same size, every chunk the same size.

    ``document_tokens`` is the cached block of a document, ``chunk_tokens`` +
    ``instruction_tokens`` the uncached part of each call, ``output_tokens`` each answer;
    ``total_document_tokens / document_tokens`` documents of ``document_tokens / chunk_tokens``
    chunks each (fractions are kept: the cost is linear in the corpus size).
    """

    document_tokens: int
    chunk_tokens: int
    instruction_tokens: int
    output_tokens: int
    total_document_tokens: int

    def __post_init__(self) -> None:
        for key in SHAPE_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SituateError(
                    f"estimate.{key}={value!r} must be a whole number of tokens >= 0"
                )
        for key in ("document_tokens", "chunk_tokens", "total_document_tokens"):
            if getattr(self, key) == 0:
                raise SituateError(f"estimate.{key} must be > 0")
        if self.chunk_tokens > self.document_tokens:
            raise SituateError(
                f"estimate.chunk_tokens={self.chunk_tokens} exceeds estimate.document_tokens="
                f"{self.document_tokens}; a chunk is a piece of a document"
            )

    @classmethod
    def from_config(cls, node) -> Shape:
        """The shape in a config node (``conf/estimate/*.yaml``); names the missing keys."""
        data = {k: v for k, v in dict(node).items() if k != "_target_"}
        missing = [k for k in SHAPE_KEYS if data.get(k) is None]
        if missing:
            raise SituateError(
                f"estimate: missing {', '.join(missing)}; a shape needs {', '.join(SHAPE_KEYS)} "
                "(see conf/estimate/seed_shape.yaml)"
            )
        unknown = sorted(set(data) - set(SHAPE_KEYS))
        if unknown:
            raise SituateError(
                f"estimate: unknown key(s) {', '.join(unknown)}; valid: {', '.join(SHAPE_KEYS)}"
            )
        return cls(**{k: data[k] for k in SHAPE_KEYS})
