"""The extractive baseline on crafted passages: every question, answer and quote checked by hand."""

from __future__ import annotations

import pytest

from situate.datasets.generated import Passage
from situate.errors import SituateError
from situate.questions.base import GenerationRequest
from situate.questions.extractive import ExtractiveGenerator
from situate.questions.wording.tokens import copied_run
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


QUESTION_WORDS = {"what", "which", "how", "when", "where", "who", "qué", "cuál", "cuántos",
                  "cuántas", "cuánto", "cuándo"}  # fmt: skip


def opens_with_its_question_word(question: str, title: str = "") -> bool:
    """The question word is among the first three words (after "In <title>, " and a
    preposition) and nowhere later: no "... totaled $what million ..." gap."""
    body = question.removeprefix("¿").removeprefix(f"In {title}, ").removeprefix(f"En {title}, ")
    words = [w.strip("¿?,").casefold() for w in body.split()]
    at = [i for i, w in enumerate(words) if w in QUESTION_WORDS]
    return bool(at) and at[0] <= 2 and all(i <= at[0] + 1 for i in at)


def ask(strategy="factual", index=0, document=DOC, passage=PASSAGE, language=""):
    request = GenerationRequest(document, passage, strategy, language, index)
    return ExtractiveGenerator().propose([request])[0]


def test_sentences_are_ranked_by_words_rare_in_the_document():
    # Hand count of sum(1 / occurrences in TEXT) over each sentence's distinct content words
    # (3+ letters, no stop words; "influenza" occurs 4 times in TEXT, "week" 3 times):
    # sentence 3: hospital, admissions, confirmed, reached, per, inhabitants, peak + 1/4 = 7.25;
    # sentence 2: season, started, peaked, positivity, rate, percent + 1/3 = 6.33;
    # sentence 1: national, laboratory, tests, swabs, pcr + 1/3 + 1/4 = 5.58 ("rt": 2 letters).
    first = ask(index=0)
    # sentence 3 ("... reached 12 per 100,000 inhabitants ...") is not worded: a bare number
    # is only asked as the complement of "be" or after "which <noun>"; sentence 2's first number
    # after its bare year ("the 2018 season") is, with the noun before it ("in week 49")
    assert first.quote == SENTENCES[2]
    assert first.question == "In which week did the 2018 season start?"
    assert first.answer == "49"
    # sentence 1 has a name (RT-PCR) but no verb the rules know ("tests"): not worded either
    assert ask(index=1).failure.startswith("extractive: no sentence of 8-45 words")


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
        (  # a financial statement: money, its unit, the date phrase as the qualifier
            "Cash and cash equivalents totaled $1,245 million and $697 million at December 31, "
            "2021 and 2020, respectively.",
            "How much did cash and cash equivalents total at December 31, 2021?",
            "$1,245 million",
        ),
        (
            "Total revenues were $5.2 billion in 2021, up 12% from 2020.",
            "How much were total revenues in 2021?",
            "$5.2 billion",
        ),
        (  # a definition
            "Angiotensin-converting enzyme 2 (ACE2) is a membrane protein that serves as the "
            "entry point for the virus.",
            "What is angiotensin-converting enzyme 2?",
            "a membrane protein that serves as the entry point for the virus",
        ),
        (  # a date: the passive inverted, the month kept with its year
            "The novel coronavirus was first identified in December 2019 in Wuhan, China.",
            "When was the novel coronavirus first identified in Wuhan?",
            "December 2019",
        ),
        (  # a fronted date
            "In 2018, the company acquired Widget Corp for $310 million in cash.",
            "When did the company acquire Widget Corp?",
            "2018",
        ),
        (
            "The first cases of the new variant were reported in 2019 by hospital laboratories.",
            "When were the first cases reported by hospital laboratories?",
            "2019",
        ),
        (
            "Vaccine effectiveness against the dominant strain was 31% in adults over 65.",
            "What was vaccine effectiveness in adults over 65?",
            "31%",
        ),
        (
            "About 80% of patients had mild symptoms and recovered without treatment.",
            "What share of patients had mild symptoms?",
            "80%",
        ),
        (
            "Gross margin decreased 3.5 percent to 41.2 percent in fiscal 2022 due to higher "
            "freight costs.",
            "By how much did gross margin decrease?",
            "3.5 percent",
        ),
        (
            "The trial enrolled 120 patients across four regional hospitals last winter.",
            "How many patients did the trial enroll?",
            "120",
        ),
        (  # a run-in heading is not the subject ("How many patients did study design enroll?")
            "Study design: The trial enrolled 120 patients across four regional hospitals.",
            "How many patients did the trial enroll across four regional hospitals?",
            "120",
        ),
        (  # an aside is neither an answer nor part of the question; nor is "However,"
            "However, metered dose inhalers (MDIs) deliver 40 doses per canister [7].",
            "How many doses do metered dose inhalers deliver per canister?",
            "40",
        ),
        (  # a name before a noun: "which receptor", its preposition in front
            "The virus enters airway cells through the ACE2 receptor [3, 4] on their surface.",
            "Through which receptor does the virus enter airway cells on their surface?",
            "ACE2",
        ),
        (
            "Most samples were sequenced at the Francis Crick Institute in the winter months.",
            "Where were most samples sequenced in the winter months?",
            "Francis Crick Institute",
        ),
        (
            "Smith et al. developed the first assay for the antigen in 2015.",
            "When did Smith et al. develop the first assay?",
            "2015",
        ),
    ],
)
def test_questions_by_kind_of_answer_read_like_a_persons(sentence, question, answer):
    doc = Document("d.md", sentence, "")
    proposal = ask(document=doc, passage=Passage("d.md", 0, len(sentence)))
    assert (proposal.question, proposal.answer, proposal.quote) == (question, answer, sentence)
    assert opens_with_its_question_word(proposal.question)
    assert copied_run(proposal.question, sentence) <= 5  # max_copied


