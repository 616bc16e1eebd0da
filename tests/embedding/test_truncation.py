"""What a model's window cuts: counted by hand on word-counted texts, and per embedder option on
texts of known token counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from situate.config.compose import compose, instantiate_stage
from situate.embedding.truncation import TokenWindow, Truncation, measure, warnings

CONF = Path(__file__).parents[2] / "conf"


def words(keeps: str = "head", tokens: int = 6, with_query: bool = False) -> TokenWindow:
    """A word a token plus two special tokens ([CLS] ... [SEP])."""
    return TokenWindow(
        tokens, keeps, "words-model", "words", lambda ts: [len(t.split()) + 2 for t in ts],
        "embedder.max_seq_length", 12, with_query,
    )  # fmt: skip


# texts of 3, 5 and 9 words: 5, 7 and 11 tokens with the special ones
CHUNKS = ["a b c", "a b c d e", "a b c d e f g h i"]


def test_a_window_counts_texts_past_it_and_the_tokens_it_drops():
    found = measure(words(tokens=6), CHUNKS)
    # 5 <= 6; 7 - 6 = 1; 11 - 6 = 5
    assert found == Truncation(
        texts=3, truncated=2, tokens_over=6, tokens_over_max=5, contexts=0, contexts_cut=0,
        window=6, truncated_rows=(1, 2),
    )  # fmt: skip
    assert Truncation.from_json(found.to_json()) == found
    assert found.metrics() == {
        "texts_truncated": 2.0,
        "texts_truncated_share": 2 / 3,
        "texts_truncated_tokens": 6.0,
        "texts_truncated_tokens_max": 5.0,
    }


def test_a_context_after_the_chunk_is_lost_with_any_cut_and_one_before_only_when_too_long():
    contexts = ["x y", "", "x y z w v"]  # 2 words, none, 5 words (7 tokens alone)
    after = [f"{c} {x}".strip() for c, x in zip(CHUNKS, contexts, strict=True)]
    # texts: 5 + 2 = 7, 7, 9 + 5 + 2 = 16 tokens; window 6 cuts all three
    tail = measure(words(tokens=6), after, contexts, context_at="tail")
    assert (tail.truncated, tail.contexts, tail.contexts_cut) == (3, 2, 2)
    before = [f"{x} {c}".strip() for c, x in zip(CHUNKS, contexts, strict=True)]
    head = measure(words(tokens=6), before, contexts, context_at="head")
    # at the kept end only the 7-token context is longer than the window of 6
    assert (head.truncated, head.contexts, head.contexts_cut) == (3, 2, 1)
    assert head.cut_rows == (2,) and tail.cut_rows == (0, 2)
    assert head.metrics()["contexts_truncated_share"] == 1 / 2
    # a window that keeps the tail (Cohere's truncate=START) loses the context before the chunk
    start = measure(words(keeps="tail", tokens=6), before, contexts, context_at="head")
    assert start.contexts_cut == 2


def test_a_rerankers_query_takes_its_share_of_the_window():
    window = words(tokens=12, with_query=True)
    # questions of 2, 3 and 6 words: 4, 5 and 8 tokens; the median 5 takes 5 - 1 = 4 tokens
    assert window.query_share(["q r", "q r s", "q r s t u v"]) == 4
    found = measure(window, CHUNKS, reserved=4)  # 12 - 4 = 8 left: only the 11-token text is cut
    assert (found.truncated, found.tokens_over, found.window) == (1, 3, 8)
    assert words(tokens=12).query_share(["q r"]) == 0  # an embedder reads no query with a text


def test_the_warnings_name_what_was_cut_and_the_fix():
    contexts = ["x y", "x y", "x y"]
    after = [f"{c} {x}" for c, x in zip(CHUNKS, contexts, strict=True)]
    found = measure(words(tokens=6), after, contexts, context_at="tail")
    lines = warnings("dense", words(tokens=6), found)
    assert lines == [
        "dense index: words-model's window of 6 tokens cut the context of 3 of 3 chunks "
        "(100.0%), so what reaches the dense index lacks their context; set "
        "context.placement=before (the context first, where the window keeps it), or set "
        "embedder.max_seq_length=12 (the most the model reads)",
        "dense index: 3 of 3 texts (100.0%) are longer than words-model's window of 6 tokens; 4 "
        "tokens of each on average are never read (texts_truncated_tokens); lower chunker.size, "
        "or set embedder.max_seq_length=12 (the most the model reads)",
    ]
    # 1 text of 21 cut (under 5%), no context cut: nothing to say
    few = measure(words(tokens=6), ["a"] * 20 + ["a b c d e"])
    assert few.truncated == 1 and warnings("dense", words(tokens=6), few) == []


HELLO = {  # text -> tokens each option counts (special tokens included where the model adds them)
    "minilm": ("hello " * 600, 602),  # WordPiece: one token a word, [CLS] and [SEP]
    "minilm_onnx": ("hello " * 600, 602),
    "openai_small": ("hello" + " hello" * 9000, 9001),  # cl100k_base: "hello", then " hello"
    "openai_large": ("hello" + " hello" * 9000, 9001),
    "cohere": ("hello " * 600, 602),  # counted locally (WordPiece), an approximation
}


@pytest.mark.parametrize("option", sorted(p.stem for p in (CONF / "embedder").glob("*.yaml")))
def test_every_embedder_option_counts_what_its_window_cuts(option, tmp_path):
    stage = instantiate_stage(compose([f"embedder={option}", f"output_dir={tmp_path}"]), "embedder")
    text, tokens = HELLO[option]  # a new option needs its row here
    window = stage.window()
    assert window.count([text, "hello"])[0] == tokens
    found = measure(window, [text, "hello"])
    assert found.metrics()["texts_truncated"] == 1.0
    assert found.tokens_over == tokens - window.tokens > 0
    assert window.keeps == "head"


@pytest.mark.parametrize(
    ("arm", "overrides", "said"),
    [
        ("contextual_embeddings", [], []),  # the defaults keep every context: nothing to say
        ("baseline", [], []),
        # 128 tokens: no context is cut (each comes first and is under 128 tokens) but 735 of
        # the 737 texts lose their end
        ("contextual_embeddings", ["embedder.max_seq_length=128"], ["735 of 737 texts"]),
        # the cookbook's order at 256 tokens: the context of 364 chunks is cut
        (
            "contextual_embeddings",
            ["context.placement=after", "embedder.max_seq_length=256"],
            ["cut the context of 364 of 737 chunks", "364 of 737 texts"],
        ),
    ],
)
def test_the_cookbook_replication_warns_only_when_its_window_cuts(
    arm, overrides, said, tmp_path, caplog
):
    from situate.running.app import build_pipeline

    cfg = compose(
        ["experiment=cookbook_replication", f"arm={arm}", f"output_dir={tmp_path}", *overrides]
    )
    pipeline = build_pipeline(cfg)
    _, chunks, contexts = pipeline.prepare({})
    caplog.clear()
    pipeline.window_cut("dense", pipeline.embedder.window(), chunks, contexts)
    lines = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(lines) == len(said)
    for line, words in zip(lines, said, strict=True):
        assert words in line
