"""Question generation calls/s against the in-process Anthropic emulator, 8-way concurrency.

    .venv/bin/python benchmarks/questions_throughput.py [--target 200] [--concurrency 8 1]

``question_generator=llm llm=claude_haiku_4_5`` pointed at an ``AnthropicEmulator`` with a
provider's timing (0.6 s to the first token, 150 output tokens/s: assumed figures of the order of
public measurements of small Claude models, the ones benchmarks/contextualize.py uses), on
``--target`` passages of the cookbook corpus with the default strategy mix (factual,
context_dependent with the document as cached prefix, paraphrase). Per concurrency, on a fresh
emulator and generation store: proposals, calls paid, wall seconds, ``calls_per_second``, and a
second pass on the same store (every answer stored: no call, its wall seconds). Generation only:
no quote resolution or filters (those are the engine's, the same for every generator).

Writes outputs/bench/questions_throughput.json and merges ``questions_calls_per_second`` (at the
first concurrency listed) into outputs/bench/summary.json.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from common import DATA, merge_summary, write_json

KEY = "emulator-key-bench-questions"
TTFT, TOKENS_PER_SECOND = 0.6, 150.0


def run(target: int, concurrency: int) -> dict:
    from situate.config.compose import compose
    from situate.emulators.anthropic_api import AnthropicEmulator
    from situate.questions.generate import build_requests
    from situate.running.app import instantiate_stage

    with (
        AnthropicEmulator(
            api_key=KEY, ttft=TTFT, output_tokens_per_second=TOKENS_PER_SECOND
        ) as emu,
        tempfile.TemporaryDirectory() as tmp,
    ):
        cfg = compose(
            ["question_generator=llm", "llm=claude_haiku_4_5", f"llm.base_url={emu.url}",
             f"question_generator.concurrency={concurrency}", f"cache_dir={tmp}",
             f"data_dir={DATA.parent}", "tracking=none"]
        )  # fmt: skip
        corpus = instantiate_stage(cfg, "dataset").load()
        q = cfg.questions
        requests = build_requests(
            corpus.documents, target, dict(q.mix), int(q.passage_words), int(q.seed)
        )
        generator = instantiate_stage(cfg, "question_generator")
        t = time.perf_counter()
        proposals = generator.propose(requests)
        wall = time.perf_counter() - t
        paid = len(generator.calls)
        failed = sum(p.failure is not None for p in proposals)
        t = time.perf_counter()
        generator.propose(requests)  # every answer is in the store now
        rerun = time.perf_counter() - t
        return {
            "concurrency": concurrency,
            "proposals": len(proposals),
            "calls_paid": paid,
            "failed": failed,
            "wall_seconds": round(wall, 2),
            "calls_per_second": round(paid / wall, 2) if wall else None,
            "rerun_calls_paid": len(generator.calls),
            "rerun_wall_seconds": round(rerun, 2),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[8, 1])
    ns = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = KEY  # the emulator's key, for this process only
    rows = []
    for c in ns.concurrency:
        r = run(ns.target, c)
        rows.append(r)
        print(
            f"concurrency {c}: {r['calls_paid']} calls in {r['wall_seconds']:.1f} s = "
            f"{r['calls_per_second']:.2f} calls/s ({r['failed']} failed); rerun "
            f"{r['rerun_calls_paid']} calls, {r['rerun_wall_seconds']:.2f} s",
            flush=True,
        )
    result = {
        "target": ns.target,
        "ttft_seconds": TTFT,
        "output_tokens_per_second": TOKENS_PER_SECOND,
        "runs": rows,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    write_json("questions_throughput", result)
    merge_summary({"questions_calls_per_second": rows[0]["calls_per_second"]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
