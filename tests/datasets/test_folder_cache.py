"""dataset=folder's corpus cache (issue 23, item 2): the loaded corpus (parsed documents, resolved
gold) read once per sweep, keyed by every input: a changed file, questions file, sidecar, parser
or loader option is another key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import BothAtTheLock
from situate.datasets.folder import FolderLoader
from situate.parsing.reader import DocumentReader, default_parsers
from situate.parsing.text import TextParser

GUIDE = "# Guide\n\nInstall with pip.\n\n## Usage\n\nRun situate chunks.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "guide.md").write_text(GUIDE, encoding="utf-8")
    (root / "notes.txt").write_text("Ovens bake loaves at dawn.\n", encoding="utf-8")
    qa = [{"id": "a", "q": "How to install?", "gold": ["Install with pip."]}]
    (root / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    return root


def loader(root: Path, cache: Path, **options) -> FolderLoader:
    return FolderLoader(str(root), corpus_cache=str(cache / "corpus"), **options)


def no_reading(monkeypatch) -> None:
    def refuse(self, root, files):
        raise AssertionError("the folder was read again, not the corpus cache")

    monkeypatch.setattr(DocumentReader, "read", refuse)


def test_a_second_load_reads_the_corpus_cache(
    folder: Path, tmp_path: Path, monkeypatch, caplog
) -> None:
    first = loader(folder, tmp_path).load()
    assert first.questions[0].gold[0].doc_id == "guide.md"
    no_reading(monkeypatch)
    caplog.set_level("INFO", logger="situate")
    again = loader(folder, tmp_path).load()
    assert f"{folder}: 2 documents from the corpus cache" in caplog.text
    assert f"{folder}: 2 documents: titles from" in caplog.text  # the title rules, as parsed
    assert again.documents == first.documents and again.questions == first.questions
    assert again.notes == first.notes
    with pytest.raises(AssertionError, match="read again"):  # without the cache: read
        FolderLoader(str(folder)).load()


def test_two_jobs_side_by_side_read_the_folder_once(folder: Path, tmp_path: Path, monkeypatch):
    """Two jobs of a joblib sweep load the same folder at once: the second waits for the first
    and reads the corpus cache. The first job's read goes on only once both jobs have come to
    the folder's lock (events, not a sleep): without the lock both would read."""
    both = BothAtTheLock(monkeypatch)
    monkeypatch.setattr(DocumentReader, "read", both.held(DocumentReader.read))
    corpora = both.run(lambda: loader(folder, tmp_path).load())
    assert both.arrived == 2 and both.computed == 1 and len(corpora) == 2
    assert corpora[0].documents == corpora[1].documents
    assert corpora[0].questions == corpora[1].questions


@pytest.mark.parametrize(
    "change",
    [
        "document",
        "new document",
        "questions",
        "sidecar",
        "loader option",
        "parser option",
    ],
)
def test_every_input_is_part_of_the_key(
    folder: Path, tmp_path: Path, monkeypatch, change: str
) -> None:
    loader(folder, tmp_path).load()
    options: dict = {}
    if change == "document":
        (folder / "notes.txt").write_text("Ovens bake bread at dawn.\n", encoding="utf-8")
    elif change == "new document":
        (folder / "more.md").write_text("# More\n\nText.\n", encoding="utf-8")
    elif change == "questions":
        qa = [{"id": "b", "q": "How to run?", "gold": ["Run situate chunks."]}]
        (folder / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    elif change == "sidecar":
        (folder / "notes.txt.meta.json").write_text('{"title": "Bakery"}', encoding="utf-8")
    elif change == "loader option":
        options = {"quote_threshold": 80}
    else:
        options = {"parsers": {**default_parsers(), "text": TextParser(encoding="latin-1")}}
    no_reading(monkeypatch)
    with pytest.raises(AssertionError, match="read again"):
        loader(folder, tmp_path, **options).load()


def test_a_failed_load_caches_nothing(folder: Path, tmp_path: Path) -> None:
    (folder / "qa.json").write_text(json.dumps([{"q": "?", "gold": ["not in any file"]}]))
    with pytest.raises(Exception, match="matches no text"):
        loader(folder, tmp_path).load()
    assert not list((tmp_path / "corpus").rglob("corpus.pkl"))
