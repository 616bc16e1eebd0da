"""SquadLoader: spans, offset repair, one-line errors, and the real COVID-QA file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from situate.datasets.squad import SquadLoader, nearest_occurrence
from situate.errors import SituateError
from situate.records import Span

REPO = Path(__file__).resolve().parents[2]
COVID_QA = REPO / ".." / "shared" / "data" / "covid-qa" / "200423_covidQA.json"

# Offsets (hand-counted): "Title line" 0-9, "\n" 10, "The" 11, "virus" 15, "spreads" 21, "by" 29,
# "droplets" 32-39, "." 40, "Masks" 42-46, "reduce" 48, "spread" 55-60, "." 61; length 62.
CTX = "Title line\nThe virus spreads by droplets. Masks reduce spread."
CTX2 = "Second paper body."


def qa(qid: Any, question: str, *answers: tuple[str, int], **extra: Any) -> dict[str, Any]:
    return {
        "id": qid,
        "question": question,
        "answers": [{"text": t, "answer_start": s} for t, s in answers],
        **extra,
    }


def write_squad(tmp_path: Path, data: Any, name: str = "squad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def one_doc(tmp_path: Path, *qas: dict[str, Any], context: str = CTX) -> Path:
    data = {"data": [{"paragraphs": [{"context": context, "document_id": "d0", "qas": list(qas)}]}]}
    return write_squad(tmp_path, data)


def load_error(path: Path, **kwargs: Any) -> str:
    with pytest.raises(SituateError) as info:
        SquadLoader(str(path), **kwargs).load()
    message = str(info.value)
    assert "\n" not in message
    return message


def test_documents_ids_titles_and_exact_spans(tmp_path: Path) -> None:
    data = {
        "data": [
            {
                "title": "Droplets",
                "paragraphs": [
                    {
                        "context": CTX,
                        "document_id": 776,
                        "qas": [
                            qa(1, "How?", ("droplets", 32), ("droplets", 32), ("by droplets", 29)),
                            qa("q2", "What helps?", ("Masks", 42)),
                        ],
                    }
                ],
            },
            {"paragraphs": [{"context": CTX, "qas": []}, {"context": CTX2, "qas": []}]},
        ]
    }
    path = write_squad(tmp_path, data)
    corpus = SquadLoader(str(path), name="tiny").load()

    assert corpus.name == "tiny"
    assert [d.doc_id for d in corpus.documents] == ["776", "1-0", "1-1"]
    assert [d.title for d in corpus.documents] == ["Droplets", "Title line", "Second paper body."]
    assert corpus.documents[0].text == CTX
    assert corpus.documents[0].source == str(path)
    q1, q2 = corpus.questions
    assert q1.qid == "1" and q1.text == "How?" and q1.answer == "droplets"
    # The duplicate answer collapses; the distinct "by droplets" span stays.
    assert q1.gold == (
        Span("776", 32, 40, match="answer_text"),
        Span("776", 29, 40, match="answer_text"),
    )
    assert q2.gold == (Span("776", 42, 47, match="answer_text"),)
    assert corpus.notes == {"offsets_repaired": 0, "unanswerable_skipped": 0}


def test_long_first_line_gives_no_title(tmp_path: Path) -> None:
    context = "x" * 200 + "\nbody"
    path = one_doc(tmp_path, context=context)
    assert SquadLoader(str(path)).load().documents[0].title == ""


def test_offsets_off_by_minus_one_and_plus_three_are_repaired(tmp_path: Path) -> None:
    # "Masks" is at 42: claimed 43 (text one character earlier) and 39 (three characters later).
    path = one_doc(tmp_path, qa("a", "q?", ("Masks", 43)), qa("b", "q?", ("Masks", 39)))
    corpus = SquadLoader(str(path)).load()
    assert [q.gold for q in corpus.questions] == [
        (Span("d0", 42, 47, match="answer_text"),),
        (Span("d0", 42, 47, match="answer_text"),),
    ]
    assert corpus.notes["offsets_repaired"] == 2


def test_repair_prefers_nearest_then_earlier() -> None:
    assert nearest_occurrence("ab..ab", "ab", 2, 10) == 0  # 0 and 4 are both 2 away
    assert nearest_occurrence("ab.ab", "ab", 2, 10) == 3  # 3 is 1 away, 0 is 2 away
    assert nearest_occurrence("ab.ab", "ab", 3, 10) == 3  # exact
    assert nearest_occurrence("ab....", "ab", 5, 4) is None  # 0 is 5 away


def test_answer_not_near_offset_is_one_line_error(tmp_path: Path) -> None:
    path = one_doc(tmp_path, qa(262, "q?", ("Mother-to-child", 5)))
    assert load_error(path) == (
        f"{path}: question 262: answer text 'Mother-to-child' not found at offset 5 or within "
        f"10 characters; fix answer_start or the text"
    )


def test_answer_outside_window_is_error(tmp_path: Path) -> None:
    # "Masks" is at 42, 12 characters from 30: outside a window of 10, inside one of 12.
    path = one_doc(tmp_path, qa("far", "q?", ("Masks", 30)))
    assert load_error(path) == (
        f"{path}: question far: answer text 'Masks' not found at offset 30 or within "
        f"10 characters; fix answer_start or the text"
    )
    gold = SquadLoader(str(path), repair_window=12).load().questions[0].gold
    assert gold == (Span("d0", 42, 47, match="answer_text"),)


def test_long_answer_text_is_shortened_in_error(tmp_path: Path) -> None:
    text = "A" * 50
    path = one_doc(tmp_path, qa(7, "q?", (text, 0)))
    assert f"answer text '{'A' * 40}…' not found at offset 0" in load_error(path)


def test_offset_past_the_end_is_error(tmp_path: Path) -> None:
    path = one_doc(tmp_path, qa(9, "q?", ("spread.", 62)))
    assert load_error(path) == (
        f"{path}: question 9: answer_start 62 is past the end of document d0 (62 characters); "
        f"fix answer_start"
    )


def test_unanswerable_questions_are_skipped_and_counted(tmp_path: Path) -> None:
    path = one_doc(
        tmp_path,
        qa("x", "Unanswerable?", is_impossible=True),
        qa("y", "Answerable?", ("virus", 15), is_impossible=False),
        qa("z", "Also unanswerable?", is_impossible=True),
    )
    corpus = SquadLoader(str(path)).load()
    assert [q.qid for q in corpus.questions] == ["y"]
    assert corpus.notes["unanswerable_skipped"] == 2


def test_answerable_question_without_answers_is_error(tmp_path: Path) -> None:
    path = one_doc(tmp_path, qa("n", "q?"))
    assert load_error(path) == (
        f"{path}: question n: no answers; add one or set is_impossible: true"
    )


def test_duplicate_document_id_is_error(tmp_path: Path) -> None:
    paragraphs = [
        {"context": CTX, "document_id": "d0", "qas": []},
        {"context": CTX2, "document_id": "d0", "qas": []},
    ]
    path = write_squad(tmp_path, {"data": [{"paragraphs": paragraphs}]})
    assert load_error(path) == (
        f"{path}: duplicate document id 'd0'; give every paragraph its own document_id"
    )


def test_duplicate_question_id_is_error(tmp_path: Path) -> None:
    path = one_doc(tmp_path, qa(5, "q?", ("virus", 15)), qa("5", "q?", ("Masks", 42)))
    assert load_error(path) == f"{path}: duplicate question id '5'; give every question its own id"


def test_empty_context_names_the_document(tmp_path: Path) -> None:
    path = one_doc(tmp_path, context="  \n ")
    assert load_error(path) == (
        f"{path}: document d0: empty context; fill in its text or remove the paragraph"
    )


def test_missing_field_names_the_record(tmp_path: Path) -> None:
    paragraphs = [
        {"context": CTX, "qas": [{"id": 1, "question": "q?", "answers": [{"text": "x"}]}]}
    ]
    path = write_squad(tmp_path, {"data": [{"paragraphs": paragraphs}]})
    assert load_error(path) == (
        f"{path}: question 1 answer 0: missing field(s) answer_start (fields present: text); "
        f"rename or add them"
    )


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"data": [\n  {"paragraphs": ]\n}', encoding="utf-8")
    assert load_error(path) == (
        f"{path}:2:18: invalid JSON (Expecting value); fix the file at that line"
    )


def test_missing_file_says_how_to_fetch(tmp_path: Path) -> None:
    message = load_error(tmp_path / "nope.json")
    assert message.startswith(f"{tmp_path / 'nope.json'}: SQuAD-format JSON file not found;")
    assert "situate data fetch covid-qa" in message and "SITUATE_DATA_DIR" in message


def test_max_documents_then_max_questions(tmp_path: Path) -> None:
    paragraphs = [
        {"context": CTX, "qas": [qa("a", "q?", ("virus", 15)), qa("b", "q?", ("Masks", 42))]},
        {"context": CTX2, "qas": [qa("c", "q?", ("paper", 7))]},
    ]
    path = write_squad(tmp_path, {"data": [{"paragraphs": paragraphs}]})
    one_doc_corpus = SquadLoader(str(path), max_documents=1).load()
    assert [d.doc_id for d in one_doc_corpus.documents] == ["0-0"]
    assert [q.qid for q in one_doc_corpus.questions] == ["a", "b"]
    one_question = SquadLoader(str(path), max_questions=1, sample="first").load()
    assert [q.qid for q in one_question.questions] == ["a"]
    both = SquadLoader(str(path), max_documents=1, max_questions=1, sample="first").load()
    assert [q.qid for q in both.questions] == ["a"]
    assert SquadLoader(str(path)).load().questions[2].gold == (
        Span("0-1", 7, 12, match="answer_text"),
    )


def test_config_files_instantiate_the_loader(tmp_path: Path) -> None:
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    (tmp_path / "covid-qa").mkdir()
    one_doc(tmp_path / "covid-qa", qa(1, "q?", ("virus", 15)))
    (tmp_path / "covid-qa" / "squad.json").rename(tmp_path / "covid-qa" / "200423_covidQA.json")
    covid = OmegaConf.load(REPO / "conf" / "dataset" / "covid_qa.yaml")
    root = OmegaConf.create({"data_dir": str(tmp_path), "dataset": covid})
    loader = instantiate(root.dataset)
    assert isinstance(loader, SquadLoader)
    assert loader.name == "covid_qa" and loader.repair_window == 10
    assert [q.qid for q in loader.load().questions] == ["1"]

    generic = OmegaConf.load(REPO / "conf" / "dataset" / "squad.yaml")
    assert OmegaConf.is_missing(generic, "path")


@pytest.mark.skipif(not COVID_QA.exists(), reason=f"real COVID-QA file absent at {COVID_QA}")
def test_real_covid_qa_loads_with_234_repairs() -> None:
    corpus = SquadLoader(str(COVID_QA), name="covid_qa").load()
    assert len(corpus.documents) == 98
    assert len(corpus.questions) == 1380
    assert corpus.notes == {"offsets_repaired": 234, "unanswerable_skipped": 0}
    texts = {d.doc_id: d.text for d in corpus.documents}
    for q in corpus.questions:
        assert len(q.gold) == 1
        for span in q.gold:
            assert texts[span.doc_id][span.start : span.end] == q.answer
    first = corpus.documents[0]
    assert first.doc_id == "630"
    assert first.title.startswith("Functional Genetic Variants in DC-SIGNR")
    q262 = next(q for q in corpus.questions if q.qid == "262")
    assert q262.gold[0].start == 370 and q262.answer.startswith("Mother-to-child transmission")
    # Without repair the first misaligned answer (question 1719, off by -1) is reported.
    with pytest.raises(SituateError, match=r"question 1719: answer text ' HCoV-OC43"):
        SquadLoader(str(COVID_QA), repair_window=0).load()


@pytest.mark.skipif(not COVID_QA.exists(), reason=f"real COVID-QA file absent at {COVID_QA}")
def test_real_covid_qa_small_slice() -> None:
    corpus = SquadLoader(str(COVID_QA), max_documents=2, max_questions=5).load()
    assert [d.doc_id for d in corpus.documents] == ["630", "650"]
    assert len(corpus.questions) == 5  # the first paper alone has 11
    assert {s.doc_id for q in corpus.questions for s in q.gold} <= {
        d.doc_id for d in corpus.documents
    }


def test_json_lines_names_the_format_expected(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text('{"_id": "q1", "text": "why?"}\n\n{"_id": "q2", "text": "how?"}\n')
    with pytest.raises(SituateError) as e:
        SquadLoader(str(path)).load()
    assert str(e.value) == (
        f"{path}:3: this is JSON Lines (one JSON value per line), but dataset=squad reads one "
        'SQuAD JSON document ({"data": [{"paragraphs": [{"context": ..., "qas": [...]}]}]}); '
        "convert the file, or use dataset=beir for a BEIR folder (corpus.jsonl, queries.jsonl, "
        "qrels/)"
    )


def test_a_second_value_that_is_not_json_lines_stays_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text('{"data": []}\n]\n')  # a stray bracket, not a second record
    with pytest.raises(SituateError) as e:
        SquadLoader(str(path)).load()
    assert str(e.value) == f"{path}:2:1: invalid JSON (Extra data); fix the file at that line"
