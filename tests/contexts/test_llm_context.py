"""LLMContext (first call alone, store, retries) against the Anthropic emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from situate.contexts.llm import LLMContext
from situate.contexts.prompts import PromptVariant
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.emulators.fault_injection import Faults
from situate.errors import SituateError
from situate.llm.anthropic_provider import AnthropicProvider
from situate.money.costs import usage_metrics
from situate.paid.llm import LLMRequest, LLMResponse
from situate.records import Chunk, Corpus, Document

KEY = "emulator-key-test-context-31a"
MODEL = "claude-haiku-5-5"  # caches from 512 tokens

PROMPT = PromptVariant(
    name="test",
    document_template="<document>\n{title}\n{document}\n</document>",
    chunk_template="Here is the chunk:\n<chunk>\n{chunk}\n</chunk>\nSituate it in the document.",
    max_tokens=60,
)


def long_document(doc_id: str, title: str, topic: str, paragraphs: int = 4) -> Document:
    paras = []
    for p in range(paragraphs):
        words = " ".join(f"{topic}{p}x{i} detail{i % 13}" for i in range(110))
        paras.append(f"Section {p} on {topic} subject{p}. {words}.")
    return Document(doc_id, "\n\n".join(paras), title=title)


def chunks_of(doc: Document) -> list[Chunk]:
    out, start = [], 0
    for i, para in enumerate(doc.text.split("\n\n")):
        begin = doc.text.index(para, start)
        out.append(Chunk(f"{doc.doc_id}-{i}", doc.doc_id, i, begin, begin + len(para), para))
        start = begin + len(para)
    return out


def corpus(b_text_suffix: str = "") -> tuple[Corpus, list[Chunk]]:
    a = long_document("a", "Alpine Glaciers", "ice")
    b = long_document("b", "Baltic Shipping", "port")
    if b_text_suffix:
        b = Document(b.doc_id, b.text + b_text_suffix, title=b.title)
    c = Document("c", "A short note.\n\nIt has two tiny paragraphs.", title="Tiny Note")
    docs = [a, b, c]
    return Corpus("test", docs, []), [ch for d in docs for ch in chunks_of(d)]


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.fixture
def emu():
    with AnthropicEmulator(api_key=KEY, ttft=0.05) as e:
        yield e


def provider(emu, **kw) -> AnthropicProvider:
    kw.setdefault("backoff_base", 0.005)
    kw.setdefault("batch_poll_seconds", 0.02)
    return AnthropicProvider(MODEL, base_url=emu.url, min_cacheable_tokens=512, **kw)


def context(emu, tmp_path: Path, **kw) -> LLMContext:
    llm = kw.pop("llm", None) or provider(emu)
    return LLMContext(PROMPT, llm, str(tmp_path / "contexts.sqlite"), **kw)


def test_corpus_has_two_cacheable_documents_and_one_below_the_minimum():
    corp, chunks = corpus()
    assert [len([c for c in chunks if c.doc_id == d.doc_id]) for d in corp.documents] == [4, 4, 2]
    assert len(corp.document("a").text) > 4 * 512 and len(corp.document("c").text) < 200


def test_every_chunk_gets_a_context_and_every_cacheable_read_is_made(emu, key_env, tmp_path):
    corp, chunks = corpus()
    ctx = context(emu, tmp_path, concurrency=4)
    contexts = ctx.contextualize(corp, chunks)
    assert [x.chunk_id for x in contexts] == [c.chunk_id for c in chunks]
    for c, x in zip(chunks, contexts, strict=True):
        title = corp.document(c.doc_id).title
        assert x.text.startswith(f"This chunk is from {title}; it covers ")
    assert "subject2" in contexts[2].text  # the chunk's own terms
    assert ctx.stats["contexts_from_store"] == 0 and ctx.stats["contexts_failed"] == 0
    s = usage_metrics("", ctx.calls)
    assert s["llm_calls"] == 10
    assert s["cache_read_share_of_max"] == 1.0
    assert s["docs_below_cache_minimum"] == 1
    assert s["tokens_cache_write"] > 0 and s["tokens_cache_read"] == 3 * s["tokens_cache_write"]
    # the usage is stored with each context
    assert contexts[0].usage.cache_write > 0 and contexts[1].usage.cache_read > 0
    assert contexts[-1].usage.cache_write == contexts[-1].usage.cache_read == 0


def test_without_first_call_alone_concurrent_calls_pay_writes(emu, key_env, tmp_path):
    corp, chunks = corpus()
    assert sum(1 for c in chunks if c.doc_id == "a") == 4
    emu.together(4)  # document a's four calls, sent at once, are all read before any answer
    ctx = context(emu, tmp_path, concurrency=4, first_call_alone=False)
    ctx.contextualize(corp, chunks)
    a = [r.usage for doc_id, r in ctx.calls if doc_id == "a"]
    assert [u.cache_read for u in a] == [0, 0, 0, 0] and all(u.cache_write > 0 for u in a)
    s = usage_metrics("", ctx.calls)
    assert s["cache_read_share_of_max"] < 1.0
    assert s["tokens_cache_write"] > 2 * max(
        r.usage.cache_write for _, r in ctx.calls
    )  # more than one write per document


def test_rerun_makes_no_call_and_changed_document_only_its_chunks(emu, key_env, tmp_path):
    corp, chunks = corpus()
    first = context(emu, tmp_path).contextualize(corp, chunks)
    calls = emu.calls()
    again = context(emu, tmp_path)
    assert [x.text for x in again.contextualize(corp, chunks)] == [x.text for x in first]
    assert emu.calls() == calls  # nothing at all reached the API
    assert again.calls == [] and again.stats["contexts_from_store"] == 10

    corp2, chunks2 = corpus(b_text_suffix="\n\nA new closing paragraph on port tariffs.")
    changed = context(emu, tmp_path)
    out = changed.contextualize(corp2, chunks2)
    n_b = sum(1 for c in chunks2 if c.doc_id == "b")
    assert n_b == 5
    assert emu.calls("/v1/messages") - calls == n_b
    assert {doc_id for doc_id, _ in changed.calls} == {"b"}
    assert [x.text for x in out if x.chunk_id.startswith("a-")] == [
        x.text for x in first if x.chunk_id.startswith("a-")
    ]


def test_injected_faults_are_retried_until_every_chunk_is_done(key_env, tmp_path):
    faults = Faults.uniform(
        0.2, kinds=("429_retry_after", "529", "500", "reset"), retry_after="0", seed=11
    )
    with AnthropicEmulator(api_key=KEY, ttft=0.02, faults=faults) as emu:
        corp, chunks = corpus()
        ctx = context(emu, tmp_path, llm=provider(emu, max_retries=8))
        contexts = ctx.contextualize(corp, chunks)
        assert all(x.text.startswith("This chunk is from") for x in contexts)
        assert ctx.stats["llm_retries"] > 0
        assert ctx.stats["contexts_failed"] == 0
        assert sum(1 for r in emu.requests if r.fault) == ctx.stats["llm_retries"]


class RoutedProvider:
    """Calls for documents containing ``marker`` go to a provider whose calls keep failing."""

    name = "anthropic"
    cache_ttl = None

    def __init__(self, good: AnthropicProvider, bad: AnthropicProvider, marker: str):
        self.good, self.bad, self.marker = good, bad, marker
        self.model = good.model
        self.context_window = good.context_window

    def identity(self) -> dict:
        return self.good.identity()

    def complete(self, request: LLMRequest) -> LLMResponse:
        return (self.bad if self.marker in request.document else self.good).complete(request)

    def count_tokens(self, text: str) -> int:
        return self.good.count_tokens(text)


def test_calls_that_keep_failing_are_reported_and_the_others_stored(emu, key_env, tmp_path):
    corp, chunks = corpus()
    with AnthropicEmulator(api_key=KEY, ttft=0.0, faults=Faults(rate_500=1.0)) as broken:
        llm = RoutedProvider(provider(emu), provider(broken, max_retries=2), "Baltic Shipping")
        ctx = context(emu, tmp_path, llm=llm)
        with pytest.raises(SituateError) as e:
            ctx.contextualize(corp, chunks)
        assert broken.calls() == 4 * 3  # 4 chunks, each tried 3 times
    message = str(e.value)
    assert "4 of 10 chunks failed after retries" in message
    assert "the 6 others are stored" in message and "\n" not in message
    assert ctx.stats["contexts_failed"] == 4 and ctx.stats["llm_retries"] == 8
    stored = ctx.lookup(corp, chunks)
    assert [s is not None for s in stored] == [c.doc_id != "b" for c in chunks]
    # a rerun with a working provider pays only for the failed ones
    before = emu.calls("/v1/messages")
    rerun = context(emu, tmp_path)
    assert len(rerun.contextualize(corp, chunks)) == 10
    assert emu.calls("/v1/messages") - before == 4


def test_batch_mode_sends_the_rest_of_a_document_as_one_batch(emu, key_env, tmp_path):
    corp, chunks = corpus()
    ctx = context(emu, tmp_path, batch=True)
    contexts = ctx.contextualize(corp, chunks)
    assert all(x.text.startswith("This chunk is from") for x in contexts)
    assert len(emu.batches) == 3
    batched = [r for _, r in ctx.calls if r.batch]
    assert len(batched) == 7
    assert usage_metrics("", ctx.calls)["cache_read_share_of_max"] == 1.0


def test_contexts_stopped_by_the_output_limit_are_counted_and_said(emu, key_env, tmp_path, caplog):
    corp, chunks = corpus()
    whole = context(emu, tmp_path, concurrency=4)
    whole.contextualize(corp, chunks)
    assert whole.stats["contexts_cut_by_max_tokens"] == 0  # answers shorter than 60 tokens
    assert not [r for r in caplog.records if "max_tokens" in r.getMessage()]
    short = PromptVariant(
        name="short", document_template=PROMPT.document_template,
        chunk_template=PROMPT.chunk_template, max_tokens=4,
    )  # fmt: skip
    cut = LLMContext(short, provider(emu), str(tmp_path / "contexts.sqlite"), concurrency=4)
    contexts = cut.contextualize(corp, chunks)
    # the emulator stops every answer at 4 tokens (stop_reason max_tokens)
    assert all(x.usage.output == 4 for x in contexts)
    assert cut.stats["contexts_cut_by_max_tokens"] == 10
    assert cut.stats["contexts_cut_by_max_tokens_share"] == 1.0
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert said == [
        "context: 10 of 10 contexts stopped at prompt.max_tokens=4, cut mid-sentence; raise "
        "prompt.max_tokens (their chunks are contextualized again)"
    ]
