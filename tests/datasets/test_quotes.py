"""Answer quotes: exact, then normalised, then fuzzy; spans are in the original text."""

from __future__ import annotations

import pytest

from situate.datasets.quotes import NormalizedText, QuoteFinder, QuoteMatch, normalize_word

# A PDF-like text: a line break inside a sentence, curly quotes, a non-breaking space, an en dash.
TEXT = "The \u201cPro\u201d plan allows 600\nrequests per minute;\u00a0bursts 2\u20133x.\nNet  income rose."
# "The " = 0..4, the curly-quoted word = 4..9, " plan allows 600" = 9..25, "\n" = 25,
# "requests per minute;" = 26..46, nbsp = 46, "bursts" = 47..53, " 2–3x." = 53..59, "\n" = 59,
# "Net  income rose." = 60..77


def test_exact_first_occurrence() -> None:
    assert QuoteFinder(TEXT).first("plan allows 600") == QuoteMatch(10, 25, "exact")
    assert TEXT[10:25] == "plan allows 600"


def test_normalized_whitespace_case_and_typography() -> None:
    finder = QuoteFinder(TEXT)
    # a line break in the PDF text, typed as a space
    assert finder.first("allows 600 requests") == QuoteMatch(15, 34, "normalized")
    assert TEXT[15:34] == "allows 600\nrequests"
    # straight quotes and other case for curly quotes
    assert finder.first('the "pro" plan') == QuoteMatch(0, 14, "normalized")
    # a non-breaking space and an en dash
    assert finder.first("minute; bursts 2-3x.") == QuoteMatch(39, 59, "normalized")
    assert TEXT[39:59] == "minute;\u00a0bursts 2\u20133x."
    # two spaces in the text, one in the quote
    assert finder.first("net income") == QuoteMatch(60, 71, "normalized")


def test_fuzzy_above_threshold_snaps_to_words() -> None:
    finder = QuoteFinder(TEXT, threshold=90)
    found = finder.first("allows 600 request per minute")  # one letter dropped
    assert found is not None and found.rule == "fuzzy"
    assert (found.start, found.end) == (15, 46)
    assert TEXT[found.start : found.end] == "allows 600\nrequests per minute;"
    # partial_ratio: the 29-character needle against its best 29-character window
    # "allows 600 requests per minut": Indel distance 2, so 100 * (1 - 2 / 58) = 96.55
    assert found.score == pytest.approx(100 * (1 - 2 / 58), abs=0.01)
    assert QuoteFinder(TEXT, threshold=99).first("allows 600 request per minute") is None


def test_no_match() -> None:
    assert QuoteFinder(TEXT).first("dividends were suspended") is None
    assert QuoteFinder(TEXT).find("   ", "normalized") is None


def test_normalized_text_maps_back_through_length_changes() -> None:
    text = "Die Straße\u00a0ist ﬁne"  # ß casefolds to ss, the ligature ﬁ to fi
    norm = NormalizedText(text)
    assert norm.text == "die strasse ist fine"
    k = norm.text.find("strasse ist")
    assert norm.original(k, k + len("strasse ist")) == (4, 14)
    assert text[4:14] == "Straße\u00a0ist"
    assert normalize_word("\u201cA\u2014B\u201d") == '"a-b"'
