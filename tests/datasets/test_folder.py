"""FolderLoader: documents from a folder, gold from qa.json in its three forms, exact errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from situate.chunking.markdown import MarkdownChunker
from situate.datasets.folder import FolderLoader
from situate.errors import SituateError
from situate.records import Span

GUIDE = "# Guide\n\nInstall with pip.\n\n## Usage\n\nRun situate chunks.\n"
# chunk 0: "# Guide\n\nInstall with pip." = 0..26; chunk 1: "## Usage\n\nRun situate chunks." = 28..57
PLAIN = "Plain notes here.\nSecond line.\n"  # "Second line" = 18..29


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    (folder / "notes").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "notes" / "plain.txt").write_text(PLAIN, encoding="utf-8")
    (folder / "notes" / "data.json").write_text("{}", encoding="utf-8")  # not .md/.txt: skipped
    (folder / "image.png").write_bytes(b"\x89PNG\x00\x00")  # binary, other extension: skipped
    (folder / ".hidden" / "secret.md").write_text("# Secret\n", encoding="utf-8")
    return folder


def write_qa(root: Path, records: Any) -> Path:
    path = root / "qa.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def load_error(root: Path, **kwargs: Any) -> str:
    with pytest.raises(SituateError) as e:
        FolderLoader(str(root), **kwargs).load()
    message = str(e.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------- documents


def test_documents(root: Path) -> None:
    corpus = FolderLoader(str(root), name="kb").load()
    assert corpus.name == "kb"
    assert [d.doc_id for d in corpus.documents] == ["guide.md", "notes/plain.txt"]
    assert [d.title for d in corpus.documents] == ["Guide", "plain"]  # file name made readable
    assert [d.text for d in corpus.documents] == [GUIDE, PLAIN]
    assert corpus.documents[0].source == str(root / "guide.md")
    assert corpus.questions == []  # no qa.json
    assert corpus.prechunks is None


def test_sorted_by_relative_path_and_title_skips_fenced_heading(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.md").write_text("```\n# not this\n```\n## Real title\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("plain", encoding="utf-8")
    (tmp_path / "c.MD").write_text("\ufeff# Bom title\n", encoding="utf-8")
    docs = FolderLoader(str(tmp_path)).load().documents
    assert [d.doc_id for d in docs] == ["a.txt", "b/z.md", "c.MD"]
    assert [d.title for d in docs] == ["a", "Real title", "Bom title"]
    assert docs[2].text == "# Bom title\n"  # byte-order mark dropped


def test_not_utf8_file(root: Path) -> None:
    bad = root / "notes" / "latin1.txt"
    bad.write_bytes("caf\u00e9".encode("latin-1"))
    assert load_error(root) == f"{bad}: not UTF-8 text (byte 3); convert it to UTF-8 or remove it"


def test_nul_bytes_file(root: Path) -> None:
    bad = root / "binary.md"
    bad.write_bytes(b"text\x00more")
    assert load_error(root) == (
        f"{bad}: contains NUL bytes (binary file?); convert it to UTF-8 text or remove it"
    )


@pytest.mark.parametrize("content", ["", " \n\t\n"])
def test_empty_file(root: Path, content: str) -> None:
    bad = root / "empty.md"
    bad.write_text(content, encoding="utf-8")
    assert load_error(root) == f"{bad}: empty file (no text); add text to it or remove it"


def test_folder_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert load_error(missing) == (
        f"{missing}: dataset folder not found; set dataset.path=<folder of documents>"
    )
    afile = tmp_path / "file.md"
    afile.write_text("x", encoding="utf-8")
    assert load_error(afile) == (f"{afile}: not a folder; set dataset.path=<folder of documents>")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.rst").write_text("x", encoding="utf-8")
    assert load_error(empty) == (
        f"{empty}: no documents (.pdf, .html, .htm, .docx, .md, .markdown, .txt) found, only "
        "files with other suffixes (.rst); add some, map a suffix with +"
        "dataset.suffixes.<suffix>=<parser>, or set dataset.path"
    )


# ---------------------------------------------------------------- gold


def test_three_gold_kinds(root: Path) -> None:
    write_qa(
        root,
        [
            {"q": "How to install?", "gold": ["guide.md#0"]},
            {
                "q": "Usage?",
                "gold": ["guide.md#1", {"path": "notes/plain.txt", "start": 0, "end": 5}],
            },
            {"id": "second", "q": "Which line?", "gold": ["Second line"]},
            {"q": "Run what?", "gold": [{"quote": "Run situate", "path": "guide.md"}]},
        ],
    )
    questions = FolderLoader(str(root)).load().questions
    assert [q.qid for q in questions] == ["q0", "q1", "second", "q3"]
    assert [q.text for q in questions] == ["How to install?", "Usage?", "Which line?", "Run what?"]
    assert [q.gold for q in questions] == [
        (Span("guide.md", 0, 26, "span"),),
        (Span("guide.md", 28, 57, "span"), Span("notes/plain.txt", 0, 5, "span")),
        (Span("notes/plain.txt", 18, 29, "answer_text"),),
        (Span("guide.md", 38, 49, "answer_text"),),
    ]
    assert [q.answer for q in questions] == ["", "", "Second line", "Run situate"]


def test_chunk_references_match_markdown_chunker_ids(root: Path) -> None:
    write_qa(root, [{"q": "?", "gold": ["guide.md#0", "guide.md#1"]}])
    loader = FolderLoader(str(root), max_words=3, min_words=0)
    corpus = loader.load()
    chunks = {c.chunk_id: c for c in MarkdownChunker(max_words=3, min_words=0).chunk(corpus)}
    # with max_words=3: "# Guide" | "Install with pip." | "## Usage" | "Run situate chunks."
    assert [chunks[f"guide.md#{i}"].text for i in range(4)] == [
        "# Guide",
        "Install with pip.",
        "## Usage",
        "Run situate chunks.",
    ]
    assert corpus.questions[0].gold == (
        Span("guide.md", 0, 7, "span"),
        Span("guide.md", 9, 26, "span"),
    )


def test_explicit_qa_path(root: Path, tmp_path: Path) -> None:
    qa = tmp_path / "elsewhere.json"
    qa.write_text(json.dumps([{"q": "?", "gold": ["notes/plain.txt#0"]}]), encoding="utf-8")
    corpus = FolderLoader(str(root), qa=str(qa)).load()
    assert corpus.questions[0].gold == (Span("notes/plain.txt", 0, 30, "span"),)
    missing = tmp_path / "missing.json"
    assert load_error(root, qa=str(missing)) == (
        f"{missing}: questions file not found; set dataset.qa=<path to qa.json>"
    )


def test_records_without_gold_are_questions_without_gold(root: Path) -> None:
    write_qa(
        root,
        [
            {"q": "How to install?", "gold": ["guide.md#0"]},
            {"id": "usage", "q": "How to use it?"},
            {"q": "Anything plain?", "gold": []},
        ],
    )
    questions = FolderLoader(str(root)).load().questions
    assert [(q.qid, q.text) for q in questions] == [
        ("q0", "How to install?"), ("usage", "How to use it?"), ("q2", "Anything plain?"),
    ]  # fmt: skip
    assert [q.gold for q in questions] == [(Span("guide.md", 0, 26, "span"),), (), ()]


def test_questions_txt_one_question_per_line_and_never_a_document(root: Path) -> None:
    (root / "questions.txt").write_text("How to install?\n\n  How to use it?  \n", encoding="utf-8")
    corpus = FolderLoader(str(root)).load()
    assert [d.doc_id for d in corpus.documents] == ["guide.md", "notes/plain.txt"]
    assert [(q.qid, q.text, q.gold) for q in corpus.questions] == [
        ("q1", "How to install?", ()), ("q3", "How to use it?", ()),
    ]  # fmt: skip
    assert FolderLoader(str(root)).questions_file() == root / "questions.txt"
    write_qa(root, [{"q": "From qa.json", "gold": ["guide.md#1"]}])  # qa.json comes first
    assert [q.text for q in FolderLoader(str(root)).load().questions] == ["From qa.json"]


def test_explicit_txt_questions_file_inside_the_folder(root: Path) -> None:
    asked = root / "notes" / "asked.txt"
    asked.write_text("Second line?\n", encoding="utf-8")
    corpus = FolderLoader(str(root), qa=str(asked)).load()
    assert [d.doc_id for d in corpus.documents] == ["guide.md", "notes/plain.txt"]
    assert [(q.qid, q.gold) for q in corpus.questions] == [("q1", ())]


def gold_error(root: Path, record: dict[str, Any], index: int = 0) -> str:
    write_qa(root, [{"q": "fine", "gold": ["guide.md#0"]}] * index + [record])
    return load_error(root)


def test_unknown_path(root: Path) -> None:
    qa = root / "qa.json"
    assert gold_error(root, {"q": "?", "gold": ["missing.md#0"]}) == (
        f"{qa}: question 0 (id q0), gold 0: unknown path 'missing.md' (no such document "
        f"under {root}); use a path relative to the folder, e.g. 'guide.md'"
    )
    assert gold_error(root, {"q": "?", "gold": [{"path": "x.md", "start": 0, "end": 1}]}) == (
        f"{qa}: question 0 (id q0), gold 0: unknown path 'x.md' (no such document "
        f"under {root}); use a path relative to the folder, e.g. 'guide.md'"
    )


def test_chunk_index_out_of_range(root: Path) -> None:
    record = {"id": "k", "q": "?", "gold": ["guide.md#0", "guide.md#5"]}
    assert gold_error(root, record, index=2) == (
        f"{root / 'qa.json'}: question 2 (id k), gold 1: chunk index 5 out of range: guide.md "
        "has 2 chunk(s) (#0..#1); use one of those (`situate chunks` lists them)"
    )


@pytest.mark.parametrize(("start", "end"), [(10, 999), (5, 5), (-1, 4), (7, 3), ("0", 4)])
def test_offsets_out_of_range(root: Path, start: Any, end: Any) -> None:
    record = {"q": "?", "gold": [{"path": "guide.md", "start": start, "end": end}]}
    assert gold_error(root, record) == (
        f"{root / 'qa.json'}: question 0 (id q0), gold 0: start={start!r} end={end!r} out of "
        "range for guide.md (58 characters); use integers with 0 <= start < end <= 58"
    )


def test_quote_matching_nothing(root: Path) -> None:
    qa = root / "qa.json"
    assert gold_error(root, {"q": "?", "gold": ["zebra"]}) == (
        f"{qa}: question 0 (id q0), gold 0: quote 'zebra' matches no text in any file; "
        'copy it exactly from a file or give {"path", "start", "end"}'
    )
    record = {"q": "?", "gold": [{"quote": "Second line", "path": "guide.md"}]}
    assert gold_error(root, record) == (
        f"{qa}: question 0 (id q0), gold 0: quote 'Second line' matches no text in guide.md; "
        'copy it exactly from the file or give {"path", "start", "end"}'
    )


def test_ambiguous_quote(root: Path) -> None:
    assert gold_error(root, {"q": "?", "gold": ["e"]}) == (
        f"{root / 'qa.json'}: question 0 (id q0), gold 0: quote 'e' is ambiguous: it occurs "
        'in 2 files (guide.md, notes/plain.txt); write it as {"quote": ..., "path": ...}'
    )


def test_missing_fields(root: Path) -> None:
    qa = root / "qa.json"
    assert gold_error(root, {"gold": ["guide.md#0"]}) == (
        f"{qa}: question 0 (id q0): missing field(s) q (fields present: gold); rename or add them"
    )
    assert gold_error(root, {"id": "z", "question": "?"}, index=1) == (
        f"{qa}: question 1 (id z): missing field(s) q, gold (fields present: id, question); "
        "rename or add them"
    )


def test_gold_that_is_not_a_list(root: Path) -> None:
    assert gold_error(root, {"q": "?", "gold": "guide.md#0"}) == (
        f'{root / "qa.json"}: question 0 (id q0): "gold" must be a list; write ["file.md#N", '
        '...], a list of quotes or {"path", "start", "end"} entries, or leave it out for a '
        "question without gold"
    )


def test_a_misnamed_gold_field_is_not_taken_for_no_gold(root: Path) -> None:
    assert gold_error(root, {"q": "?", "golds": ["guide.md#0"]}) == (
        f"{root / 'qa.json'}: question 0 (id q0): missing field(s) gold (fields present: golds, "
        "q); rename or add them"
    )


def test_unrecognised_gold_entry(root: Path) -> None:
    assert gold_error(root, {"q": "?", "gold": [{"file": "guide.md"}]}) == (
        f"{root / 'qa.json'}: question 0 (id q0), gold 0: unrecognised gold entry "
        "{'file': 'guide.md'}; use \"file.md#N\", \"file.pdf#page=N\", a quote string, "
        '{"quote": ..., "path": ...} '
        'or {"path": ..., "start": ..., "end": ...}'
    )


def test_qa_not_a_list(root: Path) -> None:
    write_qa(root, {"q": "?", "gold": []})
    assert load_error(root) == (
        f"{root / 'qa.json'}: expected a JSON list of questions, got dict; "
        'make it [{"q": ..., "gold": [...]}, ...]'
    )


@pytest.mark.parametrize("text", ["", "  \n", None])
def test_empty_question_text(root: Path, text: Any) -> None:
    message = gold_error(root, {"id": "e", "q": text, "gold": ["guide.md#0"]})
    where = f"{root / 'qa.json'}: question 0 (id e)"
    if text is None:
        assert message == f"{where}: question text None is not a string; write the question as text"
    else:
        assert message == f"{where}: empty question text; write the question or remove the record"


def test_duplicate_question_ids(root: Path) -> None:
    write_qa(
        root,
        [
            {"id": "q1", "q": "How to install?", "gold": ["guide.md#0"]},
            {"id": "q2", "q": "How to run?", "gold": ["guide.md#1"]},
            {"id": "q1", "q": "Second line?", "gold": ["Second line"]},
        ],
    )
    assert load_error(root) == (
        f"{root / 'qa.json'}: question 2: duplicate question id 'q1' (question 0 has it too); "
        "give every question its own id"
    )
    # a record without "id" is q<index>: here question 1, taken already by question 0
    write_qa(
        root,
        [{"id": "q1", "q": "How?", "gold": ["guide.md#0"]}, {"q": "Run?", "gold": ["guide.md#1"]}],
    )
    assert "question 1: duplicate question id 'q1' (question 0 has it too)" in load_error(root)


# ---------------------------------------------------------------- the docs' qa.json

SETUP = "# Setup\n\nInstall the CLI with pip install situate.\n\n## Proxies\n\nBehind a proxy, set HTTPS_PROXY first.\n"
# chunk 0: "# Setup ... situate." = 0..50; chunk 1: "## Proxies ... first." = 52..102; HTTPS_PROXY = 84..95
SERVER = "# Server\n\nThe server listens on port 8765 by default.\n"  # "port 8765" = 32..41


def docs_qa_example() -> str:
    page = Path(__file__).resolve().parents[2] / "docs" / "own-documents.md"
    section = page.read_text(encoding="utf-8").split(
        "## A folder of documents (`dataset=folder`)", 1
    )[1]
    return section.split("```json\n", 1)[1].split("```", 1)[0]


def test_the_readme_qa_json_example_loads_as_documented(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "setup.md").write_text(SETUP, encoding="utf-8")
    (root / "guide" / "server.md").write_text(SERVER, encoding="utf-8")
    (root / "qa.json").write_text(docs_qa_example(), encoding="utf-8")
    questions = FolderLoader(str(root)).load().questions
    assert [q.qid for q in questions] == ["install", "port", "q2", "q3"]  # q<position> by default
    assert [q.gold for q in questions] == [
        (Span("guide/setup.md", 52, 102, "span"),),
        (Span("guide/server.md", 32, 41, "answer_text"),),
        (Span("guide/setup.md", 0, 40, "span"), Span("guide/setup.md", 84, 95, "answer_text")),
        (),  # no gold: searched and judged, never scored
    ]


def test_qa_json_written_as_json_lines(root: Path) -> None:
    (root / "qa.json").write_text(
        '{"q": "How to install?", "gold": ["guide.md#0"]}\n{"q": "Usage?", "gold": ["guide.md#1"]}\n',
        encoding="utf-8",
    )
    assert load_error(root) == (
        f"{root / 'qa.json'}:2: this is JSON Lines (one JSON value per line), but dataset=folder "
        'reads one JSON list of questions ([{"q": ..., "gold": [...]}, ...]); put the records in '
        "one list, separated by commas, or write one question per line in a .txt file"
    )


def test_qa_records_in_a_jsonl_file(root: Path, tmp_path: Path) -> None:
    """A .jsonl questions file is a generated set: qa.json records there name the format wanted."""
    qa = tmp_path / "questions.jsonl"
    qa.write_text('{"q": "How to install?", "gold": ["guide.md#0"]}\n', encoding="utf-8")
    assert load_error(root, qa=str(qa)) == (
        f'{qa}:1: a qa.json record ({{"q": ..., "gold": [...]}}), but a .jsonl questions file is '
        "read as `situate questions generate` writes it; put the records in one JSON list in a "
        ".json file (docs/own-documents.md)"
    )


def test_files_with_identical_parsed_text_are_named_in_one_warning(tmp_path: Path, caplog) -> None:
    text = "# Glaciers\n\nIce moves downhill under its own weight.\n"
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text(text)
    (tmp_path / "sub" / "a copy.md").write_text(text)
    (tmp_path / "a.txt").write_text("Something else entirely.\n")
    with caplog.at_level("WARNING", logger="situate"):
        FolderLoader(str(tmp_path)).load()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        f"{tmp_path}: files with identical parsed text (copies?): a.md = sub/a copy.md; a quote "
        "in one is found in each, and each is retrieved as its own document"
    ]
    caplog.clear()
    (tmp_path / "sub" / "a copy.md").write_text(text + "\nOne more line.\n")
    with caplog.at_level("WARNING", logger="situate"):
        FolderLoader(str(tmp_path)).load()
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
