"""``situate search "QUESTION" [overrides] [-k N] [--json]``: top chunks from the persisted index."""

from __future__ import annotations

import argparse

from situate.config.compose import compose


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="situate search", description="Search a persisted index.")
    parser.add_argument("query", help="the question")
    parser.add_argument(
        "overrides", nargs="*", help="the same group=option overrides given to `situate index`"
    )
    parser.add_argument("-k", type=int, default=10, help="how many chunks to show (default 10)")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    ns = parser.parse_args(args)
    from situate.errors import SituateError

    if ns.k < 1:
        raise SituateError(f"search: -k {ns.k} must be a positive integer")
    from situate.config.checks import check_output_folders
    from situate.config.preflight import stages_of_run
    from situate.running import saved_index
    from situate.running.app import build_pipeline

    cfg = compose(ns.overrides, uses=stages_of_run)
    check_output_folders(cfg)
    index = saved_index.load(cfg, build_pipeline(cfg), ns.overrides)
    hits, seconds = index.search(ns.query, ns.k)
    if ns.json:
        import json

        rows = [
            {
                "rank": h.rank,
                "score": h.score,
                "chunk_id": h.chunk.chunk_id,
                "doc_id": h.chunk.doc_id,
                "start": h.chunk.start,
                "end": h.chunk.end,
                "context": h.context,
                "text": h.chunk.text,
            }  # fmt: skip
            for h in hits
        ]
        print(
            json.dumps(
                {
                    "query": ns.query,
                    "seconds": seconds,
                    **index.startup,
                    "index": str(index.folder),
                    "hits": rows,
                },
                indent=1,
            )
        )
        return 0
    from rich.table import Table

    from situate.console import console

    table = Table(title=ns.query, caption=search_timing(seconds, index.startup), show_lines=True)
    for col in ("#", "score", "chunk", "offsets", "context", "text"):
        table.add_column(
            col, overflow="fold" if col in ("chunk", "context", "text") else "ellipsis"
        )
    for h in hits:
        table.add_row(
            str(h.rank), f"{h.score:.4g}", h.chunk.chunk_id, f"{h.chunk.doc_id}:{h.chunk.start}-{h.chunk.end}",
            h.context[:200], " ".join(h.chunk.text.split())[:200],
        )  # fmt: skip
    console().print(table)
    return 0


STARTUP = {"jvm_start_seconds": "JVM start", "index_open_seconds": "index open", "model_load_seconds": "model load"}  # fmt: skip


def search_timing(seconds: float, startup: dict[str, float]) -> str:
    """``query 35 ms (before it: index open 2.1 s, model load 3.4 s)``: the query's time apart."""
    before = ", ".join(f"{STARTUP[key]} {value:.1f} s" for key, value in startup.items())
    return f"query {seconds * 1000:.0f} ms (before it: {before})"
