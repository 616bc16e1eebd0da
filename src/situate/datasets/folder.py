"""A folder of Markdown / text files, with optional questions in ``qa.json``.

``qa.json`` is a JSON list of ``{"q": str, "gold": [...], "id"?: str}``; each gold entry is

- ``"relative/path.md#N"``: the span of chunk N of that file under ``MarkdownChunker`` (the ids
  that ``situate chunks`` lists), matched as a span;
- ``{"path": ..., "start": ..., "end": ...}``: that character span, matched as a span;
- any other string, or ``{"quote": ..., "path"?: ...}``: an answer quote, resolved to its first exact
  occurrence (in ``path`` if given, else in the one file that contains it), matched as answer text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from situate.chunking.markdown import MarkdownChunker, heading_title, split_lines
from situate.datasets.base import existing_path, question_text, read_json, require_fields
from situate.errors import SituateError
from situate.records import Chunk, Corpus, Document, Question, Span

SUFFIXES = (".md", ".txt")
QA_EXPECTED = (
    'dataset=folder reads one JSON list of questions ([{"q": ..., "gold": [...]}, ...]); put the '
    "records in one list, separated by commas"
)
_CHUNK_REF = re.compile(r"(\S+\.(?:md|txt))#(\d+)", re.IGNORECASE)


def find_files(root: Path) -> list[Path]:
    """The ``.md`` / ``.txt`` files under ``root``, recursively, sorted by relative path.

    Files and folders whose name starts with a dot (``.git``, ``.obsidian``) are skipped.
    """
    found = [
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def read_document_text(path: Path) -> str:
    """Read one file as UTF-8 text, refusing binary, non-UTF-8 and empty files.

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    str
        Its text, without a leading byte-order mark.
    """
    data = path.read_bytes()
    if b"\x00" in data:
        raise SituateError(
            f"{path}: contains NUL bytes (binary file?); convert it to UTF-8 text or remove it"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SituateError(
            f"{path}: not UTF-8 text (byte {e.start}); convert it to UTF-8 or remove it"
        ) from e
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise SituateError(f"{path}: empty file (no text); add text to it or remove it")
    return text


def first_heading(text: str) -> str | None:
    """The title of the first ATX heading outside fenced code, or None."""
    for line in split_lines(text):
        parsed = None if line.in_fence else heading_title(line.text)
        if parsed is not None and parsed[1]:
            return parsed[1]
    return None


class FolderLoader:
    """Load a folder of ``.md`` / ``.txt`` files and its ``qa.json``.

    Parameters
    ----------
    path
        The folder. Document ids are file paths relative to it, with forward slashes.
    qa
        The questions file; default ``<path>/qa.json``. Without one the corpus has no questions.
    name
        Corpus name.
    max_words, min_words
        ``MarkdownChunker`` settings that ``"file.md#N"`` gold references are resolved with.
    """

    def __init__(
        self,
        path: str,
        qa: str | None = None,
        name: str = "folder",
        max_words: int = 250,
        min_words: int = 20,
    ) -> None:
        self.path = path
        self.qa = qa
        self.name = name
        self.max_words = max_words
        self.min_words = min_words

    def load(self) -> Corpus:
        """Read the documents and the questions.

        Returns
        -------
        Corpus
            Documents in sorted path order; questions in ``qa.json`` order; no prechunks.
        """
        root = existing_path(
            self.path, "dataset folder", "set dataset.path=<folder of .md/.txt files>"
        )
        if not root.is_dir():
            raise SituateError(f"{root}: not a folder; set dataset.path=<folder of .md/.txt files>")
        documents = self._documents(root)
        qa_path = self._qa_path(root)
        questions: list[Question] = []
        if qa_path is not None:
            resolver = GoldResolver(qa_path, root, documents, self.max_words, self.min_words)
            questions = resolver.questions(read_json(qa_path, QA_EXPECTED))
        return Corpus(name=self.name, documents=documents, questions=questions)

    def _documents(self, root: Path) -> list[Document]:
        files = find_files(root)
        if not files:
            raise SituateError(f"{root}: no .md or .txt files found; add some or set dataset.path")
        docs = []
        for f in files:
            text = read_document_text(f)
            title = first_heading(text) or f.name
            docs.append(Document(f.relative_to(root).as_posix(), text, title, str(f)))
        return docs

    def questions_file(self) -> Path:
        """Where the questions are read from: ``qa``, else ``<path>/qa.json``."""
        return Path(self.qa or Path(self.path) / "qa.json").expanduser()

    def _qa_path(self, root: Path) -> Path | None:
        if self.qa is not None:
            return existing_path(self.qa, "questions file", "set dataset.qa=<path to qa.json>")
        default = root / "qa.json"
        return default if default.is_file() else None


class GoldResolver:
    """Turns the records of ``qa.json`` into questions with gold character spans.

    Parameters
    ----------
    qa_path
        The questions file (named in every error).
    root
        The dataset folder.
    documents
        The folder's documents.
    max_words, min_words
        ``MarkdownChunker`` settings for ``"file.md#N"`` references.
    """

    def __init__(
        self,
        qa_path: Path,
        root: Path,
        documents: list[Document],
        max_words: int,
        min_words: int,
    ) -> None:
        self.qa_path = qa_path
        self.root = root
        self.docs = {d.doc_id: d for d in documents}
        self.chunker = MarkdownChunker(max_words=max_words, min_words=min_words)
        self._chunks: dict[str, list[Chunk]] = {}

    def questions(self, records: Any) -> list[Question]:
        """Resolve every record of ``qa.json`` (a JSON list)."""
        if not isinstance(records, list):
            raise SituateError(
                f"{self.qa_path}: expected a JSON list of questions, got {type(records).__name__}; "
                'make it [{"q": ..., "gold": [...]}, ...]'
            )
        questions = [self.question(i, rec) for i, rec in enumerate(records)]
        first: dict[str, int] = {}
        for i, q in enumerate(questions):
            if q.qid in first:
                raise SituateError(
                    f"{self.qa_path}: question {i}: duplicate question id {q.qid!r} (question "
                    f"{first[q.qid]} has it too); give every question its own id"
                )
            first[q.qid] = i
        return questions

    def question(self, index: int, record: Any) -> Question:
        """Resolve one record into a Question (qid = its "id", else ``f"q{index}"``)."""
        qid = str(record["id"]) if isinstance(record, dict) and "id" in record else f"q{index}"
        where = f"{self.qa_path}: question {index} (id {qid})"
        require_fields(record, ("q", "gold"), where)
        text = question_text(record["q"], where)
        gold = record["gold"]
        if not isinstance(gold, list) or not gold:
            raise SituateError(
                f'{where}: "gold" must be a non-empty list; add at least one "file.md#N", '
                'quote or {"path", "start", "end"} entry'
            )
        spans = tuple(self.span(f"{where}, gold {k}", entry) for k, entry in enumerate(gold))
        quotes = [q for q in map(_quote, gold) if q is not None]
        answer = quotes[0] if quotes else ""
        return Question(qid=qid, text=text, gold=spans, answer=answer)

    def span(self, where: str, entry: Any) -> Span:
        """Resolve one gold entry into a Span."""
        if isinstance(entry, str):
            ref = _CHUNK_REF.fullmatch(entry)
            if ref is not None:
                return self._chunk_span(where, ref.group(1), int(ref.group(2)))
            return self._quote_span(where, entry, None)
        if isinstance(entry, dict) and "quote" in entry:
            return self._quote_span(where, entry["quote"], entry.get("path"))
        if isinstance(entry, dict) and {"path", "start", "end"} <= entry.keys():
            return self._offset_span(where, entry["path"], entry["start"], entry["end"])
        raise SituateError(
            f'{where}: unrecognised gold entry {_short(entry)}; use "file.md#N", a quote string, '
            '{"quote": ..., "path": ...} or {"path": ..., "start": ..., "end": ...}'
        )

    def _document(self, where: str, path: Any) -> Document:
        key = str(path).replace("\\", "/").removeprefix("./")
        doc = self.docs.get(key)
        if doc is None:
            example = next(iter(self.docs))
            raise SituateError(
                f"{where}: unknown path {str(path)!r} (no such .md/.txt file under {self.root}); "
                f"use a path relative to the folder, e.g. {example!r}"
            )
        return doc

    def _chunk_span(self, where: str, path: str, index: int) -> Span:
        doc = self._document(where, path)
        chunks = self._chunks.get(doc.doc_id)
        if chunks is None:
            chunks = self._chunks[doc.doc_id] = self.chunker.chunk_document(doc)
        if index >= len(chunks):
            raise SituateError(
                f"{where}: chunk index {index} out of range: {doc.doc_id} has {len(chunks)} "
                f"chunk(s) (#0..#{len(chunks) - 1}); use one of those (`situate chunks` lists them)"
            )
        c = chunks[index]
        return Span(doc.doc_id, c.start, c.end, "span")

    def _offset_span(self, where: str, path: Any, start: Any, end: Any) -> Span:
        doc = self._document(where, path)
        n = len(doc.text)
        ok = _is_int(start) and _is_int(end) and 0 <= start < end <= n
        if not ok:
            raise SituateError(
                f"{where}: start={start!r} end={end!r} out of range for {doc.doc_id} "
                f"({n} characters); use integers with 0 <= start < end <= {n}"
            )
        return Span(doc.doc_id, start, end, "span")

    def _quote_span(self, where: str, quote: Any, path: Any) -> Span:
        if not isinstance(quote, str) or not quote:
            raise SituateError(
                f"{where}: empty or non-string quote {quote!r}; quote the answer text"
            )
        if path is not None:
            doc = self._document(where, path)
            start = doc.text.find(quote)
            if start < 0:
                raise SituateError(
                    f"{where}: quote {_short(quote)} matches no text in {doc.doc_id}; "
                    'copy it exactly from the file or give {"path", "start", "end"}'
                )
            return Span(doc.doc_id, start, start + len(quote), "answer_text")
        hits = [(d, d.text.find(quote)) for d in self.docs.values()]
        hits = [(d, s) for d, s in hits if s >= 0]
        if not hits:
            raise SituateError(
                f"{where}: quote {_short(quote)} matches no text in any file; "
                'copy it exactly from a file or give {"path", "start", "end"}'
            )
        if len(hits) > 1:
            files = ", ".join(d.doc_id for d, _ in hits[:3]) + (", ..." if len(hits) > 3 else "")
            raise SituateError(
                f"{where}: quote {_short(quote)} is ambiguous: it occurs in {len(hits)} files "
                f'({files}); write it as {{"quote": ..., "path": ...}}'
            )
        doc, start = hits[0]
        return Span(doc.doc_id, start, start + len(quote), "answer_text")


def _quote(entry: Any) -> str | None:
    if isinstance(entry, dict) and isinstance(entry.get("quote"), str):
        return entry["quote"]
    if isinstance(entry, str) and _CHUNK_REF.fullmatch(entry) is None:
        return entry
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
