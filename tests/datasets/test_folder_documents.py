"""dataset=folder on a folder mixing PDF, HTML, DOCX, Markdown and text, built in tmp_path:
parsed text as the document, page gold, quotes in any format, titles, bad files, a full run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from document_fixtures import (
    HANDBOOK_TEXT,
    RATE_LIMITS_HTML,
    RATE_LIMITS_TEXT,
    REPORT_PAGES,
    build_encrypted_pdf,
    build_handbook_docx,
    build_pdf,
    build_report_pdf,
)
from situate.chunking.markdown import MarkdownChunker
from situate.contexts.heading_path import HeadingPathContext
from situate.datasets.folder import FolderLoader
from situate.errors import SituateError
from situate.records import Page, Span
from test_cli import assert_one_line_error

GUIDE = "# Guide\n\nInstall with pip.\n\n## Usage\n\nRun situate chunks.\n"
FILING = "ITEM 7. MANAGEMENT'S DISCUSSION\nNet sales were 32.8 billion dollars.\n"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    build_report_pdf(root / "report.pdf")
    build_handbook_docx(root / "handbook.docx")
    (root / "rate-limits.html").write_text(RATE_LIMITS_HTML, encoding="utf-8")
    (root / "guide.md").write_text(GUIDE, encoding="utf-8")
    (root / "3M_2018_10K.txt").write_text(FILING, encoding="utf-8")
    return root


def write_qa(root: Path, gold: list[Any], questions: list[str] | None = None) -> None:
    texts = questions or ["?"] * len(gold)
    records = [
        {"id": f"g{k}", "q": q, "gold": [g]}
        for k, (g, q) in enumerate(zip(gold, texts, strict=True))
    ]
    (root / "qa.json").write_text(json.dumps(records), encoding="utf-8")


def test_every_format_is_a_document_with_a_title(kb: Path, caplog) -> None:
    caplog.set_level("DEBUG", logger="situate")
    corpus = FolderLoader(str(kb)).load()
    docs = {d.doc_id: d for d in corpus.documents}
    assert list(docs) == [
        "3M_2018_10K.txt",
        "guide.md",
        "handbook.docx",
        "rate-limits.html",
        "report.pdf",
    ]
    assert {d: docs[d].title for d in docs} == {
        "3M_2018_10K.txt": "3M 2018 10K",
        "guide.md": "Guide",
        "handbook.docx": "Employee Handbook",
        "rate-limits.html": "Rate limits",
        "report.pdf": "Annual Report 2023",
    }
    assert docs["report.pdf"].text == "\n\n".join(REPORT_PAGES)
    assert docs["report.pdf"].pages == (Page(1, 0, 38), Page(2, 40, 95), Page(3, 97, 137))
    assert docs["handbook.docx"].text == HANDBOOK_TEXT
    assert docs["rate-limits.html"].text == RATE_LIMITS_TEXT
    assert docs["guide.md"].text == GUIDE and docs["3M_2018_10K.txt"].text == FILING
    assert corpus.notes == {
        "files_skipped": 0,
        "empty_pages": 0,
        "titles_from_cover": 0,
        "titles_from_metadata": 2,
        "titles_from_heading": 2,
        "titles_from_sidecar": 0,
        "titles_from_filename": 1,
    }
    assert (
        f"{kb}: 5 documents: titles from metadata 2, the first heading 2, file name 1"
    ) in caplog.text
    assert "3M_2018_10K.txt: title '3M 2018 10K' (rule: filename)" in caplog.text
    assert "report.pdf: title 'Annual Report 2023' (rule: metadata)" in caplog.text


def test_headings_of_html_and_docx_reach_the_chunks_and_heading_path(kb: Path) -> None:
    corpus = FolderLoader(str(kb)).load()
    chunks = MarkdownChunker(max_words=40, min_words=0).chunk(corpus)
    html = [c for c in chunks if c.doc_id == "rate-limits.html"]
    assert [c.heading_path for c in html] == [
        ("Rate limits",),
        ("Rate limits", "Plans"),
        ("Rate limits", "Plans", "Bursts"),
    ]
    assert html[1].text == RATE_LIMITS_TEXT[html[1].start : html[1].end]
    assert "| Pro | 600 |" in html[1].text  # the table as text rows
    contexts = {x.chunk_id: x.text for x in HeadingPathContext().contextualize(corpus, chunks)}
    # the title is said once, not "Rate limits > Rate limits > Plans"
    assert contexts["rate-limits.html#1"] == "Rate limits > Plans"
    assert contexts["handbook.docx#1"] == "Employee Handbook > Leave policy > Carry-over"
    assert contexts["3M_2018_10K.txt#0"] == "3M 2018 10K"  # not one BM25 token "3M_2018_10K.txt"


def test_gold_forms_resolve_in_the_parsed_text(kb: Path) -> None:
    write_qa(
        kb,
        [
            "report.pdf#page=2",
            {"quote": "Revenue grew 12 percent", "path": "report.pdf"},
            {"quote": "everyone gets 25 DAYS of paid leave", "path": "handbook.docx"},
            "Short bursts up to twice the limit",
            {"quote": "Net sales were 32.8 bilion dollars"},  # a typo: fuzzy
            "handbook.docx#1",
        ],
    )
    corpus = FolderLoader(str(kb), max_words=12, min_words=0).load()
    gold = [q.gold[0] for q in corpus.questions]
    # page 2 of the report: after page 1 (38 characters) and the blank-line separator
    assert gold[0] == Span("report.pdf", 40, 95, "span")
    # "Results\n" (8 characters) starts page 2 at 40
    assert gold[1] == Span("report.pdf", 48, 71, "answer_text")
    # "# Leave policy\n\n" is 16 characters; the quote, without the full stop, 35
    assert gold[2] == Span("handbook.docx", 16, 51, "answer_text")
    start = RATE_LIMITS_TEXT.index("Short bursts")
    assert gold[3] == Span("rate-limits.html", start, start + 34, "answer_text")
    # "ITEM 7. MANAGEMENT'S DISCUSSION\n" is 32 characters; the sentence, 36
    assert gold[4] == Span("3M_2018_10K.txt", 32, 68, "answer_text")
    # chunk 1 of the handbook under max_words=12: "## Carry-over" .. "Ask your manager first."
    assert gold[5].doc_id == "handbook.docx" and HANDBOOK_TEXT[gold[5].start :].startswith(
        "## Carry-over"
    )
    assert corpus.questions[4].answer == "Net sales were 32.8 bilion dollars"
    assert {k: v for k, v in corpus.notes.items() if k.startswith("quotes_")} == {
        "quotes_exact": 2,
        "quotes_fuzzy": 1,
        "quotes_normalized": 1,
    }


def gold_error(root: Path, entry: Any) -> str:
    write_qa(root, [entry])
    with pytest.raises(SituateError) as e:
        FolderLoader(str(root)).load()
    return str(e.value).split("gold 0: ", 1)[1]


def test_page_gold_errors(kb: Path) -> None:
    assert gold_error(kb, "report.pdf#page=4") == (
        "page 4 out of range: report.pdf has 3 page(s); use #page=1..#page=3"
    )
    assert gold_error(kb, "guide.md#page=1") == (
        'guide.md has no pages (only PDFs do); use "guide.md#N" (a chunk), a quote or '
        '{"path", "start", "end"}'
    )
    build_pdf(kb / "gap.pdf", ["One.", "", "Three."])
    assert gold_error(kb, "gap.pdf#page=2") == (
        "page 2 of gap.pdf has no text (blank or scanned); point the gold at a page with text "
        "or OCR the PDF"
    )


def test_a_bad_file_is_skipped_and_counted_or_stops_the_load(kb: Path) -> None:
    locked = build_encrypted_pdf(kb / "locked.pdf")
    build_pdf(kb / "gap.pdf", ["One.", "", "Three."])
    with pytest.raises(SituateError, match=f"^{locked}: encrypted PDF"):
        FolderLoader(str(kb)).load()
    corpus = FolderLoader(str(kb), on_bad_file="skip").load()
    assert "locked.pdf" not in {d.doc_id for d in corpus.documents}
    assert len(corpus.documents) == 6
    assert {k: v for k, v in corpus.notes.items() if not k.startswith("titles_")} == {
        "files_skipped": 1,
        "empty_pages": 1,
    }


@pytest.mark.slow
def test_mixed_folder_runs_end_to_end(kb: Path, tmp_path: Path) -> None:
    write_qa(
        kb,
        [
            "report.pdf#page=2",
            {"quote": "Up to 5 unused days carry over", "path": "handbook.docx"},
            "Short bursts up to twice the limit",
        ],
        [
            "How much did revenue grow in the results?",
            "How many unused leave days carry over?",
            "Are short bursts above the rate limit allowed?",
        ],
    )
    out = tmp_path / "out"
    args = [
        "dataset=folder",
        f"dataset.path={kb}",
        "chunker=markdown",
        "context=heading_path",
        "tracking=none",
        f"output_dir={out}",
    ]
    proc = run_cli("run", *args)
    assert proc.returncode == 0, proc.stderr
    (result,) = [json.loads(p.read_text()) for p in out.rglob("result.json")]
    metrics = result["metrics"]
    assert (metrics["n_documents"], metrics["n_questions"], metrics["files_skipped"]) == (5, 3, 0)
    assert metrics["quotes_exact"] == 2  # tracked with the run
    assert (metrics["titles_from_metadata"], metrics["titles_from_filename"]) == (2, 1)
    # one chunk per section: text 1, guide 2, handbook 3, rate limits 3, report 1 (no headings)
    assert metrics["n_chunks"] == 10
    # each question's words are in its gold chunk and in no other: the gold chunk ranks first
    assert metrics["mrr"] == 1.0
    assert (out / "cache" / "parsed.sqlite").is_file()


@pytest.mark.slow
def test_a_bad_file_through_the_cli_is_one_line_and_exit_2(kb: Path, tmp_path: Path) -> None:
    locked = build_encrypted_pdf(kb / "locked.pdf")
    args = ["dataset=folder", f"dataset.path={kb}", "chunker=markdown", "tracking=none"]
    proc = run_cli("chunks", *args, f"output_dir={tmp_path}")
    assert_one_line_error(proc, f"{locked}: encrypted PDF", "save a decrypted copy")


@pytest.mark.parametrize("threshold", [0, 101, "high"])
def test_quote_threshold_must_be_a_score(threshold: Any, kb: Path) -> None:
    with pytest.raises(SituateError) as e:
        FolderLoader(str(kb), quote_threshold=threshold)
    assert str(e.value) == (
        f"dataset.quote_threshold={threshold!r} is invalid; use a score in (0, 100], e.g. 90"
    )
