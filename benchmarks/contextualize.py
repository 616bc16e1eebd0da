"""Contextualization and the query phase against the emulators: the schedule's speed and cache use.

    .venv/bin/python benchmarks/contextualize.py [--concurrency 4] [--quick]

1. Schedules. All 737 cookbook chunks (prompt ``default``) against an in-process
   ``AnthropicEmulator`` with a provider's timing (time to first token, output tokens per
   second: :data:`PROFILES`, assumed figures, not measured ones); a cache entry becomes readable
   once the response that wrote it has started. Per model profile, same concurrency, each run on
   a fresh emulator and context store:

   * ``schedule`` (``first_call_alone=True``): situate's schedule (paid/schedule.py): each
     document's first call writes the cache, its other calls read it from the moment that
     answer starts, and the slots stay busy across documents;
   * ``all_at_once`` (``first_call_alone=False``): every call fired at once (up to the
     concurrency), so concurrent first calls each pay a cache write.

   ``context_schedule_wall_ratio`` = schedule / all at once (goal <= 1.05),
   ``context_cache_read_share_of_max`` (reads made / reads possible; goal 1.00). The old
   schedule (documents one after another) made every possible read too, so equal
   ``cache_read_share_of_max`` means equal tokens and equal cost.
2. Rate ceilings. ``context.rpm`` = the emulator's own rpm ceiling (which answers 429 beyond
   it), at 50 and at 1,000 requests a minute, concurrency 16, enough calls for two (50) and one
   (1,000) full minutes and one more call: the sustained rate (calls after the first / seconds
   from the first arrival to the last, per minute) / ceiling (the lowest is
   ``rpm_ceiling_utilization``, goal >= 0.95), the requests in each full minute, and the 429s
   the emulator answered (``rpm_pacing_429s``, goal 0).
3. Query phase. 1,000 COVID-QA questions (SQuAD format), RRF of BM25 and ``openai_small``
   vectors from the OpenAI emulator answering each request after ``--embed-latency`` seconds (an
   API's round trip): the phase with ``eval.latency_sample`` = 50 timed alone and the rest
   embedded in batches (``query_phase_seconds_per_1k``), and every query one at a time
   (``query_phase_one_at_a_time_seconds_per_1k``), each with a fresh query cache.

Writes outputs/bench/contextualize.json and merges its headline keys into outputs/bench/summary.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time

from common import DATA, OUT, merge_summary, write_json

KEY = "emulator-key-bench-emulator"
PARTS = ("schedules", "rpm", "queries")
OPENAI_KEY = "sk-emulator-bench"
# model profile -> (llm config, seconds to first token, output tokens per second): assumed
# figures of the same order as public measurements of small Claude models, not measured here
PROFILES = {
    "haiku_5_5": ("claude_haiku_5_5", 0.4, 200.0),
    "haiku_4_5": ("claude_haiku_4_5", 0.6, 150.0),
}


def _context_stage(emu, tmp: str, llm: str, overrides: list[str]):
    from situate.config.compose import compose
    from situate.running.app import instantiate_stage

    cfg = compose(
        [
            "context=llm",
            f"llm={llm}",
            f"llm.base_url={emu.url}",
            f"cache_dir={tmp}",
            "tracking=none",
            f"data_dir={DATA.parent}",
        ]
        + overrides
    )
    dataset, chunker = instantiate_stage(cfg, "dataset"), instantiate_stage(cfg, "chunker")
    corpus = dataset.load()
    return corpus, chunker.chunk(corpus), instantiate_stage(cfg, "context")


def run_schedule(profile: str, first_call_alone: bool, concurrency: int) -> dict:
    from situate.emulators.anthropic_api import AnthropicEmulator
    from situate.money.costs import context_costs, usage_metrics
    from situate.money.pricing import load_price_book

    llm, ttft, tps = PROFILES[profile]
    book = load_price_book()
    with (
        AnthropicEmulator(api_key=KEY, ttft=ttft, output_tokens_per_second=tps) as emu,
        tempfile.TemporaryDirectory() as tmp,
    ):
        corpus, chunks, context = _context_stage(
            emu, tmp, llm,
            [f"context.concurrency={concurrency}",
             f"context.first_call_alone={str(first_call_alone).lower()}"],
        )  # fmt: skip
        t = time.perf_counter()
        context.contextualize(corpus, chunks)
        wall = time.perf_counter() - t
    s = usage_metrics("", context.calls)
    return {
        "model": context.llm.model,
        "ttft_seconds": ttft,
        "output_tokens_per_second": tps,
        "first_call_alone": first_call_alone,
        "wall_seconds": round(wall, 2),
        "chunks": len(chunks),
        "llm_calls": int(s["llm_calls"]),
        "tokens_cache_write": int(s["tokens_cache_write"]),
        "tokens_cache_read": int(s["tokens_cache_read"]),
        "tokens_input_uncached": int(s["tokens_input_uncached"]),
        "tokens_output": int(s["tokens_output"]),
        "cache_read_share": round(s["cache_read_share"], 4),
        # absent when no document reached the model's cache minimum (no read was possible)
        "cache_read_share_of_max": round(s.get("cache_read_share_of_max", float("nan")), 4),
        "docs_below_cache_minimum": int(s["docs_below_cache_minimum"]),
        "cost_usd": round(context_costs(book, context.llm, context.calls).total, 6),
        "cache_refreshes": int(context.stats.get("context_cache_refreshes", 0)),
    }


def run_rpm(rpm: int, minutes: int, concurrency: int) -> dict:
    """Calls for ``minutes`` full minutes and one more, at ``context.rpm`` = the emulator's."""
    from situate.emulators.anthropic_api import AnthropicEmulator

    llm, ttft, tps = PROFILES["haiku_5_5"]
    n = rpm * minutes + 1
    with (
        AnthropicEmulator(api_key=KEY, ttft=ttft, output_tokens_per_second=tps, rpm=rpm) as emu,
        tempfile.TemporaryDirectory() as tmp,
    ):
        corpus, chunks, context = _context_stage(
            emu, tmp, llm, [f"context.concurrency={concurrency}", f"context.rpm={rpm}"]
        )
        calls, copy = [], 0
        while len(calls) < n:  # the cookbook's chunks again, each copy a distinct prompt
            calls += [dataclasses.replace(c, chunk_id=f"{c.chunk_id}~{copy}", text=c.text + " " * copy) for c in chunks]  # fmt: skip
            copy += 1
        calls = sorted(calls[:n], key=lambda c: c.doc_id)
        context.contextualize(corpus, calls)
        arrivals = sorted(r.received_at for r in emu.requests if r.path == "/v1/messages")
        refused = sum(1 for r in emu.requests if r.status == 429)
    t0 = arrivals[0]
    per_minute = [
        sum(1 for t in arrivals if t0 + 60 * k <= t < t0 + 60 * (k + 1)) for k in range(minutes)
    ]
    return {
        "rpm": rpm,
        "calls": n,
        "concurrency": concurrency,
        "requests_per_full_minute": per_minute,
        # the sustained rate: requests after the first over the time from the first to the last
        "utilization": round((n - 1) * 60 / (arrivals[-1] - t0) / rpm, 4),
        "rate_limited_429s": refused,
        "wall_seconds": round(arrivals[-1] - t0, 1),
    }


