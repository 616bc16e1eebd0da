"""Placement, NoContext, ReplayContext and HeadingPathContext on tiny hand-made chunks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from situate.contexts.base import Placement
from situate.contexts.heading_path import HeadingPathContext
from situate.contexts.none import NoContext
from situate.contexts.replay import ReplayContext
from situate.errors import SituateError
from situate.records import Chunk, Context, Corpus, Document, Usage


def chunk(
    doc_id: str,
    index: int,
    text: str = "text",
    heading_path: tuple[str, ...] = (),
    chunker: str = "prechunked",
) -> Chunk:
    return Chunk(f"{doc_id}#{index}", doc_id, index, 0, len(text), text, heading_path, chunker)


def corpus(*documents: Document) -> Corpus:
    return Corpus(name="tiny", documents=list(documents), questions=[])


# ---------------------------------------------------------------- Placement


def test_join_before_is_the_default_and_after_the_cookbook_format() -> None:
    assert Placement().join("CHUNK", "CTX") == "CTX\n\nCHUNK"
    assert Placement(placement="after").join("CHUNK", "CTX") == "CHUNK\n\nCTX"


def test_join_before_and_separator() -> None:
    assert Placement(placement="before").join("CHUNK", "CTX") == "CTX\n\nCHUNK"
    assert Placement(placement="before", separator=" | ").join("CHUNK", "CTX") == "CTX | CHUNK"
    assert Placement(placement="after", separator=" ").join("CHUNK", "CTX") == "CHUNK CTX"


def test_empty_context_leaves_chunk_unchanged() -> None:
    assert Placement().join("CHUNK", "") == "CHUNK"
    assert Placement(placement="before").join("CHUNK", "") == "CHUNK"


def test_texts_respects_apply_to() -> None:
    chunks = [chunk("d", 0, "one"), chunk("d", 1, "two")]
    contexts = [Context("d#0", "c0"), Context("d#1", "")]
    placement = Placement(apply_to=["dense"])
    assert placement.texts(chunks, contexts, "dense") == ["c0\n\none", "two"]
    assert placement.texts(chunks, contexts, "sparse") == ["one", "two"]
    assert placement.texts(chunks, contexts, "rerank") == ["one", "two"]
    everywhere = Placement()
    assert everywhere.texts(chunks, contexts, "sparse") == ["c0\n\none", "two"]


def test_texts_needs_one_context_per_chunk() -> None:
    with pytest.raises(ValueError):
        Placement().texts([chunk("d", 0)], [], "dense")


def test_invalid_placement() -> None:
    with pytest.raises(SituateError, match="context.placement='middle'"):
        Placement(placement="middle")


def test_invalid_apply_to() -> None:
    with pytest.raises(SituateError, match="unknown index 'colbert'"):
        Placement(apply_to=["dense", "colbert"])


# ---------------------------------------------------------------- NoContext


def test_no_context() -> None:
    chunks = [chunk("d", 0, "one"), chunk("d", 1, "two")]
    contexts = NoContext().contextualize(corpus(Document("d", "one two")), chunks)
    assert contexts == [Context("d#0", ""), Context("d#1", "")]
    assert NoContext().texts(chunks, contexts, "dense") == ["one", "two"]


# ---------------------------------------------------------------- ReplayContext

RECORDS = [
    {"doc_id": "a", "original_index": 1, "context": "about a, part 1"},
    {"doc_id": "a", "original_index": 0, "context": "about a, part 0"},
    {"doc_id": "b", "original_index": 0, "context": "about b"},
]


def write_json(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n\n" for r in records), encoding="utf-8")
    return path


CORPUS_AB = corpus(Document("a", "text"), Document("b", "text"))


def test_replay_from_json_list_joins_by_doc_and_index(tmp_path: Path) -> None:
    replay = ReplayContext(str(write_json(tmp_path / "contexts.json", RECORDS)))
    chunks = [chunk("a", 0), chunk("b", 0), chunk("a", 1)]
    assert replay.contextualize(CORPUS_AB, chunks) == [
        Context("a#0", "about a, part 0"),
        Context("b#0", "about b"),
        Context("a#1", "about a, part 1"),
    ]


def test_replay_from_jsonl_with_index_field(tmp_path: Path) -> None:
    records = [
        {"doc_id": r["doc_id"], "index": r["original_index"], "context": r["context"]}
        for r in RECORDS
    ]
    replay = ReplayContext(str(write_jsonl(tmp_path / "contexts.jsonl", records)))
    contexts = replay.contextualize(CORPUS_AB, [chunk("a", 1), chunk("b", 0)])
    assert [c.text for c in contexts] == ["about a, part 1", "about b"]


def test_replay_keeps_the_usage_a_record_carries(tmp_path: Path) -> None:
    usage = {"input_uncached": 120, "cache_write": 3000, "cache_read": 0, "output": 45}
    records = [{**RECORDS[1], "usage": usage}, RECORDS[2]]  # as `situate contexts export` writes
    replay = ReplayContext(str(write_jsonl(tmp_path / "contexts.jsonl", records)))
    with_usage, without = replay.contextualize(CORPUS_AB, [chunk("a", 0), chunk("b", 0)])
    assert with_usage.usage == Usage(120, 3000, 0, 45)
    assert without.usage == Usage()
    bad = [{**RECORDS[1], "usage": {"output": -1}}]
    with pytest.raises(SituateError, match=r"record 1: usage must map .*\(integers >= 0\)"):
        ReplayContext(str(write_jsonl(tmp_path / "bad.jsonl", bad))).contextualize(
            CORPUS_AB, [chunk("a", 0)]
        )


def test_replay_missing_context_names_chunk_and_fix(tmp_path: Path) -> None:
    replay = ReplayContext(str(write_json(tmp_path / "contexts.json", RECORDS)))
    with pytest.raises(SituateError) as e:
        replay.contextualize(CORPUS_AB, [chunk("a", 0), chunk("b", 7)])
    message = str(e.value)
    assert "b#7" in message
    assert "context.allow_missing=true" in message
    assert "\n" not in message


def test_replay_allow_missing_gives_empty_context(tmp_path: Path) -> None:
    replay = ReplayContext(str(write_json(tmp_path / "contexts.json", RECORDS)), allow_missing=True)
    contexts = replay.contextualize(CORPUS_AB, [chunk("a", 0), chunk("b", 7)])
    assert contexts == [Context("a#0", "about a, part 0"), Context("b#7", "")]
    assert replay.texts([chunk("a", 0, "A0"), chunk("b", 7, "B7")], contexts, "dense") == [
        "about a, part 0\n\nA0",
        "B7",
    ]


def test_replay_rejects_chunks_from_another_chunker(tmp_path: Path) -> None:
    replay = ReplayContext(str(write_json(tmp_path / "contexts.json", RECORDS)))
    with pytest.raises(SituateError, match="chunker=markdown") as e:
        replay.contextualize(CORPUS_AB, [chunk("a", 0, chunker="markdown")])
    assert "a#0" in str(e.value)
    # the fix names another context, never the chunker the user just moved away from
    assert "use context=none or context=heading_path with chunker=markdown" in str(e.value)
    assert "use chunker=prechunked" not in str(e.value)


def test_replay_duplicate_record_is_an_error(tmp_path: Path) -> None:
    records = [*RECORDS, {"doc_id": "a", "original_index": 0, "context": "again"}]
    replay = ReplayContext(str(write_json(tmp_path / "contexts.json", records)))
    with pytest.raises(SituateError, match="record 3: a second context for doc_id a index 0"):
        replay.contextualize(CORPUS_AB, [chunk("a", 0)])


def test_replay_bad_files(tmp_path: Path) -> None:
    with pytest.raises(SituateError, match="recorded contexts file not found"):
        ReplayContext(str(tmp_path / "absent.json")).contextualize(CORPUS_AB, [chunk("a", 0)])
    path = tmp_path / "object.json"
    path.write_text('{"doc_id": "a"}', encoding="utf-8")
    with pytest.raises(SituateError, match="expected a JSON list"):
        ReplayContext(str(path)).contextualize(CORPUS_AB, [chunk("a", 0)])
    no_index = write_json(tmp_path / "no_index.json", [{"doc_id": "a", "context": "x"}])
    with pytest.raises(SituateError, match="integer original_index"):
        ReplayContext(str(no_index)).contextualize(CORPUS_AB, [chunk("a", 0)])
    no_context = write_json(tmp_path / "no_context.json", [{"doc_id": "a", "index": 0}])
    with pytest.raises(SituateError, match="missing field.*context"):
        ReplayContext(str(no_context)).contextualize(CORPUS_AB, [chunk("a", 0)])


# ---------------------------------------------------------------- HeadingPathContext


def test_heading_path_title_then_headings() -> None:
    docs = corpus(Document("guide.md", "...", title="Guide"), Document("notes.md", "..."))
    chunks = [
        chunk("guide.md", 0, "a", ("Install", "From source")),
        chunk("guide.md", 1, "b"),
        chunk("notes.md", 0, "c", ("Intro",)),
    ]
    contexts = HeadingPathContext().contextualize(docs, chunks)
    assert [c.text for c in contexts] == [
        "Guide > Install > From source",
        "Guide",  # no headings: the title alone
        "notes.md > Intro",  # no title: the document id
    ]
    # default placement is "before"
    assert HeadingPathContext().texts(chunks[:1], contexts[:1], "dense") == [
        "Guide > Install > From source\n\na"
    ]


def test_heading_path_says_a_title_that_is_the_first_heading_once() -> None:
    docs = corpus(Document("api.md", "...", title="Límites de la API"))
    chunks = [
        chunk("api.md", 0, "a", ("Límites de la API", "Plan Pro")),
        chunk("api.md", 1, "b", ("Límites  de la api",)),  # case and spacing aside
        chunk("api.md", 2, "c", ("Plan Pro", "Límites de la API")),  # only a first heading
    ]
    assert [c.text for c in HeadingPathContext().contextualize(docs, chunks)] == [
        "Límites de la API > Plan Pro",
        "Límites de la API",
        "Límites de la API > Plan Pro > Límites de la API",
    ]


def test_heading_path_top_terms_by_smoothed_tfidf() -> None:
    # Three sections (N = 3); the first has two chunks. Tokens are words of 3+ characters that
    # start with a letter, minus stop words: "the", "go" and "42" never count.
    chunks = [
        chunk("g", 0, "pip install wheel wheel", ("Install",)),
        chunk("g", 1, "install wheel", ("Install",)),
        chunk("g", 2, "zip run the install cli cli 42 go", ("Usage",)),
        chunk("g", 3, "yaml install yaml file", ("Config",)),
    ]
    # df: install 3 (every section); pip, wheel, zip, run, cli, yaml, file 1 each
    idf_3 = math.log((1 + 3) / (1 + 3)) + 1  # = 1
    idf_1 = math.log((1 + 3) / (1 + 1)) + 1  # = 1 + ln 2 = 1.693
    # Install: wheel 3 * 1.693 = 5.08 > install 2 * 1 = 2 > pip 1 * 1.693 = 1.69
    assert 3 * idf_1 > 2 * idf_3 > 1 * idf_1
    # Usage: cli 2 * 1.693 = 3.39 > run = zip = 1 * 1.693 (tie -> alphabetical) > install 1
    # Config: yaml 2 * 1.693 = 3.39 > file 1 * 1.693 > install 1 * 1
    contexts = HeadingPathContext(top_terms=2).contextualize(
        corpus(Document("g", "...", title="G")), chunks
    )
    assert [c.text for c in contexts] == [
        "G > Install (key terms: wheel, install)",
        "G > Install (key terms: wheel, install)",
        "G > Usage (key terms: cli, run)",
        "G > Config (key terms: yaml, file)",
    ]


def test_heading_path_sections_are_per_document() -> None:
    # the same heading in two documents is two sections: "alpha" has df 1, "shared" df 2
    chunks = [
        chunk("a", 0, "shared alpha alpha", ("Intro",)),
        chunk("b", 0, "shared shared beta", ("Intro",)),
    ]
    # N = 2: idf(df=1) = ln(3/2) + 1 = 1.405; idf(df=2) = ln(3/3) + 1 = 1
    # a: alpha 2 * 1.405 = 2.81 > shared 1; b: shared 2 * 1 = 2 > beta 1 * 1.405 = 1.405
    docs = corpus(Document("a", "..."), Document("b", "..."))
    contexts = HeadingPathContext(top_terms=1).contextualize(docs, chunks)
    assert [c.text for c in contexts] == [
        "a > Intro (key terms: alpha)",
        "b > Intro (key terms: shared)",
    ]


def test_heading_path_section_without_terms_gets_no_suffix() -> None:
    contexts = HeadingPathContext(top_terms=3).contextualize(
        corpus(Document("d", "...", title="T")), [chunk("d", 0, "the 42 go")]
    )
    assert contexts == [Context("d#0", "T")]
