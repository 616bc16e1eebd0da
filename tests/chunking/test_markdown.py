"""MarkdownChunker: sections at headings, paragraph packing, exact offsets (hand-computed)."""

from __future__ import annotations

import pytest

from situate.chunking.markdown import MarkdownChunker, heading_title
from situate.errors import SituateError
from situate.records import Chunk, Corpus, Document


def chunk_text(text: str, max_words: int = 250, min_words: int = 0) -> list[Chunk]:
    corpus = Corpus(name="tiny", documents=[Document(doc_id="doc.md", text=text)], questions=[])
    return MarkdownChunker(max_words=max_words, min_words=min_words).chunk(corpus)


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


def uncovered(text: str, chunks: list[Chunk]) -> str:
    covered = [False] * len(text)
    for c in chunks:
        covered[c.start : c.end] = [True] * (c.end - c.start)
    return "".join(ch for ch, ok in zip(text, covered, strict=True) if not ok and not ch.isspace())


NESTED = (
    "Intro line one.\n"  # 0..15
    "\n"
    "# Install\n"  # 17..26
    "\n"
    "Use pip.\n"  # 28..36
    "\n"
    "## From source\n"  # 38..52
    "\n"
    "```bash\n"
    "# not a heading\n"
    "make\n"
    "\n"
    "make install\n"
    "```\n"  # 97..100
    "\n"
    "Then run it.\n"  # 102..114
    "\n"
    "# Usage #\n"  # 116..125
    "Call it.\n"  # 126..134
)


def test_nested_headings_and_fenced_code() -> None:
    chunks = chunk_text(NESTED)
    assert [(c.start, c.end) for c in chunks] == [(0, 15), (17, 36), (38, 114), (116, 134)]
    assert [c.heading_path for c in chunks] == [
        (),
        ("Install",),
        ("Install", "From source"),
        ("Usage",),
    ]
    assert texts(chunks) == [
        "Intro line one.",
        "# Install\n\nUse pip.",
        "## From source\n\n```bash\n# not a heading\nmake\n\nmake install\n```\n\nThen run it.",
        "# Usage #\nCall it.",
    ]
    assert [c.chunk_id for c in chunks] == ["doc.md#0", "doc.md#1", "doc.md#2", "doc.md#3"]
    assert [c.index for c in chunks] == [0, 1, 2, 3]
    assert {c.chunker for c in chunks} == {"markdown"}


def test_heading_path_pops_to_the_right_level() -> None:
    chunks = chunk_text("# A\n## B\n### C\n## D\n# E\n###### F")
    assert [c.heading_path for c in chunks] == [
        ("A",),
        ("A", "B"),
        ("A", "B", "C"),
        ("A", "D"),
        ("E",),
        ("E", "F"),
    ]
    assert texts(chunks) == ["# A", "## B", "### C", "## D", "# E", "###### F"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Title", (1, "Title")),
        ("### Deep  title ###", (3, "Deep  title")),
        ("## C#", (2, "C#")),
        ("#\tTabbed", (1, "Tabbed")),
        ("#", (1, "")),
        ("###### Six", (6, "Six")),
        ("####### Seven", None),
        ("#hashtag", None),
        (" # indented", None),
        ("text # not heading", None),
    ],
)
def test_heading_title(line: str, expected: tuple[int, str] | None) -> None:
    assert heading_title(line) == expected


def test_tilde_fence_and_unclosed_fence() -> None:
    text = "~~~\n```\n# no\n~~~\n# yes\n```\n# inside unclosed fence"
    chunks = chunk_text(text)
    assert [c.heading_path for c in chunks] == [(), ("yes",)]
    assert texts(chunks) == ["~~~\n```\n# no\n~~~", "# yes\n```\n# inside unclosed fence"]


def test_plain_text_packs_paragraphs() -> None:
    text = "one two three\n\nfour five\n\nsix seven eight nine\n"
    # paragraphs of 3, 2 and 4 words; 3 + 2 fits in 5, 4 starts a new chunk
    chunks = chunk_text(text, max_words=5, min_words=0)
    assert texts(chunks) == ["one two three\n\nfour five", "six seven eight nine"]
    assert [(c.start, c.end) for c in chunks] == [(0, 24), (26, 46)]
    assert {c.heading_path for c in chunks} == {()}


