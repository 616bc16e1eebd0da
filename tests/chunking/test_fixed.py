"""FixedChunker: windows of words or WordPiece tokens with exact, hand-computed offsets."""

from __future__ import annotations

import re

import pytest

from situate.chunking.fixed import (
    FixedChunker,
    segments,
    token_offsets,
    windows,
)
from situate.errors import SituateError
from situate.packaged import default_tokenizer_path, load_tokenizer
from situate.records import Chunk, Corpus, Document


def corpus_of(*texts: str) -> Corpus:
    docs = [Document(doc_id=f"d{i}", text=t) for i, t in enumerate(texts)]
    return Corpus(name="tiny", documents=docs, questions=[])


def spans(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunks]


def uncovered(doc: Document, chunks: list[Chunk]) -> str:
    """Non-whitespace characters of ``doc`` that no chunk covers."""
    covered = [False] * len(doc.text)
    for c in chunks:
        if c.doc_id == doc.doc_id:
            covered[c.start : c.end] = [True] * (c.end - c.start)
    return "".join(
        ch for ch, ok in zip(doc.text, covered, strict=True) if not ok and not ch.isspace()
    )


# ---------------------------------------------------------------- windows


@pytest.mark.parametrize(
    ("n", "size", "overlap", "expected"),
    [
        (7, 3, 1, [(0, 3), (2, 5), (4, 7)]),
        (5, 3, 1, [(0, 3), (2, 5)]),  # no trailing window [4, 5) that adds nothing
        (6, 3, 1, [(0, 3), (2, 5), (4, 6)]),  # the last window is shorter
        (5, 2, 0, [(0, 2), (2, 4), (4, 5)]),
        (2, 3, 1, [(0, 2)]),
        (3, 3, 2, [(0, 3)]),
        (0, 3, 1, []),
    ],
)
def test_windows(n: int, size: int, overlap: int, expected: list[tuple[int, int]]) -> None:
    assert windows(n, size, overlap) == expected


# ---------------------------------------------------------------- words


def test_words_size3_overlap1() -> None:
    # a=0 b=2 c=4 d=6 e=8 f=10 g=12; windows [a b c] [c d e] [e f g]
    chunks = FixedChunker(size=3, overlap=1, unit="words").chunk(corpus_of("a b c d e f g"))
    assert spans(chunks) == [(0, 5), (4, 9), (8, 13)]
    assert [c.text for c in chunks] == ["a b c", "c d e", "e f g"]
    assert [c.chunk_id for c in chunks] == ["d0#0", "d0#1", "d0#2"]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert {c.chunker for c in chunks} == {"fixed"}
    assert {c.doc_id for c in chunks} == {"d0"}


def test_words_keep_inner_whitespace_and_skip_outer() -> None:
    text = "  alpha\n\nbeta\tgamma  delta \n"
    # alpha=2..7 beta=9..13 gamma=14..19 delta=21..26
    chunks = FixedChunker(size=2, overlap=0, unit="words").chunk(corpus_of(text))
    assert spans(chunks) == [(2, 13), (14, 26)]
    assert [c.text for c in chunks] == ["alpha\n\nbeta", "gamma  delta"]


def test_words_short_and_empty_documents() -> None:
    chunks = FixedChunker(size=10, overlap=2, unit="words").chunk(corpus_of("one two", "", "  \n "))
    assert [(c.doc_id, c.start, c.end) for c in chunks] == [("d0", 0, 7)]


def test_words_ids_restart_per_document() -> None:
    chunks = FixedChunker(size=1, overlap=0, unit="words").chunk(corpus_of("x y", "z"))
    assert [c.chunk_id for c in chunks] == ["d0#0", "d0#1", "d1#0"]


# ---------------------------------------------------------------- tokens


def test_tokens_offsets_exact() -> None:
    text = "Hello, world! Tokenization works."
    # hello 0-5 , 5-6 world 7-12 ! 12-13 token 14-19 ##ization 19-26 works 27-32 . 32-33
    # size 3 / overlap 1: tokens [0,3) [2,5) [4,7) [6,8)
    chunks = FixedChunker(size=3, overlap=1, unit="tokens").chunk(corpus_of(text))
    assert spans(chunks) == [(0, 12), (7, 19), (14, 32), (27, 33)]
    assert [c.text for c in chunks] == [
        "Hello, world",
        "world! Token",
        "Tokenization works",
        "works.",
    ]


def test_tokens_offsets_are_characters_not_bytes() -> None:
    # BERT lowercases and strips accents, but offsets point into the original text
    chunks = FixedChunker(size=1, overlap=0).chunk(corpus_of("Café naïve"))
    assert spans(chunks) == [(0, 4), (5, 10)]
    assert [c.text for c in chunks] == ["Café", "naïve"]


