"""The extractive baseline on crafted passages: every question, answer and quote checked by hand."""

from __future__ import annotations

import pytest

from situate.datasets.generated import Passage
from situate.errors import SituateError
from situate.questions.base import GenerationRequest
from situate.questions.extractive import ExtractiveGenerator
from situate.records import Document

TITLE = "Seasonal Influenza Surveillance in Northern Europe"
SENTENCES = [
    "Short line without much.",  # too short (4 words): never a candidate
    "Each week the national laboratory tests the swabs by RT-PCR for influenza A and B.",
    "The 2018 season started in week 49 and peaked in week 6 with a positivity rate of 58 percent.",
    "Hospital admissions with confirmed influenza reached 12 per 100,000 inhabitants at the peak.",
]
BODY = " ".join(SENTENCES)
TEXT = f"{TITLE}\n\n{BODY}\n\nInfluenza surveillance in Europe relies on sentinel practitioners."
DOC = Document("flu.md", TEXT, TITLE)
PASSAGE = Passage("flu.md", len(TITLE) + 2, len(TITLE) + 2 + len(BODY), "Results")


def ask(strategy="factual", index=0, document=DOC, passage=PASSAGE, language=""):
    request = GenerationRequest(document, passage, strategy, language, index)
    return ExtractiveGenerator().propose([request])[0]


def test_sentences_are_ranked_by_words_rare_in_the_document():
    # Hand count of sum(1 / occurrences in TEXT) over each sentence's distinct content words
    # (3+ letters, no stop words; "influenza" occurs 4 times in TEXT, "week" 3 times):
    # sentence 3: hospital, admissions, confirmed, reached, per, inhabitants, peak + 1/4 = 7.25;
    # sentence 2: season, started, peaked, positivity, rate, percent + 1/3 = 6.33;
    # sentence 1: national, laboratory, tests, swabs, pcr + 1/3 + 1/4 = 5.58 ("rt": 2 letters).
    first, second, third = ask(index=0), ask(index=1), ask(index=2)
    assert first.quote == SENTENCES[3]
    assert first.question == (
        "Hospital admissions with confirmed influenza reached what per 100,000 inhabitants at the peak?"
    )
    assert first.answer == "12"
    # a bare year ("the 2018 season") is no answer; the first number after it is
    assert second.quote == SENTENCES[2]
    assert second.question == (
        "The 2018 season started in week what and peaked in week 6 with a positivity rate of "
        "58 percent?"
    )
    assert second.answer == "49"
    assert third.quote == SENTENCES[1]
    assert third.question == (
        "Each week the national laboratory tests the swabs by what for influenza A and B?"
    )
    assert third.answer == "RT-PCR"  # no number: the name with capitals and a hyphen
    assert ask(index=3).failure.startswith("extractive: no sentence of 8-45 words")


def test_the_quote_is_the_sentence_verbatim_and_costs_nothing():
    proposal = ask()
    assert proposal.quote in TEXT
    assert proposal.provenance.generator == "extractive"
    assert proposal.provenance.cost_usd == 0 and proposal.provenance.input_tokens == 0
    assert proposal.failure is None
    assert ask().provenance.prompt_sha256 == proposal.provenance.prompt_sha256  # deterministic
    assert ask(index=1).provenance.prompt_sha256 != proposal.provenance.prompt_sha256


@pytest.mark.parametrize(
    "sentence, question, answer",
    [
        (
            "Vaccine effectiveness against the dominant strain was 31% in adults over 65.",
            "Vaccine effectiveness against the dominant strain was what percentage in adults over 65?",
            "31%",
        ),
        (
            "The first cases of the new variant were reported in 2019 by hospital laboratories.",
            "The first cases of the new variant were reported in which year by hospital laboratories?",
            "2019",
        ),
        (
            "The trial enrolled 120 patients across four regional hospitals last winter.",
            "The trial enrolled how many patients across four regional hospitals last winter?",
            "120",
        ),
        (
            "The virus enters airway cells through the ACE2 receptor [3, 4] on their surface.",
            "The virus enters airway cells through the what receptor on their surface?",
            "ACE2",
        ),
        (  # an aside is neither an answer nor part of the question; nor is "However,"
            "However, metered dose inhalers (MDIs) deliver 40 doses per canister [7].",
            "Metered dose inhalers deliver how many doses per canister?",
            "40",
        ),
        (  # a number inside "PD-10" or "17-ODYA" is part of a name, not an answer
            "Samples passed a PD-10 column before 17-ODYA labelling of 40 proteins in total.",
            "Samples passed a PD-10 column before 17-ODYA labelling of how many proteins in total?",
            "40",
        ),
        (
            "Most samples were sequenced at the Francis Crick Institute in the winter months.",
            "Most samples were sequenced at the what in the winter months?",
            "Francis Crick Institute",
        ),
    ],
)
def test_question_phrases_by_kind_of_answer(sentence, question, answer):
    doc = Document("d.md", sentence, "")
    proposal = ask(document=doc, passage=Passage("d.md", 0, len(sentence)))
    assert (proposal.question, proposal.answer, proposal.quote) == (question, answer, sentence)


