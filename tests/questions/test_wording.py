"""The question rule's pieces (:mod:`situate.questions.wording`) on sentences checked by hand."""

from __future__ import annotations

import pytest

from situate.questions.wording.spans import Answer, widen
from situate.questions.wording.subjects import subject_answer
from situate.questions.wording.tokens import copied_run, join, tokens
from situate.questions.wording.verbs import base_form, is_verb
from situate.questions.wording.wh_questions import wh_questions
from situate.questions.wording.words import STOP_EN
from situate.words.stopwords import ENGLISH


def test_tokens_keep_amounts_whole_and_join_puts_punctuation_back():
    words = [t.text for t in tokens("Revenue rose 12% to $5.2 billion, a record.")]
    assert words == ["Revenue", "rose", "12%", "to", "$5.2", "billion", ",", "a", "record", "."]
    assert join(words) == "Revenue rose 12% to $5.2 billion, a record."


@pytest.mark.parametrize(
    "verb, base",
    [("enrolled", "enroll"), ("totaled", "total"), ("stopped", "stop"),
     ("estimated", "estimate"), ("studies", "study"), ("rose", "rise"), ("uses", "use")],
)  # fmt: skip
def test_a_finite_verb_has_its_base_form(verb, base):
    assert base_form(verb) == base


def test_a_verb_is_known_by_the_closed_lists_and_the_ed_rule():
    assert [is_verb(t) for t in tokens("The trial enrolled patients and rose; Based studies")] == [
        False,
        False,
        True,
        False,
        False,
        True,
        False,
        False,
        False,
    ]  # "Based": capitalised, so a heading or a name; "studies": in no list


def test_the_answer_grows_into_its_unit_or_date():
    s = "Revenue rose to $5.2 billion in March 2020."
    assert widen(s, s.index("5"), s.index("5") + 3, "other") == Answer(16, 28, "money")
    year = s.index("2020")
    assert widen(s, year, year + 4, "year") == Answer(s.index("March"), year + 4, "date")


def test_copied_run_counts_the_longest_run_of_the_passages_words():
    passage = "The trial enrolled 120 patients in 2019."
    assert copied_run("How many patients did the trial enroll?", passage) == 2  # "the trial"
    assert copied_run("the trial enrolled 120 patients", passage) == 5


def test_a_count_is_asked_how_many_with_and_without_its_qualifier():
    s = "The trial enrolled 120 patients in 2019."
    answer = widen(s, s.index("120"), s.index("120") + 3, "count")
    assert wh_questions(s, answer, s, "Other words entirely.") == [
        "How many patients did the trial enroll in 2019?",
        "How many patients did the trial enroll?",
    ]
    spanish = "El ensayo incluyó a 120 pacientes en 2019."
    answer = widen(spanish, spanish.index("120"), spanish.index("120") + 3, "count")
    assert wh_questions(spanish, answer, spanish, "Otras palabras.", "es") == [
        "¿A cuántos pacientes incluyó el ensayo en 2019?",
        "¿A cuántos pacientes incluyó el ensayo?",
    ]


def test_a_subject_that_names_a_thing_is_an_answer():
    s = "S-palmitoylation on the protein regulates the antiviral activity of IFITM3."
    assert subject_answer(s) == (0, len("S-palmitoylation on the protein"))
    assert subject_answer("These results show that the virus spreads quickly.") is None


def test_the_rules_stop_words_are_a_part_of_the_english_list():
    assert STOP_EN < ENGLISH and {"is", "it", "than", "very"} <= STOP_EN
    assert not {"the", "more", "two"} & STOP_EN
