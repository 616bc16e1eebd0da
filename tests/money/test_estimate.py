"""``situate estimate``: the seed shape against hand arithmetic, a real corpus, the CLI path."""

from __future__ import annotations

from fractions import Fraction

import pytest

from conftest import COOKBOOK
from situate.commands.estimate import main as estimate_main
from situate.contexts.prompts import PromptVariant
from situate.errors import SituateError
from situate.money.estimate import estimate, estimate_corpus, estimate_shape, render
from situate.money.pricing import PriceBook, load_price_book
from situate.money.shapes import Shape
from situate.money.usd import usd
from situate.records import Chunk, Corpus, Document

TOL = 1e-12
SEED = Shape(
    document_tokens=8000,
    chunk_tokens=800,
    instruction_tokens=50,
    output_tokens=100,
    total_document_tokens=1_000_000,
)


@pytest.fixture(scope="module")
def book() -> PriceBook:
    return load_price_book()


# ---------------------------------------------------------------- the seed shape


def test_seed_shape_on_haiku_5_5(book):
    r = estimate_shape(book.price("claude-haiku-5-5"), SEED)
    assert (r.documents, r.calls) == (125, 1250)
    assert r.tokens == {
        "cache_write": 1_000_000,  # 125 docs x 8,000
        "cache_read": 9_000_000,  # 125 docs x 9 x 8,000
        "uncached": 1_062_500,  # 1,250 x (800 + 50)
        "output": 125_000,  # 1,250 x 100
    }
    b = r.breakdown()
    assert abs(b["writes"] - 0.125) < TOL
    assert abs(b["reads"] - 0.09) < TOL
    assert abs(b["uncached"] - 0.10625) < TOL
    assert abs(b["output"] - 0.0625) < TOL
    assert r.cached.dollars == Fraction("0.38375")  # exact, not merely close
    assert abs(r.with_caching - 0.38375) < TOL
    assert abs(r.without_caching - 1.16875) < TOL  # 1,250 x 8,850 x $0.10 + $0.0625
    assert usd(r.cached.dollars) == "$0.3838"  # 4 significant digits, as every USD figure
    assert usd(r.uncached.dollars) == "$1.169"
    # first calls at full price: 125 x (8,000 x 0.125 + 850 x 0.10 + 100 x 0.50) = $0.141875;
    # the other 1,125 batched: 1,125 x (8,000 x 0.01 + 850 x 0.10 + 100 x 0.50) x 0.5 = $0.1209375
    assert abs(r.with_batches - 0.2628125) < TOL
    assert abs(r.per_million_document_tokens - 0.38375) < TOL
    assert not r.docs_below_minimum and not r.docs_long_prompt


def test_seed_shape_arithmetic_lines(book):
    lines = estimate_shape(book.price("claude-haiku-5-5"), SEED).lines()
    text = "\n".join(lines)
    for expected in (
        "documents: 1,000,000 tok / 8,000 tok = 125 docs; chunks: 8,000 tok / 800 tok = 10 per "
        "doc; calls: 125 docs x 10 = 1,250",
        "each call: document 8,000 tok (cached prefix) + chunk 800 tok + instructions 50 tok in, "
        "100 tok out",
        "writes: 125 docs x 8,000 tok x $0.125/Mtok = $0.1250",
        "reads: 1,125 calls x 8,000 tok x $0.01/Mtok = $0.09000",
        "uncached: 1,250 calls x (800 + 50) tok x $0.10/Mtok = $0.1063",  # $0.10625
        "output: 1,250 calls x 100 tok x $0.50/Mtok = $0.06250",
        "with caching: $0.1250 + $0.09000 + $0.1063 + $0.06250 = $0.3838",  # $0.38375
        "uncached: 1,250 calls x (8,000 + 800 + 50) tok x $0.10/Mtok = $1.106",  # $1.10625
        "without caching: $1.106 + $0.06250 = $1.169",  # $1.16875
        "reads (batched): 1,125 calls x 8,000 tok x $0.01/Mtok x 0.5 (batch) = $0.04500",
        "with batches:",
    ):
        assert expected in text, expected