@pytest.mark.parametrize(
    ("sentence", "garbled"),
    [  # sentences of the first 30 COVID-QA papers (the one on serum samples crafted); the
        # question the rule wrote before tags (or before rule 4)
        (  # a name inside a long phrase after the verb
            "Under non-reducing conditions, the protein was unable to be detected by the "
            "anti-histidine Ab, even in the cell lysate (data not shown).",
            "What was the protein unable under non-reducing conditions?",
        ),
        (  # "called" after "also" is a participle, not the clause's verb
            "Inflammatory lung disease, also called COPD, includes a wide range of lung ailments.",
            "What did inflammatory lung disease call?",
        ),
        (  # "separated" before "by" is a participle; a person does not ask "By what ...?"
            "The proteins separated by SDS-PAGE were visualized using a 532-nm laser for "
            "excitation.",
            "By what did the proteins separate?",
        ),
        (  # an abbreviation ("TB") is no answer a person asks for
            "CXRAY, though expensive at the initial installment, may improve TB case finding due "
            "to its short turnover time and high throughput [18] .",
            "Which case may CXRAY improve?",
        ),
        (  # a name qualifying a noun of its own phrase ("maternal DNA")
            "Kweik and colleagues found a significant association between levels of maternal DNA "
            "in umbilical cord blood and IP transmission of HIV-1.",
            "What did kweik and colleagues find a significant association in umbilical cord blood?",
        ),
        (  # "alignment" is a noun, not a present-tense verb before "20 BCoVs"
            "Multiple-sequence alignment, including 20 BCoVs and 10 clade A betacoronaviruses "
            "closely related to BCoV, was performed using the Muscle algorithm.",
            "How many BCoVs do multiple-sequence alignment including?",
        ),
        (  # "6 times increased odds": the count is not of "times" alone
            "HIV-infected children have 6 times increased odds of developing severe pneumonia "
            "or of death compared to HIV-uninfected children [52] .",
            "How many times do HIV-infected children have?",
        ),
        (  # "the Chinese Bovine coronavirus strain": which strain, not which coronavirus
            "The E gene is closely related to the Chinese Bovine coronavirus strain BCV-AKS-01 "
            "(accession no.",
            "To which coronavirus is the E gene closely related strain BCV-AKS-01?",
        ),
        (  # the answer's clause starts after ", while"; its own has no subject the rule asks
            "Amino-acid sequence similarity: The amino acid sequence of IFITM5 is relatively "
            "dissimilar to IFITM1-3 proteins, while IFITM1-3 proteins share 85% similarity with "
            "each other.",
            "What is Amino-acid sequence similarity relatively dissimilar similarity with each "
            "other?",
        ),
        (  # a comparison cut off ("... earlier than?")
            "The halftime for the maximum mineralization in the presence of 2BP was estimated to "
            "be 7 days earlier than that in the absence of 2BP.",
            "How many days was the halftime estimated to be earlier than?",
        ),
        (  # "collected from" is a participle: the clause's verb is "were", after the answer
            "Serum samples collected from 31 patients were tested for antibodies against the "
            "virus.",
            "How many patients did serum samples collect from?",
        ),
        (  # "which" before an adjective: the rule's 3 asked for "1" of "1 H-NMR"
            "The relative configurations of isoxazolidines trans-11a and cis-11a were "
            "established based on our previous studies [39, 40] since similar 1 H-NMR spectral "
            "patters for the respective series of trans-and cis-isoxazolidines were observed.",
            "Since which similar were the relative configurations established based?",
        ),
        (  # a measurement's symbols in the question
            "The average body temperature, heart rate, and respiratory rates of the animals were "
            "37.18±0.13°C, 104±4.33/min, and 28.86±0.75/min pre-treatment.",
            "What were the average body temperature ± 0.13 ° C?",
        ),
    ],
)
def test_a_sentence_the_rule_would_garble_gives_no_question(sentence, garbled):
    doc = Document("d.md", sentence, "")
    proposal = ask(document=doc, passage=Passage("d.md", 0, len(sentence)))
    assert proposal.question != garbled
    assert proposal.failure is not None and "no sentence" in proposal.failure


