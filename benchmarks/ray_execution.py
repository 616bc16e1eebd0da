"""Throughput of ``execution=local`` against ``execution=ray`` (2 workers on this machine).

    .venv/bin/python benchmarks/ray_execution.py [--documents 12] [--workers 2]

1. Contexts. The first ``--documents`` cookbook files (prompt ``default``, ``claude_haiku_5_5``)
   against an in-process ``AnthropicEmulator`` with an API's timing (time to first token 0.4 s,
   200 output tokens a second: assumed figures, as in benchmarks/contextualize.py), so the work
   is API bound: local (``context.concurrency`` 4 in one process) against Ray (the same 4 in
   each of ``--workers`` tasks of whole documents). Each run on a fresh context store; the
   emulator counts the calls billed (each context once).
2. Embeddings. Every cookbook chunk through MiniLM (``embedder=minilm``, CPU) into a fresh
   embedding store: local (``embedder.threads`` = the machine's cores) against Ray (one thread
   per task, ``--workers`` tasks, each loading the model itself).

Ray is started once before the timed runs (``ray_start_seconds``); the first Ray run of each
stage also starts the worker processes and their imports (``cold``), the second reuses them
(``warm``). Chunks per second are the stage's wall time over the chunks it wrote.

Writes outputs/bench/ray_execution.json and prints the table of docs/scale.md's "When the corpus
outgrows one machine".
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from common import DATA, write_json

KEY = "emulator-key-bench-ray"
TTFT, TOKENS_PER_SECOND = 0.4, 200.0


def pipeline(tmp: str, overrides: list[str]):
    from situate.config.compose import compose
    from situate.running.app import build_pipeline

    cfg = compose([f"cache_dir={tmp}", "tracking=none", f"data_dir={DATA.parent}", *overrides])
    built = build_pipeline(cfg)
    corpus = built.dataset.load()
    return built, corpus, built.chunker.chunk(corpus)


def contexts(emu, execution: str, documents: int, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        over = ["context=llm", "llm=claude_haiku_5_5", f"llm.base_url={emu.url}"]
        over += [f"dataset.max_documents={documents}", f"execution={execution}"]
        over += [f"execution.num_workers={workers}"] if execution == "ray" else []
        built, corpus, chunks = pipeline(tmp, over)
        before = emu.calls("/v1/messages", ok_only=True)
        t = time.perf_counter()
        built.execution.contextualize(built.context, corpus, chunks)
        seconds = time.perf_counter() - t
        calls = emu.calls("/v1/messages", ok_only=True) - before
    return {"chunks": len(chunks), "calls": calls, "seconds": round(seconds, 2)}


def embeddings(execution: str, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        threads = os.cpu_count() if execution == "local" else 1
        over = ["context=none", "embedder=minilm", f"embedder.threads={threads}"]
        over += [f"execution={execution}"]
        over += [f"execution.num_workers={workers}"] if execution == "ray" else []
        built, _, chunks = pipeline(tmp, over)
        texts = [c.text for c in chunks]
        if execution == "local":
            built.embedder._load()  # the driver's model load is not the stage's work
        t = time.perf_counter()
        built.execution.embed(built.embeddings, texts, "document")
        seconds = time.perf_counter() - t
    return {"chunks": len(texts), "seconds": round(seconds, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--documents", type=int, default=12, help="cookbook files contextualized")
    ap.add_argument("--workers", type=int, default=2, help="Ray tasks per stage")
    args = ap.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = KEY
    import ray

    from situate.emulators.anthropic_api import AnthropicEmulator

    t = time.perf_counter()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    result: dict = {"cores": os.cpu_count(), "workers": args.workers}
    result["ray_start_seconds"] = round(time.perf_counter() - t, 2)
    with AnthropicEmulator(
        api_key=KEY, ttft=TTFT, output_tokens_per_second=TOKENS_PER_SECOND
    ) as emu:
        result["contexts"] = {
            "local": contexts(emu, "local", args.documents, args.workers),
            "ray_cold": contexts(emu, "ray", args.documents, args.workers),
            "ray_warm": contexts(emu, "ray", args.documents, args.workers),
        }
    result["embeddings"] = {
        "local": embeddings("local", args.workers),
        "ray_cold": embeddings("ray", args.workers),
        "ray_warm": embeddings("ray", args.workers),
    }
    ray.shutdown()
    write_json("ray_execution", result)
    print(
        f"{result['cores']} cores, {args.workers} Ray workers, Ray start {result['ray_start_seconds']} s"
    )
    print(
        "| stage | chunks | local chunks/s | Ray cold chunks/s | Ray warm chunks/s | warm / local |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for stage, label in (
        ("contexts", "contexts (emulator, API bound)"),
        ("embeddings", "MiniLM embeddings (CPU)"),
    ):
        runs = result[stage]
        rate = {k: v["chunks"] / v["seconds"] for k, v in runs.items()}
        print(
            f"| {label} | {runs['local']['chunks']} | {rate['local']:.1f} | {rate['ray_cold']:.1f} "
            f"| {rate['ray_warm']:.1f} | {rate['ray_warm'] / rate['local']:.2f}x |"
        )
    calls = {k: v["calls"] for k, v in result["contexts"].items()}
    print(f"context calls billed per run: {calls}")


if __name__ == "__main__":
    main()
