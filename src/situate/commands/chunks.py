"""``situate chunks [overrides] [--limit N]``: chunk ids, offsets and text (to write gold)."""

from __future__ import annotations

import argparse

from situate.config.compose import compose


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate chunks", description="List chunk ids, offsets and text."
    )
    parser.add_argument("overrides", nargs="*", help="group=option overrides")
    parser.add_argument(
        "--limit", type=int, default=20, help="how many chunks to list (default 20, 0 for all)"
    )
    ns = parser.parse_intermixed_args(args)
    from situate.errors import SituateError

    if ns.limit < 0:
        raise SituateError(f"chunks: --limit {ns.limit} must be 0 (all) or a positive integer")
    from hydra.utils import instantiate
    from rich.table import Table

    from situate.config.checks import check_output_folders
    from situate.console import console

    cfg = compose(ns.overrides, uses=("dataset", "chunker"))
    check_output_folders(cfg)
    corpus = instantiate(cfg.dataset).load()
    chunks = instantiate(cfg.chunker).chunk(corpus)
    shown = chunks[: ns.limit] if ns.limit else chunks
    table = Table(
        title=f"{corpus.name}: {len(chunks)} chunks ({cfg.chunker._target_.rsplit('.', 1)[-1]})"
    )
    for col, justify in (
        ("chunk id", "left"),
        ("start", "right"),
        ("end", "right"),
        ("heading path", "left"),
        ("text", "left"),
    ):
        table.add_column(col, justify=justify, overflow="fold" if col == "chunk id" else "ellipsis")
    for c in shown:
        table.add_row(
            c.chunk_id,
            str(c.start),
            str(c.end),
            " > ".join(c.heading_path),
            " ".join(c.text.split())[:90],
        )
    if len(shown) < len(chunks):
        table.caption = (
            f"{len(chunks) - len(shown)} more not shown (--limit {len(shown)}; --limit 0 for all)"
        )
    console().print(table)
    return 0
