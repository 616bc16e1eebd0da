"""The title rule: which strings name a document (a table written by hand), the cover's most
prominent lines, a filing's form and year, and the per-corpus summary line."""

from __future__ import annotations

import pytest

from situate.parsing.titles import (
    TextLine,
    body_size,
    cover_title,
    filing_context,
    first_usable,
    summary,
    title_problem,
)


@pytest.mark.parametrize(
    ("title", "problem"),
    [
        # titles that name a document
        ("Annual Report 2023", None),
        ("Apple Inc.", None),
        ("Apple Inc. - Form 10-K 2021", None),
        ("IBM", None),
        ("SARS-CoV-2 in bats", None),
        ("Form and Function in Architecture", None),  # "form" followed by no form number
        ("Microsoft Corporation - Annual Report", None),  # a company, not Word's prefix
        ("Rate limits", None),
        ("  Annual \n Report  2023 ", None),  # spacing is tidied, not a reason
        # nothing at all
        ("", "empty"),
        ("  \n ", "empty"),
        ("--- * ---", "empty"),
        # too short or too long
        ("3M", "too short"),
        ("Q", "too short"),
        ("word " * 31, "too long"),
        ("x" * 201, "too long"),
        # identifiers
        ("0000320187-21-000028", "an identifier"),  # SEC accession number
        ("10-K 2021", "an identifier"),  # under half of it letters
        ("2021-03-15", "an identifier"),
        ("d41d8cd98f00b204e9800998ecf8427e", "an identifier"),  # an MD5 hash
        ("123e4567-e89b-12d3-a456-426614174000", "an identifier"),  # a UUID
        ("DOC20210315X7", "an identifier"),  # one long token, a quarter of it digits or more
        ("gcs-oauth2-boto-plugin", None),  # one long token, a single digit: a name
        ("SHA: eef0ecf5b8e7b179dadaef967e65f2ab68f021e1", "an identifier"),  # a labelled hash
        ("Accession Number: 0000320187-21-000028", "an identifier"),
        ("December 31, 2021", "an identifier"),  # a date
        ("15 March 2020", "an identifier"),
        # file names
        ("report_v2.pdf", "a file name"),
        ("10K_final.DOCX", "a file name"),
        ("C:\\Users\\jane\\Desktop\\draft", "a file name"),
        ("Apple_AR_2021", "a file name"),  # a stem without its extension
        ("Annual report: net_sales by segment", None),  # an underscore inside a sentence
        # producer defaults
        ("untitled", "a producer default"),
        ("Untitled-3", "a producer default"),
        ("Microsoft Word - Document1", "a producer default"),
        ("Microsoft PowerPoint - Q3 deck", "a producer default"),
        ("PowerPoint Presentation", "a producer default"),
        ("Presentation1", "a producer default"),
        ("Document1", "a producer default"),
        ("Title", "a producer default"),
        ("Book1", "a producer default"),
        ("Redirecting...", "a producer default"),  # an HTML redirect page's <title>
        ("Index of /docs/api", "a producer default"),
        # form and agency headers, cover boilerplate
        ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "a form header or boilerplate"),
        ("Securities and Exchange Commission", "a form header or boilerplate"),
        ("Washington, D.C. 20549", "a form header or boilerplate"),
        ("FORM 10-K", "a form header or boilerplate"),
        ("Form 10-Q/A", "a form header or boilerplate"),
        ("form 20-F", "a form header or boilerplate"),
        ("FORM S-1", "a form header or boilerplate"),
        ("Annual Report on Form 10-K", "a form header or boilerplate"),
        ("SCHEDULE 14A", "a form header or boilerplate"),
        ("Exhibit 99.1", "a form header or boilerplate"),
        (
            "\u2612 ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT",
            "a form header or boilerplate",
        ),
        ("For the fiscal year ended December 31, 2021", "a form header or boilerplate"),
        ("Commission File Number: 001-36743", "a form header or boilerplate"),
        ("(Mark One)", "a form header or boilerplate"),
        ("(Exact name of registrant as specified in its charter)", "a form header or boilerplate"),
        ("TABLE OF CONTENTS", "a form header or boilerplate"),
        ("Page 3 of 10", "a form header or boilerplate"),
        ("Annual Report", "a form header or boilerplate"),  # whose?
        # a caption in parentheses
        ("(State or other jurisdiction of incorporation)", "a caption"),
    ],
)
def test_title_problem(title: str, problem: str | None) -> None:
    assert title_problem(title) == problem


