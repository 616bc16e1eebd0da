"""Find an answer quote in a document's parsed text, by the first rule that matches.

Rules, in order (the match records which one):

1. ``exact``: the quote occurs as written (its first occurrence);
2. ``normalized``: it occurs once both texts are Unicode-normalised (NFKC), case-folded, typographic
   quotes and dashes made plain and every whitespace run made one space (PDF line breaks,
   non-breaking spaces, a hand-typed quote of a curly-quoted text);
3. ``fuzzy``: the best local alignment of the normalised quote (rapidfuzz ``partial_ratio``)
   scores at least ``threshold`` out of 100 (an OCR slip, a dropped word).

The span returned is always in the original text: ``text[start:end]`` is what was matched.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

QuoteRule = Literal["exact", "normalized", "fuzzy"]
RULES: tuple[QuoteRule, ...] = ("exact", "normalized", "fuzzy")
DEFAULT_THRESHOLD = 90.0

_WORD = re.compile(r"\S+")
_PLAIN = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00ad": None,  # soft hyphen
    }
)


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote was found: ``[start, end)`` of the original text, the rule and its score."""

    start: int
    end: int
    rule: QuoteRule
    score: float = 100.0


def normalize_word(word: str) -> str:
    """One whitespace-free word as the ``normalized`` rule compares it (still whitespace-free)."""
    return "".join(unicodedata.normalize("NFKC", word.translate(_PLAIN)).casefold().split())


@functools.lru_cache(maxsize=4096)
def normalized_quote(quote: str) -> str:
    """A quote as the ``normalized`` rule compares it (one call per quote, not per document)."""
    return " ".join(normalize_word(w) for w in quote.split())


class NormalizedText:
    """A text with its words normalised and joined by single spaces, mapped back to offsets.

    Only the normalised string is built up front (in C for ASCII text); the original offsets of
    the two words at a match's ends are looked up when asked for.

    Parameters
    ----------
    text
        The original text.
    """

    def __init__(self, text: str) -> None:
        self.original_text = text
        # str.split and _WORD agree on what whitespace is; ASCII words only need lower-casing
        if text.isascii():
            self.text = " ".join(text.lower().split())
        else:
            self.text = " ".join(
                w.lower() if w.isascii() else normalize_word(w) for w in text.split()
            )

    def original(self, start: int, end: int, whole_words: bool = False) -> tuple[int, int]:
        """The original span of normalised characters ``[start, end)``.

        The ends are exact characters, or the bounds of their words with ``whole_words`` or
        where normalising changed a word's length.
        """
        return (
            self._offset(start, False, whole_words),
            self._offset(end - 1, True, whole_words),
        )

    def _offset(self, pos: int, is_end: bool, whole_words: bool) -> int:
        norm = self.text
        if norm[pos] == " ":  # between words: the end of the one before, or the start of the next
            index = norm.count(" ", 0, pos) - (1 if is_end else 0)
            s, e = self._word(index)
            return e if is_end else s
        index = norm.count(" ", 0, pos)
        first = norm.rfind(" ", 0, pos) + 1
        last = norm.find(" ", pos)
        length = (len(norm) if last < 0 else last) - first
        s, e = self._word(index)
        if whole_words or length != e - s:  # snap to the word's bounds
            return e if is_end else s
        return s + (pos - first) + (1 if is_end else 0)

    def _word(self, index: int) -> tuple[int, int]:
        """``[start, end)`` of the original text's word ``index`` (0-based)."""
        return next(itertools.islice(_WORD.finditer(self.original_text), index, None)).span()


class QuoteFinder:
    """Finds quotes in one text, normalising the text once, on first need.

    Parameters
    ----------
    text
        The document text.
    threshold
        Lowest ``fuzzy`` score (0-100) that counts as a match.
    """

    def __init__(self, text: str, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.text = text
        self.threshold = threshold
        self._normalized: NormalizedText | None = None

    @property
    def normalized(self) -> NormalizedText:
        if self._normalized is None:
            self._normalized = NormalizedText(self.text)
        return self._normalized

    def find(self, quote: str, rule: QuoteRule) -> QuoteMatch | None:
        """The match of ``quote`` under one rule, or None."""
        if rule == "exact":
            start = self.text.find(quote)
            return None if start < 0 else QuoteMatch(start, start + len(quote), "exact")
        needle = normalized_quote(quote)
        if not needle:
            return None
        norm = self.normalized
        if rule == "normalized":
            k = norm.text.find(needle)
            if k < 0:
                return None
            return QuoteMatch(*norm.original(k, k + len(needle)), "normalized")
        from rapidfuzz import fuzz

        found = fuzz.partial_ratio_alignment(needle, norm.text, score_cutoff=self.threshold)
        if found is None or found.dest_end <= found.dest_start:
            return None
        start, end = norm.original(found.dest_start, found.dest_end, whole_words=True)
        return QuoteMatch(start, end, "fuzzy", round(found.score, 2))

    def first(self, quote: str) -> QuoteMatch | None:
        """The match of ``quote`` under the first rule (exact, normalized, fuzzy) that finds it."""
        for rule in RULES:
            found = self.find(quote, rule)
            if found is not None:
                return found
        return None
