"""The measures of how hard a question with span gold is: :class:`Difficulty` (its overlap with
the gold passage, plain and IDF-weighted, the gold's lexical and dense ranks, the title's gain
and the share of words in another form), written as ``difficulty`` on each record of
``questions.jsonl``; :class:`DifficultyMeter`, which takes them against the documents, the same
for a generated candidate and a human question; and the content words they are counted over."""

from __future__ import annotations

import inspect
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from situate.chunking.fixed import FixedChunker
from situate.datasets.generated import GeneratedQuestion
from situate.embedding.base import normalize
from situate.errors import SituateError
from situate.questions.filters import words
from situate.questions.passages import windows
from situate.questions.word_forms import form_shift, shifted_words
from situate.records import Corpus, Document, Span
from situate.sparse.bm25s_engine import Bm25sEngine
from situate.words.stopwords import ENGLISH, SPANISH, without_accents

MEASURES = ("overlap", "overlap_idf", "lexical_rank", "dense_rank", "title_gain")
BASELINES = ("bm25", "dense")
SCORED_AT_ONCE = 256  # questions scored against every window at a time (bounds the memory)

# both languages at once, as the filters' accent-free word tokens write them
STOP_WORDS = ENGLISH | without_accents(SPANISH)


def content_words(text: str) -> list[str]:
    """The distinct content words of ``text`` in order: the filters' word tokens (case-folded,
    accents removed, letters and digits) that are not stop words."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOP_WORDS))


@dataclass(frozen=True)
class Difficulty:
    """The measures of one question with span gold; ranks are 1-based. The same for a generated
    candidate and a human question:

    - ``overlap``: the share of the question's distinct content words (:func:`content_words`:
      word tokens as the filters compare them, stop words of English and Spanish and question
      words left out) found in its **gold passage**: the passage window
      (:func:`situate.questions.passages.windows`, ``questions.passage_words``) overlapping its
      gold the most (a generated question's is the passage it was written from); a question with
      no content word has overlap 0;
    - ``overlap_idf``: the same share weighted by each word's inverse document frequency over the
      retrieval windows below, ``idf(w) = ln((N + 1) / (df(w) + 1)) + 1`` (``N`` windows, ``df``
      those holding ``w``): copying rare words counts more than copying common ones;
    - ``lexical_rank``: the 1-based rank of the first retrieval window overlapping the gold under
      BM25 (:class:`situate.sparse.bm25s_engine.Bm25sEngine`) over fixed windows of
      ``window_words`` words (``overlap_words`` shared) of all the documents, or of
      ``lexical_window_words`` (a fifth of them shared) where that is set; null when it is not in
      the top ``depth``;
    - ``dense_rank``: the same under the run's embedder (cosine over the same windows, every
      window scored: never null), through the embedding store when one is set;
    - ``title_gain``: how far the document's title lifts the gold, ``log2(lexical_rank) -
      log2(rank with the title)``, the second rank under BM25 over the same lexical windows each
      with the context ``context=heading_path`` gives it (:mod:`situate.contexts.heading_path`:
      the document's title, since a fixed window has no heading path); a rank beyond the depth
      is depth + 1. Positive: the title brings the gold up (the question names what the document
      is about), negative: it brings other documents' windows up (the question's words are in
      other titles). Measured only where ``match_on`` names it (one more BM25 index); null
      otherwise;
    - ``form_shift``: the share of its content words in another form than the gold passage's
      (:mod:`situate.questions.word_forms`)."""

    overlap: float
    overlap_idf: float
    lexical_rank: int | None  # None: not in the top ``rank_depth`` (or no bm25 baseline)
    dense_rank: int | None  # None: no dense baseline
    rank_depth: int  # how deep the lexical ranking was read
    # the share of its content words in another form than the gold passage's, the stem the same
    # (situate.questions.word_forms); None where not measured
    form_shift: float | None = None
    title_gain: float | None = None  # log2 rank without / with the title; None: not measured

    def value(self, measure: str) -> float:
        """``measure`` as a number to sort and bin by: a rank beyond the depth is depth + 1, a
        missing rank is NaN."""
        if measure not in MEASURES:
            raise SituateError(
                f"questions.difficulty: unknown measure {measure!r}; use {', '.join(MEASURES)}"
            )
        v = getattr(self, measure)
        if measure == "lexical_rank" and v is None and self.rank_depth:
            return float(self.rank_depth + 1)
        return float("nan") if v is None else float(v)

    def to_json(self) -> dict[str, Any]:
        return {
            "overlap": round(self.overlap, 4),
            "overlap_idf": round(self.overlap_idf, 4),
            "lexical_rank": self.lexical_rank,
            "dense_rank": self.dense_rank,
            "rank_depth": self.rank_depth,
            "form_shift": None if self.form_shift is None else round(self.form_shift, 4),
            "title_gain": None if self.title_gain is None else round(self.title_gain, 4),
        }

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> Difficulty:
        return cls(**{k: record.get(k) for k in (*MEASURES, "rank_depth", "form_shift")})


def rank_gain(plain: int | None, lifted: int | None, depth: int) -> float:
    """``log2(plain) - log2(lifted)``, a rank beyond ``depth`` (None) counted as depth + 1: +1
    where the gold comes up from rank 2 to 1, -1 from 1 to 2, 0 unchanged."""
    return math.log2(plain or depth + 1) - math.log2(lifted or depth + 1)


class DifficultyMeter:
    """Measures questions against ``documents`` (the measures: :class:`Difficulty`).

    ``embed(texts, kind)`` gives the run's embedder's vectors (``kind`` "query" or "document");
    needed when ``baselines`` holds ``dense``."""

    def __init__(
        self,
        documents: Sequence[Document],
        *,
        passage_words: int = 150,
        baselines: Sequence[str] = BASELINES,
        embed: Callable[..., np.ndarray] | None = None,
        embedding_rate_key: str | None = None,
        window_words: int = 200,
        overlap_words: int = 40,
        depth: int = 1000,
        lexical_window_words: int | None = None,
        title_gain: bool = False,
    ) -> None:
        unknown = set(baselines) - set(BASELINES)
        if unknown:
            raise SituateError(
                f"questions.difficulty.baselines={list(baselines)!r}: use a list of "
                f"{', '.join(BASELINES)}"
            )
        if "dense" in baselines and embed is None:
            raise SituateError("questions.difficulty: the dense baseline needs the run's embedder")
        if not isinstance(depth, int) or depth < 1:
            raise SituateError(f"questions.difficulty.depth={depth!r} must be an integer >= 1")
        if title_gain and "bm25" not in baselines:
            raise SituateError(
                "questions.difficulty: title_gain is a BM25 rank; add bm25 to "
                "questions.difficulty.baselines or leave title_gain out of match_on"
            )
        self.title_gain = title_gain
        self.documents = {d.doc_id: d for d in documents}
        self.passage_words = passage_words
        self.baselines = list(baselines)
        self.embed = embed
        # this machine's rate of the windows' embedding (its model's, shared with the runs')
        self.embedding_rate_key = embedding_rate_key
        self.depth = depth
        self.corpus = corpus = Corpus("difficulty", list(documents), [])
        chunker = FixedChunker(size=window_words, overlap=overlap_words, unit="words")
        self.chunks = chunker.chunk(corpus)
        if lexical_window_words is not None and (
            isinstance(lexical_window_words, bool)
            or not isinstance(lexical_window_words, int)
            or lexical_window_words < 5
        ):
            raise SituateError(
                f"questions.difficulty.lexical_window_words={lexical_window_words!r} must be an "
                "integer >= 5 or null (the windows of window_words)"
            )
        lexical = (
            (lexical_window_words, lexical_window_words // 5) if lexical_window_words else None
        )
        if lexical == (window_words, overlap_words):
            lexical = None
        self.lexical_chunks = (
            FixedChunker(size=lexical[0], overlap=lexical[1], unit="words").chunk(corpus)
            if lexical
            else self.chunks
        )
        self.windows = f"windows of {window_words} words ({overlap_words} shared)" + (
            f"; BM25 over {lexical[0]} words ({lexical[1]} shared)" if lexical else ""
        )  # what the ranks were measured over, said beside them
        self._window_words = [set(words(c.text)) for c in self.chunks]
        df = Counter(w for ws in self._window_words for w in ws)
        n = len(self.chunks)
        self._idf = {w: math.log((n + 1) / (c + 1)) + 1 for w, c in df.items()}
        self._idf_unseen = math.log(n + 1) + 1
        self._passages: dict[str, list[tuple[int, int]]] = {}
        self._where = self._index_windows(self.chunks)
        self._lexical_where = (
            self._where
            if self.lexical_chunks is self.chunks
            else self._index_windows(self.lexical_chunks)
        )
        self._window_vectors: np.ndarray | None = None
        self._lexical_engine: Bm25sEngine | None = None
        self._titled_engine: Bm25sEngine | None = None

    def idf(self, word: str) -> float:
        return self._idf.get(word, self._idf_unseen)

    @property
    def vocabulary(self) -> Mapping[str, float]:
        """The documents' words (as :func:`content_words` folds them), with their IDF."""
        return self._idf

    def gold_passage(self, gold: Sequence[Span], question: str | None = None) -> str:
        """The passage window overlapping ``gold`` the most (ties: the first), else the gold text.
        Where whole windows lie inside the gold (a page, a long quote), the one of them holding
        the most of ``question``'s content words (ties: the first): the passage it was asked of,
        not the page's first."""
        best, best_overlap = None, 0
        inside: list[str] = []
        for span in gold:
            doc = self.documents.get(span.doc_id)
            if doc is None:
                continue
            if doc.doc_id not in self._passages:
                self._passages[doc.doc_id] = [
                    (p.start, p.end) for s in windows(doc, self.passage_words) for p in s.passages
                ]
            for start, end in self._passages[doc.doc_id]:
                shared = min(end, span.end) - max(start, span.start)
                if shared > best_overlap:
                    best, best_overlap = doc.text[start:end], shared
                if span.start <= start and end <= span.end:
                    inside.append(doc.text[start:end])
        if question is not None and len(inside) > 1:
            asked = content_words(question)
            held = [len(set(asked) & set(words(text))) for text in inside]
            return inside[held.index(max(held))]
        if best is not None:
            return best
        return " ".join(
            self.documents[s.doc_id].text[s.start : s.end]
            for s in gold
            if s.doc_id in self.documents
        )

    def form_shifted(self, question: str, gold: Sequence[Span]) -> bool:
        """Whether ``question`` holds a content word in another form than its gold passage's."""
        return bool(shifted_words(content_words(question), self.gold_passage(gold, question)))

    def overlaps(self, question: str, passage: str) -> tuple[float, float]:
        """(share of the question's content words in ``passage``, the same IDF-weighted)."""
        asked = content_words(question)
        if not asked:
            return 0.0, 0.0
        present = set(words(passage))
        found = [w for w in asked if w in present]
        total = sum(self.idf(w) for w in asked)
        return len(found) / len(asked), sum(self.idf(w) for w in found) / total

    def measure(self, items: Sequence[tuple[str, Sequence[Span]]]) -> list[Difficulty]:
        """One :class:`Difficulty` per ``(question text, gold spans)``."""
        if not items:
            return []
        queries = [q for q, _ in items]
        relevant = [self._relevant(gold, self._where) for _, gold in items]
        lexical: list[int | None] = [None] * len(items)
        dense: list[int | None] = [None] * len(items)
        gains: list[float | None] = [None] * len(items)
        depth = min(self.depth, len(self.lexical_chunks)) if "bm25" in self.baselines else 0
        if "bm25" in self.baselines and self.lexical_chunks:
            windows_relevant = (
                relevant
                if self.lexical_chunks is self.chunks
                else [self._relevant(gold, self._lexical_where) for _, gold in items]
            )
            lexical = self._ranks(self.lexical_engine(), queries, windows_relevant, depth)
            if self.title_gain:
                titled = self._ranks(self.titled_engine(), queries, windows_relevant, depth)
                gains = [rank_gain(p, t, depth) for p, t in zip(lexical, titled, strict=True)]
        if "dense" in self.baselines and self.chunks:
            q_vectors = normalize(self.embed_texts(queries, "query"))
            w_vectors = normalize(self.window_vectors())
            for lo in range(0, len(items), SCORED_AT_ONCE):
                scores = q_vectors[lo : lo + SCORED_AT_ONCE] @ w_vectors.T
                for j, row in enumerate(scores):
                    if len(relevant[lo + j]):
                        best = row[relevant[lo + j]].max()
                        dense[lo + j] = int((row > best).sum()) + 1
        out = []
        for i, (question, gold) in enumerate(items):
            passage = self.gold_passage(gold, question)
            overlap, weighted = self.overlaps(question, passage)
            shift = form_shift(content_words(question), passage)
            out.append(Difficulty(overlap, weighted, lexical[i], dense[i], depth, shift, gains[i]))
        return out

    @staticmethod
    def _ranks(
        engine: Bm25sEngine, queries: Sequence[str], relevant: Sequence[np.ndarray], depth: int
    ) -> list[int | None]:
        """Each query's 1-based rank of its first relevant window in ``engine``'s top ``depth``
        (None: not there)."""
        out: list[int | None] = []
        for i, row in enumerate(engine.search(list(queries), depth).ids):
            hits = np.flatnonzero(np.isin(row, relevant[i]))
            out.append(int(hits[0]) + 1 if len(hits) else None)
        return out

    def titled_engine(self) -> Bm25sEngine:
        """The BM25 index of the lexical windows, each with the context ``context=heading_path``
        gives it (its document's title: a fixed window has no heading path), built once per
        meter."""
        if self._titled_engine is None:
            from situate.contexts.heading_path import HeadingPathContext

            context, chunks = HeadingPathContext(), self.lexical_chunks
            texts = context.texts(chunks, context.contextualize(self.corpus, chunks), "sparse")
            self._titled_engine = Bm25sEngine()
            self._titled_engine.build(texts)
        return self._titled_engine

    def lexical_engine(self) -> Bm25sEngine:
        """The BM25 index of the lexical windows, built once per meter (the human sample and
        the candidates are ranked by the same one)."""
        if self._lexical_engine is None:
            self._lexical_engine = Bm25sEngine()
            self._lexical_engine.build([c.text for c in self.lexical_chunks])
        return self._lexical_engine

    def embed_texts(self, texts: Sequence[str], kind: str, progress=None) -> np.ndarray:
        """``texts`` through the embedder; ``progress(n, total)`` where ``embed`` takes one."""
        assert self.embed is not None
        if progress is not None and "progress" in inspect.signature(self.embed).parameters:
            return self.embed(list(texts), kind, progress=progress)
        return self.embed(list(texts), kind)

    def window_vectors(self) -> np.ndarray:
        """The windows' vectors, embedded once per meter (a bar while they are)."""
        if self._window_vectors is None:
            from situate.progress import progress_bar

            texts = [c.text for c in self.chunks]
            label = f"difficulty: embedding {len(texts)} windows"
            with progress_bar(label, rate_key=self.embedding_rate_key) as advance:
                self._window_vectors = np.asarray(
                    self.embed_texts(texts, "document", advance), dtype=np.float32
                )
        return self._window_vectors

    @staticmethod
    def _index_windows(chunks) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each document's windows: their starts, ends and indices in ``chunks``."""
        rows: dict[str, list[tuple[int, int, int]]] = {}
        for i, c in enumerate(chunks):
            rows.setdefault(c.doc_id, []).append((c.start, c.end, i))
        return {
            doc: tuple(np.asarray(col, dtype=np.int64) for col in zip(*r, strict=True))
            for doc, r in rows.items()
        }

    @staticmethod
    def _relevant(gold: Sequence[Span], where) -> np.ndarray:
        """The sorted indices of the windows overlapping ``gold`` (``where``: what
        :meth:`_index_windows` returns)."""
        found = []
        for span in gold:
            if span.doc_id in where:
                starts, ends, index = where[span.doc_id]
                found.append(index[(starts < span.end) & (span.start < ends)])
        return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)


def with_difficulty(
    questions: Sequence[GeneratedQuestion], meter: DifficultyMeter
) -> list[GeneratedQuestion]:
    """``questions`` with ``difficulty`` set on each one that has gold (the others unchanged)."""
    measured = [q for q in questions if q.gold]
    found = meter.measure([(q.q, q.gold) for q in measured])
    by_id = {q.id: d for q, d in zip(measured, found, strict=True)}
    return [replace(q, difficulty=by_id[q.id].to_json()) if q.id in by_id else q for q in questions]


def difficulty_of(q: GeneratedQuestion) -> Difficulty | None:
    return Difficulty.from_json(q.difficulty) if q.difficulty else None


def shifted_share(values: Sequence[Difficulty]) -> float | None:
    """The share of questions holding a word in another form than their passage's (of those
    measured), or None where none was."""
    measured = [v.form_shift for v in values if v.form_shift is not None]
    return sum(x > 0 for x in measured) / len(measured) if measured else None