def test_tokens_not_truncated_at_model_length() -> None:
    text = " ".join(["word"] * 1000)  # one token per word; the tokenizer file truncates at 128
    chunks = FixedChunker(size=300, overlap=50).chunk(corpus_of(text))
    # windows [0,300) [250,550) [500,800) [750,1000); word k starts at 5k
    assert spans(chunks) == [(0, 1499), (1250, 2749), (2500, 3999), (3750, 4999)]


def test_segments_cut_after_whitespace_only() -> None:
    text = "aaaa bbbb\n\ncccc dddd"
    # from 0, size 6 reaches into "bbbb": cut after the "\n\n" that follows it (at 11)
    assert segments(text, size=6) == [(0, 11), (11, 20)]
    assert segments(text, size=100) == [(0, 20)]
    assert segments("", size=6) == []
    assert segments("x" * 20, size=6) == [(0, 20)]  # no whitespace: one piece


def test_long_texts_tokenize_in_segments_exactly_as_whole() -> None:
    tok = load_tokenizer(str(default_tokenizer_path()))
    words = ["Revenue", "grew", "12%", "to", "$4.2M;", "naïve", "co-operation", "tokenization"]
    long_text = "\n".join(
        " ".join(words[(i + k) % 8] for k in range(i % 7 + 1)) for i in range(4000)
    )
    assert len(long_text) > 5 * 8192  # several segments
    texts = [long_text, "short text", long_text[:9000]]
    whole = [list(e.offsets) for e in tok.encode_batch(texts, add_special_tokens=False)]
    assert token_offsets(tok, texts) == whole


def test_defaults() -> None:
    chunker = FixedChunker()
    assert (chunker.size, chunker.overlap, chunker.unit, chunker.tokenizer) == (
        300,
        50,
        "tokens",
        None,
    )
    assert chunker.name == "fixed"


def test_tokenizer_path_override_missing(tmp_path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(SituateError) as e:
        FixedChunker(tokenizer=str(missing)).chunk(corpus_of("text"))
    assert str(e.value) == (
        f"{missing}: tokenizer file not found; pass tokenizer=<path to tokenizer.json> or use unit=words"
    )


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": 0}, "fixed chunker: size=0 is invalid; use an integer size > 0"),
        ({"size": -3}, "fixed chunker: size=-3 is invalid; use an integer size > 0"),
        ({"size": 2.5}, "fixed chunker: size=2.5 is invalid; use an integer size > 0"),
        (
            {"size": 10, "overlap": 10},
            "fixed chunker: overlap=10 is invalid; use an integer with 0 <= overlap < size (10)",
        ),
        (
            {"overlap": -1},
            "fixed chunker: overlap=-1 is invalid; use an integer with 0 <= overlap < size (300)",
        ),
        (
            {"unit": "chars"},
            "fixed chunker: unit='chars' is invalid; use unit=tokens or unit=words",
        ),
    ],
)
def test_invalid_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(SituateError) as e:
        FixedChunker(**kwargs)
    assert str(e.value) == message
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------- properties

SAMPLE = (
    "# Title\n\nSome text, with punctuation; and numbers 3.14 and 1,000.\n"
    "Second line\twith tabs.\n\n\n  Indented (parenthesised) words -- dashes.\n"
    "Ünïcödé wörds and 東京 characters.\n" * 7
)


@pytest.mark.parametrize("unit", ["words", "tokens"])
@pytest.mark.parametrize(("size", "overlap"), [(1, 0), (5, 0), (7, 3), (50, 49), (1000, 10)])
def test_chunks_cover_text_with_exact_offsets(unit: str, size: int, overlap: int) -> None:
    corpus = corpus_of(SAMPLE, "tiny", "")
    chunks = FixedChunker(size=size, overlap=overlap, unit=unit).chunk(corpus)
    for c in chunks:
        doc = corpus.document(c.doc_id)
        assert c.text == doc.text[c.start : c.end]
        assert c.text == c.text.strip()
    for doc in corpus.documents:
        assert uncovered(doc, chunks) == ""
        starts = [c.start for c in chunks if c.doc_id == doc.doc_id]
        assert starts == sorted(set(starts))  # every window moves forward


def test_words_window_has_size_words() -> None:
    chunks = FixedChunker(size=7, overlap=3, unit="words").chunk(corpus_of(SAMPLE))
    counts = [len(re.findall(r"\S+", c.text)) for c in chunks]
    assert set(counts[:-1]) == {7}
    assert 1 <= counts[-1] <= 7
