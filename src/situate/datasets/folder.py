"""A folder of documents (PDF, HTML, DOCX, Markdown, text), with optional questions in ``qa.json``.

Each file is read by the parser its suffix names (``situate.parsing``); its parsed text is the
document, and every offset below is into that text. ``qa.json`` is a JSON list of
``{"q": str, "gold"?: [...], "id"?: str}``; a record without ``gold`` (or with ``"gold": []``) is
a question without gold: it is searched and can be judged (``situate judge``), never scored as a
miss (a record with fields besides ``q`` and ``id`` needs ``gold``: they may be a misnamed one). Without ``qa.json``, ``questions.txt`` (one question per non-blank line, ids ``q1``, ``q2``
... by line number) holds questions without gold; either file is never a document. A ``qa`` file
ending in ``.jsonl`` is a generated set (``situate questions generate``, ``dataset=generated``):
its usable questions (kept by the filters, not rejected by a reviewer; with ``review=required``
only the accepted and edited ones) with their span gold. Each gold entry of ``qa.json`` is

- ``"relative/path.md#N"``: the span of chunk N of that file under ``MarkdownChunker`` (the ids
  that ``situate chunks`` lists), matched as a span;
- ``"relative/path.pdf#page=N"``: the span of page N (1-based) of a paged file, matched as a span;
- ``{"path": ..., "start": ..., "end": ...}``: that character span, matched as a span;
- any other string, or ``{"quote": ..., "path"?: ...}``: an answer quote, found by the first rule
  of :mod:`situate.datasets.quotes` that matches (exact, normalised, fuzzy) in ``path`` if given,
  else in the one file that contains it; matched as answer text.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from situate.chunking.markdown import MarkdownChunker
from situate.datasets.base import (
    check_unique_ids,
    existing_path,
    question_text,
    read_json,
    read_text,
    require_fields,
)
from situate.datasets.generated import GeneratedQuestion, read_questions
from situate.datasets.quotes import (
    DEFAULT_THRESHOLD,
    RULES,
    QuoteFinder,
    QuoteMatch,
    QuoteRule,
    normalized_quote,
)
from situate.errors import SituateError
from situate.parsing import titles
from situate.parsing.base import SIDECAR_SUFFIX, Parser
from situate.parsing.reader import DEFAULT_SUFFIXES, DocumentReader, ReadResult, default_parsers
from situate.records import Chunk, Corpus, Document, Question, Span
from situate.stores.cached_step import cached_step, read_pickle, write_pickle
from situate.stores.faults import ensure_space
from situate.stores.files import DirectoryCache
from situate.stores.keys import content_hash

QA_EXPECTED = (
    'dataset=folder reads one JSON list of questions ([{"q": ..., "gold": [...]}, ...]); put the '
    "records in one list, separated by commas, or write one question per line in a .txt file"
)
QUESTIONS_FILES = ("qa.json", "questions.txt")  # looked for in this order in the folder
REVIEW_CHOICES = ("optional", "required")  # dataset.review of a generated set
log = logging.getLogger("situate")
_CHUNK_REF = re.compile(r"(\S+\.\w+)#(\d+)")
_PAGE_REF = re.compile(r"(\S+\.\w+)#page=(\d+)")
# The corpus cache: ``<corpus_cache>/folder/<key>/corpus.pkl`` (the Corpus and the reasons of
# its skipped files); CORPUS_FORMAT is part of the key, raised when what is stored changes.
CORPUS_KIND, CORPUS_FILE, CORPUS_FORMAT = "folder", "corpus.pkl", 1


class FolderLoader:
    """Load a folder of documents (each read by the parser of its suffix) and its ``qa.json``.

    Parameters
    ----------
    path
        The folder. Document ids are file paths relative to it, with forward slashes.
    qa
        The questions file: JSON (``qa.json`` records), ending in ``.txt`` one question per line
        without gold, ending in ``.jsonl`` a generated set (``questions.jsonl``); default
        ``<path>/qa.json``, else ``<path>/questions.txt``. Without one the corpus has no
        questions.
    name
        Corpus name.
    max_words, min_words
        ``MarkdownChunker`` settings that ``"file.md#N"`` gold references are resolved with.
    parsers
        Parser per format (``conf/parser/``); default: every format with default options.
    suffixes
        Format per file suffix without the dot; files of other suffixes are not documents.
    on_bad_file
        ``error`` (stop at the first unreadable file) or ``skip`` (log it, count it, go on).
    max_file_mb
        Larger files are bad files.
    cache
        The parse cache file (``${cache_dir}/parsed.sqlite``), or None.
    corpus_cache
        The corpus cache folder (``${cache_dir}/corpus``), or None: the loaded corpus (parsed
        documents with their titles, questions with resolved gold, notes) keyed by every input
        (:meth:`corpus_key`), so the jobs of a sweep over one folder read it once.
    quote_threshold
        Lowest rapidfuzz score (0-100) at which an answer quote matches approximately.
    review
        Of a generated set: ``optional`` (every question not rejected by a reviewer) or
        ``required`` (only the accepted and edited ones).
    """

    def __init__(
        self,
        path: str,
        qa: str | None = None,
        name: str = "folder",
        max_words: int = 250,
        min_words: int = 20,
        parsers: Mapping[str, Parser] | None = None,
        suffixes: Mapping[str, str] | None = None,
        on_bad_file: str = "error",
        max_file_mb: float = 100,
        cache: str | None = None,
        quote_threshold: float = DEFAULT_THRESHOLD,
        review: str = "optional",
        corpus_cache: str | None = None,
    ) -> None:
        if review not in REVIEW_CHOICES:
            raise SituateError(
                f"dataset.review={review!r} is invalid; use dataset.review=optional or required"
            )
        self.review = review
        self.path = path
        self.qa = qa
        self.name = name
        self.max_words = max_words
        self.min_words = min_words
        self.reader = DocumentReader(
            default_parsers() if parsers is None else parsers,
            DEFAULT_SUFFIXES if suffixes is None else suffixes,
            on_bad_file,
            max_file_mb,
            cache,
        )
        if not _is_number(quote_threshold) or not 0 < quote_threshold <= 100:
            raise SituateError(
                f"dataset.quote_threshold={quote_threshold!r} is invalid; use a score in (0, 100], "
                "e.g. 90"
            )
        self.quote_threshold = quote_threshold
        self.corpus_cache = None if corpus_cache is None else DirectoryCache(corpus_cache)

    @staticmethod
    def ships_chunks(params: Mapping[str, Any]) -> bool:
        """A folder of one's own documents ships no chunks: a chunker cuts them."""
        return False

    @classmethod
    def preflight(cls, params: Mapping[str, Any], run: object) -> None:
        """The folder exists (and ``qa`` where set); no document is read."""
        cls._root(params["path"])
        if params.get("qa") is not None:
            existing_path(params["qa"], "questions file", "set dataset.qa=<path to qa.json>")

    @staticmethod
    def _root(path: str) -> Path:
        fix = "set dataset.path=<folder of documents>"
        root = existing_path(path, "dataset folder", fix)
        if not root.is_dir():
            raise SituateError(f"{root}: not a folder; {fix}")
        return root

    def load(self) -> Corpus:
        """Read the documents and the questions.

        Returns
        -------
        Corpus
            Documents in sorted path order; questions in ``qa.json`` order; no prechunks.
            ``notes``: ``files_skipped``, ``empty_pages``, how many documents each title rule
            named (``titles_from_cover``, ...) and how many quotes each rule matched.
        """
        root = self._root(self.path)
        qa_path = self._qa_path(root)
        if self.corpus_cache is None:
            return self._load(root, qa_path)[0]
        key = self.corpus_key(root, qa_path)
        folder = self.corpus_cache.path(CORPUS_KIND, key)
        corpus, _ = cached_step(  # a parallel job of the sweep loading the same folder waits
            folder / CORPUS_FILE,
            lock=folder.parent / key,
            compute=lambda: self._load(root, qa_path),
            write=lambda tmp, read: write_pickle(tmp / CORPUS_FILE, read),
            load=lambda path: self._cached(root, key, path),
            writing=self.corpus_cache.writing(CORPUS_KIND, key),
        )
        return corpus

    def _load(self, root: Path, qa_path: Path | None) -> tuple[Corpus, list[str]]:
        """Parse the folder and resolve the questions' gold: the corpus, and why files were
        skipped (the corpus cache keeps both)."""
        if self.corpus_cache is not None:  # the parsed texts, at most about the files' size
            files, _ = self.reader.find(root)
            size = sum(f.stat().st_size for f in files)
            ensure_space(self.corpus_cache.root, 2 * size, f"the parsed text of {root}")
        read = self._read(root, qa_path)
        documents = read.documents
        notes = read.notes()
        questions: list[Question] = []
        if qa_path is not None and qa_path.suffix.lower() == ".txt":
            questions = questions_from_lines(qa_path)
        elif qa_path is not None and qa_path.suffix.lower() == ".jsonl":
            questions, pending = generated_set(qa_path, documents, self.review)
            notes["questions_pending_review"] = pending
        elif qa_path is not None:
            resolver = GoldResolver(
                qa_path, root, documents, self.max_words, self.min_words, self.quote_threshold
            )
            questions = resolver.questions(read_json(qa_path, QA_EXPECTED))
            notes.update({f"quotes_{rule}": n for rule, n in sorted(resolver.rules.items())})
        corpus = Corpus(
            self.name, documents, questions, notes=notes, questions_source=str(qa_path or "")
        )
        return corpus, read.skipped

    def corpus_key(self, root: Path, qa_path: Path | None) -> str:
        """The corpus cache key: every input of :meth:`load`. The folder's path; per document
        file its path, size and bytes (sha256), its parser's identity and its title sidecar's
        bytes; the questions file's path and bytes; the loader's options. A changed file,
        sidecar, questions file, parser option or loader option is another key."""
        files, _ = self.reader.find(root)
        skip = self._not_documents(root, qa_path)
        entries = []
        for path in files:
            rel = path.relative_to(root).as_posix()
            if rel in skip:
                continue
            parser = self.reader.parser_for(path)
            sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
            entries.append(
                (
                    rel,
                    parser.identity() if parser is not None else None,
                    _file_digest(path),
                    _file_digest(sidecar) if sidecar.is_file() else None,
                )
            )
        qa = None if qa_path is None else (str(qa_path.resolve()), _file_digest(qa_path))
        options = {
            "format": CORPUS_FORMAT,
            "name": self.name,
            "max_words": self.max_words,
            "min_words": self.min_words,
            "quote_threshold": self.quote_threshold,
            "review": self.review,
            "on_bad_file": self.reader.on_bad_file,
            "max_file_mb": self.reader.max_file_mb,
        }
        # the folder's own path too: a document's ``source`` names its file
        return content_hash("folder-corpus", str(root.resolve()), options, qa, entries)

    def _cached(self, root: Path, key: str, path: Path) -> tuple[Corpus, list[str]]:
        """The corpus stored under ``key`` at ``path`` and its skipped files (logged again)."""
        corpus, skipped = read_pickle(path)
        for reason in skipped:
            log.warning("skipped: %s", reason)
        log.info(
            "%s: %d documents from the corpus cache (%s)", root, len(corpus.documents), key[:12]
        )
        log.info("%s: %s", root, titles.summary(ReadResult(corpus.documents).title_sources()))
        return corpus, skipped

    def _read(self, root: Path, qa_path: Path | None) -> ReadResult:
        """The folder's documents; the questions file is none of them."""
        read = self.reader.read_folder(root, not_documents=self._not_documents(root, qa_path))
        log.info("%s: %d parsed, %d from the parse cache", root, read.parsed, read.cached)
        log.info("%s: %s", root, titles.summary(read.title_sources()))
        for d in read.documents:
            log.debug("%s: title %r (rule: %s)", d.doc_id, d.title, d.title_source)
        copies = identical_texts(read.documents)
        if copies:
            log.warning(
                "%s: files with identical parsed text (copies?): %s; a quote in one is found in "
                "each, and each is retrieved as its own document",
                root, "; ".join(" = ".join(ids) for ids in copies),
            )  # fmt: skip
        return read

    @staticmethod
    def _not_documents(root: Path, qa_path: Path | None) -> set[str]:
        """Paths under ``root`` that are never documents: the questions files."""
        skip = set(QUESTIONS_FILES)
        if qa_path is not None and qa_path.resolve().is_relative_to(root.resolve()):
            skip.add(qa_path.resolve().relative_to(root.resolve()).as_posix())
        return skip

    def questions_file(self) -> Path:
        """Where the questions are read from: ``qa``, else ``<path>/qa.json`` or
        ``<path>/questions.txt`` (the first that exists; ``qa.json`` when neither does)."""
        if self.qa is not None:
            return Path(self.qa).expanduser()
        root = Path(self.path).expanduser()
        return next((root / n for n in QUESTIONS_FILES if (root / n).is_file()), root / "qa.json")

    def questions_to_write(self) -> Path:
        return self.questions_file()

    def _qa_path(self, root: Path) -> Path | None:
        if self.qa is not None:
            return existing_path(self.qa, "questions file", "set dataset.qa=<path to qa.json>")
        found = self.questions_file()
        return found if found.is_file() else None


