"""Word forms by hand: the share of a question's words in another form than its passage's, the
nouns whose number can change without breaking agreement, the share of a set varied, and the
human sample's share taken by ``questions.difficulty.word_forms=match``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from situate.datasets.generated import GeneratedQuestion, Passage, Provenance, read_questions
from situate.errors import SituateError
from situate.questions.difficulty.measures import DifficultyMeter, content_words, shifted_share
from situate.questions.difficulty.selection import build
from situate.questions.word_forms import (
    form_shift,
    other_number,
    other_tense,
    shifted_words,
    vary,
    vary_form,
)
from situate.records import Document, Span

VOCABULARY = {"cell", "cells", "protein", "proteins", "virus", "viruses", "replication",
              "replications", "lungs", "news", "new", "data", "datum", "study", "studies"}  # fmt: skip


def test_a_word_in_another_form_with_the_same_stem_is_shifted():
    passage = "The response of the cells to a virus."
    asked = content_words("What responses does a cell make to the virus?")
    assert asked == ["responses", "cell", "make", "virus"]
    # responses (stem respons: response is there) and cell (cells is there) are shifted; make is
    # not there in any form; virus is there as it is
    assert shifted_words(asked, passage) == ["responses", "cell"]
    assert form_shift(asked, passage) == pytest.approx(2 / 4)
    assert form_shift([], passage) == 0.0


def test_the_other_number_is_a_regular_form_the_documents_hold_with_the_same_stem():
    assert other_number("cell", "NN", VOCABULARY) == "cells"
    assert other_number("viruses", "NNS", VOCABULARY) == "virus"  # -es
    assert other_number("study", "NN", VOCABULARY) == "studies"  # -ies
    assert other_number("studies", "NNS", VOCABULARY) == "study"
    assert other_number("news", "NNS", VOCABULARY) is None  # new: another stem
    assert other_number("receptor", "NN", VOCABULARY) is None  # receptors: not in the documents


@pytest.mark.parametrize(
    ("question", "choose", "varied"),
    [
        # after a preposition and "the", the head noun of a compound
        (
            "What binds to the spike protein in the lungs?",
            0,
            "What binds to the spike proteins in the lungs?",
        ),  # noqa: E501
        (
            "What binds to the spike protein in the lungs?",
            1,
            "What binds to the spike protein in the lung?",
        ),  # noqa: E501
        # the object of a verb that is not an auxiliary
        ("What inhibits the replication?", 0, "What inhibits the replications?"),
        # a possessive determiner takes either number
        ("What enters their cells?", 0, "What enters their cell?"),
    ],
)
def test_one_noun_of_an_object_changes_number(question, choose, varied):
    assert vary_form(question, VOCABULARY | {"lung"}, choose) == varied


@pytest.mark.parametrize(
    "question",
    [
        "Where was the virus?",  # "was the virus": the subject of an auxiliary
        "What did the study find?",  # the subject of "did"
        "What is found in the cells that express ACE2?",  # "that express" would agree
        "What is found in the cell membrane?",  # cell is not the head: membrane is
        "What is found in cells?",  # no determiner: "in cell" is not English
        "What is found in the receptor?",  # receptors is not in the documents
        "What is found in the Lungs?",  # capitalised: a name, perhaps
    ],
)
def test_no_noun_changes_where_agreement_or_the_documents_forbid(question):
    assert vary_form(question, VOCABULARY) is None


def test_the_other_tense_is_a_regular_form_the_documents_hold_with_the_same_stem():
    tenses = {"induces", "inhibited", "caused", "studies", "stops", "reports"}
    assert other_tense("induced", "VBD", tenses) == "induces"  # -d: induce + s
    assert other_tense("inhibits", "VBZ", tenses) == "inhibited"  # -s to -ed
    assert other_tense("causes", "VBZ", tenses) == "caused"  # -es to -d
    assert other_tense("studied", "VBN", tenses) == "studies"  # -ied to -ies
    assert other_tense("stopped", "VBD", tenses) == "stops"  # a doubled consonant
    assert other_tense("reported", "VBD", set()) is None  # reports: not in the documents
    assert other_tense("came", "VBD", tenses) is None  # irregular


TENSES = VOCABULARY | {"induces", "inhibited", "reports", "encodes", "response", "responses"}


@pytest.mark.parametrize(
    ("question", "choose", "varied"),
    [
        ("What induced a response?", 0, "What induces a response?"),
        ("What inhibits the replication?", 1, "What inhibited the replication?"),
        ("Who reported the cases?", 0, "Who reports the cases?"),
        # a singular noun after the question word is the subject: the noun site comes first
        ("What protein induced the response?", 0, "What protein induced the responses?"),
        ("What protein induced the response?", 1, "What protein induces the response?"),
        ("Which gene encoded the protein?", 1, "Which gene encodes the protein?"),
    ],
)
def test_the_verb_of_a_singular_question_subject_changes_tense(question, choose, varied):
    assert vary_form(question, TENSES, choose) == varied


@pytest.mark.parametrize(
    "question",
    [
        "Which genes encoded ACE2?",  # a plural subject: "encodes" would not agree
        "What percentage reported fever?",  # the verb's subject is not "percentage"
        "What caused by ACE2?",  # a participle, not the verb
        "Where did ACE2 induce fever?",  # the question word is not the subject
        "What came from ACE2?",  # irregular
    ],
)
def test_no_verb_changes_tense_where_its_subject_or_form_forbids(question):
    assert vary_form(question, TENSES | {"encodes", "reports", "causes", "induced"}) is None


def candidate(i: int, q: str, language: str = "en") -> GeneratedQuestion:
    passage = Passage(f"d{i}.txt", 0, 10)
    return GeneratedQuestion(
        id=f"g-{i:03d}", q=q, answer="x", quote="x", gold=(Span(f"d{i}.txt", 0, 10),),
        strategy="factual", passage=passage, provenance=Provenance("extractive"),
        language=language,
    )  # fmt: skip


def test_vary_changes_the_share_counting_the_questions_already_shifted():
    # the passage of every question holds "cells"; a question asking "cell" is already shifted
    def shifted(q: str, gold) -> bool:
        return bool(shifted_words(content_words(q), "virus in the cells"))

    questions = [candidate(i, "What enters the cells?") for i in range(8)]
    questions += [candidate(8, "What enters the cell?"), candidate(9, "Where is the virus?")]
    questions.append(candidate(10, "What enters the cells?", language="es"))  # not English
    out = vary(questions, 0.5, shifted, VOCABULARY)
    # 10 English questions with gold: 5 shifted wanted, one already is: 4 varied, each of them
    # one that can change ("the virus" is the subject of "is"), its first wording kept
    varied = [q for q in out if q.unvaried_q]
    assert len(varied) == 4
    assert {q.q for q in varied} == {"What enters the cell?"}
    assert {q.unvaried_q for q in varied} == {"What enters the cells?"}
    assert {q.id for q in varied} < {f"g-{i:03d}" for i in range(8)}
    assert out[10].q == "What enters the cells?" and out[10].unvaried_q is None
    # the same ones at any run, and a larger share only adds to them
    assert [q.id for q in vary(questions, 0.5, shifted, VOCABULARY) if q.unvaried_q] == [
        q.id for q in varied
    ]
    more = {q.id for q in vary(questions, 0.7, shifted, VOCABULARY) if q.unvaried_q}
    assert len(more) == 6 and more > {q.id for q in varied}
    assert vary(questions, 0, shifted, VOCABULARY) == questions
    # the record keeps both wordings
    assert GeneratedQuestion.from_json(varied[0].to_json()) == varied[0]


PAGE = (
    "Alpha beta gamma delta epsilon zeta eta theta iota kappa. "
    "The virus enters the airway cells through the receptor on their surface. "
    "Lambda mu nu xi omicron pi rho sigma tau upsilon."
)


def test_a_wide_gold_is_measured_against_its_window_that_the_question_asks_of():
    doc = Document("paper.pdf#page=1", PAGE)
    meter = DifficultyMeter([doc], passage_words=10, baselines=["bm25"], window_words=50)
    page = (Span(doc.doc_id, 0, len(PAGE)),)
    # three windows lie inside the page: the second holds the question's words
    (d,) = meter.measure([("How does the virus enter airway cell?", page)])
    # content words: virus, enter, airway, cell; virus and airway are there as asked, enter and
    # cell in another form (enters, cells)
    assert d.overlap == pytest.approx(2 / 4)
    assert d.form_shift == pytest.approx(2 / 4)
    assert meter.form_shifted("How does the virus enter airway cell?", page)
    assert not meter.form_shifted("Which receptor is on their surface?", page)
    # a narrow gold keeps the window overlapping it the most
    first = (Span(doc.doc_id, 0, 20),)
    assert meter.gold_passage(first, "virus cells") == PAGE[:58].strip()


def test_word_forms_match_takes_the_human_samples_share(tmp_path: Path):
    doc = Document("notes.md", PAGE)
    human = tmp_path / "qa.json"
    human.write_text(
        json.dumps(
            [
                {"q": "How does the virus enter airway cell?", "gold": ["The virus enters"]},
                {"q": "Which receptor is on their surface?", "gold": ["receptor on their surface"]},
            ]
        ),
        encoding="utf-8",
    )
    settings = {"baselines": ["bm25"], "match": str(human), "match_on": ["overlap"]}
    _, target = build({**settings, "word_forms": "match"}, [doc], passage_words=10)
    assert target is not None and target.word_forms == 0.5  # one of the two shifts a form
    assert shifted_share(target.human) == 0.5
    # a share alone sets no target, but the meter and the share are built
    meter, target = build({"baselines": ["bm25"], "word_forms": 0.25}, [doc], passage_words=10)
    assert meter is not None and target is not None and target.word_forms == 0.25
    assert not target.active
    with pytest.raises(SituateError, match="word_forms=match takes the share of your own"):
        build({"baselines": ["bm25"], "word_forms": "match"}, [doc])
    with pytest.raises(SituateError, match="word_forms=1.5 must be a share from 0 to 1"):
        build({"baselines": ["bm25"], "word_forms": 1.5}, [doc])
    with pytest.raises(SituateError, match="word_forms needs the measures"):
        build({"measure": False, "word_forms": 0.5}, [doc])


VIRUS = (
    "# Ward Notes\n\n"
    "About 80% of patients had mild symptoms of the infection in March.\n\n"
    "The trial enrolled 120 patients in one hospital.\n\n"
    "The ward was closed for 14 days by the hospitals.\n"
)


def test_generate_varies_word_forms_and_says_so(tmp_path: Path, capsys):
    from situate.commands.questions_generate import main

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "virus.md").write_text(VIRUS, encoding="utf-8")
    out = tmp_path / "out" / "questions.jsonl"
    args = [
        "dataset=folder", f"dataset.path={docs}", f"output_dir={tmp_path / 'out'}",
        "tracking=none", "question_generator=extractive", "questions=factual",
        "questions.passage_words=14", "questions.target=3",
        "questions.filters.near_duplicate.enabled=false",
        "questions.filters.trivially_lexical.enabled=false",
        "questions.difficulty.baselines=[bm25]", "questions.difficulty.word_forms=1",
        "--out", str(out),
    ]  # fmt: skip
    assert main("generate", args) == 0
    questions = read_questions(out)
    # every question asked with a shifted form: "enroll" (enrolled) already is; the ward's can
    # change ("by the hospitals": hospital is in the documents); the share's cannot ("of
    # patients" has no determiner)
    varied = [q for q in questions if q.unvaried_q]
    assert [(q.unvaried_q, q.q) for q in varied] == [
        (
            "How many days was the ward closed for by the hospitals?",
            "How many days was the ward closed for by the hospital?",
        )
    ]
    # content words: many, days, ward, closed, hospital (hospitals in the passage)
    assert varied[0].difficulty["form_shift"] == pytest.approx(1 / 5)
    printed = " ".join(capsys.readouterr().out.split())
    assert f"word forms: {sum(q.status == 'kept' for q in varied)} kept questions" in printed
    assert "a word in another form than the passage's" in printed