def test_seed_shape_on_claude_3_haiku(book):
    r = estimate_shape(book.price("claude-3-haiku-20240307"), SEED)
    b = r.breakdown()
    assert abs(b["writes"] - 0.30) < TOL  # 1,000,000 x $0.30 (1.2x input)
    assert abs(b["reads"] - 0.27) < TOL  # 9,000,000 x $0.03
    assert abs(b["uncached"] - 0.265625) < TOL  # 1,062,500 x $0.25
    assert abs(b["output"] - 0.15625) < TOL  # 125,000 x $1.25
    assert r.cached.dollars == Fraction("0.991875")
    assert usd(r.cached.dollars) == "$0.9919"  # $0.991875
    assert abs(r.without_caching - 2.921875) < TOL
    assert abs(r.with_batches - 0.66703125) < TOL
    # Anthropic's published $1.02 is reproduced exactly by one more cache read per document
    # (all 10 chunks read, on top of the write): 125 x 8,000 x $0.03 = $0.03 more
    assert r.cached.dollars + Fraction(125 * 8000 * 3, 100 * 10**6) == Fraction("1.021875")


def test_seed_shape_on_gpt_4_1_mini(book):
    r = estimate_shape(book.price("gpt-4.1-mini"), SEED)
    # writes at the input rate: 1M x $0.40 + 9M x $0.10 + 1.0625M x $0.40 + 0.125M x $1.60
    assert r.cached.dollars == Fraction("1.925")


def test_documents_over_the_long_prompt_tier(book):
    shape = Shape(120_000, 12_000, 50, 100, 1_200_000)  # 10 docs x 10 calls of 132,050 tokens
    r = estimate_shape(book.price("claude-haiku-5-5"), shape)
    b = r.breakdown()
    assert abs(b["writes"] - 10 * 120_000 * 0.625 / 1e6) < TOL  # $0.75
    assert abs(b["reads"] - 90 * 120_000 * 0.05 / 1e6) < TOL  # $0.54
    assert abs(b["uncached"] - 100 * 12_050 * 0.50 / 1e6) < TOL  # $0.6025
    assert abs(b["output"] - 100 * 100 * 2.50 / 1e6) < TOL  # $0.025
    assert abs(r.with_caching - 1.9175) < TOL
    assert r.docs_long_prompt
    text = "\n".join(r.lines() + r.notes)
    assert (
        "writes (long-prompt tier): 10 docs x 120,000 tok x $0.125/Mtok x 5 (long prompt)" in text
    )
    assert "long-prompt tier (every rate x 5)" in text


def test_documents_under_the_minimum_are_never_cached(book):
    shape = Shape(400, 100, 50, 100, 4000)  # 10 docs of 4 calls, under Haiku 5.5's 512
    r = estimate_shape(book.price("claude-haiku-5-5"), shape)
    assert r.tokens["cache_write"] == 0 and r.tokens["cache_read"] == 0
    assert r.tokens["uncached"] == 40 * 550
    assert abs(r.with_caching - (40 * 550 * 0.10 + 40 * 100 * 0.50) / 1e6) < TOL
    assert r.cached.dollars == r.uncached.dollars
    assert r.docs_below_minimum
    assert any("minimum cacheable prefix of 512 tokens" in n for n in r.notes)


def test_1h_ttl_and_fractional_shapes(book):
    r = estimate_shape(book.price("claude-haiku-5-5"), SEED, ttl="1h")
    assert abs(r.breakdown()["writes"] - 0.20) < TOL  # 1,000,000 x $0.20
    odd = estimate_shape(book.price("claude-haiku-5-5"), Shape(7000, 800, 50, 100, 1_000_000))
    assert odd.documents == Fraction(1_000_000, 7000) and odd.calls == Fraction(1_000_000, 800)
    # linear in the corpus: ten times the documents, ten times the cost
    big = estimate_shape(book.price("claude-haiku-5-5"), Shape(7000, 800, 50, 100, 10_000_000))
    assert big.cached.dollars == 10 * odd.cached.dollars


