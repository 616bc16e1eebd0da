"""BEIR-format retrieval data: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

BEIR judges whole documents, so each relevant document (qrel score > 0) becomes a gold span that
covers the whole document text (``Span(doc_id, 0, len(text))``): a retrieved chunk is relevant when
it comes from that document. Documents whose title and text are both empty are left out (counted in
``notes["empty_documents_skipped"]``); qrels on them are ignored.
"""

from __future__ import annotations

from pathlib import Path

from situate.datasets.base import (
    ShipsQuestions,
    existing_path,
    question_text,
    read_jsonl,
    read_text,
    require_fields,
)
from situate.datasets.sample import sample_questions
from situate.errors import SituateError
from situate.records import Corpus, Document, Question, Span

BEIR_FIX = "point path at a BEIR dataset folder holding corpus.jsonl, queries.jsonl and qrels/"
QRELS_HEADER = ("query-id", "corpus-id", "score")


class BeirLoader(ShipsQuestions):
    """Load a BEIR dataset folder into a :class:`~situate.records.Corpus`.

    Parameters
    ----------
    path
        The folder holding ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.
    split
        Which qrels file to use (``test``, ``dev``, ``train``).
    name
        Corpus name.
    max_questions
        Keep N judged queries, chosen as ``sample`` says; None keeps all.
    sample, seed
        ``stratified`` (default: a seeded sample stratified by the first relevant document) or
        ``first`` (the first N in ``queries.jsonl`` order); see :mod:`situate.datasets.sample`.
    """

    def __init__(
        self,
        path: str,
        split: str = "test",
        name: str = "beir",
        max_questions: int | None = None,
        sample: str = "stratified",
        seed: int = 0,
    ) -> None:
        self.path = path
        self.split = split
        self.name = name
        self.max_questions = max_questions
        self.sample = sample
        self.seed = seed

    def load(self) -> Corpus:
        """Read the three files and return every document and each query with a relevant document.

        Returns
        -------
        Corpus
            Documents in ``corpus.jsonl`` order; questions in ``queries.jsonl`` order, each with one
            whole-document span per document judged relevant (score > 0) in the split; with
            ``max_questions``, ``notes`` holds ``questions_before_sample`` and ``sample``.
        """
        folder = existing_path(self.path, "BEIR dataset folder", BEIR_FIX)
        corpus_file = existing_path(folder / "corpus.jsonl", "BEIR corpus file", BEIR_FIX)
        queries_file = existing_path(folder / "queries.jsonl", "BEIR queries file", BEIR_FIX)
        qrels_file = existing_path(
            folder / "qrels" / f"{self.split}.tsv",
            f"qrels for split {self.split!r}",
            f"choose a split that has a file in {folder / 'qrels'}",
        )
        documents, empty = read_corpus(corpus_file)
        queries = read_queries(queries_file)
        known = {d.doc_id for d in documents} | empty
        relevant = read_qrels(qrels_file, known, set(queries), corpus_file, queries_file)
        by_id = {d.doc_id: d for d in documents}
        questions = []
        for qid, text in queries.items():
            spans = tuple(
                Span(d, 0, len(by_id[d].text), match="span")
                for d in relevant.get(qid, ())
                if d in by_id
            )
            if spans:
                questions.append(Question(qid, text, spans))
        kept, sampled = sample_questions(questions, self.max_questions, self.sample, self.seed)
        notes: dict[str, int | str] = {"empty_documents_skipped": len(empty)}
        notes.update(sampled)
        return Corpus(self.name, documents, kept, notes=notes, questions_source=str(queries_file))


def read_corpus(path: Path) -> tuple[list[Document], set[str]]:
    """Read ``corpus.jsonl`` into documents.

    Returns
    -------
    tuple of (list of Document, set of str)
        The documents (text ``"{title}\\n\\n{text}"``, or ``text`` alone when the title is empty) and
        the ids of the records left out because title and text are both empty.
    """
    documents: list[Document] = []
    seen: set[str] = set()
    empty: set[str] = set()
    for lineno, record in read_jsonl(path):
        where = f"{path}:{lineno}"
        require_fields(record, ("_id", "text"), where)
        doc_id = str(record["_id"])
        if doc_id in seen:
            raise SituateError(
                f"{where}: duplicate document id {doc_id!r}; keep one record per _id"
            )
        seen.add(doc_id)
        title = str(record.get("title") or "").strip()
        body = str(record["text"] or "")
        text = f"{title}\n\n{body}" if title else body
        if not text.strip():
            empty.add(doc_id)
            continue
        documents.append(Document(doc_id, text, title, str(path)))
    return documents, empty


def read_queries(path: Path) -> dict[str, str]:
    """Read ``queries.jsonl`` into ``{query id: query text}``, in file order."""
    queries: dict[str, str] = {}
    for lineno, record in read_jsonl(path):
        where = f"{path}:{lineno}"
        require_fields(record, ("_id", "text"), where)
        qid = str(record["_id"])
        if qid in queries:
            raise SituateError(f"{where}: duplicate query id {qid!r}; keep one record per _id")
        queries[qid] = question_text(record["text"], f"{where}: query {qid!r}")
    return queries


def read_qrels(
    path: Path, doc_ids: set[str], query_ids: set[str], corpus_file: Path, queries_file: Path
) -> dict[str, list[str]]:
    """Read a qrels TSV into ``{query id: [relevant doc ids]}`` (score > 0, first-seen order).

    Every line is checked: it must have three tab-separated fields with an integer score and name
    a known query and document, whatever its score.
    """
    relevant: dict[str, list[str]] = {}
    text = read_text(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = tuple(f.strip() for f in line.split("\t"))
        if lineno == 1 and fields == QRELS_HEADER:
            continue
        qid, doc_id, score = _parse_qrel(fields, f"{path}:{lineno}", line)
        if qid not in query_ids:
            raise SituateError(
                f"{path}:{lineno}: query id {qid!r} is not in {queries_file}; fix the qrel or add the query"
            )
        if doc_id not in doc_ids:
            raise SituateError(
                f"{path}:{lineno}: document id {doc_id!r} is not in {corpus_file}; fix the qrel or add the document"
            )
        docs = relevant.setdefault(qid, [])
        if score > 0 and doc_id not in docs:
            docs.append(doc_id)
    return relevant


def _parse_qrel(fields: tuple[str, ...], where: str, line: str) -> tuple[str, str, int]:
    fix = "expected query-id<TAB>corpus-id<TAB>integer score"
    if len(fields) != 3 or not fields[0] or not fields[1]:
        raise SituateError(f"{where}: malformed qrels line {line!r}; {fix}")
    try:
        score = int(fields[2])
    except ValueError:
        raise SituateError(
            f"{where}: malformed qrels line {line!r} (score is not an integer); {fix}"
        ) from None
    return fields[0], fields[1], score
