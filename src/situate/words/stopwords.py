"""The stop words of English and Spanish: one list per language, the function words (articles,
prepositions, conjunctions, pronouns, auxiliaries, quantifiers) that name nothing a passage or a
question is about. Every module that leaves such words out imports them from here: the question
generator's content words and language guess, the difficulty measures, the heading path's terms
and the emulators' stand-in answers; a module that wants a part of a list, or a few more words,
derives it from these (``ENGLISH & {...}``, ``ENGLISH | {...}``) and says why.
:func:`without_accents` writes a list as accent-free word tokens do (``más`` -> ``mas``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

_ENGLISH = """
    the a an and or but of in on at to for from by with without as is are was were be been being
    has have had do does did this that these those it its they them their there here which who whom
    whose what when where why how not no than then so such can could may might must shall should
    will would also into over under between after before during about above below both each few
    more most other some any all only own same very our we you your he she his her one two while if
    i me my us per via
"""
_SPANISH = """
    el la los las un una uno unos unas y o pero de del en a al por para con sin como es son era
    eran ser sido fue fueron ha han había este esta estos estas ese esa esos esas eso esto lo le
    les se su sus que quien cual cuales cuando donde porque no ni más menos muy también entre sobre
    tras durante antes después todo todos toda todas otro otra otros otras mismo cada si ya hay nos
    usted ustedes ello están quiénes según
"""
ENGLISH = frozenset(_ENGLISH.split())
SPANISH = frozenset(_SPANISH.split())


def folded(text: str) -> str:
    """``text`` case-folded with its accents removed (NFKD, combining marks dropped), as every
    accent-free comparison of words writes it ("Más" -> "mas")."""
    text = text.casefold()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def without_accents(words: Iterable[str]) -> frozenset[str]:
    """``words`` as accent-free word tokens write them (:func:`folded`: "también" -> "tambien")."""
    return frozenset(folded(word) for word in words)
