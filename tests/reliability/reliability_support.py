"""A small corpus and an LLM context against the Anthropic emulator, processes to kill, and the
harness of ``make reliability`` (``benchmarks/reliability.py``), for the reliability tests."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from situate.contexts.llm import LLMContext
from situate.contexts.prompts import PromptVariant
from situate.llm.anthropic_provider import AnthropicProvider
from situate.records import Chunk, Corpus, Document

HERE = Path(__file__).resolve().parent
HARNESS = HERE.parents[1] / "benchmarks" / "reliability.py"
HANG = 300  # seconds after which a wait is a hang, not a slow machine
KEY = "emulator-key-test-reliability"
MODEL = "claude-haiku-5-5"  # caches from 512 tokens; priced in conf/pricing/default.yaml

PROMPT = PromptVariant(
    name="test",
    document_template="<document>\n{title}\n{document}\n</document>",
    chunk_template="Here is the chunk:\n<chunk>\n{chunk}\n</chunk>\nSituate it in the document.",
    max_tokens=60,
)


def load_harness():
    """``benchmarks/reliability.py``, a script and no package's module, loaded from its file."""
    spec = importlib.util.spec_from_file_location("reliability", HARNESS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


harness = load_harness()


def document(doc_id: str, title: str, topic: str, paragraphs: int) -> Document:
    paras = []
    for p in range(paragraphs):
        words = " ".join(f"{topic}{p}x{i} detail{i % 13}" for i in range(60))
        paras.append(f"Section {p} on {topic} subject{p}. {words}.")
    return Document(doc_id, "\n\n".join(paras), title=title)


def chunks_of(doc: Document) -> list[Chunk]:
    out, start = [], 0
    for i, para in enumerate(doc.text.split("\n\n")):
        begin = doc.text.index(para, start)
        out.append(Chunk(f"{doc.doc_id}-{i}", doc.doc_id, i, begin, begin + len(para), para))
        start = begin + len(para)
    return out


def corpus(paragraphs: tuple[int, ...] = (6, 6, 4)) -> tuple[Corpus, list[Chunk]]:
    topics = ("ice", "port", "fern", "salt", "kiln", "moss")
    docs = [
        document(f"d{i}", f"Title {topics[i].title()}", topics[i], n)
        for i, n in enumerate(paragraphs)
    ]
    return Corpus("test", docs, []), [c for d in docs for c in chunks_of(d)]


def provider(emu, **kw) -> AnthropicProvider:
    kw.setdefault("backoff_base", 0.005)
    kw.setdefault("backoff_max", 0.05)
    return AnthropicProvider(MODEL, base_url=emu.url, min_cacheable_tokens=512, **kw)


def context(emu, store: Path, **kw) -> LLMContext:
    llm = kw.pop("llm", None) or provider(emu)
    return LLMContext(PROMPT, llm, str(store), **kw)


def child(code: str, **kw) -> subprocess.Popen:
    """``code`` in a fresh Python process (situate importable, this folder on the path)."""
    prelude = f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
    return subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code)], **kw)


def contextualizing_child(
    emu,
    store: Path,
    paragraphs: tuple[int, ...],
    before: str = "",
    after: str = "",
    concurrency: int = 4,
    **kw,
) -> subprocess.Popen:
    """A process that contextualizes ``corpus(paragraphs)`` against ``emu`` into ``store``, with a
    budget and ``concurrency`` calls at once; ``before`` runs first (to plant a kill point),
    ``after`` once it is done."""
    code = f"""
from reliability_support import corpus, context
from situate.money.pricing import load_price_book

class Remote:
    url = {emu.url!r}

{before}
corp, chunks = corpus({paragraphs!r})
ctx = context(Remote, {str(store)!r}, concurrency={concurrency}, budget_usd=1.0, pricing=load_price_book())
ctx.contextualize(corp, chunks)
{after}
"""
    return child(code, env={**os.environ, "ANTHROPIC_API_KEY": KEY}, **kw)


def killed_itself(proc: subprocess.Popen) -> bool:
    return proc.wait(HANG) == -signal.SIGKILL