def test_a_participle_with_its_object_is_the_clauses_verb():
    # the tagger calls "enrolled" a participle (VBN); with an object after it ("120"), no
    # comma or "also" before it, it is the verb the question turns around
    sentence = "The trial enrolled 120 patients across four regional hospitals last winter."
    doc = Document("d.md", sentence, "")
    proposal = ask(document=doc, passage=Passage("d.md", 0, len(sentence)))
    assert proposal.question == "How many patients did the trial enroll?"


def test_a_question_that_would_copy_a_long_run_is_shortened_or_not_written():
    sentence = "The median incubation period of the novel coronavirus was 5.2 days in Wuhan."
    doc = Document("d.md", sentence, "")
    proposal = ask(document=doc, passage=Passage("d.md", 0, len(sentence)))
    # the whole subject would copy 7 words ("the median incubation period of the novel
    # coronavirus"): cut at its last preposition
    assert proposal.question == "How long was the median incubation period in Wuhan?"
    assert copied_run("the median incubation period of the novel coronavirus was", sentence) == 9
    strict = ExtractiveGenerator(max_copied=2).propose(
        [GenerationRequest(doc, Passage("d.md", 0, len(sentence)), "factual")]
    )[0]
    # two words at most: the subject cut to its first two words ("in Wuhan" copies two)
    assert strict.question == "How long was the median in Wuhan?"
    one = ExtractiveGenerator(max_copied=1).propose(
        [GenerationRequest(doc, Passage("d.md", 0, len(sentence)), "factual")]
    )[0]
    assert one.failure is not None and "no sentence" in one.failure  # "the median" is 2


def test_variants_word_a_sentence_again_vaguer_after_every_sentence_has_its_first():
    sentence = "The median incubation period of the novel coronavirus was 5.2 days in Wuhan."
    other = "The trial enrolled 120 patients in 2019 across Europe."
    text = f"{sentence} {other}"
    doc = Document("d.md", text, "")
    passage = Passage("d.md", 0, len(text))
    generator = ExtractiveGenerator(variants=4)
    asked = [
        generator.propose([GenerationRequest(doc, passage, "factual", "", i)])[0] for i in range(8)
    ]
    assert [p.question for p in asked] == [
        # every sentence's first wording (what variants=1 writes), then the second, ...
        "How long was the median incubation period in Wuhan?",
        "How many patients did the trial enroll in 2019 across Europe?",
        # no qualifier; then the subject's adjectives left out ("median")
        "How long was the median incubation period?",
        "How many patients did the trial enroll?",
        "How long was the incubation period in Wuhan?",
        "How long was the incubation period?",
        "",
        "",
    ]
    assert asked[5].answer == "5.2 days" and asked[3].answer == "120"
    assert "(2 candidates, 6 worded, for index 6)" in asked[6].failure
    # one wording a sentence: the first wordings only, under the earlier identity
    single = ExtractiveGenerator()
    first = [
        single.propose([GenerationRequest(doc, passage, "factual", "", i)])[0] for i in range(3)
    ]
    assert [p.question for p in first] == [q.question for q in asked[:2]] + [""]
    assert "variants" not in single.identity() and generator.identity()["variants"] == 4
    assert asked[0].provenance.prompt_sha256 != first[0].provenance.prompt_sha256