def identical_texts(documents: list[Document]) -> list[list[str]]:
    """The ids of documents whose parsed text is the same (by its SHA-256), in groups of two or
    more, each in path order."""
    import hashlib

    groups: dict[str, list[str]] = {}
    for d in documents:
        groups.setdefault(hashlib.sha256(d.text.encode()).hexdigest(), []).append(d.doc_id)
    return [ids for ids in groups.values() if len(ids) > 1]


def questions_from_lines(path: Path) -> list[Question]:
    """``questions.txt``: one question per non-blank line, without gold; ids ``q<line number>``."""
    return [
        Question(qid=f"q{n}", text=line.strip(), gold=())
        for n, line in enumerate(read_text(path).splitlines(), start=1)
        if line.strip()
    ]


def generated_set(path: Path, documents: list[Document], review: str) -> tuple[list[Question], int]:
    """The usable questions of a ``questions.jsonl`` (the accepted ones under
    ``review=required``), their gold checked against the documents (a document edited since
    generation is an error), and how many kept questions are pending review."""
    generated = read_questions(path)
    usable = [q for q in generated if (q.accepted if review == "required" else q.usable)]
    pending = sum(q.status == "kept" and q.review == "pending" for q in generated)
    if not usable:
        raise SituateError(
            f"{path}: no usable question of {len(generated)} (dataset.review={review}; "
            f"{pending} pending review); review them with `situate questions review {path}`"
            + (" or set dataset.review=optional" if review == "required" and pending else "")
        )
    docs = {d.doc_id: d for d in documents}
    for q in usable:
        question_text(q.q, f"{path}: question {q.id}")
        for span in q.gold:
            doc = docs.get(span.doc_id)
            if doc is None:
                raise SituateError(
                    f"{path}: question {q.id}: its document {span.doc_id} is not in the folder; "
                    "set dataset.path to the folder the questions were generated from"
                )
            if not quote_at(q, doc, span):
                raise SituateError(
                    f"{path}: question {q.id}: {span.doc_id}[{span.start}:{span.end}] is no longer "
                    "its quote (the document changed since generation); generate the set again"
                )
    return [Question(q.id, q.q, q.gold, q.answer) for q in usable], pending