def test_context_dependent_names_the_document_the_passage_does_not():
    proposal = ask("context_dependent")
    assert proposal.question == (
        "In Seasonal Influenza Surveillance in Northern Europe, hospital admissions with confirmed "
        "influenza reached what per 100,000 inhabitants at the peak?"
    )
    assert proposal.answer == "12" and proposal.quote == SENTENCES[3]
    # a passage that names its title itself has nothing to borrow from the rest of the document
    whole = Passage("flu.md", 0, len(TEXT))
    assert "names its document itself" in ask("context_dependent", passage=whole).failure
    # no title: the passage's section is the name
    untitled = Document("flu.md", TEXT, "")
    assert ask("context_dependent", document=untitled).question.startswith("In Results, hospital")


def test_paraphrase_is_a_counted_failure_not_a_fake_question():
    proposal = ask("paraphrase")
    assert proposal.failure == (
        "extractive: no rule for strategy 'paraphrase' (it writes factual, context_dependent)"
    )
    assert proposal.question == proposal.quote == ""


SPANISH_TITLE = "Límites de la API"
SPANISH = (
    "El plan Pro admite 600 solicitudes por minuto y 20 conexiones simultáneas por cuenta. "
    "Las claves caducan a los 90 días si no se usan en ninguna llamada."
)


def test_spanish_templates_by_detected_language():
    text = f"{SPANISH_TITLE}\n\n{SPANISH}"
    doc = Document("api.md", text, SPANISH_TITLE)
    passage = Passage("api.md", len(SPANISH_TITLE) + 2, len(text))
    first = ask(document=doc, passage=passage)
    # both sentences score 1 per distinct content word (each occurs once): 9 words vs 8
    assert first.question == (
        "¿El plan Pro admite cuántas solicitudes por minuto y 20 conexiones simultáneas por cuenta?"
    )
    assert first.answer == "600"
    second = ask(document=doc, passage=passage, index=1)
    assert (
        second.question
        == "¿Las claves caducan a los cuántos días si no se usan en ninguna llamada?"
    )
    dependent = ask("context_dependent", document=doc, passage=passage)
    assert dependent.question.startswith("¿En Límites de la API, el plan Pro admite cuántas")
    # a configured language wins over detection; one without templates is a one-line error
    assert ask(document=doc, passage=passage, language="Spanish").question == first.question
    with pytest.raises(SituateError, match="English or Spanish"):
        ask(document=doc, passage=passage, language="Klingon")


def test_bad_word_limits_are_one_line():
    with pytest.raises(SituateError, match="min_words=9, max_words=3"):
        ExtractiveGenerator(min_words=9, max_words=3)


def test_through_the_engine_on_real_papers_every_quote_is_found_exactly(covid_qa_file):
    from situate.datasets.squad import SquadLoader
    from situate.questions.generate import build_requests, generate

    corpus = SquadLoader(str(covid_qa_file), max_documents=3).load()
    mix = {"factual": 0.5, "context_dependent": 0.5}
    requests = build_requests(corpus.documents, target=12, mix=mix)
    result = generate(corpus.documents, ExtractiveGenerator(), [], requests)
    kept = [q for q in result.questions if q.status == "kept"]
    assert len(result.questions) == 12 and len(kept) >= 9  # a few passages hold no candidate
    texts = {d.doc_id: d.text for d in corpus.documents}
    for q in kept:
        (span,) = q.gold
        assert q.match == "exact" and texts[span.doc_id][span.start : span.end] == q.quote
        assert q.passage.start <= span.start and span.end <= q.passage.end  # from its passage
        assert q.answer in q.quote and q.q.endswith("?")
        assert q.provenance.generator == "extractive" and q.provenance.cost_usd == 0
    dependent = [q for q in kept if q.strategy == "context_dependent"]
    assert dependent and all(
        q.q.startswith(f"In {corpus.document(q.gold[0].doc_id).title}, ") for q in dependent
    )
