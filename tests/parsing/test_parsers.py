"""Each parser on a small realistic file built in tmp_path: text, title, page spans, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.utils import instantiate

from conftest import options
from document_fixtures import (
    FILING_COVER,
    HANDBOOK_TEXT,
    HANDBOOK_TITLE,
    RATE_LIMITS_HTML,
    RATE_LIMITS_TEXT,
    REPORT_PAGES,
    REPORT_TITLE,
    build_cover_pdf,
    build_encrypted_pdf,
    build_handbook_docx,
    build_image_only_pdf,
    build_pdf,
    build_report_pdf,
)
from situate.config.compose import compose
from situate.errors import SituateError
from situate.parsing.base import document_title, readable_name, sidecar_title
from situate.parsing.docx import DocxParser
from situate.parsing.html import HtmlParser
from situate.parsing.markdown import MarkdownParser, front_matter_title
from situate.parsing.pdf import PdfParser
from situate.parsing.reader import default_parsers
from situate.parsing.text import TextParser
from situate.records import Page


def error(parser, path: Path) -> str:
    with pytest.raises(SituateError) as e:
        parser.parse(path)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


# ---------------------------------------------------------------- pdf


def test_pdf_text_pages_and_metadata_title(tmp_path: Path) -> None:
    parsed = PdfParser().parse(build_report_pdf(tmp_path / "report.pdf"))
    assert parsed.text == "\n\n".join(REPORT_PAGES)
    assert (parsed.title, parsed.title_source) == (REPORT_TITLE, "metadata")
    # page 1 = "Overview\nAcme sells anvils to coyotes." = 8 + 1 + 29 = 38 characters, then the
    # 2-character separator; page 2 = 7 + 1 + 47 = 55 characters
    assert parsed.pages == (Page(1, 0, 38), Page(2, 40, 95), Page(3, 97, 137))
    for page, text in zip(parsed.pages, REPORT_PAGES, strict=True):
        assert parsed.text[page.start : page.end] == text


def test_pdf_page_separator_is_an_option(tmp_path: Path) -> None:
    parsed = PdfParser(page_separator="\n\f\n").parse(build_report_pdf(tmp_path / "r.pdf"))
    assert parsed.pages[1] == Page(2, 41, 96)
    assert parsed.text[38:41] == "\n\f\n"


def test_pdf_empty_page_is_an_empty_span(tmp_path: Path, caplog) -> None:
    path = build_pdf(tmp_path / "gap.pdf", ["First page.", "", "Third page."])
    parsed = PdfParser().parse(path)
    assert parsed.text == "First page.\n\n\n\nThird page."
    assert parsed.pages == (Page(1, 0, 11), Page(2, 13, 13), Page(3, 15, 26))
    # reportlab's default title "untitled" names nothing, and every line is the same size
    assert (parsed.title, parsed.title_source) == ("", "")
    assert f"{path}: page(s) 2 have no text (blank or scanned); kept as empty pages" in caplog.text


@pytest.mark.parametrize(
    ("title", "kept"),
    [
        ("Annual  Report 2023", "Annual Report 2023"),
        ("untitled", ""),
        ("Untitled-3", ""),
        ("Microsoft Word - 10K_final.docx", ""),
        ("report_v2.pdf", ""),
        ("0000320187-21-000028", ""),
        ("", ""),
    ],
)
def test_pdf_metadata_titles_that_name_nothing(tmp_path: Path, title: str, kept: str) -> None:
    parsed = PdfParser().parse(build_pdf(tmp_path / "a.pdf", ["Body text."], title=title))
    assert parsed.title == kept


def test_pdf_accession_number_title_gives_way_to_the_cover_company(tmp_path: Path) -> None:
    cover = [("Apple Inc.", 24), ("Annual report to shareholders", 12), ("Cupertino", 10)]
    path = build_cover_pdf(tmp_path / "0000320187-21-000028.pdf", cover, "0000320187-21-000028")
    parsed = PdfParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("Apple Inc.", "cover")


def test_pdf_agency_header_title_gives_way_to_the_company_and_form(tmp_path: Path) -> None:
    title = "UNITED STATES SECURITIES AND EXCHANGE COMMISSION"
    parsed = PdfParser().parse(build_cover_pdf(tmp_path / "aapl.pdf", FILING_COVER, title))
    # the 16-point header and the 14-point "FORM 10-K" are no titles; "Apple Inc." (14 points)
    # is, and the cover's form and fiscal year say which filing it is
    assert (parsed.title, parsed.title_source) == ("Apple Inc. - Form 10-K 2021", "cover")
    assert parsed.text.startswith(title)  # the text is unchanged


def test_pdf_cover_text_drawn_small_and_scaled_counts_at_its_printed_size(tmp_path: Path) -> None:
    path = build_cover_pdf(tmp_path / "scaled.pdf", FILING_COVER, "untitled", scale=20)
    assert PdfParser().parse(path).title == "Apple Inc. - Form 10-K 2021"


def test_pdf_good_metadata_title_is_kept_over_the_cover(tmp_path: Path) -> None:
    path = build_cover_pdf(tmp_path / "aapl.pdf", FILING_COVER, "Apple  2021 Annual Report")
    parsed = PdfParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("Apple 2021 Annual Report", "metadata")


def test_pdf_without_text_on_the_cover_is_named_by_its_file(tmp_path: Path) -> None:
    path = build_cover_pdf(tmp_path / "apple_10k_2021.pdf", None, "0000320187-21-000028")
    parsed = PdfParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("", "")
    assert document_title(path, parsed) == ("apple 10k 2021", "filename")


def test_pdf_encrypted(tmp_path: Path) -> None:
    path = build_encrypted_pdf(tmp_path / "locked.pdf")
    assert error(PdfParser(), path) == (
        f"{path}: encrypted PDF (a password is needed to read it); save a decrypted copy "
        "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) or remove it"
    )


def test_pdf_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj garbage")
    assert error(PdfParser(), path) == (
        f"{path}: not a readable PDF (damaged or not a PDF); re-export it from its source or "
        "remove it"
    )


def test_pdf_without_text_layer(tmp_path: Path) -> None:
    path = build_image_only_pdf(tmp_path / "scan.pdf", pages=2)
    assert error(PdfParser(), path) == (
        f"{path}: no text layer on any of its 2 page(s) (a scanned or image-only PDF); run OCR "
        "on it first (e.g. `ocrmypdf in.pdf out.pdf`) or remove it"
    )


# ---------------------------------------------------------------- docx


def test_docx_headings_lists_tables_and_core_title(tmp_path: Path) -> None:
    parsed = DocxParser().parse(build_handbook_docx(tmp_path / "handbook.docx"))
    assert parsed.text == HANDBOOK_TEXT
    assert (parsed.title, parsed.title_source) == (HANDBOOK_TITLE, "metadata")
    assert parsed.pages == ()


def test_docx_without_core_title_takes_the_first_heading(tmp_path: Path) -> None:
    parsed = DocxParser().parse(build_handbook_docx(tmp_path / "h.docx", title=None))
    assert (parsed.title, parsed.title_source) == ("Leave policy", "heading")


@pytest.mark.parametrize(
    "title", ["0000320187-21-000028", "Microsoft Word - Document1", "FORM 10-K"]
)
def test_docx_core_title_that_names_nothing_gives_way_to_the_heading(
    tmp_path: Path, title: str
) -> None:
    parsed = DocxParser().parse(build_handbook_docx(tmp_path / "h.docx", title=title))
    assert (parsed.title, parsed.title_source) == ("Leave policy", "heading")


def test_docx_not_a_docx(tmp_path: Path) -> None:
    path = tmp_path / "old.docx"
    path.write_bytes(b"\xd0\xcf\x11\xe0 an old binary .doc")
    assert error(DocxParser(), path) == (
        f"{path}: not a readable .docx file (PackageNotFoundError); save it again from Word or "
        "LibreOffice as .docx (not .doc) or remove it"
    )


# ---------------------------------------------------------------- html


def test_html_main_content_as_markdown_without_boilerplate(tmp_path: Path) -> None:
    path = tmp_path / "rate-limits.html"
    path.write_text(RATE_LIMITS_HTML, encoding="utf-8")
    parsed = HtmlParser().parse(path)
    assert parsed.text == RATE_LIMITS_TEXT
    assert "Getting started" not in parsed.text and "Copyright" not in parsed.text
    assert parsed.title == "Rate limits"  # the first heading, not "Rate limits | Acme Docs"
    assert parsed.title_source == "heading"


def test_html_title_element_when_there_is_no_heading(tmp_path: Path) -> None:
    path = tmp_path / "page.htm"
    path.write_text("<html><head><title>Release  notes</title></head><body><p>Fixed it.</p>")
    parsed = HtmlParser().parse(path)
    assert (parsed.text, parsed.title) == ("Fixed it.", "Release notes")
    assert parsed.title_source == "metadata"


def test_html_heading_or_title_element_that_names_nothing_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "filing.htm"
    path.write_text(
        "<html><head><title>Apple Inc. 10-K 2021</title></head>"
        "<body><h1>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</h1><p>Net sales.</p></body>"
    )
    parsed = HtmlParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("Apple Inc. 10-K 2021", "metadata")
    path.write_text(
        "<html><head><title>0000320187-21-000028</title></head>"
        "<body><h1>FORM 10-K</h1><p>Net sales.</p></body>"
    )
    parsed = HtmlParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("", "")
    assert document_title(path, parsed) == ("filing", "filename")


def test_html_drop_is_an_option(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<body><nav>Menu</nav><p>Body text.</p></body>")
    assert HtmlParser().parse(path).text == "Body text."
    assert HtmlParser(drop=["script"]).parse(path).text == "Menu\n\nBody text."


def test_html_with_only_boilerplate(tmp_path: Path) -> None:
    path = tmp_path / "nav.html"
    path.write_text("<body><nav>Home | About</nav></body>")
    assert "no text in the page's main content" in error(HtmlParser(), path)


# ---------------------------------------------------------------- markdown and text


def test_markdown_is_kept_as_is_title_first_heading_else_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    text = "---\ntitle: 'Getting started'\n---\nIntro.\n\n## Install\n"
    path.write_text(text, encoding="utf-8")
    parsed = MarkdownParser().parse(path)
    assert parsed.text == text
    assert parsed.title == "Install"  # the first heading comes before front matter
    assert parsed.title_source == "heading"
    path.write_text("---\ntitle: 'Getting started'\n---\nIntro only.\n", encoding="utf-8")
    parsed = MarkdownParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("Getting started", "metadata")
    assert front_matter_title("Intro\n---\ntitle: x\n---\n") is None  # not at the start


def test_text_is_kept_as_is_and_names_no_title(tmp_path: Path) -> None:
    path = tmp_path / "3M_2018_10K.txt"
    path.write_text("# not a heading in a text file\nRevenue.\n", encoding="utf-8")
    parsed = TextParser().parse(path)
    assert (parsed.text, parsed.title) == ("# not a heading in a text file\nRevenue.\n", "")
    assert document_title(path, parsed) == ("3M 2018 10K", "filename")


def test_markdown_heading_that_names_nothing_gives_way_to_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("---\ntitle: Apple 10-K notes\n---\n# untitled\n\nText.\n")
    parsed = MarkdownParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("Apple 10-K notes", "metadata")
    path.write_text("# 0000320187-21-000028\n\nText.\n")
    parsed = MarkdownParser().parse(path)
    assert (parsed.title, parsed.title_source) == ("", "")
    assert document_title(path, parsed) == ("a", "filename")


def test_text_encoding_is_an_option(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("caf\u00e9".encode("latin-1"))
    assert error(TextParser(), path) == (
        f"{path}: not UTF-8 text (byte 3); convert it to UTF-8 or remove it"
    )
    assert TextParser(encoding="latin-1").parse(path).text == "caf\u00e9"


def test_empty_text_file(tmp_path: Path) -> None:
    path = tmp_path / "blank.md"
    path.write_text(" \n\n")
    assert (
        error(MarkdownParser(), path)
        == f"{path}: empty file (no text); add text to it or remove it"
    )


# ---------------------------------------------------------------- titles


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("3M_2018_10K.txt", "3M 2018 10K"),
        ("rate limits  v2.md", "rate limits v2"),
        ("notes.md", "notes"),
        ("___.txt", "___.txt"),  # nothing readable: the file name itself
    ],
)
def test_readable_name(name: str, title: str) -> None:
    assert readable_name(Path(name)) == title


def test_sidecar_title_comes_before_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "3M_2018_10K.txt"
    path.write_text("Revenue.\n")
    (tmp_path / "3M_2018_10K.txt.meta.json").write_text('{"title": "3M  Form 10-K (2018)"}')
    assert sidecar_title(path) == "3M Form 10-K (2018)"
    assert document_title(path, TextParser().parse(path)) == ("3M Form 10-K (2018)", "sidecar")
    # a sidecar overrides a PDF cover's guess, not a metadata title
    pdf = build_cover_pdf(tmp_path / "aapl.pdf", FILING_COVER, "untitled")
    (tmp_path / "aapl.pdf.meta.json").write_text('{"title": "Apple 10-K (2021)"}')
    assert document_title(pdf, PdfParser().parse(pdf)) == ("Apple 10-K (2021)", "sidecar")
    build_cover_pdf(pdf, FILING_COVER, "Apple Inc. annual report")
    assert document_title(pdf, PdfParser().parse(pdf)) == ("Apple Inc. annual report", "metadata")
    (tmp_path / "3M_2018_10K.txt.meta.json").write_text('{"name": "x"}')
    with pytest.raises(SituateError, match=r'meta\.json: no "title" string'):
        sidecar_title(path)


# ---------------------------------------------------------------- config group


PARSER_OPTIONS = options("parser")


def test_every_format_has_a_parser_option() -> None:
    assert sorted(default_parsers()) == PARSER_OPTIONS  # every format has one, and only those


@pytest.mark.parametrize("option", PARSER_OPTIONS)
def test_folder_dataset_composes_every_parser_with_its_options(option: str) -> None:
    cfg = compose(["dataset=folder", "dataset.path=/data/notes"])
    parser = instantiate(cfg.dataset.parsers[option])
    assert parser.name == option
    assert parser.identity()["parser"] == option


def test_parser_options_are_settable_from_the_command_line() -> None:
    cfg = compose(
        [
            "dataset=folder",
            "dataset.path=/data/notes",
            "dataset.parsers.pdf.page_separator=' '",
            "parser@dataset.parsers.html=text",
            "+dataset.suffixes.rst=text",
        ]
    )
    loader = instantiate(cfg.dataset)
    assert loader.reader.parsers["pdf"].page_separator == " "
    assert isinstance(loader.reader.parsers["html"], TextParser)
    assert loader.reader.suffixes["rst"] == "text"


def test_docx_merged_cell_is_written_once_and_pipes_escaped(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Region"
    table.cell(0, 2).text = "Sales"
    for k, value in enumerate(["EU", "a|b", "7"]):
        table.cell(1, k).text = value
    path = tmp_path / "merged.docx"
    document.save(str(path))
    assert DocxParser().parse(path).text == (
        "| Region | Sales |\n| --- | --- |\n| EU | a\\|b | 7 |"
    )


def test_html_links_keep_their_text_only(tmp_path: Path) -> None:
    path = tmp_path / "links.html"
    path.write_text(
        '<p>See <a href="https://example.com/x">the guide</a> <img src="a.png" alt="x">.</p>'
    )
    assert HtmlParser().parse(path).text == "See the guide ."