def ask_subjects(sentence: str, index: int = 0, variants: int = 1):
    doc = Document("d.md", sentence, "")
    generator = ExtractiveGenerator(subjects=True, variants=variants)
    request = GenerationRequest(doc, Passage("d.md", 0, len(sentence)), "factual", "", index)
    return generator.propose([request])[0]


@pytest.mark.parametrize(
    "sentence, question, answer",
    [
        (  # the predicate's qualifier, then without it: the subject is the answer
            "S-palmitoylation on the protein regulates the antiviral activity of IFITM3.",
            "What regulates the antiviral activity of IFITM3?",
            "S-palmitoylation on the protein",
        ),
        (  # "remains the main cause of death in the neonatal period" copies 9 words (over
            # 5 + 2): the qualifier's first prepositional phrase only ("Calf septicemia is the
            # main cause ..." is a definition: "What is calf septicemia?")
            "Calf septicemia remains the main cause of death in the neonatal period of calves.",
            "What remains the main cause of death?",
            "Calf septicemia",
        ),
        (  # a modal and an adverb before the verb; the qualifier ends at the comma
            "Dysregulation of the antibody response can lead to an autoimmune disease, "
            "malignancy, or enhanced infection.",
            "What can lead to an autoimmune disease?",
            "Dysregulation of the antibody response",
        ),
    ],
)
def test_a_subject_is_asked_for_where_the_sentence_has_no_number_or_name(
    sentence, question, answer
):
    proposal = ask_subjects(sentence)
    assert (proposal.question, proposal.answer, proposal.quote) == (question, answer, sentence)
    assert ask(document=Document("d.md", sentence, ""), passage=Passage("d.md", 0, len(sentence))
               ).failure is not None  # fmt: skip  # without subjects=True: no question


@pytest.mark.parametrize(
    "sentence",
    [
        "The results showed a strong effect of the treatment on survival.",  # no thing named
        "These proteins bind the receptor with high affinity.",  # points back
        "The majority of the infections occurred in patients under two years old.",  # a count
        "Baseline characteristics of mothers and infants are presented in Table 1.",  # layout
        "Plates were washed with wash buffer and incubated for one hour.",  # bench work
        "Brain magnetic resonance imaging showed a left frontal lesion.",  # reports a finding
        "The single strongest risk factor for pneumonia is HIV infection.",  # "What is HIV
        # infection?" would ask for a definition
        "NK cells are primarily involved in eliminating virus-infected cells.",  # "... in
        # eliminating virus-infected cells" copies 8 words, and "What are primarily
        # involved?" names nothing
        "The study participants were mainly of medium and high educational level.",  # the
        # phrase cut at "and" leaves "of medium", then "What were mainly?" names nothing
    ],
)
def test_a_subject_that_names_nothing_or_a_garbled_predicate_gives_no_question(sentence):
    proposal = ask_subjects(sentence)
    assert proposal.failure is not None, proposal.question
    assert "with a number or a name (or a subject) that a rule words" in proposal.failure