def quote_at(q: GeneratedQuestion, doc: Document, span: Span) -> bool:
    """Whether ``span`` of ``doc`` still holds the quote of ``q`` (a fuzzy match: assumed)."""
    if q.match not in ("exact", "normalized"):
        return True
    return normalized_quote(doc.text[span.start : span.end]) == normalized_quote(q.quote)


class GoldResolver:
    """Turns the records of ``qa.json`` into questions with gold character spans (or none).

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
    quote_threshold
        Lowest fuzzy score (0-100) of an answer quote; ``rules`` counts the rule each quote matched by.
    """

    def __init__(
        self,
        qa_path: Path,
        root: Path,
        documents: list[Document],
        max_words: int,
        min_words: int,
        quote_threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.qa_path = qa_path
        self.root = root
        self.docs = {d.doc_id: d for d in documents}
        self.chunker = MarkdownChunker(max_words=max_words, min_words=min_words)
        self._chunks: dict[str, list[Chunk]] = {}
        self._finders = {d.doc_id: QuoteFinder(d.text, quote_threshold) for d in documents}
        self._ref_suffixes = {Path(d).suffix.lower() for d in self.docs} | {
            f".{s}" for s in DEFAULT_SUFFIXES
        }
        self.rules: Counter[QuoteRule] = Counter()

    def questions(self, records: Any) -> list[Question]:
        """Resolve every record of ``qa.json`` (a JSON list)."""
        if not isinstance(records, list):
            raise SituateError(
                f"{self.qa_path}: expected a JSON list of questions, got {type(records).__name__}; "
                'make it [{"q": ..., "gold": [...]}, ...]'
            )
        questions = [self.question(i, rec) for i, rec in enumerate(records)]
        check_unique_ids(self.qa_path, ((f"question {i}", q.qid) for i, q in enumerate(questions)))
        return questions

    def question(self, index: int, record: Any) -> Question:
        """Resolve one record into a Question (qid = its "id", else ``f"q{index}"``)."""
        qid = str(record["id"]) if isinstance(record, dict) and "id" in record else f"q{index}"
        where = f"{self.qa_path}: question {index} (id {qid})"
        # a question without gold is {"q", "id"?}: other fields may be a misnamed gold list
        other = isinstance(record, dict) and record.keys() - {"q", "id", "gold"}
        require_fields(record, ("q", "gold") if other else ("q",), where)
        text = question_text(record["q"], where)
        gold = record.get("gold", [])
        if not isinstance(gold, list):
            raise SituateError(
                f'{where}: "gold" must be a list; write ["file.md#N", ...], a list of quotes or '
                '{"path", "start", "end"} entries, or leave it out for a question without gold'
            )
        spans = tuple(self.span(f"{where}, gold {k}", entry) for k, entry in enumerate(gold))
        quotes = [q for q in map(self._quote, gold) if q is not None]
        answer = quotes[0] if quotes else ""
        return Question(qid=qid, text=text, gold=spans, answer=answer)

    def span(self, where: str, entry: Any) -> Span:
        """Resolve one gold entry into a Span."""
        if isinstance(entry, str):
            ref = self._reference(entry)
            if ref is not None and ref.re is _PAGE_REF:
                return self._page_span(where, ref.group(1), int(ref.group(2)))
            if ref is not None:
                return self._chunk_span(where, ref.group(1), int(ref.group(2)))
            return self._quote_span(where, entry, None)
        if isinstance(entry, dict) and "quote" in entry:
            return self._quote_span(where, entry["quote"], entry.get("path"))
        if isinstance(entry, dict) and {"path", "start", "end"} <= entry.keys():
            return self._offset_span(where, entry["path"], entry["start"], entry["end"])
        raise SituateError(
            f'{where}: unrecognised gold entry {_short(entry)}; use "file.md#N", "file.pdf#page=N", '
            'a quote string, {"quote": ..., "path": ...} or {"path": ..., "start": ..., "end": ...}'
        )

    def _reference(self, entry: str) -> re.Match[str] | None:
        """``file#page=N`` or ``file#N`` where ``file`` has a document suffix, else None (a quote)."""
        for pattern in (_PAGE_REF, _CHUNK_REF):
            ref = pattern.fullmatch(entry)
            if ref is not None and Path(ref.group(1)).suffix.lower() in self._ref_suffixes:
                return ref
        return None

    def _quote(self, entry: Any) -> str | None:
        if isinstance(entry, dict) and isinstance(entry.get("quote"), str):
            return entry["quote"]
        if isinstance(entry, str) and self._reference(entry) is None:
            return entry
        return None

    def _document(self, where: str, path: Any) -> Document:
        key = str(path).replace("\\", "/").removeprefix("./")
        doc = self.docs.get(key)
        if doc is None:
            example = next(iter(self.docs))
            raise SituateError(
                f"{where}: unknown path {str(path)!r} (no such document under {self.root}); "
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

    def _page_span(self, where: str, path: str, number: int) -> Span:
        doc = self._document(where, path)
        if not doc.pages:
            raise SituateError(
                f"{where}: {doc.doc_id} has no pages (only PDFs do); use "
                f'"{doc.doc_id}#N" (a chunk), a quote or {{"path", "start", "end"}}'
            )
        if not 1 <= number <= len(doc.pages):
            raise SituateError(
                f"{where}: page {number} out of range: {doc.doc_id} has {len(doc.pages)} page(s); "
                f"use #page=1..#page={len(doc.pages)}"
            )
        page = doc.pages[number - 1]
        if page.start == page.end:
            raise SituateError(
                f"{where}: page {number} of {doc.doc_id} has no text (blank or scanned); "
                "point the gold at a page with text or OCR the PDF"
            )
        return Span(doc.doc_id, page.start, page.end, "span")

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
        if not isinstance(quote, str) or not quote.strip():
            raise SituateError(
                f"{where}: empty or non-string quote {quote!r}; quote the answer text"
            )
        docs = [self._document(where, path)] if path is not None else list(self.docs.values())
        for rule in RULES:
            hits = [(d, m) for d in docs if (m := self._finders[d.doc_id].find(quote, rule))]
            if len(hits) > 1 and rule == "fuzzy":
                best = max(m.score for _, m in hits)
                hits = [(d, m) for d, m in hits if m.score == best]
            if len(hits) > 1:
                files = ", ".join(d.doc_id for d, _ in hits[:3]) + (
                    ", ..." if len(hits) > 3 else ""
                )
                raise SituateError(
                    f"{where}: quote {_short(quote)} is ambiguous: it occurs in {len(hits)} files "
                    f'({files}); write it as {{"quote": ..., "path": ...}}'
                )
            if hits:
                doc, match = hits[0]
                return self._quote_match(doc, match)
        scope, source = (docs[0].doc_id, "the file") if path is not None else ("any file", "a file")
        raise SituateError(
            f"{where}: quote {_short(quote)} matches no text in {scope}; "
            f'copy it exactly from {source} or give {{"path", "start", "end"}}'
        )

    def _quote_match(self, doc: Document, match: QuoteMatch) -> Span:
        self.rules[match.rule] += 1
        return Span(doc.doc_id, match.start, match.end, "answer_text")


def _file_digest(path: Path) -> tuple[int, str]:
    """Size and sha256 of a file's bytes."""
    data = path.read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
