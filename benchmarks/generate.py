"""Question generation against the Anthropic emulator: calls per second at 8-way concurrency.

    .venv/bin/python benchmarks/generate.py [--questions 160] [--concurrency 8]

``situate questions generate``'s paid calls (``LLMQuestionGenerator.propose``: the generation
store, the gates of ``paid/calls.py``, the schedule of ``paid/schedule.py``) over 8
synthetic Markdown documents (12 sections of three 40-word sentences each), the default strategy mix (40 %
``context_dependent``: a document's first call alone, the others read its cached block), against
an in-process emulator with no delay (``instant``: what the client side costs) and with a
provider's timing (``haiku_4_5``: 0.6 s to the first token, 150 output tokens a second, assumed
figures as in contextualize.py). Each run starts from an empty store; a rerun of the same
questions (all from the store) is timed too. Writes outputs/bench/generate.json and merges its
headline keys into outputs/bench/summary.json.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from common import merge_summary, write_json

KEY = "emulator-key-bench-generate"
PROFILES = {"instant": (0.0, None), "haiku_4_5": (0.6, 150.0)}


def documents(folder: Path) -> None:
    """8 guides of 12 sections, each of 3 sentences of 40 words (one passage each)."""
    for d in range(8):
        sections = "\n\n".join(
            f"## Part {i}\n\n"
            + " ".join(
                " ".join(f"doc{d}part{i}s{s}word{w}" for w in range(40)) + "." for s in range(3)
            )
            for i in range(12)
        )
        (folder / f"guide{d}.md").write_text(f"# Guide {d}\n\n{sections}\n", encoding="utf-8")


def one(profile: str, questions: int, concurrency: int) -> dict:
    from situate.commands.questions_generate import prepare
    from situate.emulators.anthropic_api import AnthropicEmulator

    ttft, tps = PROFILES[profile]
    with (
        tempfile.TemporaryDirectory() as tmp,
        AnthropicEmulator(api_key=KEY, ttft=ttft, output_tokens_per_second=tps) as emu,
    ):
        folder = Path(tmp) / "docs"
        folder.mkdir()
        documents(folder)
        _, _, generator, requests = prepare([
            "dataset=folder", f"dataset.path={folder}", f"output_dir={tmp}/out",
            f"llm.base_url={emu.url}", f"questions.target={questions}",
            "questions.passage_words=40", f"question_generator.concurrency={concurrency}",
        ])  # fmt: skip
        t = time.perf_counter()
        generator.propose(requests)
        seconds = time.perf_counter() - t
        calls = len(generator.calls)
        t = time.perf_counter()
        generator.propose(requests)
        rerun = time.perf_counter() - t
    return {
        "calls": calls,
        "seconds": round(seconds, 3),
        "calls_per_second": round(calls / seconds, 2),
        "rerun_seconds": round(rerun, 3),
        "rerun_calls": len(generator.calls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=160)
    parser.add_argument("--concurrency", type=int, default=8)
    ns = parser.parse_args()
    os.environ["ANTHROPIC_API_KEY"] = KEY
    results = {p: one(p, ns.questions, ns.concurrency) for p in PROFILES}
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    write_json("generate", results)
    merge_summary(
        {f"generate_calls_per_second_{p}": results[p]["calls_per_second"] for p in PROFILES}
    )
    for p in PROFILES:
        print(p, results[p])


if __name__ == "__main__":
    main()
