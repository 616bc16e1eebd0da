"""SQuAD-format extractive QA (v1.1 and v2, e.g. COVID-QA): paragraphs or articles become documents.

With ``document="paragraph"`` (the default) each paragraph ``context`` becomes a
:class:`~situate.records.Document`; with ``document="article"`` each article (its paragraphs
joined by a blank line) is one document and its paragraphs are the dataset's own chunks
(``chunker=prechunked``) with their offsets in it, so a context can be written from the whole
article. Each answerable question
becomes a :class:`~situate.records.Question` whose gold is one character span per distinct answer
span (``match="answer_text"``). Unanswerable questions (``is_impossible``) are skipped and counted.

Real files carry wrong ``answer_start`` offsets (COVID-QA: 234 of 1,380 are off by -1, +2 or +3).
An offset whose text does not match is moved to the nearest exact occurrence of the answer text
within ``repair_window`` characters and counted in ``notes["offsets_repaired"]``; an answer that
does not occur there is a one-line :class:`~situate.errors.SituateError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from situate.datasets.base import (
    ShipsQuestions,
    existing_path,
    question_text,
    read_json,
    require_fields,
)
from situate.datasets.sample import sample_questions
from situate.errors import SituateError
from situate.records import Chunk, Corpus, Document, Question, Span

DOCUMENT_UNITS = ("paragraph", "article")
PARAGRAPH_SEPARATOR = "\n\n"  # between the paragraphs of an article document
_TITLE_MAX = 200  # a context's first line is used as its title only when shorter than this
_PREVIEW = 40  # characters of an answer text quoted in error messages

FETCH_FIX = (
    "check the path; for COVID-QA run `situate data fetch covid-qa`, or set SITUATE_DATA_DIR to "
    "the folder that holds the data"
)

SQUAD_EXPECTED = (
    'dataset=squad reads one SQuAD JSON document ({"data": [{"paragraphs": [{"context": ..., '
    '"qas": [...]}]}]}); convert the file, or use dataset=beir for a BEIR folder (corpus.jsonl, '
    "queries.jsonl, qrels/)"
)


class SquadLoader(ShipsQuestions):
    """Load a SQuAD-format JSON file into a :class:`~situate.records.Corpus`.

    Parameters
    ----------
    path
        The SQuAD v1.1 / v2 JSON file.
    name
        Corpus name.
    repair_window
        How far (characters, either side) to look for the answer text when ``answer_start`` is wrong.
    max_questions
        Keep N answerable questions (after ``max_documents``), chosen as ``sample`` says; None keeps
        all.
    sample, seed
        ``stratified`` (default: a seeded sample stratified by document) or ``first`` (the first N
        in file order); see :mod:`situate.datasets.sample`.
    max_documents
        Keep only the first N paragraphs (and only the questions on them); None keeps all.
    document
        ``"paragraph"``: one document per paragraph; ``"article"``: one per article, its
        paragraphs as pre-made chunks (chunk ids = the paragraph document ids).
    """

    def __init__(
        self,
        path: str,
        name: str = "squad",
        repair_window: int = 10,
        max_questions: int | None = None,
        max_documents: int | None = None,
        sample: str = "stratified",
        seed: int = 0,
        document: str = "paragraph",
    ) -> None:
        if document not in DOCUMENT_UNITS:
            raise SituateError(
                f"squad dataset: document={document!r} is invalid; use dataset.document=paragraph "
                "or dataset.document=article"
            )
        self.document = document
        self.path = path
        self.name = name
        self.repair_window = repair_window
        self.max_questions = max_questions
        self.max_documents = max_documents
        self.sample = sample
        self.seed = seed

    @staticmethod
    def ships_chunks(params: Mapping[str, Any]) -> bool:
        """With ``document=article`` its paragraphs are chunks of their article."""
        return params.get("document", "paragraph") == "article"

    @classmethod
    def preflight(cls, params: Mapping[str, Any], run: object) -> None:
        """The SQuAD file exists (nothing is read)."""
        existing_path(params["path"], "SQuAD-format JSON file", FETCH_FIX)

    def load(self) -> Corpus:
        """Read the file and return its documents, answerable questions and repair counts.

        Returns
        -------
        Corpus
            ``notes`` holds ``offsets_repaired`` (answers whose ``answer_start`` was moved) and
            ``unanswerable_skipped`` (``is_impossible`` questions left out); with ``max_questions``
            also ``questions_before_sample`` and ``sample`` (how the kept questions
            were chosen).
        """
        path = existing_path(self.path, "SQuAD-format JSON file", FETCH_FIX)
        raw = read_json(path, SQUAD_EXPECTED)
        require_fields(raw, ("data",), str(path))
        articles = _as_list(raw["data"], f"{path}: field data")
        builder = _Builder(path, self.repair_window)
        for ai, article in enumerate(articles):
            require_fields(article, ("paragraphs",), f"{path}: article {ai}")
            paragraphs = _as_list(article["paragraphs"], f"{path}: article {ai} field paragraphs")
            for pi, paragraph in enumerate(paragraphs):
                if self.max_documents is not None and len(builder.documents) >= self.max_documents:
                    break
                builder.add_paragraph(article, ai, pi, paragraph)
        corpus = Corpus(
            name=self.name,
            documents=builder.documents,
            questions=builder.questions,
            questions_source=str(path),
            notes={
                "offsets_repaired": builder.repaired,
                "unanswerable_skipped": builder.unanswerable,
            },
        )
        if self.document == "article":
            corpus = articles_as_documents(corpus, builder.article_of)
        # sampled after articles are made, so a sample is stratified over the documents a run sees
        questions, sampled = sample_questions(
            corpus.questions, self.max_questions, self.sample, self.seed
        )
        return replace(corpus, questions=questions, notes={**corpus.notes, **sampled})


class _Builder:
    """Accumulates documents and questions while checking ids and offsets."""

    def __init__(self, path: Path, window: int) -> None:
        self.path = path
        self.window = window
        self.documents: list[Document] = []
        self.questions: list[Question] = []
        self.doc_ids: set[str] = set()
        self.qids: set[str] = set()
        self.repaired = 0
        self.unanswerable = 0
        self.article_of: dict[str, int] = {}  # paragraph document id -> article index

    def add_paragraph(self, article: dict[str, Any], ai: int, pi: int, paragraph: Any) -> None:
        where = f"{self.path}: article {ai} paragraph {pi}"
        require_fields(paragraph, ("context", "qas"), where)
        doc_id = _doc_id(paragraph, ai, pi)
        context = paragraph["context"]
        if not isinstance(context, str) or not context.strip():
            raise SituateError(
                f"{self.path}: document {doc_id}: empty context; fill in its text or remove the paragraph"
            )
        if doc_id in self.doc_ids:
            raise SituateError(
                f"{self.path}: duplicate document id {doc_id!r}; give every paragraph its own document_id"
            )
        self.doc_ids.add(doc_id)
        self.article_of[doc_id] = ai
        doc = Document(doc_id, context, _title(article, context), str(self.path))
        self.documents.append(doc)
        for k, qa in enumerate(_as_list(paragraph["qas"], f"{where} field qas")):
            self.add_question(doc, qa, f"{where} question {k}")

    def add_question(self, doc: Document, qa: Any, where: str) -> None:
        require_fields(qa, ("id", "question"), where)
        qid = str(qa["id"])
        if qid in self.qids:
            raise SituateError(
                f"{self.path}: duplicate question id {qid!r}; give every question its own id"
            )
        self.qids.add(qid)
        if qa.get("is_impossible"):
            self.unanswerable += 1
            return
        text = question_text(qa["question"], f"{self.path}: question {qid}")
        answers = _as_list(qa.get("answers", []), f"{self.path}: question {qid} field answers")
        if not answers:
            raise SituateError(
                f"{self.path}: question {qid}: no answers; add one or set is_impossible: true"
            )
        spans: list[Span] = []
        for j, answer in enumerate(answers):
            span = self._answer_span(doc, qid, answer, j)
            if span not in spans:
                spans.append(span)
        self.questions.append(Question(qid, text, tuple(spans), str(answers[0]["text"])))

    def _answer_span(self, doc: Document, qid: str, answer: Any, j: int) -> Span:
        require_fields(answer, ("text", "answer_start"), f"{self.path}: question {qid} answer {j}")
        text, start = answer["text"], answer["answer_start"]
        if not isinstance(text, str) or not text:
            raise SituateError(
                f"{self.path}: question {qid}: answer {j} has an empty text; fill in the answer text"
            )
        if isinstance(start, bool) or not isinstance(start, int):
            raise SituateError(
                f"{self.path}: question {qid}: answer_start {start!r} is not an integer; fix it"
            )
        if not 0 <= start < len(doc.text):
            where = "past the end of" if start > 0 else "negative, outside"
            raise SituateError(
                f"{self.path}: question {qid}: answer_start {start} is {where} document "
                f"{doc.doc_id} ({len(doc.text)} characters); fix answer_start"
            )
        found = nearest_occurrence(doc.text, text, start, self.window)
        if found is None:
            raise SituateError(
                f"{self.path}: question {qid}: answer text {_preview(text)!r} not found at offset "
                f"{start} or within {self.window} characters; fix answer_start or the text"
            )
        if found != start:
            self.repaired += 1
        return Span(doc.doc_id, found, found + len(text), match="answer_text")


def articles_as_documents(corpus: Corpus, article_of: dict[str, int]) -> Corpus:
    """One document per article from a corpus of paragraph documents.

    Parameters
    ----------
    corpus
        Paragraph documents (in file order) and their questions.
    article_of
        The article index of each paragraph document.

    Returns
    -------
    Corpus
        Article documents (id ``article-<index>``, the article's title), the paragraphs as
        prechunks (id = paragraph document id, offsets into the article text) and every gold
        span moved by its paragraph's offset.
    """
    groups: dict[int, list[Document]] = {}
    for doc in corpus.documents:
        groups.setdefault(article_of[doc.doc_id], []).append(doc)
    documents: list[Document] = []
    prechunks: list[Chunk] = []
    moved: dict[str, tuple[str, int]] = {}  # paragraph id -> (article id, offset)
    for ai, paragraphs in groups.items():
        doc_id = f"article-{ai}"
        pos = 0
        for index, para in enumerate(paragraphs):
            if index:
                pos += len(PARAGRAPH_SEPARATOR)
            moved[para.doc_id] = (doc_id, pos)
            end = pos + len(para.text)
            prechunks.append(
                Chunk(para.doc_id, doc_id, index, pos, end, para.text, (), "prechunked")
            )
            pos = end
        text = PARAGRAPH_SEPARATOR.join(p.text for p in paragraphs)
        documents.append(Document(doc_id, text, paragraphs[0].title, paragraphs[0].source))

    def move(g: Span) -> Span:
        doc_id, offset = moved[g.doc_id]
        return Span(doc_id, g.start + offset, g.end + offset, g.match)

    questions = [
        Question(q.qid, q.text, tuple(map(move, q.gold)), q.answer) for q in corpus.questions
    ]
    return Corpus(
        corpus.name, documents, questions, prechunks, dict(corpus.notes), corpus.questions_source
    )


def nearest_occurrence(context: str, text: str, start: int, window: int) -> int | None:
    """Return the offset of the exact occurrence of ``text`` nearest to ``start``.

    Parameters
    ----------
    context
        The text to search.
    text
        The text to find (non-empty).
    start
        The claimed offset; returned unchanged when ``text`` is there.
    window
        Only offsets within ``window`` characters of ``start`` are considered.

    Returns
    -------
    int or None
        The offset ``k`` with ``context[k:k+len(text)] == text`` minimising ``|k - start|`` (the
        earlier one on a tie), or None when there is none within the window.
    """
    best: int | None = None
    for k in range(max(0, start - window), start + window + 1):
        if context.startswith(text, k) and (best is None or abs(k - start) < abs(best - start)):
            best = k
    return best


def _doc_id(paragraph: dict[str, Any], ai: int, pi: int) -> str:
    """The paragraph's ``document_id`` as a string, else ``"{article}-{paragraph}"``."""
    value = paragraph.get("document_id")
    return f"{ai}-{pi}" if value is None or value == "" else str(value)


def _title(article: dict[str, Any], context: str) -> str:
    """The article's title, else the context's first line when it is short, else ""."""
    title = article.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    first = context.strip().split("\n", 1)[0].strip()
    return first if len(first) < _TITLE_MAX else ""


def _as_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise SituateError(
            f"{where}: expected a JSON list, got {type(value).__name__}; fix the file"
        )
    return value


def _preview(text: str) -> str:
    return text if len(text) <= _PREVIEW else text[:_PREVIEW] + "…"
