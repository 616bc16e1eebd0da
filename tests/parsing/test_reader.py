"""DocumentReader: a parser per suffix, the parse cache by content, bad files error or skip."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from document_fixtures import (
    FILING_COVER,
    REPORT_TITLE,
    build_cover_pdf,
    build_encrypted_pdf,
    build_handbook_docx,
    build_image_only_pdf,
    build_report_pdf,
)
from situate.errors import SituateError
from situate.parsing.reader import DEFAULT_SUFFIXES, DocumentReader, default_parsers
from situate.stores.keys import content_hash
from situate.stores.sqlite import BlobStore


def reader(**kwargs) -> DocumentReader:
    return DocumentReader(default_parsers(), DEFAULT_SUFFIXES, **kwargs)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    build_report_pdf(root / "report.pdf")
    build_handbook_docx(root / "sub" / "handbook.docx")
    (root / "notes.md").write_text("# Notes\n\nSee the report.\n", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG\x00")
    (root / "notes.md.meta.json").write_text('{"title": "Team notes"}')
    return root


def test_find_by_suffix_and_read(folder: Path) -> None:
    r = reader()
    files, other = r.find(folder)
    assert [p.relative_to(folder).as_posix() for p in files] == [
        "notes.md",
        "report.pdf",
        "sub/handbook.docx",
    ]
    assert [p.name for p in other] == ["image.png"]  # the sidecar is neither
    result = r.read(folder, files)
    docs = result.documents
    assert [d.doc_id for d in docs] == ["notes.md", "report.pdf", "sub/handbook.docx"]
    # the first heading beats the sidecar; PDF and DOCX metadata titles
    assert [d.title for d in docs] == ["Notes", REPORT_TITLE, "Employee Handbook"]
    assert [d.title_source for d in docs] == ["heading", "metadata", "metadata"]
    assert [len(d.pages) for d in docs] == [0, 3, 0]
    assert docs[1].source == str(folder / "report.pdf")
    assert (result.parsed, result.cached) == (3, 0)
    assert result.notes() == {"files_skipped": 0, "empty_pages": 0, **titles(metadata=2, heading=1)}


def titles(**counts: int) -> dict[str, int]:
    """The ``titles_from_*`` notes: every rule, 0 where none named a document."""
    rules = ("cover", "metadata", "heading", "sidecar", "filename")
    return {f"titles_from_{rule}": counts.get(rule, 0) for rule in rules}


def test_title_rules_are_recorded_and_counted(folder: Path) -> None:
    build_cover_pdf(folder / "aapl.pdf", FILING_COVER, "0000320187-21-000028")
    (folder / "plain.txt").write_text("No title of its own.\n")
    (folder / "sub" / "draft.md").write_text("Text without a heading.\n")
    (folder / "sub" / "draft.md.meta.json").write_text('{"title": "Team draft"}')
    result = reader().read_folder(folder)
    named = {d.doc_id: (d.title, d.title_source) for d in result.documents}
    assert named == {
        "aapl.pdf": ("Apple Inc. - Form 10-K 2021", "cover"),
        "notes.md": ("Notes", "heading"),
        "plain.txt": ("plain", "filename"),
        "report.pdf": (REPORT_TITLE, "metadata"),
        "sub/draft.md": ("Team draft", "sidecar"),
        "sub/handbook.docx": ("Employee Handbook", "metadata"),
    }
    assert result.title_sources() == {
        "cover": 1, "metadata": 2, "heading": 1, "sidecar": 1, "filename": 1
    }  # fmt: skip
    assert result.notes() == {
        "files_skipped": 0,
        "empty_pages": 0,
        **titles(cover=1, metadata=2, heading=1, sidecar=1, filename=1),
    }


def test_a_parse_cached_before_the_title_rules_is_not_served(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "parsed.sqlite"
    pdf = build_cover_pdf(folder / "aapl.pdf", FILING_COVER, "0000320187-21-000028")
    # what an older situate stored: its pdf identity had no title rules, its record no rule
    old_identity = {"parser": "pdf", "page_separator": "\n\n"}
    old_key = content_hash(old_identity, hashlib.sha256(pdf.read_bytes()).hexdigest())
    old = b'{"text": "x", "title": "0000320187-21-000028", "pages": [[1, 0, 1]]}'
    BlobStore(cache, "parsed").put_many([(old_key, old)])
    result = reader(cache=cache).read(folder, [pdf])
    assert (result.parsed, result.cached) == (1, 0)
    assert result.documents[0].title == "Apple Inc. - Form 10-K 2021"
    for name in ("pdf", "html", "docx", "markdown"):
        assert "titles" in default_parsers()[name].identity()


def test_suffix_mapping_is_configuration(folder: Path) -> None:
    (folder / "guide.rst").write_text("Guide\n=====\n")
    r = DocumentReader(default_parsers(), {**DEFAULT_SUFFIXES, "rst": "text", ".PNG": "text"})
    files, _ = r.find(folder)
    assert {"guide.rst", "image.png"} <= {p.name for p in files}  # ".PNG": dot and case aside
    with pytest.raises(SituateError) as e:
        DocumentReader(default_parsers(), {"rst": "restructured"})
    assert str(e.value) == (
        "dataset.suffixes.rst='restructured' names no parser; use one of "
        f"{', '.join(sorted(default_parsers()))} (dataset.parsers)"
    )


def test_cache_reparses_only_changed_files(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "parsed.sqlite"
    files, _ = reader(cache=cache).find(folder)
    first = reader(cache=cache).read(folder, files)
    assert (first.parsed, first.cached) == (3, 0)
    assert len(BlobStore(cache, "parsed")) == 3
    again = reader(cache=cache).read(folder, files)
    assert (again.parsed, again.cached) == (0, 3)
    assert again.documents == first.documents  # pages, titles and their rules survive the cache
    assert [d.title_source for d in again.documents] == ["heading", "metadata", "metadata"]
    (folder / "notes.md").write_text("# Notes\n\nSee the new report.\n", encoding="utf-8")
    changed = reader(cache=cache).read(folder, files)
    assert (changed.parsed, changed.cached) == (1, 2)
    assert changed.documents[0].text == "# Notes\n\nSee the new report.\n"
    # a parser option that changes the text is part of the key
    options = default_parsers()
    options["pdf"] = type(options["pdf"])(page_separator="\n\f\n")
    other = DocumentReader(options, DEFAULT_SUFFIXES, cache=cache).read(folder, files)
    assert (other.parsed, other.cached) == (1, 2)
    assert "\f" in other.documents[1].text


def test_bad_files_error_by_default(folder: Path) -> None:
    locked = build_encrypted_pdf(folder / "locked.pdf")
    files, _ = reader().find(folder)
    with pytest.raises(SituateError, match=f"^{locked}: encrypted PDF"):
        reader().read(folder, files)


def test_bad_files_skipped_and_counted(folder: Path, caplog) -> None:
    locked = build_encrypted_pdf(folder / "locked.pdf")
    scan = build_image_only_pdf(folder / "scan.pdf")
    huge = folder / "huge.txt"
    with open(huge, "wb") as f:  # 200 MB, sparse: never read
        f.truncate(200_000_000)
    r = reader(on_bad_file="skip")
    result = r.read(folder, r.find(folder)[0])
    assert [d.doc_id for d in result.documents] == ["notes.md", "report.pdf", "sub/handbook.docx"]
    assert result.notes() == {"files_skipped": 3, "empty_pages": 0, **titles(metadata=2, heading=1)}
    assert result.skipped == [
        f"{huge}: 200.0 MB is over dataset.max_file_mb=100; split the file or raise "
        "dataset.max_file_mb",
        f"{locked}: encrypted PDF (a password is needed to read it); save a decrypted copy "
        "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) or remove it",
        f"{scan}: no text layer on any of its 2 page(s) (a scanned or image-only PDF); run OCR "
        "on it first (e.g. `ocrmypdf in.pdf out.pdf`) or remove it",
    ]
    assert f"skipped: {locked}: encrypted PDF" in caplog.text
    assert f"{folder}: 3 bad file(s) skipped (dataset.on_bad_file=skip)" in caplog.text


def test_on_bad_file_must_be_error_or_skip() -> None:
    with pytest.raises(SituateError) as e:
        reader(on_bad_file="ignore")
    assert str(e.value) == (
        "dataset.on_bad_file='ignore' is invalid; use dataset.on_bad_file=error or skip"
    )


def test_read_folder_names_files_without_a_parser(folder: Path, caplog) -> None:
    caplog.set_level("INFO", logger="situate")
    (folder / "qa.json").write_text("[]")
    result = reader().read_folder(folder, not_documents=("qa.json",))
    assert len(result.documents) == 3
    assert (
        f"{folder}: 1 file(s) with no parser left out (.png, e.g. image.png); map a suffix with "
        "+dataset.suffixes.<suffix>=<parser> to read them"
    ) in caplog.text


def test_read_folder_where_every_document_is_bad(tmp_path: Path) -> None:
    build_encrypted_pdf(tmp_path / "locked.pdf")
    with pytest.raises(SituateError) as e:
        reader(on_bad_file="skip").read_folder(tmp_path)
    assert str(e.value) == (
        f"{tmp_path}: every document is a bad file (1 skipped); fix them (the log names each) "
        "or set dataset.path"
    )


def test_the_cache_is_written_on_first_read_only(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "parsed.sqlite"
    r = reader(cache=cache)
    assert not cache.exists()  # building a loader (e.g. `situate run --cfg job`) writes nothing
    r.read_folder(folder)
    assert len(BlobStore(cache, "parsed")) == 3


def test_max_file_mb_must_be_a_positive_size() -> None:
    with pytest.raises(SituateError) as e:
        reader(max_file_mb=0)
    assert str(e.value) == "dataset.max_file_mb=0 is invalid; use a size in MB > 0, e.g. 100"