def test_small_trailing_piece_merges_into_previous() -> None:
    text = "one two three\n\nfour five\n\nsix seven eight nine\n"
    chunks = chunk_text(text, max_words=5, min_words=5)  # the 4-word tail is too small
    assert texts(chunks) == ["one two three\n\nfour five\n\nsix seven eight nine"]


def test_long_paragraph_splits_at_lines() -> None:
    text = "a b c\nd e f\ng h"  # one 8-word paragraph of 3 + 3 + 2 words
    assert texts(chunk_text(text, max_words=4)) == ["a b c", "d e f", "g h"]
    assert texts(chunk_text(text, max_words=6)) == ["a b c\nd e f", "g h"]
    assert texts(chunk_text(text, max_words=8)) == ["a b c\nd e f\ng h"]


def test_long_line_splits_at_words() -> None:
    assert texts(chunk_text("a b c d e f g", max_words=3)) == ["a b c", "d e f", "g"]
    assert texts(chunk_text("a b c d e f g", max_words=3, min_words=2)) == ["a b c", "d e f g"]


def test_heading_joins_first_chunk_of_its_section() -> None:
    # "# T" (2 words) + a 5-word line over max_words=4: the line is cut at words and packed
    chunks = chunk_text("# T\n\nw1 w2 w3 w4 w5", max_words=4)
    assert texts(chunks) == ["# T\n\nw1 w2", "w3 w4 w5"]
    assert [c.heading_path for c in chunks] == [("T",), ("T",)]


def test_chunks_never_cross_headings() -> None:
    chunks = chunk_text("# A\nx\n# B\ny\n", max_words=250, min_words=100)
    assert texts(chunks) == ["# A\nx", "# B\ny"]
    assert [c.heading_path for c in chunks] == [("A",), ("B",)]


def test_heading_only_section_and_crlf() -> None:
    text = "# A\r\n# B\r\n\r\nbody text\r\n"
    chunks = chunk_text(text)
    assert texts(chunks) == ["# A", "# B\r\n\r\nbody text"]
    assert [(c.start, c.end) for c in chunks] == [(0, 3), (5, 21)]
    assert [c.heading_path for c in chunks] == [("A",), ("B",)]


def test_blank_documents_give_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\n\t\n") == []


def test_defaults() -> None:
    chunker = MarkdownChunker()
    assert (chunker.max_words, chunker.min_words, chunker.name) == (250, 20, "markdown")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"max_words": 0},
            "markdown chunker: max_words=0 is invalid; use an integer max_words > 0",
        ),
        (
            {"min_words": -1},
            "markdown chunker: min_words=-1 is invalid; use an integer min_words >= 0",
        ),
    ],
)
def test_invalid_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(SituateError) as e:
        MarkdownChunker(**kwargs)
    assert str(e.value) == message


# ---------------------------------------------------------------- properties

LONG = "\n".join(
    [
        "Preamble words " * 30,
        "",
        "# Top",
        "Para " * 120,
        "",
        "## Sub",
        "",
        *(f"line {i} " + "w " * (i % 17) for i in range(60)),
        "",
        "```",
        "# code",
        "",
        "more code",
        "```",
        "",
        "### Deep",
        "x " * 700,
        "# Next",
        "tail",
    ]
)


@pytest.mark.parametrize("text", [NESTED, LONG, "just words\n\nand more words"])
@pytest.mark.parametrize(("max_words", "min_words"), [(1, 0), (5, 2), (40, 10), (250, 20)])
def test_chunks_cover_text_with_exact_offsets(text: str, max_words: int, min_words: int) -> None:
    chunks = chunk_text(text, max_words=max_words, min_words=min_words)
    for c in chunks:
        assert c.text == text[c.start : c.end]
        assert c.text == c.text.strip()
    assert uncovered(text, chunks) == ""
    ends = [(c.start, c.end) for c in chunks]
    assert all(a[1] <= b[0] for a, b in zip(ends, ends[1:], strict=False))  # in order, no overlap
    assert [c.index for c in chunks] == list(range(len(chunks)))
