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

import bisect
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
    """One whitespace-free word as the ``normalized`` rule compares it."""
    return unicodedata.normalize("NFKC", word.translate(_PLAIN)).casefold()


class NormalizedText:
    """A text with its words normalised and joined by single spaces, mapped back to offsets.

    Parameters
    ----------
    text
        The original text.
    """

    def __init__(self, text: str) -> None:
        spans = [m.span() for m in _WORD.finditer(text)]
        words = [normalize_word(text[s:e]) for s, e in spans]
        self.text = " ".join(words)
        self._orig = spans
        self._starts: list[int] = []  # offset of each normalised word in self.text
        pos = 0
        for w in words:
            self._starts.append(pos)
            pos += len(w) + 1
        self._lengths = [len(w) for w in words]

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
        i = max(0, bisect.bisect_right(self._starts, pos) - 1)
        inside = pos - self._starts[i]
        s, e = self._orig[i]
        if inside >= self._lengths[i]:  # the space after word i
            if is_end or i + 1 == len(self._orig):
                return e
            return self._orig[i + 1][0]
        if whole_words or self._lengths[i] != e - s:  # snap to the word's bounds
            return e if is_end else s
        return s + inside + (1 if is_end else 0)


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
        needle = " ".join(normalize_word(w) for w in quote.split())
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