def test_first_usable_skips_rejected_candidates() -> None:
    candidates = [(None, "heading"), ("FORM 10-K", "metadata"), ("Apple Inc.", "heading")]
    assert first_usable(candidates) == ("Apple Inc.", "heading")
    assert first_usable([("untitled", "metadata"), ("", "heading")]) == ("", "")


def lines(*rows: tuple[str, float]) -> list[TextLine]:
    return [TextLine(text, size) for text, size in rows]


def test_cover_title_is_the_biggest_usable_line() -> None:
    cover = lines(("Acme Corp", 24), ("Annual Report 2023", 18), ("Confidential", 30))
    # "Confidential" is bigger but boilerplate: the next biggest usable line names the document
    assert cover_title(cover, body_size=10) == "Acme Corp"


def test_cover_title_skips_the_agency_header_and_adds_the_filing_context() -> None:
    cover = lines(
        ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", 16),
        ("FORM 10-K", 14),
        ("For the fiscal year ended September 25, 2021", 10),
        ("Apple Inc.", 14),
        ("(Exact name of registrant as specified in its charter)", 8),
    )
    assert cover_title(cover, body_size=10) == "Apple Inc. - Form 10-K 2021"


def test_a_wrapped_title_is_joined_and_smaller_lines_are_not() -> None:
    cover = lines(
        ("Severe acute respiratory syndrome", 18),
        ("coronavirus 2 in horseshoe bats", 17.5),  # within 5%: the same title
        ("A field study", 14),
        ("J. Smith, A. Jones", 11),
    )
    assert cover_title(cover, body_size=10) == (
        "Severe acute respiratory syndrome coronavirus 2 in horseshoe bats"
    )


def test_no_cover_title_without_a_line_larger_than_the_body_text() -> None:
    uniform = lines(("Dear shareholders,", 10), ("This year we grew.", 10))
    assert cover_title(uniform, body_size=10) == ""
    # 11 points over a 10-point body is under the 15% that makes a line prominent
    assert cover_title(lines(("Dear shareholders,", 11)), body_size=10) == ""
    assert cover_title(lines(("FORM 10-K", 20), ("0000320187-21-000028", 20)), body_size=10) == ""
    assert cover_title([], body_size=0) == ""


def test_the_form_is_not_added_twice() -> None:
    cover = lines(("FORM 10-K", 12), ("Acme Form 10-K Annual Filing", 20))
    assert cover_title(cover, body_size=10) == "Acme Form 10-K Annual Filing"


@pytest.mark.parametrize(
    ("cover", "context"),
    [
        (["FORM 10-K", "FOR THE FISCAL YEAR ENDED DECEMBER 31, 2021"], "Form 10-K 2021"),
        (["Form 10-Q", "For the quarterly period ended June 30, 2020"], "Form 10-Q 2020"),
        (["form 20-f", "for the fiscal year ended", "31 March 2019"], "Form 20-F 2019"),
        (["FORM 8-K"], "Form 8-K"),  # no year on the cover
        (["Annual Report 2023", "for the year ended December 31, 2023"], ""),  # no form line
    ],
)
def test_filing_context(cover: list[str], context: str) -> None:
    assert filing_context(cover) == context


def test_body_size_is_the_median_over_characters() -> None:
    # 40 characters at 24 points, 300 at 10, 20 at 8: the 180th character is at 10 points
    assert body_size([(24.0, 40), (10.0, 300), (8.0, 20)]) == 10.0
    assert body_size([(24.0, 300), (10.0, 40)]) == 24.0
    assert body_size([]) == 0.0


def test_summary_line() -> None:
    counts = {"cover": 41, "metadata": 23, "heading": 0, "sidecar": 0, "filename": 10}
    assert (
        summary(counts) == "74 documents: titles from the cover page 41, metadata 23, file name 10"
    )
    assert summary({"heading": 1}) == "1 document: titles from the first heading 1"
    assert summary({"cover": 0}) == "0 documents"