def test_a_number_or_name_comes_before_the_subject_and_subjects_change_the_identity():
    sentence = "The median incubation period of the novel coronavirus was 5.2 days in Wuhan."
    assert ask_subjects(sentence).question == "How long was the median incubation period in Wuhan?"
    # the subject's wordings are the vaguer ones: with its qualifier, then without
    text = "Hepcidin plays a fundamental role in the regulation of iron metabolism."
    asked = [ask_subjects(text, index=i, variants=4).question for i in range(3)]
    assert asked == [
        "What plays a fundamental role in the regulation?",  # "of iron metabolism": 8 copied
        "What plays a fundamental role?",
        "",
    ]
    plain, subjects = ExtractiveGenerator(), ExtractiveGenerator(subjects=True)
    assert "subjects" not in plain.identity() and subjects.identity()["subjects"] == 1
    with pytest.raises(SituateError, match="subjects='yes' must be true or false"):
        ExtractiveGenerator(subjects="yes")


def test_context_dependent_names_the_document_the_passage_does_not():
    proposal = ask("context_dependent")
    assert proposal.question == (
        "In Seasonal Influenza Surveillance in Northern Europe, in which week did the 2018 season "
        "start?"
    )
    assert proposal.answer == "49" and proposal.quote == SENTENCES[2]
    # a passage that names its title itself has nothing to borrow from the rest of the document
    whole = Passage("flu.md", 0, len(TEXT))
    assert "names its document itself" in ask("context_dependent", passage=whole).failure
    # no title: the passage's section is the name
    untitled = Document("flu.md", TEXT, "")
    assert ask("context_dependent", document=untitled).question.startswith(
        "In Results, in which week"
    )


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
    # both sentences score 1 per distinct content word (each occurs once): 9 words vs 8; the
    # verb goes after the question word, the preposition and article in front of it
    assert first.question == "¿Cuántas solicitudes admite el plan Pro?"
    assert first.answer == "600"
    second = ask(document=doc, passage=passage, index=1)
    assert second.question == "¿A los cuántos días caducan las claves?"
    dependent = ask("context_dependent", document=doc, passage=passage)
    assert dependent.question == "¿En Límites de la API, cuántas solicitudes admite el plan Pro?"
    # a configured language wins over detection; one without templates is a one-line error
    assert ask(document=doc, passage=passage, language="Spanish").question == first.question
    with pytest.raises(SituateError, match="English or Spanish"):
        ask(document=doc, passage=passage, language="Klingon")


def test_the_language_is_the_documents_and_a_passage_in_another_is_not_asked():
    english = f"{TEXT} {TEXT}"  # 32 English function words: an English document
    spanish_at = len(english) + 2
    doc = Document("flu.md", f"{english}\n\n{SPANISH}", TITLE)
    # a Spanish passage of an English document (8 Spanish function words, 0 English): a
    # question in English would not quote it, one in Spanish would not be the record's language
    proposal = ask(document=doc, passage=Passage("flu.md", spanish_at, len(doc.text)))
    assert proposal.failure == "extractive: the passage is in Spanish, its document in English"
    # its English passage is asked in English, as the record says
    assert ask(document=doc).question == "In which week did the 2018 season start?"
    # a document in a language without templates is not asked either (nothing is guessed)
    french = (
        "La saison a commencé en semaine 49 et le pic est dans la semaine 6 pour les "
        "laboratoires du pays, qui sont dans le réseau des médecins."
    )
    doc = Document("grippe.md", french, "")
    proposal = ask(document=doc, passage=Passage("grippe.md", 0, len(french)))
    assert proposal.failure.startswith("extractive: the document is in French: the rule words")


def test_bad_word_limits_are_one_line():
    with pytest.raises(SituateError, match="min_words=9, max_words=3"):
        ExtractiveGenerator(min_words=9, max_words=3)


def test_through_the_engine_on_real_papers_every_quote_is_found_exactly(covid_qa_file):
    from situate.datasets.squad import SquadLoader
    from situate.questions.generate import build_requests, generate

    corpus = SquadLoader(str(covid_qa_file), max_documents=3).load()
    mix = {"factual": 0.5, "context_dependent": 0.5}
    requests = build_requests(corpus.documents, target=36, mix=mix)
    result = generate(corpus.documents, ExtractiveGenerator(), [], requests)
    kept = [q for q in result.questions if q.status == "kept"]
    # a passage without a sentence the rules can word gives no question (6 of 36 here)
    assert len(result.questions) == 36 and len(kept) >= 4
    texts = {d.doc_id: d.text for d in corpus.documents}
    for q in kept:
        (span,) = q.gold
        assert q.match == "exact" and texts[span.doc_id][span.start : span.end] == q.quote
        assert q.passage.start <= span.start and span.end <= q.passage.end  # from its passage
        assert q.answer in q.quote and q.q.endswith("?")
        assert q.provenance.generator == "extractive" and q.provenance.cost_usd == 0
    for q in kept:  # a person's question: no cloze gap, no long run copied from the passage
        passage = texts[q.passage.path][q.passage.start : q.passage.end]
        title = corpus.document(q.gold[0].doc_id).title
        assert opens_with_its_question_word(q.q, title), q.q
        assert copied_run(q.q, passage) <= 6, q.q
    dependent = [q for q in kept if q.strategy == "context_dependent"]
    assert dependent and all(
        q.q.startswith(f"In {corpus.document(q.gold[0].doc_id).title}, ") for q in dependent
    )


