"""The answer phrase of a sentence: its characters and its kind (money, percent, date, count,
duration, number, name, definition, subject), grown into its unit or date by :func:`widen`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from situate.questions.wording.tokens import tokens
from situate.questions.wording.words import word_set

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre"
)


MONTHS = frozenset(_MONTHS.split())


_UNITS = frozenset(["million", "billion", "thousand", "trillion", "millones", "mil", "miles"])


_CURRENCY = frozenset(["usd", "eur", "gbp", "dollars", "euros", "dólares"])


_DURATIONS = word_set(
    "seconds minutes hours days weeks months years decades second minute hour day week month year "
    "segundos minutos horas días semanas meses años"
)


@dataclass(frozen=True)
class Answer:
    """The answer phrase (characters of the sentence) and its kind."""

    start: int
    end: int
    kind: str  # money, percent, date, count, duration, number, name, definition, subject


def widen(sentence: str, start: int, end: int, kind: str) -> Answer:
    """The answer phrase grown into its unit or date, with its kind (module docstring)."""
    toks = tokens(sentence)
    inside = [i for i, t in enumerate(toks) if t.start < end and start < t.end]
    if not inside:
        return Answer(start, end, "name" if kind == "other" else kind)
    first, last = inside[0], inside[-1]
    if kind == "definition":
        return Answer(start, end, kind)
    if kind == "date":
        return Answer(start, end, kind)
    if kind in ("other", "count") and re.fullmatch(r"[$€£]?[\d,.]+", toks[first].text):
        # "$5.2 billion", "5.2 million dollars", "December 31, 2021", "March 2020"
        if first > 0 and toks[first - 1].text in "$€£":
            first -= 1
            kind = "money"
        if toks[first].text[:1] in "$€£":
            kind = "money"
        if last + 1 < len(toks) and toks[last + 1].low in _UNITS:
            last += 1
            if kind != "money":
                kind = (
                    "money"
                    if last + 1 < len(toks) and toks[last + 1].low in _CURRENCY
                    else ("number" if kind == "other" else kind)
                )
        if last + 1 < len(toks) and toks[last + 1].low in _CURRENCY:
            last += 1
            kind = "money"
        if last + 1 < len(toks) and toks[last + 1].low in _DURATIONS and kind == "other":
            last += 1
            kind = "duration"  # "5.2 days": how long
        if first > 0 and toks[first - 1].low in MONTHS:
            first -= 1
            kind = "date"
            if (
                last + 2 < len(toks)
                and toks[last + 1].text == ","
                and re.fullmatch(r"(1[89]|20)\d\d", toks[last + 2].text)
            ):
                last += 2
    elif kind == "year":
        kind = "date"
        if first > 0 and toks[first - 1].low in MONTHS:
            first -= 1
        elif (
            first > 2
            and toks[first - 1].text == ","
            and toks[first - 2].text.isdigit()
            and toks[first - 3].low in MONTHS
        ):
            first -= 3
    elif kind == "other":
        kind = "name"
    if kind == "other":
        kind = "number"
    return Answer(toks[first].start, toks[last].end, kind)
