"""The Anthropic cookbook "contextual embeddings" code set.

``codebase_chunks.json`` holds 90 source files, each already split into chunks whose concatenation
is the file; ``evaluation_set.jsonl`` holds 248 questions whose gold is ``[doc uuid, chunk index]``
pairs. Gold chunks become character spans (``match="chunk_text"``, so the cookbook's text-match
Pass@k stays available), and the dataset's own chunks are offered to the ``prechunked`` chunker.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from situate.datasets.base import (
    ShipsQuestions,
    existing_path,
    question_text,
    read_json,
    read_jsonl,
    require_fields,
)
from situate.datasets.sample import sample_questions
from situate.errors import SituateError
from situate.records import Chunk, Corpus, Document, Question, Span
from situate.stores.cached_step import cached_step, read_pickle, write_pickle
from situate.stores.files import DirectoryCache
from situate.stores.keys import content_hash

# the corpus cache: <corpus_cache>/cookbook/<key>/corpus.pkl; CORPUS_FORMAT is part of the key,
# raised when what is stored (situate.records.Corpus) changes
CORPUS_KIND, CORPUS_FILE, CORPUS_FORMAT = "cookbook", "corpus.pkl", 1
log = logging.getLogger(__name__)
FETCH_HINT = "run `situate data fetch cookbook` or set SITUATE_DATA_DIR to the folder that holds it"


class CookbookLoader(ShipsQuestions):
    """Load the cookbook code set from ``path`` (the folder with the two JSON files).

    Parameters
    ----------
    path : str
        Folder holding ``codebase_chunks.json`` and ``evaluation_set.jsonl``.
    name : str
        Name recorded with the corpus.
    max_documents : int or None
        Keep only the first N documents (and the questions whose gold lies in them): small slices
        for tests.
    chunks_file, questions_file : str
        File names inside ``path`` (your own data in the cookbook's format may use others).
    max_questions, sample, seed
        Keep N questions (after ``max_documents``) as :mod:`situate.datasets.sample` says: a
        seeded sample stratified by document (default) or the first N; None keeps all.
    corpus_cache : str or None
        Folder of the corpus cache (``${cache_dir}/corpus``), or None: the loaded corpus is
        stored there under the sha256 of the two files' bytes and the options, so the jobs of a
        sweep read it back instead of parsing 4.7 MB of JSON and checking every chunk and
        question again (a warm run's ``load_seconds``: 0.02 s, 0.07-0.10 s without it).
    """

    def __init__(
        self,
        path: str,
        name: str = "cookbook",
        max_documents: int | None = None,
        chunks_file: str = "codebase_chunks.json",
        questions_file: str = "evaluation_set.jsonl",
        max_questions: int | None = None,
        sample: str = "stratified",
        seed: int = 0,
        corpus_cache: str | None = None,
    ):
        self.path = Path(path)
        self.corpus_cache = None if corpus_cache is None else DirectoryCache(corpus_cache)
        self.name = name
        self.max_documents = max_documents
        self.chunks_file = chunks_file
        self.questions_file = questions_file
        self.max_questions, self.sample, self.seed = max_questions, sample, seed

    @staticmethod
    def ships_chunks(params: Mapping[str, Any]) -> bool:
        """The cookbook's own chunks come with it (``chunker=prechunked``)."""
        return True

    @classmethod
    def preflight(cls, params: Mapping[str, Any], run: object) -> None:
        """The folder and its two files exist (nothing is read)."""
        cls._files(
            Path(params["path"]),
            params.get("chunks_file", "codebase_chunks.json"),
            params.get("questions_file", "evaluation_set.jsonl"),
        )

    @staticmethod
    def _files(path: Path, chunks: str, questions: str) -> tuple[Path, Path]:
        folder = existing_path(path, "cookbook data folder", FETCH_HINT)
        return (
            existing_path(folder / chunks, "cookbook chunks", FETCH_HINT),
            existing_path(folder / questions, "cookbook questions", FETCH_HINT),
        )

    def load(self) -> Corpus:
        chunks_file, questions_file = self._files(self.path, self.chunks_file, self.questions_file)
        if self.corpus_cache is None:
            return self._load(chunks_file, questions_file)
        key = self.corpus_key(chunks_file, questions_file)
        path = self.corpus_cache.path(CORPUS_KIND, key) / CORPUS_FILE

        def cached(path: Path) -> Corpus:
            log.info("%s: corpus from the corpus cache (%s)", self.name, key[:12])
            return read_pickle(path)

        return cached_step(  # a parallel job of the sweep waits, then reads
            path,
            lock=path.parent.parent / key,
            compute=lambda: self._load(chunks_file, questions_file),
            write=lambda tmp, corpus: write_pickle(tmp / CORPUS_FILE, corpus),
            load=cached,
            writing=self.corpus_cache.writing(CORPUS_KIND, key),
        )

    def corpus_key(self, chunks_file: Path, questions_file: Path) -> str:
        """Every input of :meth:`load`: both files' bytes (sha256) and the options."""
        digests = [
            hashlib.sha256(f.read_bytes()).hexdigest() for f in (chunks_file, questions_file)
        ]
        options = [self.name, self.max_documents, self.max_questions, self.sample, self.seed]
        return content_hash("cookbook-corpus", CORPUS_FORMAT, *digests, *options)

    def _load(self, chunks_file: Path, questions_file: Path) -> Corpus:
        raw_docs = read_json(chunks_file)
        if not isinstance(raw_docs, list):
            raise SituateError(f"{chunks_file}: expected a JSON list of documents")
        if self.max_documents is not None:
            raw_docs = raw_docs[: self.max_documents]
        documents, prechunks, by_uuid = self._documents(raw_docs, chunks_file)
        records = list(read_jsonl(questions_file))
        questions, sampled = sample_questions(
            self._questions(questions_file, records, by_uuid),
            self.max_questions, self.sample, self.seed,
        )  # fmt: skip
        titles = {by_uuid[u][0]: t for u, t in self._titles(records).items() if u in by_uuid}
        documents = [
            Document(d.doc_id, d.text, titles.get(d.doc_id, d.doc_id), d.source) for d in documents
        ]
        return Corpus(
            self.name, documents, questions, prechunks, dict(sampled), str(questions_file)
        )

    def _documents(self, raw_docs: list, source: Path):
        documents: list[Document] = []
        prechunks: list[Chunk] = []
        by_uuid: dict[str, tuple[str, list[Chunk]]] = {}
        for i, raw in enumerate(raw_docs):
            where = f"{source}: document {i}"
            require_fields(raw, ("doc_id", "original_uuid", "content", "chunks"), where)
            doc_id, text = raw["doc_id"], raw["content"]
            if raw["original_uuid"] in by_uuid:
                raise SituateError(
                    f"{where}: duplicate original_uuid {raw['original_uuid']}; ids must be unique"
                )
            doc_chunks: list[Chunk] = []
            offset = 0
            for j, rc in enumerate(raw["chunks"]):
                require_fields(rc, ("chunk_id", "content"), f"{where} ({doc_id}) chunk {j}")
                piece = rc["content"]
                if text[offset : offset + len(piece)] != piece:
                    raise SituateError(
                        f"{where} ({doc_id}): chunk {j} is not the next part of the document text; "
                        "the chunks of a document must concatenate to its content"
                    )
                doc_chunks.append(
                    Chunk(
                        rc["chunk_id"],
                        doc_id,
                        j,
                        offset,
                        offset + len(piece),
                        piece,
                        (),
                        "prechunked",
                    )
                )
                offset += len(piece)
            if offset != len(text):
                raise SituateError(
                    f"{where} ({doc_id}): chunks cover {offset} of {len(text)} characters"
                )
            documents.append(Document(doc_id, text, doc_id, str(source)))
            prechunks.extend(doc_chunks)
            by_uuid[raw["original_uuid"]] = (doc_id, doc_chunks)
        return documents, prechunks, by_uuid

    def _questions(
        self,
        path: Path,
        records: list[tuple[int, dict]],
        by_uuid: dict[str, tuple[str, list[Chunk]]],
    ) -> list[Question]:
        questions: list[Question] = []
        for lineno, rec in records:
            where = f"{path}:{lineno}"
            require_fields(rec, ("query", "golden_chunk_uuids"), where)
            text = question_text(rec["query"], where)
            gold: list[Span] = []
            missing_doc = False
            for pair in rec["golden_chunk_uuids"]:
                uuid, index = pair
                if uuid not in by_uuid:
                    missing_doc = True
                    continue
                doc_id, doc_chunks = by_uuid[uuid]
                if not 0 <= index < len(doc_chunks):
                    raise SituateError(
                        f"{where}: gold chunk index {index} of document {doc_id} is out of range "
                        f"(it has {len(doc_chunks)} chunks); fix golden_chunk_uuids"
                    )
                c = doc_chunks[index]
                gold.append(Span(doc_id, c.start, c.end, "chunk_text"))
            if missing_doc and self.max_documents is None:
                raise SituateError(
                    f"{where}: gold names a document uuid that is not in {self.chunks_file}; "
                    "fix golden_chunk_uuids"
                )
            if gold and not missing_doc:
                questions.append(
                    Question(f"q{lineno - 1}", text, tuple(gold), rec.get("answer", ""))
                )
        return questions

    @staticmethod
    def _titles(records: list[tuple[int, dict]]) -> dict[str, str]:
        """Repository and file path of each document uuid, from the questions' metadata."""
        titles: dict[str, str] = {}
        for _, rec in records:
            meta = rec.get("meta") or {}
            if not meta.get("relative_path"):
                continue
            title = f"{meta.get('repo_name', '')}{meta['relative_path']}"
            for doc in rec.get("golden_documents", []):
                titles.setdefault(doc.get("uuid", ""), title)
        return titles