def run_queries(questions: int, latency: float) -> dict:
    from situate.config.compose import compose
    from situate.emulators.openai_api import OpenAIEmulator
    from situate.running.app import build_pipeline

    out = {"questions": questions, "embed_latency_seconds": latency}
    with (
        OpenAIEmulator(api_key=OPENAI_KEY, latency=latency) as emu,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for label, sample in (("batched", 50), ("one_at_a_time", None)):
            cfg = compose(
                ["dataset=covid_qa", f"dataset.max_questions={questions}", "embedder=openai_small",
                 f"embedder.base_url={emu.url}/v1", "fusion=rrf", "chunker=fixed", "context=none", f"output_dir={tmp}/{label}",
                 "tracking=none", f"data_dir={DATA.parent}"]
            )  # fmt: skip
            pipe = build_pipeline(cfg)
            corpus, chunks, contexts = pipe.prepare({})
            pipe.build_indexes(chunks, contexts, set(pipe.fusion.needs), {})
            searcher = pipe.searcher(chunks, contexts)
            queries = [q.text for q in corpus.questions]
            t = time.perf_counter()
            _, latency_s = searcher.search_all(queries, sample=sample)
            wall = time.perf_counter() - t
            out[label] = {
                "questions": len(queries),
                "seconds": round(wall, 2),
                "seconds_per_1k": round(wall * 1000 / len(queries), 2),
                "timed_alone": len(latency_s.total),
                "p50_ms": round(
                    float(sorted(latency_s.total)[len(latency_s.total) // 2]) * 1000, 1
                ),
            }
    return out


def headline_keys(result: dict) -> dict:
    """The summary keys of the parts ``result`` holds (a part never measured has none)."""
    headline: dict = {}
    profiles = result.get("profiles", {})
    if profiles:
        rows = profiles.values()
        headline["context_schedule_wall_ratio"] = max(p["wall_ratio"] for p in rows)
        headline["context_cache_read_share_of_max"] = min(p["schedule"]["cache_read_share_of_max"] for p in rows)  # fmt: skip
    if result.get("rpm"):
        headline["rpm_ceiling_utilization"] = min(r["utilization"] for r in result["rpm"])
        headline["rpm_pacing_429s"] = sum(r["rate_limited_429s"] for r in result["rpm"])
    if "queries" in result:
        q = result["queries"]
        headline["query_phase_seconds_per_1k"] = q["batched"]["seconds_per_1k"]
        headline["query_phase_one_at_a_time_seconds_per_1k"] = q["one_at_a_time"]["seconds_per_1k"]  # fmt: skip
    for profile, p in profiles.items():
        headline[f"context_schedule_wall_ratio_{profile}"] = p["wall_ratio"]
        headline[f"context_cache_read_share_of_max_{profile}"] = p["schedule"]["cache_read_share_of_max"]  # fmt: skip
    return headline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--embed-latency", type=float, default=0.1)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--rpm", type=int, nargs="*", default=[50, 1000])
    parser.add_argument(
        "--parts",
        nargs="*",
        choices=PARTS,
        default=list(PARTS),
        help="measure only these, keeping the others from the last contextualize.json",
    )
    ns = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = KEY  # the emulators' keys, for this process only
    os.environ["OPENAI_API_KEY"] = OPENAI_KEY
    last = OUT / "contextualize.json"
    keep = last.exists() and set(ns.parts) != set(PARTS)  # a fresh clone has no earlier parts
    result: dict = json.loads(last.read_text()) if keep else {}
    result["concurrency"] = ns.concurrency
    for profile in PROFILES if "schedules" in ns.parts else ():
        result.setdefault("profiles", {})
        rows = {}
        for alone in (True, False):
            r = run_schedule(profile, alone, ns.concurrency)
            rows["schedule" if alone else "all_at_once"] = r
            print(
                f"{profile} {'schedule   ' if alone else 'all at once'}: {r['llm_calls']} calls in "
                f"{r['wall_seconds']:.1f} s, reads {r['cache_read_share'] * 100:.1f}% "
                f"({r['cache_read_share_of_max'] * 100:.1f}% of the maximum), ${r['cost_usd']:.4f}",
                flush=True,
            )
        a, b = rows["schedule"], rows["all_at_once"]
        rows["wall_ratio"] = round(a["wall_seconds"] / b["wall_seconds"], 3)
        rows["cost_ratio_vs_all_at_once"] = round(a["cost_usd"] / b["cost_usd"], 3)
        result["profiles"][profile] = rows
    if "rpm" in ns.parts:
        result["rpm"] = [run_rpm(rpm, 2 if rpm <= 100 else 1, 16) for rpm in ns.rpm]
        for r in result["rpm"]:
            print(f"rpm {r['rpm']}: {r['requests_per_full_minute']} a minute, sustained "
                  f"{r['utilization']:.3f} of it, {r['rate_limited_429s']} 429s", flush=True)  # fmt: skip
    if "queries" in ns.parts:
        result["queries"] = run_queries(ns.questions, ns.embed_latency)
    headline = headline_keys(result)
    if "queries" in result:
        q = result["queries"]
        print(f"query phase, {q['batched']['questions']} questions: batched {q['batched']['seconds']:.1f} s, "
              f"one at a time {q['one_at_a_time']['seconds']:.1f} s", flush=True)  # fmt: skip
    result.update(headline)
    print(f"wrote {write_json('contextualize', result, OUT)}")
    merge_summary(headline)
    print(json.dumps(headline, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