def test_shape_validation():
    with pytest.raises(SituateError, match="exceeds estimate.document_tokens"):
        Shape(800, 8000, 50, 100, 1_000_000)
    with pytest.raises(SituateError, match="estimate.chunk_tokens must be > 0"):
        Shape(800, 0, 50, 100, 1_000_000)
    with pytest.raises(SituateError, match="missing output_tokens"):
        Shape.from_config({"document_tokens": 1, "chunk_tokens": 1, "instruction_tokens": 1,
                           "total_document_tokens": 1})  # fmt: skip
    with pytest.raises(SituateError, match=r"is not a chat model \(kind: embedding\)"):
        estimate_shape(load_price_book().price("text-embedding-3-small"), SEED)


# ---------------------------------------------------------------- a corpus


class WordCounter:
    """A provider whose exact counter counts words (stands in for Anthropic's endpoint)."""

    name = "anthropic"
    model = "claude-haiku-4-5"
    counting_endpoint = True
    api_key_env = "SITUATE_TEST_FAKE_KEY"
    cache_ttl = "5m"
    context_window = 200_000

    def __init__(self):
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return len(text.split())


def tiny():
    text = "a b c d e f g h"
    doc = Document("d1", text, title="D")
    chunks = [
        Chunk("d1#0", "d1", 0, 0, 7, "a b c d"),
        Chunk("d1#1", "d1", 1, 8, 15, "e f g h"),
    ]
    prompt = PromptVariant(
        name="t", document_template="<d>\n{document}\n</d>", chunk_template="C: {chunk} end",
        max_tokens=7,
    )  # fmt: skip
    return Corpus("tiny", [doc], []), chunks, prompt


def test_corpus_with_the_provider_counter_when_its_key_is_set(book, monkeypatch):
    monkeypatch.setenv("SITUATE_TEST_FAKE_KEY", "x")
    corpus, chunks, prompt = tiny()
    llm = WordCounter()
    r = estimate(
        book.price("claude-haiku-4-5"), corpus=corpus, chunks=chunks, prompt=prompt, llm=llm,
        min_cacheable_tokens=5,
    )  # fmt: skip
    assert r.counter.startswith("anthropic token counter (exact")
    assert llm.counted  # the provider counted
    # document block "<d> a..h </d>" = 10 words (2 of template), chunk block = chunk + 2 words
    assert r.document_tokens == 8 and r.instruction_tokens == 4
    assert r.tokens == {"cache_write": 10, "cache_read": 10, "uncached": 12, "output": 14}
    # 10 x $1.25 + 10 x $0.10 + 12 x $1 + 14 x $5 = $95.5 per million
    assert r.cached.dollars == Fraction("95.5") / 10**6
    assert r.uncached.dollars == Fraction(2 * (10 + 6) + 14 * 5, 10**6)  # 2 x 16 in + output


def test_corpus_falls_back_to_the_local_tokenizer_without_a_key(book, monkeypatch):
    monkeypatch.delenv("SITUATE_TEST_FAKE_KEY", raising=False)
    corpus, chunks, prompt = tiny()
    llm = WordCounter()
    r = estimate_corpus(book.price("claude-haiku-4-5"), corpus, chunks, prompt, llm)
    assert not llm.counted
    assert r.counter.startswith("local: WordPiece of all-MiniLM-L6-v2")
    with pytest.raises(SituateError, match="counter=provider needs SITUATE_TEST_FAKE_KEY"):
        estimate_corpus(book.price("claude-haiku-4-5"), corpus, chunks, prompt, llm,
                        counter="provider")  # fmt: skip


