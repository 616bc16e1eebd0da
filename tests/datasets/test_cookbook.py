"""The cookbook loader: real data shape, gold chunks as spans, and broken input."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from situate.datasets.cookbook import CookbookLoader
from situate.errors import SituateError


def test_real_cookbook_shape(cookbook_dir: Path):
    corpus = CookbookLoader(str(cookbook_dir)).load()
    assert len(corpus.documents) == 90
    assert len(corpus.questions) == 248
    assert len(corpus.prechunks) == 737
    assert sum(len(q.gold) for q in corpus.questions) == 306
    assert sum(len(q.gold) == 1 for q in corpus.questions) == 220
    # every gold span is exactly one of the dataset's chunks
    chunk_spans = {(c.doc_id, c.start, c.end) for c in corpus.prechunks}
    assert all((g.doc_id, g.start, g.end) in chunk_spans for q in corpus.questions for g in q.gold)
    assert all(g.match == "chunk_text" for q in corpus.questions for g in q.gold)
    # chunk text is the document slice; titles come from the questions' metadata
    doc = corpus.document("doc_1")
    assert doc.title == "AFLplusplus/LibAFL/libafl/src/executors/differential.rs"
    assert all(corpus.document(c.doc_id).text[c.start : c.end] == c.text for c in corpus.prechunks)


def test_real_cookbook_duplicate_licence_chunks(cookbook_dir: Path):
    """Five groups of chunks have identical text; 9 questions have such a chunk as gold."""
    corpus = CookbookLoader(str(cookbook_dir)).load()
    by_text: dict[str, int] = {}
    for c in corpus.prechunks:
        by_text[c.text.strip()] = by_text.get(c.text.strip(), 0) + 1
    duplicated = {t for t, n in by_text.items() if n > 1}
    assert len(duplicated) == 5
    gold_on_duplicates = [
        q
        for q in corpus.questions
        if any(
            corpus.document(g.doc_id).text[g.start : g.end].strip() in duplicated for g in q.gold
        )
    ]
    assert len(gold_on_duplicates) == 9


def write_cookbook(folder: Path, docs: list, questions: list) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "codebase_chunks.json").write_text(json.dumps(docs))
    (folder / "evaluation_set.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return folder


DOC = {
    "doc_id": "doc_1",
    "original_uuid": "u1",
    "content": "alpha beta gamma",
    "chunks": [
        {"chunk_id": "doc_1_chunk_0", "original_index": 0, "content": "alpha "},
        {"chunk_id": "doc_1_chunk_1", "original_index": 1, "content": "beta gamma"},
    ],
}


def test_small_fixture_offsets_and_titles(tmp_path: Path):
    q = {
        "query": "where is beta?",
        "golden_chunk_uuids": [["u1", 1]],
        "meta": {"repo_name": "o/r", "relative_path": "/a.py"},
        "golden_documents": [{"uuid": "u1"}],
    }
    corpus = CookbookLoader(str(write_cookbook(tmp_path / "c", [DOC], [q]))).load()
    (question,) = corpus.questions
    assert question.gold[0].start == 6 and question.gold[0].end == 16
    assert [(c.start, c.end) for c in corpus.prechunks] == [(0, 6), (6, 16)]
    assert corpus.documents[0].title == "o/r/a.py"


def test_chunks_that_do_not_concatenate(tmp_path: Path):
    broken = {**DOC, "content": "alpha  beta gamma"}
    folder = write_cookbook(tmp_path / "c", [broken], [])
    with pytest.raises(
        SituateError,
        match=r"codebase_chunks.json: document 0 \(doc_1\): chunk 1 is not the next part",
    ):
        CookbookLoader(str(folder)).load()


def test_gold_index_out_of_range(tmp_path: Path):
    q = {"query": "?", "golden_chunk_uuids": [["u1", 5]]}
    folder = write_cookbook(tmp_path / "c", [DOC], [q])
    with pytest.raises(
        SituateError,
        match=r"evaluation_set.jsonl:1: gold chunk index 5 of document doc_1 is out of range \(it has 2 chunks\)",
    ):
        CookbookLoader(str(folder)).load()


def test_wrong_field_names(tmp_path: Path):
    folder = write_cookbook(tmp_path / "c", [DOC], [{"question": "?", "golden_chunk_uuids": []}])
    with pytest.raises(SituateError, match=r"evaluation_set.jsonl:1: missing field\(s\) query"):
        CookbookLoader(str(folder)).load()


def test_unknown_gold_document(tmp_path: Path):
    folder = write_cookbook(
        tmp_path / "c", [DOC], [{"query": "?", "golden_chunk_uuids": [["nope", 0]]}]
    )
    with pytest.raises(
        SituateError, match="gold names a document uuid that is not in codebase_chunks.json"
    ):
        CookbookLoader(str(folder)).load()


def test_empty_query(tmp_path: Path):
    folder = write_cookbook(
        tmp_path / "c", [DOC], [{"query": " ", "golden_chunk_uuids": [["u1", 0]]}]
    )
    with pytest.raises(SituateError) as e:
        CookbookLoader(str(folder)).load()
    assert str(e.value) == (
        f"{folder / 'evaluation_set.jsonl'}:1: empty question text; write the question or remove "
        "the record"
    )


def test_the_corpus_cache_returns_the_same_corpus_and_misses_on_any_changed_input(tmp_path: Path):
    """The loaded corpus is stored by its files' bytes and the options: read back equal (no JSON
    parsed: a broken file would fail), and a changed file or option is another key."""
    q = {
        "query": "where is beta?",
        "golden_chunk_uuids": [["u1", 1]],
        "meta": {"repo_name": "o/r", "relative_path": "/a.py"},
        "golden_documents": [{"uuid": "u1"}],
    }
    folder = write_cookbook(tmp_path / "c", [DOC], [q])
    cache = tmp_path / "corpus"
    loader = CookbookLoader(str(folder), corpus_cache=str(cache))
    first = loader.load()
    assert first == CookbookLoader(str(folder)).load()
    assert len(list(cache.glob("cookbook/*/corpus.pkl"))) == 1
    key = loader.corpus_key(folder / "codebase_chunks.json", folder / "evaluation_set.jsonl")
    stored = dataclasses.replace(first, name="from the cache")
    (cache / "cookbook" / key / "corpus.pkl").write_bytes(pickle.dumps(stored))
    assert loader.load().name == "from the cache"  # read back, not loaded again
    other_option = CookbookLoader(str(folder), corpus_cache=str(cache), max_questions=1)
    assert other_option.load().name == "cookbook"
    q2 = {**q, "query": "where is gamma?"}
    write_cookbook(folder, [DOC], [q2])
    (changed,) = CookbookLoader(str(folder), corpus_cache=str(cache)).load().questions
    assert changed.text == "where is gamma?"
