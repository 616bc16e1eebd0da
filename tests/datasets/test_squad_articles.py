"""SquadLoader(document="article"): an article is one document, its paragraphs the chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from situate.chunking.prechunked import PrechunkedChunker
from situate.datasets.squad import SquadLoader
from situate.errors import SituateError
from situate.records import Chunk, Span

P0 = "Anvils are heavy."  # 17 characters
P1 = "Coyotes buy anvils online."  # 26 characters; "online" = 19..25
P2 = "Roadrunners run."


def squad_file(tmp_path: Path) -> Path:
    def qa(qid: str, text: str, start: int) -> dict:
        return {"id": qid, "question": "?", "answers": [{"text": text, "answer_start": start}]}

    data = {
        "data": [
            {
                "title": "Anvils",
                "paragraphs": [
                    {"context": P0, "qas": [qa("q0", "heavy", 11)]},
                    {"context": P1, "qas": [qa("q1", "online", 19)]},
                ],
            },
            {"title": "Birds", "paragraphs": [{"context": P2, "qas": [qa("q2", "run", 12)]}]},
        ]
    }
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_paragraphs_are_documents_by_default(tmp_path: Path) -> None:
    corpus = SquadLoader(str(squad_file(tmp_path))).load()
    assert [d.doc_id for d in corpus.documents] == ["0-0", "0-1", "1-0"]
    assert corpus.prechunks is None


def test_article_is_the_document_and_paragraphs_its_chunks(tmp_path: Path) -> None:
    corpus = SquadLoader(str(squad_file(tmp_path)), document="article").load()
    assert [(d.doc_id, d.title) for d in corpus.documents] == [
        ("article-0", "Anvils"),
        ("article-1", "Birds"),
    ]
    assert corpus.documents[0].text == P0 + "\n\n" + P1
    # P1 starts after P0 (17) and the blank line (2)
    assert corpus.prechunks == [
        Chunk("0-0", "article-0", 0, 0, 17, P0, (), "prechunked"),
        Chunk("0-1", "article-0", 1, 19, 45, P1, (), "prechunked"),
        Chunk("1-0", "article-1", 0, 0, 16, P2, (), "prechunked"),
    ]
    gold = {q.qid: q.gold for q in corpus.questions}
    assert gold == {
        "q0": (Span("article-0", 11, 16, "answer_text"),),
        "q1": (Span("article-0", 38, 44, "answer_text"),),  # 19 + 19
        "q2": (Span("article-1", 12, 15, "answer_text"),),
    }
    assert corpus.documents[0].text[38:44] == "online"
    chunks = PrechunkedChunker().chunk(corpus)
    for c in chunks:
        assert corpus.document(c.doc_id).text[c.start : c.end] == c.text


def test_document_must_be_paragraph_or_article() -> None:
    with pytest.raises(SituateError) as e:
        SquadLoader("x.json", document="page")
    assert str(e.value) == (
        "squad dataset: document='page' is invalid; use dataset.document=paragraph or "
        "dataset.document=article"
    )
