"""Every wording of a sentence's wh-question asking for its answer (:func:`wh_questions`): the
language's rule (:mod:`.english`, :mod:`.spanish`), then the subject cut back, the qualifier and
the adjectives left out, as long as it copies few words of the passage."""

from __future__ import annotations

from dataclasses import replace

from situate.questions.wording.english import english_shape
from situate.questions.wording.shape import fluent, shortened, without_adjectives
from situate.questions.wording.spanish import spanish_shape
from situate.questions.wording.spans import Answer
from situate.questions.wording.subjects import subject_wordings


def wh_questions(
    sentence: str,
    answer: Answer,
    document: str,
    passage: str,
    language: str = "en",
    *,
    subject_words: int = 5,
    qualifier_words: int = 4,
    max_copied: int = 5,
) -> list[str]:
    """Every wording of the question of ``sentence`` asking for ``answer`` that copies at most
    ``max_copied`` consecutive words of ``passage``, the most specific first: the subject as
    long as it goes (then cut back to a preposition: "the first cases of ..." -> "the first
    cases"), with the qualifier, then without it; then, in English, each of them with the
    subject's adjectives left out ("the median incubation period" -> "the incubation period"):
    a vaguer question, as a person who does not know the passage's terms asks it. Empty when
    the sentence has no question by the rule."""
    shape = (spanish_shape if language == "es" else english_shape)(
        sentence, answer, document, subject_words, qualifier_words
    )
    if shape is None or not fluent(shape, sentence[answer.start : answer.end], sentence, answer):
        return []
    if answer.kind == "subject":
        return subject_wordings(shape, passage, max_copied)
    out = shortened(shape, passage, max_copied)
    if out and language == "en" and (plain := without_adjectives(shape.subject)) != shape.subject:
        out += shortened(replace(shape, subject=plain), passage, max_copied)
    return list(dict.fromkeys(out))