def test_cookbook_first_three_documents_with_the_local_tokenizer(monkeypatch, capsys):
    if not (COOKBOOK / "codebase_chunks.json").exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    from hydra.utils import instantiate

    from situate.config.compose import compose

    cfg = compose(
        [f"data_dir={COOKBOOK.parent}", "dataset=cookbook", "dataset.max_documents=3",
         "chunker=prechunked", "prompt=default", "llm=claude_3_haiku"]
    )  # fmt: skip
    corpus = instantiate(cfg.dataset).load()
    chunks = instantiate(cfg.chunker).chunk(corpus)
    r = estimate_corpus(
        load_price_book().price("claude-3-haiku-20240307"), corpus, chunks,
        instantiate(cfg.prompt), instantiate(cfg.llm),
    )  # fmt: skip
    assert r.mode == "corpus" and r.documents == 3 and r.calls == len(chunks) == 27
    assert "local" in r.counter and "all-MiniLM-L6-v2" in r.counter
    # doc_2 and doc_3 are ~1,500 tokens: under Claude 3 Haiku's 2,048, never cached
    assert r.docs_below_minimum == ["doc_2", "doc_3"]
    assert any("under claude-3-haiku-20240307's minimum" in n for n in r.notes)
    assert r.tokens["cache_write"] > 2048  # doc_1 is written once and read by its 12 other calls
    assert r.with_caching < r.without_caching
    render(r)
    out = capsys.readouterr().out
    assert "tokens counted with: local: WordPiece" in out
    assert "doc_2, doc_3" in out


# ---------------------------------------------------------------- the command


def test_cli_prints_the_seed_figures(capsys):
    assert estimate_main(["estimate=seed_shape", "llm=claude_haiku_5_5"]) == 0
    out = capsys.readouterr().out
    assert "$0.3838" in out and "$1.169" in out
    assert "writes: 125 docs x 8,000 tok x $0.125/Mtok = $0.1250" in out
    assert estimate_main(["estimate=seed_shape", "pricing=default", "llm=claude_3_haiku"]) == 0
    out = capsys.readouterr().out
    assert "$0.9919" in out and "$2.922" in out  # $0.991875 and $2.921875


def test_cli_unknown_model_is_a_one_line_error():
    with pytest.raises(SituateError, match="no price for model 'claude-unknown-9'"):
        estimate_main(["estimate=seed_shape", "llm=claude_haiku_4_5", "llm.model=claude-unknown-9"])


def test_cli_corpus_takes_output_tokens_without_becoming_a_shape(monkeypatch, capsys):
    if not (COOKBOOK / "codebase_chunks.json").exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    args = [f"data_dir={COOKBOOK.parent}", "dataset.max_documents=3", "llm=claude_3_haiku",
            "+estimate={output_tokens:53,counter:local}"]  # fmt: skip
    assert estimate_main(args) == 0
    out = capsys.readouterr().out
    assert "3 documents, 27 calls (corpus)" in out
    assert "tok of instructions in, 53 tok out" in out
    assert "output: 27 calls x 53 tok x $1.25/Mtok = $0.001789" in out  # 1,431 tok: $0.00178875


def test_cli_corpus_times_each_stage_at_this_machines_rates(monkeypatch, capsys):
    """27 chunks: embedded at a measured 13.5/s (2 s), contexts never measured here."""
    if not (COOKBOOK / "codebase_chunks.json").exists():
        pytest.skip(f"cookbook data not found at {COOKBOOK}")
    from datetime import date

    from situate.stores.rates import record_rate

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    record_rate("texts embedded by all-MiniLM-L6-v2", 135, 10.0, date(2026, 12, 8))
    args = [f"data_dir={COOKBOOK.parent}", "dataset.max_documents=3", "llm=claude_3_haiku",
            "+estimate={counter:local}"]  # fmt: skip
    assert estimate_main(args) == 0
    out = capsys.readouterr().out
    assert "time on this machine" in out
    row = next(line for line in out.splitlines() if "embedding 27 texts" in line)
    assert "13.5/s (2026-12-08)" in row and "0:00:02" in row  # 27 / 13.5
    assert "contexts of 27 chunks" in out
    assert "not measured here yet: contexts written by claude-3-haiku-20240307 at " in " ".join(
        out.split()
    )
