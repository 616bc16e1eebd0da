"""Contextualization against the Anthropic emulator: first call alone versus all calls at once.

    .venv/bin/python benchmarks/contextualize.py [--ttft 0.2] [--concurrency 4]

All 737 cookbook chunks with ``context=llm llm=claude_haiku_5_5`` (prompt ``default``; the
emulator caches prefixes from 512 tokens for this model), against an in-process
``AnthropicEmulator(ttft=0.2)``: a cache entry becomes readable only once the response that
wrote it has started, ttft seconds after the request. Two schedules, same concurrency, each on a
fresh emulator (empty prompt cache) and a fresh context store:

* ``first_call_alone=True``: a document's first call goes alone and writes the cache, then the
  rest fan out and read it;
* ``first_call_alone=False``: every call of a document is fired at once (up to the concurrency),
  so the first wave all miss and each pays a cache write.

Reported per schedule: wall time, calls, tokens, ``cache_read_share`` (cache reads / all input
tokens, as LLMContext reports it) and the cost from conf/pricing (situate.pricing.load_price_book),
plus what the same calls would cost with no caching at all.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from common import OUT, write_json

KEY = "emulator-key-bench-emulator"


def run_schedule(first_call_alone: bool, ttft: float, concurrency: int) -> dict:
    from situate.app import instantiate_stage
    from situate.cli import compose
    from situate.costs import context_costs, usage_metrics
    from situate.emulators.anthropic_api import AnthropicEmulator
    from situate.pricing import load_price_book
    from situate.records import Usage

    book = load_price_book()
    with AnthropicEmulator(api_key=KEY, ttft=ttft) as emu, tempfile.TemporaryDirectory() as tmp:
        cfg = compose(
            [
                "context=llm",
                "llm=claude_haiku_5_5",
                f"llm.base_url={emu.url}",
                f"cache_dir={tmp}",
                "tracking=none",
                f"context.concurrency={concurrency}",
                f"context.first_call_alone={str(first_call_alone).lower()}",
            ]
        )
        dataset, chunker = instantiate_stage(cfg, "dataset"), instantiate_stage(cfg, "chunker")
        context = instantiate_stage(cfg, "context")
        corpus = dataset.load()
        chunks = chunker.chunk(corpus)
        t = time.perf_counter()
        context.contextualize(corpus, chunks)
        wall = time.perf_counter() - t
    s = usage_metrics("", context.calls)
    costs = context_costs(book, context.llm, context.calls)
    price = book.price(context.llm.model)
    no_cache = sum(
        price.call_cost(
            Usage(
                input_uncached=r.usage.input_uncached + r.usage.cache_write + r.usage.cache_read,
                cache_write=0,
                cache_read=0,
                output=r.usage.output,
            )
        ).total
        for _, r in context.calls
    )
    return {
        "first_call_alone": first_call_alone,
        "wall_seconds": round(wall, 2),
        "chunks": len(chunks),
        "documents": len(corpus.documents),
        "llm_calls": int(s["llm_calls"]),
        "tokens_input_uncached": int(s["tokens_input_uncached"]),
        "tokens_cache_write": int(s["tokens_cache_write"]),
        "tokens_cache_read": int(s["tokens_cache_read"]),
        "tokens_output": int(s["tokens_output"]),
        "cache_read_share": round(s["cache_read_share"], 4),
        "cache_read_share_of_max": round(s["cache_read_share_of_max"], 4),
        "docs_below_cache_minimum": int(s["docs_below_cache_minimum"]),
        "cost_usd": round(costs.total, 6),
        "cost_without_caching_usd": round(no_cache, 6),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttft", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=4)
    ns = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = KEY  # the emulator's key, for this process only
    rows = {}
    for alone in (True, False):
        r = run_schedule(alone, ns.ttft, ns.concurrency)
        rows["first_alone" if alone else "all_at_once"] = r
        print(
            f"first_call_alone={alone!s:<5}: {r['llm_calls']} calls in {r['wall_seconds']:.1f} s, "
            f"cache read share {r['cache_read_share'] * 100:.1f}% "
            f"({r['cache_read_share_of_max'] * 100:.1f}% of the maximum), written "
            f"{r['tokens_cache_write']:,} / read {r['tokens_cache_read']:,} / uncached "
            f"{r['tokens_input_uncached']:,} / output {r['tokens_output']:,} tokens, "
            f"${r['cost_usd']:.4f} (no caching: ${r['cost_without_caching_usd']:.4f})",
            flush=True,
        )
    a, b = rows["first_alone"], rows["all_at_once"]
    result = {
        "model": "claude-haiku-5-5 (llm=claude_haiku_5_5, prompt=default)",
        "emulator_ttft_seconds": ns.ttft,
        "concurrency": ns.concurrency,
        **rows,
        "cache_read_share_first_alone": a["cache_read_share"],
        "cache_read_share_all_at_once": b["cache_read_share"],
        "cost_first_alone_usd": a["cost_usd"],
        "cost_all_at_once_usd": b["cost_usd"],
        "wall_first_alone_seconds": a["wall_seconds"],
        "wall_all_at_once_seconds": b["wall_seconds"],
    }
    print(
        f"first call alone: {a['wall_seconds']:.1f} s, ${a['cost_usd']:.4f}; all at once: "
        f"{b['wall_seconds']:.1f} s, ${b['cost_usd']:.4f} "
        f"({(b['cost_usd'] / a['cost_usd'] - 1) * 100:+.0f}% cost, "
        f"{(b['wall_seconds'] / a['wall_seconds'] - 1) * 100:+.0f}% time)"
    )
    print(f"wrote {write_json('contextualize', result, OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
