"""The topic of an answer's neighbourhood (situate.questions.topics), on texts counted by hand."""

from __future__ import annotations

from situate.questions.topics import Topic, names, neighbourhood, neighbourhood_topic

STOP = frozenset({"the", "of", "in", "a"})


def test_names_leave_out_sentence_openings_months_and_furniture():
    text = (
        "Each week the WHO Regional Office tests swabs. In March the Regional Office of Spain "
        "saw Fig 2 and Table 3. HIV-1 rose; ACE2 fell.\n\nDC-SIGNR binds HIV-1."
    )
    # "Each", "In" open sentences; "March" is a month; "Fig" and "Table" are furniture; the run
    # "Regional Office of Spain" stops at "of"; "HIV-1" and "DC-SIGNR" open sentences but have a
    # capital after their first letter, so they stay
    assert [n for _, n in names(text, STOP)] == [
        "WHO Regional Office", "Regional Office", "Spain", "HIV-1", "ACE2", "DC-SIGNR", "HIV-1",
    ]  # fmt: skip


def test_the_neighbourhood_counts_tokens_and_stops_at_a_heading():
    text = "one two three four five six\n# Results\nseven eight nine ten eleven twelve"
    start = text.index("nine")
    end = start + len("nine")
    lo, hi = neighbourhood(text, start, end, 2)
    assert text[lo:hi] == "seven eight nine ten eleven"  # two tokens either side
    lo, hi = neighbourhood(text, start, end, 100)
    assert text[lo:hi] == "seven eight nine ten eleven twelve"  # not above "# Results"
    text = "one two three\n# Next\nfour"
    lo, hi = neighbourhood(text, 0, 3, 100)
    assert text[lo:hi] == "one two three\n"  # nor below the next heading


TEXT = (
    "Camels carry MERS-CoV in Saudi Arabia. Studies of MERS-CoV in Riyadh found an incubation "
    "period of 5 days. The median time until death was 12 days among patients in Saudi Arabia."
)
SENTENCE = TEXT.index("The median")


def topic(taken, window=75, min_count=2):
    return neighbourhood_topic(
        TEXT, SENTENCE, len(TEXT), window=window, taken=taken, stop=STOP, min_count=min_count
    )


def test_the_topic_is_the_name_repeated_most_the_first_on_a_tie():
    # MERS-CoV and Saudi Arabia occur twice each in the neighbourhood (Riyadh once): the first
    assert topic(["How long was the median time until death?", "12 days"]) == Topic("MERS-CoV", 2)
    # three times at least: none
    assert topic(["How long was the median time until death?", "12 days"], min_count=3) is None
    # two tokens either side of the sentence: "5 days." before it, nothing after; only Saudi
    # Arabia (in the sentence) is left, once
    assert topic(["How long?", "12 days"], window=2) is None


def test_the_topic_shares_no_word_with_the_question_or_its_answer():
    # the question names MERS (a part of MERS-CoV): the other name repeated twice
    assert topic(["What was the death toll of MERS?", "12 days"]) == Topic("Saudi Arabia", 2)
    # a plural or a stem of a held word ("Arabians" opens with "arabia") counts as held
    assert topic(["Which MERS-CoV strain reached Arabians?", "12 days"]) is None
