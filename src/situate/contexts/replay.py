"""``context: replay``: contexts recorded in a file (such as the real Claude contexts shipped for
the cookbook set), joined to chunks by document id and chunk index.

A replayed context costs nothing in its run; ``written_by`` names the model (and prompt) that
wrote them, so that the report can show what writing them cost (``situate.study.writing_cost``),
from the ``usage`` a record carries (``situate contexts export`` writes it) or from counted tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from situate.contexts.base import RuleContext
from situate.datasets.base import existing_path, read_json, read_jsonl, require_fields
from situate.errors import SituateError
from situate.records import Chunk, Context, Corpus, Usage

if TYPE_CHECKING:
    from situate.config.preflight import RunView


class ReplayContext(RuleContext):
    """Read contexts from a JSON list or JSON Lines file of records.

    Parameters
    ----------
    path : str
        File of records with ``doc_id``, ``original_index`` (or ``index``) and ``context``.
    for_chunker : str
        The chunker the recorded contexts were written for; chunks from another chunker would be
        joined to the wrong contexts, so that is an error.
    allow_missing : bool
        A chunk without a recorded context gets none instead of being an error.
    written_by : mapping or None
        ``{llm: OPTION, prompt: OPTION}``: the ``conf/llm`` and ``conf/prompt`` options the
        contexts were written with, for the report's estimate of what writing them cost.
    """

    name = "replay"

    def __init__(
        self,
        path: str,
        for_chunker: str = "prechunked",
        allow_missing: bool = False,
        placement: str = "before",
        separator: str = "\n\n",
        apply_to: Sequence[str] = ("dense", "sparse", "rerank"),
        written_by: Mapping[str, str] | None = None,
    ):
        super().__init__(placement, separator, apply_to)
        self.path = Path(path)
        self.for_chunker = for_chunker
        self.allow_missing = allow_missing
        self.written_by = dict(written_by or {})

    @classmethod
    def preflight(cls, params: Mapping[str, Any], run: RunView) -> None:
        """The run's chunker is the one the contexts were recorded for, and the file exists."""
        for_chunker = params.get("for_chunker", "prechunked")
        chunker = run.target("chunker")
        name = getattr(chunker, "name", None)
        if isinstance(name, str) and name != for_chunker:
            raise SituateError(
                f"context=replay: the contexts of {params.get('path')} were recorded for "
                f"chunker={for_chunker}, not chunker={run.option('chunker') or name}; use "
                f"context=none or context=heading_path with chunker={run.option('chunker') or name} "
                "(or context=llm to write contexts for these chunks)"
            )
        existing_path(params["path"], "recorded contexts file", "set context.path to the file")

    def identity(self) -> dict:
        """The recorded file and how it is joined (``written_by`` only informs the report)."""
        return {
            **super().identity(),
            "path": str(self.path.expanduser().resolve()),
            "for_chunker": self.for_chunker,
            "allow_missing": self.allow_missing,
        }

    def contextualize(self, corpus: Corpus, chunks: list[Chunk]) -> list[Context]:
        recorded = self._read()
        out: list[Context] = []
        for c in chunks:
            if c.chunker != self.for_chunker:
                raise SituateError(
                    f"{self.path}: contexts were recorded for chunker={self.for_chunker}, but chunk "
                    f"{c.chunk_id} comes from chunker={c.chunker}; use context=none or "
                    f"context=heading_path with chunker={c.chunker} (or context=llm to write "
                    "contexts for these chunks)"
                )
            found = recorded.get((c.doc_id, c.index))
            if found is None:
                if not self.allow_missing:
                    raise SituateError(
                        f"{self.path}: no context recorded for chunk {c.chunk_id} "
                        f"(doc_id {c.doc_id}, index {c.index}); add it, set "
                        "context.allow_missing=true, or use context=none or context=heading_path"
                    )
                found = ("", Usage())
            out.append(Context(c.chunk_id, *found))
        return out

    def _read(self) -> dict[tuple[str, int], tuple[str, Usage]]:
        path = existing_path(self.path, "recorded contexts file", "set context.path to the file")
        if path.suffix == ".jsonl":
            records = list(read_jsonl(path))
        else:
            data = read_json(path)
            if not isinstance(data, list):
                raise SituateError(f"{path}: expected a JSON list of context records")
            records = [(i, r) for i, r in enumerate(data)]
        recorded: dict[tuple[str, int], tuple[str, Usage]] = {}
        for n, rec in records:
            where = f"{path}: record {n}"
            require_fields(rec, ("doc_id", "context"), where)
            index = rec.get("original_index", rec.get("index"))
            if not isinstance(index, int):
                raise SituateError(f"{where}: needs an integer original_index (or index) field")
            key = (rec["doc_id"], index)
            if key in recorded:
                raise SituateError(f"{where}: a second context for doc_id {key[0]} index {key[1]}")
            recorded[key] = (rec["context"], _usage(rec, where))
        return recorded


def _usage(record: Mapping, where: str) -> Usage:
    """The ``usage`` the record's call reported (``Usage()`` when it has none)."""
    usage = record.get("usage")
    if usage is None:
        return Usage()
    fields = ("input_uncached", "cache_write", "cache_read", "output")
    if not isinstance(usage, Mapping) or not all(
        isinstance(usage.get(f, 0), int) and usage.get(f, 0) >= 0 for f in fields
    ):
        raise SituateError(
            f"{where}: usage must map {', '.join(fields)} to token counts (integers >= 0)"
        )
    return Usage(**{f: usage.get(f, 0) for f in fields})
