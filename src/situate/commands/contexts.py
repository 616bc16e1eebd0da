"""``situate contexts show|export [overrides]``: a config's contexts and their token usage; LLM
contexts from the store only (nothing is spent)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from situate.config.compose import compose


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate contexts", description="Show or export contexts."
    )
    parser.add_argument("action", choices=("show", "export"))
    parser.add_argument(
        "overrides", nargs="*", help="group=option overrides (e.g. context=llm prompt=code)"
    )
    parser.add_argument("--limit", type=int, default=20, help="show: how many chunks (default 20)")
    parser.add_argument("--out", default=None, help="export: the JSON Lines file (default stdout)")
    ns = parser.parse_intermixed_args(args)
    import json

    from hydra.utils import instantiate

    from situate.records import Usage

    cfg = compose(ns.overrides, uses=("dataset", "chunker", "context"))
    corpus = instantiate(cfg.dataset).load()
    chunks = instantiate(cfg.chunker).chunk(corpus)
    if ns.action == "show":
        chunks = chunks[: ns.limit]
    context = instantiate(cfg.context)
    from situate.contexts.llm import LLMContext

    if isinstance(context, LLMContext):  # read the store, never call the model
        found = context.lookup(corpus, chunks)
        rows = [
            (c, s.text if s else None, s.usage if s else Usage(), s.model if s else "")
            for c, s in zip(chunks, found, strict=True)
        ]
    else:
        rows = [
            (c, x.text, x.usage, "")
            for c, x in zip(chunks, context.contextualize(corpus, chunks), strict=True)
        ]
    if ns.action == "export":
        lines = [
            json.dumps(
                {
                    "chunk_id": c.chunk_id, "doc_id": c.doc_id, "index": c.index, "context": text, "model": model,
                    "usage": {"input_uncached": u.input_uncached, "cache_write": u.cache_write, "cache_read": u.cache_read, "output": u.output},
                },
                ensure_ascii=False,
            )
            for c, text, u, model in rows
        ]  # fmt: skip
        if ns.out:
            Path(ns.out).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            print(f"{len(rows)} contexts written to {ns.out}", file=sys.stderr)
        else:
            print("\n".join(lines))
        return 0
    from rich.table import Table

    from situate.console import console

    out = console()
    if rows and all(text is None for _, text, _, _ in rows):  # a table of empty rows says nothing
        again = " ".join(ns.overrides)
        out.print(
            f"no context of these {len(rows)} chunks is stored yet for this prompt and model: "
            f"`situate run {again}` writes them (`situate estimate {again}` prices that first); "
            "`situate contexts show` alone shows Claude's recorded contexts (context=replay)",
            highlight=False,
            markup=False,
        )
        return 0
    table = Table(title=f"{corpus.name}: contexts of {len(rows)} chunks", show_lines=True)
    for col in ("chunk", "context", "uncached", "write", "read", "out"):
        table.add_column(
            col,
            overflow="fold",
            justify="right" if col in ("uncached", "write", "read", "out") else "left",
        )
    for c, text, u, _ in rows:
        shown = "(not stored yet)" if text is None else text or "(none)"
        table.add_row(
            c.chunk_id,
            shown,
            str(u.input_uncached),
            str(u.cache_write),
            str(u.cache_read),
            str(u.output),
        )
    out.print(table)
    return 0
