"""The Spanish question rule: a sentence and its answer turned into a :class:`Shape` (the question
word by the answer's kind and gender, the preposition and article before the answer in front of
it, the verb before the subject)."""

from __future__ import annotations

import re

from situate.questions.wording.clauses import (
    head_phrase,
    lower_first,
    qualifier_phrase,
    split_at_answer,
    strip_fronted,
)
from situate.questions.wording.shape import Shape
from situate.questions.wording.spans import Answer
from situate.questions.wording.words import word_set
from situate.words.stopwords import SPANISH

# the question word by the answer's kind
_WH = {
    "money": "cuánto",
    "duration": "cuánto tiempo",
    "percent": "qué porcentaje",
    "date": "cuándo",
    "count": "cuántos",
    "number": "cuánto",
    "name": "qué",
}


_FEMININE = re.compile(r"\w+(?:as|dades|tudes|iones)$")  # cuántas solicitudes


# the articles, prepositions and conjunctions moved from before the answer to before the
# question word ("a los" -> "¿A cuántos ...?"): a part of the one Spanish list, none of its verbs
_BEFORE_ANSWER = SPANISH & word_set(
    "el la los las un una unos unas de del en a al por para con sin y o que se su sus"
)


def spanish_shape(
    sentence: str, answer: Answer, document: str, subject_words: int, qualifier_words: int
) -> Shape | None:
    before, after = split_at_answer(sentence, answer)
    kind = answer.kind
    wh = _WH[kind].split()
    if kind == "count":
        if not after or not after[0].word:
            return None
        noun = after[0].text
        wh = ["cuántas" if _FEMININE.match(noun) and noun.casefold() != "días" else "cuántos", noun]
        after = after[1:]
    fronted, clause = strip_fronted(before)
    # the preposition and article before the answer ("a los") go in front of the question word
    prep: list[str] = []
    while clause and clause[-1].low in _BEFORE_ANSWER:
        prep.insert(0, clause[-1].low)
        clause = clause[:-1]
    if kind == "date":
        prep = []
    if prep and prep[-1] in ("el", "la", "los", "las", "un", "una") and len(prep) == 1:
        prep = []
    if not clause:
        return None
    verb = clause[-1].text
    subject_tokens = head_phrase(clause[:-1], subject_words + 3)
    subject = lower_first([t.text for t in subject_tokens], document)
    qualifier = [t.text for t in qualifier_phrase(after, qualifier_words)]
    opening = [*prep, *wh]
    if kind == "count" and qualifier and qualifier[0].casefold() in ("por", "de"):
        opening, qualifier = [*opening, *qualifier], []
    return Shape([*opening, verb], subject, [], qualifier, "es")
