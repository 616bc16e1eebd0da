"""BeirLoader: whole-document gold spans, split selection and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from situate.datasets.beir import BeirLoader
from situate.errors import SituateError
from situate.records import Span

REPO = Path(__file__).resolve().parents[2]

# Document texts (hand-counted): d1 "Masks\n\nMasks reduce spread." = 5 + 2 + 20 = 27 characters;
# d2 (no title) "Droplets carry virus." = 21; d3 "Hands\n\nWash hands." = 5 + 2 + 11 = 18.
CORPUS = [
    {"_id": "d1", "title": "Masks", "text": "Masks reduce spread."},
    {"_id": "d2", "title": "", "text": "Droplets carry virus."},
    {"_id": "d3", "title": "Hands", "text": "Wash hands."},
]
QUERIES = [
    {"_id": "q1", "text": "Do masks work?"},
    {"_id": "q2", "text": "How does it spread?"},
    {"_id": "q3", "text": "Never judged"},
    {"_id": "q4", "text": "Judged not relevant only"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td1\t1\nq4\td3\t0\n"


def jsonl(records: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def make_beir(
    root: Path,
    corpus: str | None = None,
    queries: str | None = None,
    qrels: str = QRELS,
    split: str = "test",
) -> Path:
    folder = root / "mini"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus if corpus is not None else jsonl(CORPUS))
    (folder / "queries.jsonl").write_text(queries if queries is not None else jsonl(QUERIES))
    (folder / "qrels" / f"{split}.tsv").write_text(qrels)
    return folder


def load_error(folder: Path, **kwargs: Any) -> str:
    with pytest.raises(SituateError) as info:
        BeirLoader(str(folder), **kwargs).load()
    message = str(info.value)
    assert "\n" not in message
    return message


def test_documents_and_whole_document_gold(tmp_path: Path) -> None:
    folder = make_beir(tmp_path)
    corpus = BeirLoader(str(folder), name="mini").load()
    assert corpus.name == "mini"
    assert [(d.doc_id, d.title, d.text) for d in corpus.documents] == [
        ("d1", "Masks", "Masks\n\nMasks reduce spread."),
        ("d2", "", "Droplets carry virus."),
        ("d3", "Hands", "Hands\n\nWash hands."),
    ]
    assert corpus.documents[0].source == str(folder / "corpus.jsonl")
    # q3 has no qrels and q4 only a score-0 qrel: both are left out.
    assert [(q.qid, q.text, q.answer) for q in corpus.questions] == [
        ("q1", "Do masks work?", ""),
        ("q2", "How does it spread?", ""),
    ]
    assert corpus.questions[0].gold == (Span("d1", 0, 27, match="span"),)
    assert corpus.questions[1].gold == (
        Span("d2", 0, 21, match="span"),
        Span("d1", 0, 27, match="span"),
    )
    assert corpus.notes == {"empty_documents_skipped": 0}


def test_split_and_max_questions(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, qrels="q4\td3\t1\n", split="dev")  # no header line
    corpus = BeirLoader(str(folder), split="dev").load()
    assert [q.qid for q in corpus.questions] == ["q4"]
    assert corpus.questions[0].gold == (Span("d3", 0, 18, match="span"),)
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    assert [q.qid for q in BeirLoader(str(folder), max_questions=1).load().questions] == ["q1"]


def test_empty_documents_are_skipped_and_their_qrels_ignored(tmp_path: Path) -> None:
    corpus_lines = jsonl([*CORPUS, {"_id": "d4", "title": "", "text": " "}])
    qrels = QRELS + "q3\td4\t1\nq1\td4\t1\n"
    corpus = BeirLoader(str(make_beir(tmp_path, corpus=corpus_lines, qrels=qrels))).load()
    assert [d.doc_id for d in corpus.documents] == ["d1", "d2", "d3"]
    assert [q.qid for q in corpus.questions] == ["q1", "q2"]
    assert corpus.questions[0].gold == (Span("d1", 0, 27, match="span"),)
    assert corpus.notes == {"empty_documents_skipped": 1}


def test_qrel_with_unknown_document(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, qrels=QRELS + "q1\tdX\t1\n")
    assert load_error(folder) == (
        f"{folder / 'qrels' / 'test.tsv'}:6: document id 'dX' is not in "
        f"{folder / 'corpus.jsonl'}; fix the qrel or add the document"
    )


def test_qrel_with_unknown_query(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, qrels="query-id\tcorpus-id\tscore\nqX\td1\t1\n")
    assert load_error(folder) == (
        f"{folder / 'qrels' / 'test.tsv'}:2: query id 'qX' is not in "
        f"{folder / 'queries.jsonl'}; fix the qrel or add the query"
    )


def test_malformed_qrels_lines(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, qrels="query-id\tcorpus-id\tscore\nq1 d1 1\n")
    qrels = folder / "qrels" / "test.tsv"
    assert load_error(folder) == (
        f"{qrels}:2: malformed qrels line 'q1 d1 1'; "
        f"expected query-id<TAB>corpus-id<TAB>integer score"
    )
    qrels.write_text("q1\td1\t1\nq1\td1\thigh\n")
    assert load_error(folder) == (
        f"{qrels}:2: malformed qrels line 'q1\\td1\\thigh' (score is not an integer); "
        f"expected query-id<TAB>corpus-id<TAB>integer score"
    )


def test_wrong_field_names(tmp_path: Path) -> None:
    bad = jsonl([CORPUS[0], {"id": "d2", "title": "", "text": "x"}])
    folder = make_beir(tmp_path, corpus=bad)
    assert load_error(folder) == (
        f"{folder / 'corpus.jsonl'}:2: missing field(s) _id (fields present: id, text, title); "
        f"rename or add them"
    )


def test_duplicate_ids(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, corpus=jsonl([*CORPUS, CORPUS[1]]))
    assert load_error(folder) == (
        f"{folder / 'corpus.jsonl'}:4: duplicate document id 'd2'; keep one record per _id"
    )
    (folder / "corpus.jsonl").write_text(jsonl(CORPUS))
    (folder / "queries.jsonl").write_text(jsonl([*QUERIES, QUERIES[0]]))
    assert load_error(folder) == (
        f"{folder / 'queries.jsonl'}:5: duplicate query id 'q1'; keep one record per _id"
    )


def test_invalid_jsonl_names_file_and_line(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, queries=jsonl(QUERIES[:1]) + "{not json}\n")
    assert load_error(folder).startswith(
        f"{folder / 'queries.jsonl'}:2: invalid JSON Lines record ("
    )


def test_missing_split_and_folder(tmp_path: Path) -> None:
    folder = make_beir(tmp_path)
    assert load_error(folder, split="dev") == (
        f"{folder / 'qrels' / 'dev.tsv'}: qrels for split 'dev' not found; "
        f"choose a split that has a file in {folder / 'qrels'}"
    )
    assert load_error(tmp_path / "absent").startswith(
        f"{tmp_path / 'absent'}: BEIR dataset folder not found;"
    )


def test_config_file_instantiates_the_loader(tmp_path: Path) -> None:
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(REPO / "conf" / "dataset" / "beir.yaml")
    assert OmegaConf.is_missing(cfg, "path")
    cfg.path = str(make_beir(tmp_path))
    loader = instantiate(cfg)
    assert isinstance(loader, BeirLoader) and loader.split == "test"
    assert len(loader.load().questions) == 2