CAMELS = (
    "Camels carry MERS-CoV across Saudi Arabia. Studies of MERS-CoV in Riyadh were reviewed by "
    "the ministry.\n\nThe median incubation period was 5.2 days among 40 patients in the hospital."
)
CAMEL_DOC = Document("camels.md", CAMELS, "Camel Viruses")
CAMEL_PASSAGE = Passage("camels.md", CAMELS.index("The median"), len(CAMELS), "Results")


def ask_camels(strategy="factual", **options):
    request = GenerationRequest(CAMEL_DOC, CAMEL_PASSAGE, strategy)
    return ExtractiveGenerator(**options).propose([request])[0]


def test_the_passage_wording_names_the_topic_its_neighbourhood_repeats():
    # the sentence wording asks with its sentence's words only
    assert ask_camels().question == "How long was the median incubation period?"
    # the passage wording: MERS-CoV occurs twice within 75 tokens of the sentence (Saudi Arabia
    # and Riyadh once each), and the question does not name it; answer and quote unchanged
    passage = ask_camels(wording="passage")
    assert passage.question == "How long was the median incubation period for MERS-CoV?"
    assert passage.answer == "5.2 days" and passage.quote == CAMELS[CAMEL_PASSAGE.start :]
    assert passage.provenance.prompt_sha256 != ask_camels().provenance.prompt_sha256
    dependent = ask_camels("context_dependent", wording="passage")
    assert dependent.question == (
        "In Camel Viruses, how long was the median incubation period for MERS-CoV?"
    )
    # within 3 tokens of the sentence ("by the ministry." before it) no name repeats: the
    # sentence wording's question; nor with the topic asked to occur three times
    assert ask_camels(wording="passage", topic_window=3).question == (
        "How long was the median incubation period?"
    )
    assert ask_camels(wording="passage", topic_count=3).question == (
        "How long was the median incubation period?"
    )


def test_the_passage_wording_in_spanish():
    text = (
        f"{SPANISH_TITLE}\n\nEn Stripe cada cuenta tiene un límite propio.\n\n{SPANISH}\n\n"
        "La consola de Stripe muestra el consumo."
    )
    doc = Document("api.md", text, SPANISH_TITLE)
    start = text.index(SPANISH)
    request = GenerationRequest(doc, Passage("api.md", start, start + len(SPANISH)), "factual")
    # "Stripe" twice around the passage ("En", opening its sentence, is not part of the name)
    proposal = ExtractiveGenerator(wording="passage").propose([request])[0]
    assert proposal.question == "¿Cuántas solicitudes admite el plan Pro para Stripe?"


def test_bad_wording_options_are_one_line():
    with pytest.raises(SituateError, match="wording='chunk': use one of sentence, passage"):
        ExtractiveGenerator(wording="chunk")
    with pytest.raises(SituateError, match="topic_window=0 must be an integer >= 1"):
        ExtractiveGenerator(topic_window=0)


def test_question_generator_extractive_passage_composes_the_passage_wording():
    from hydra.utils import instantiate

    from situate.config.compose import compose

    cfg = compose(["question_generator=extractive_passage", "question_generator.topic_window=40"])
    generator = instantiate(cfg.question_generator)
    assert (generator.wording, generator.topic_window, generator.topic_count) == ("passage", 40, 2)
    assert instantiate(compose(["question_generator=extractive"]).question_generator).wording == (
        "sentence"
    )
