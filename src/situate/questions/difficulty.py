"""How hard a question is, measured cheaply, and a generated set selected to a difficulty target.

Four measures per question with span gold (:class:`Difficulty`, written as ``difficulty`` on each
record of ``questions.jsonl``), the same for a generated candidate and a human question:

- ``overlap``: the share of the question's distinct content words (:func:`content_words`: word
  tokens as the filters compare them, stop words of English and Spanish and question words left
  out) found in its **gold passage**: the passage window (:func:`situate.questions.passages.windows`,
  ``questions.passage_words``) overlapping its gold the most (a generated question's is the
  passage it was written from); a question with no content word has overlap 0;
- ``overlap_idf``: the same share weighted by each word's inverse document frequency over the
  retrieval windows below, ``idf(w) = ln((N + 1) / (df(w) + 1)) + 1`` (``N`` windows, ``df``
  those holding ``w``): copying rare words counts more than copying common ones;
- ``lexical_rank``: the 1-based rank of the first retrieval window overlapping the gold under BM25
  (:class:`situate.sparse.bm25s_engine.Bm25sEngine`) over fixed windows of ``window_words`` words
  (``overlap_words`` shared) of all the documents, or of ``lexical_window_words`` (a fifth of them
  shared) where that is set; null when it is not in the top ``depth``. Finer windows tell a
  question whose words all sit in its answer's sentence (found at any chunk size) from one whose
  words spread over the passage around it, as people's do (found only by the larger chunks);
- ``dense_rank``: the same under the run's embedder (cosine over the same windows, every window
  scored: never null), through the embedding store when one is set;
- ``title_gain``: how far the document's title lifts the gold, ``log2(lexical_rank) -
  log2(rank with the title)``, the second rank under BM25 over the same lexical windows each
  with the context ``context=heading_path`` gives it (:mod:`situate.contexts.heading_path`:
  the document's title, since a fixed window has no heading path); a rank beyond the depth is
  depth + 1. Positive: the
  title brings the gold up (the question names what the document is about), negative: it
  brings other documents' windows up (the question's words are in other titles). Measured only
  where ``match_on`` names it (one more BM25 index); null otherwise. On COVID-QA's papers as
  PDFs, a question's title_gain correlates with what heading_path does to its reciprocal rank
  (+0.55 over people's 1,380 questions), and 21% of people's questions lose by the title
  against 7% of the extractive candidates: matching it is what makes a generated set order the
  context axis as people's do (docs/questions.md).

A target (``questions.difficulty``, :class:`DifficultyTarget`) is either caps (``max_overlap``,
``max_overlap_idf``, ``min_lexical_rank``, ``min_dense_rank``: a candidate outside one is removed,
then the first ``questions.target`` kept) or ``match``: a small human sample (a ``qa.json`` with
gold, resolved as ``dataset=folder`` resolves it, or a ``questions.jsonl``) measured the same way,
and candidates selected by **quantile bins** of the human distribution (:func:`match_bins`): for
each measure of ``match_on``, the edges are the human sample's ``1/bins, 2/bins, ...`` quantiles
(repeated edges merged: ranks tie a lot), a value ``v`` falls in the first bin whose edge is
``>= v`` (the last bin: above every edge); a cell is one bin per measure, its quota
``target x`` (share of the human sample in that cell), rounded by the largest remainder rule;
each cell takes its first candidates in passage order up to its quota, so the kept set's joint
histogram over the cells is the human one's. Where some cells have too few candidates, the set
can shrink: the quotas are of the largest size up to ``questions.target`` that the candidates
fill but for at most ``tolerance`` of it (:func:`matched_size`), so a set is not made easier
than the sample by filling the easy cells that have candidates to spare. The default, 1, fills
what it can of the target; either way the kept set's distance from the sample's histogram
(:func:`bin_distance`) is reported, and a short cell.
Over-generation (``oversample`` candidates per kept question) gives the cells something to pick.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from situate.chunking.fixed import FixedChunker
from situate.datasets.generated import FilterReport, GeneratedQuestion
from situate.embedding.base import normalize
from situate.errors import SituateError
from situate.questions.filters import words
from situate.questions.passages import windows
from situate.questions.word_forms import form_shift, shifted_words
from situate.records import Corpus, Document, Span
from situate.sparse.bm25s_engine import Bm25sEngine

NAME = "difficulty"  # the rejected_by of a candidate the target leaves out
MEASURES = ("overlap", "overlap_idf", "lexical_rank", "dense_rank", "title_gain")
BASELINES = ("bm25", "dense")
QUARTILES = (0.25, 0.5, 0.75)
SCORED_AT_ONCE = 256  # questions scored against every window at a time (bounds the memory)

_STOP = """
    the a an and or but of in on at to for from by with without as is are was were be been being
    has have had do does did this that these those it its they them their there here which who
    whom whose what when where why how not no than then so such can could may might must shall
    should will would also into over under between after before during about above below both
    each few more most other some any all only own same very our we you your he she his her one
    while if i me my us per via
    el la los las un una unos unas y o pero de del en a al por para con sin como es son era eran
    ser sido fue fueron ha han habia este esta estos estas ese esa esos esas eso esto lo le les se
    su sus que quien cual cuales cuando donde porque no ni mas menos muy tambien entre sobre tras
    durante antes despues todo todos toda todas otro otra otros otras mismo cada si ya hay nos
"""
STOP_WORDS = frozenset(_STOP.split())


def content_words(text: str) -> list[str]:
    """The distinct content words of ``text`` in order: the filters' word tokens (case-folded,
    accents removed, letters and digits) that are not stop words."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOP_WORDS))


@dataclass(frozen=True)
class Difficulty:
    """The measures of one question (see the module docstring); ranks are 1-based."""

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


# -- measuring ---------------------------------------------------------------------------------


class DifficultyMeter:
    """Measures questions against ``documents`` (see the module docstring).

    ``embed(texts, kind)`` gives the run's embedder's vectors (``kind`` "query" or "document");
    needed when ``baselines`` holds ``dense``."""

    def __init__(
        self,
        documents: Sequence[Document],
        *,
        passage_words: int = 150,
        baselines: Sequence[str] = BASELINES,
        embed: Callable[..., np.ndarray] | None = None,
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
            with progress_bar(f"difficulty: embedding {len(texts)} windows") as advance:
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


# -- the human sample --------------------------------------------------------------------------


def human_sample(
    path: str | Path,
    documents: Sequence[Document],
    *,
    max_words: int = 250,
    min_words: int = 20,
    quote_threshold: float = 90,
) -> list[tuple[str, tuple[Span, ...]]]:
    """The questions with gold of a ``qa.json`` (gold resolved as ``dataset=folder`` does:
    quotes, pages, chunk references or spans; ``max_words``/``min_words`` those of its
    ``file.md#N`` references) or of a ``questions.jsonl`` (its usable questions), as
    ``(text, gold)``; questions without gold are left out (they have no difficulty)."""
    from situate.datasets.base import read_json
    from situate.datasets.folder import QA_EXPECTED, GoldResolver
    from situate.datasets.generated import read_questions

    path = Path(path).expanduser()
    if not path.is_file():
        raise SituateError(
            f"questions.difficulty.match={path}: no such file; give a qa.json (or questions.jsonl) "
            "of human questions with gold"
        )
    if path.suffix.lower() == ".jsonl":
        out = [(q.q, q.gold) for q in read_questions(path) if q.usable and q.gold]
    else:
        resolver = GoldResolver(
            path, path.parent, list(documents), max_words, min_words, quote_threshold
        )
        out = [(q.text, q.gold) for q in resolver.questions(read_json(path, QA_EXPECTED)) if q.gold]
    if not out:
        raise SituateError(
            f"questions.difficulty.match={path}: no question with gold to measure; give each "
            'human question its gold ("gold": [quote, page or span])'
        )
    return out


# -- selecting ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bin:
    """One cell of the match: a bin per measure, the human share, the quota and what it got."""

    cell: tuple[int, ...]
    label: str  # e.g. "overlap <= 0.40, lexical_rank 2-5"
    human: int
    quota: int
    kept: int


def bin_edges(values: Sequence[float], bins: int) -> list[float]:
    """The ``1/bins .. (bins-1)/bins`` quantiles of ``values`` (linear interpolation), repeats
    merged."""
    finite = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if not len(finite):
        return []
    qs = np.quantile(finite, [i / bins for i in range(1, bins)])
    return sorted(set(float(q) for q in qs))


def bin_of(value: float, edges: Sequence[float]) -> int:
    """The first bin whose edge is ``>= value``; ``len(edges)`` above every edge."""
    return next((i for i, e in enumerate(edges) if value <= e), len(edges))


def _label(measure: str, edges: Sequence[float], b: int) -> str:
    def f(x: float) -> str:
        return f"{x:g}" if measure.endswith("rank") else f"{x:.2f}"

    if not edges:
        return f"{measure} any"
    if b == 0:
        return f"{measure} <= {f(edges[0])}"
    if b == len(edges):
        return f"{measure} > {f(edges[-1])}"
    return f"{measure} in ({f(edges[b - 1])}, {f(edges[b])}]"


def largest_remainder(shares: Mapping[Any, float], n: int) -> dict[Any, int]:
    """``n`` split by ``shares`` (summing to 1): floors, then one each to the largest remainders
    (ties to the key listed first)."""
    exact = {k: n * s for k, s in shares.items()}
    counts = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: -(exact[k] - counts[k]))[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


def checked_tolerance(tolerance: Any) -> float:
    """``questions.difficulty.tolerance`` as a float, or the one-line error."""
    number = isinstance(tolerance, int | float) and not isinstance(tolerance, bool)
    if not number or not 0 <= tolerance <= 1:
        raise SituateError(
            f"questions.difficulty.tolerance={tolerance!r} must be a number from 0 to 1"
        )
    return float(tolerance)


def matched_size(
    available: Mapping[Any, int], shares: Mapping[Any, float], target: int, tolerance: float
) -> int:
    """The largest ``n <= target`` whose quotas (``shares`` of ``n``, :func:`largest_remainder`)
    the ``available`` candidates of each cell fill, but for at most ``tolerance x n`` questions;
    0 when none."""
    for n in range(target, 0, -1):
        quota = largest_remainder(shares, n)
        short = sum(max(0, q - available.get(c, 0)) for c, q in quota.items())
        if short <= tolerance * n:
            return n
    return 0


def bin_distance(bins: Sequence[Bin]) -> float | None:
    """How far the kept set's histogram over the cells is from the human sample's: the total
    variation distance, half the sum over the cells of |kept share - human share| (0: the same;
    0.25: a quarter of the kept set would have to move cell); None with nothing kept."""
    kept, human = sum(b.kept for b in bins), sum(b.human for b in bins)
    if not kept or not human:
        return None
    return sum(abs(b.kept / kept - b.human / human) for b in bins) / 2


def match_bins(
    candidates: Sequence[tuple[str, Difficulty]],
    human: Sequence[Difficulty],
    target: int,
    match_on: Sequence[str],
    bins: int,
    tolerance: float = 1.0,
) -> tuple[list[str], dict[str, str], list[Bin]]:
    """The ids selected from ``candidates`` (in their order) so the kept set's histogram over the
    human sample's quantile cells matches the human one (module docstring); the reason of each
    left out; and the cells. The quotas are of the largest set size up to ``target`` that the
    candidates fill but for at most ``tolerance`` of it (:func:`matched_size`; 1 fills what it
    can of ``target``)."""
    tolerance = checked_tolerance(tolerance)
    if not match_on:
        raise SituateError("questions.difficulty.match_on is empty; name a measure, e.g. overlap")
    if not isinstance(bins, int) or bins < 1:
        raise SituateError(f"questions.difficulty.bins={bins!r} must be an integer >= 1")
    edges = {m: bin_edges([h.value(m) for h in human], bins) for m in match_on}

    def cell(d: Difficulty) -> tuple[int, ...] | None:
        values = [d.value(m) for m in match_on]
        if any(math.isnan(v) for v in values):
            return None
        return tuple(bin_of(v, edges[m]) for m, v in zip(match_on, values, strict=True))

    human_cells = Counter(c for h in human if (c := cell(h)) is not None)
    if not human_cells:
        raise SituateError(
            f"questions.difficulty.match_on={list(match_on)}: no human question has these "
            "measures (a rank needs its baseline in questions.difficulty.baselines)"
        )
    cells = list(product(*(range(len(edges[m]) + 1) for m in match_on)))
    total = sum(human_cells.values())
    shares = {c: human_cells[c] / total for c in cells}
    available = Counter(c for _, d in candidates if (c := cell(d)) is not None)
    size = matched_size(available, shares, target, tolerance)
    quota = largest_remainder(shares, size)
    taken: Counter = Counter()
    kept: list[str] = []
    left: dict[str, str] = {}
    labels = {
        c: ", ".join(_label(m, edges[m], b) for m, b in zip(match_on, c, strict=True))
        for c in cells
    }
    for qid, d in candidates:
        c = cell(d)
        if c is None:
            left[qid] = f"no {'/'.join(match_on)} measured to match the human sample by"
        elif taken[c] < quota[c]:
            taken[c] += 1
            kept.append(qid)
        else:
            left[qid] = (
                f"its bin ({labels[c]}) is full: {quota[c]} of {size} by the human sample's "
                f"share {human_cells[c]}/{total}"
            )
    table = [Bin(c, labels[c], human_cells[c], quota[c], taken[c]) for c in cells]
    return kept, left, table


@dataclass(frozen=True)
class Selection:
    """What the target did: its report (the candidates it left out), the cells of a match."""

    report: FilterReport
    bins: list[Bin]
    human: list[Difficulty]


class DifficultyTarget:
    """``questions.difficulty``'s caps or human match over measured candidates (module docstring).

    ``human``: the measured human sample when matching, else None."""

    CAPS = {
        "max_overlap": ("overlap", "<="),
        "max_overlap_idf": ("overlap_idf", "<="),
        "min_lexical_rank": ("lexical_rank", ">="),
        "min_dense_rank": ("dense_rank", ">="),
    }

    def __init__(
        self,
        caps: Mapping[str, float | None],
        human: Sequence[Difficulty] | None = None,
        match_on: Sequence[str] = ("overlap", "lexical_rank"),
        bins: int = 4,
        tolerance: float = 1.0,
        word_forms: float | None = None,
    ) -> None:
        unknown = set(caps) - set(self.CAPS)
        if unknown:
            raise SituateError(
                f"questions.difficulty.{sorted(unknown)[0]}: no such cap; the caps are "
                f"{', '.join(self.CAPS)}"
            )
        for key, value in caps.items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):
                raise SituateError(f"questions.difficulty.{key}={value!r} must be a number or null")
        self.caps = {k: float(v) for k, v in caps.items() if v is not None}
        self.human = list(human) if human is not None else None
        self.match_on = list(match_on)
        self.bins = bins
        self.tolerance = checked_tolerance(tolerance)
        self.word_forms = word_forms  # the share of questions varied (word_forms.vary), or None
        for m in self.match_on:
            if m not in MEASURES:
                raise SituateError(
                    f"questions.difficulty.match_on: unknown measure {m!r}; use "
                    f"{', '.join(MEASURES)}"
                )

    @property
    def active(self) -> bool:
        return bool(self.caps) or self.human is not None

    def cap_reason(self, d: Difficulty) -> str | None:
        for key, limit in self.caps.items():
            measure, op = self.CAPS[key]
            v = d.value(measure)
            if math.isnan(v):
                return f"no {measure} measured for questions.difficulty.{key}"
            if (op == "<=" and v > limit) or (op == ">=" and v < limit):
                return f"{measure} {v:g} outside questions.difficulty.{key}={limit:g}"
        return None

    def select(self, questions: Sequence[GeneratedQuestion], target: int) -> Selection:
        """Which of the kept ``questions`` (measured) the target leaves out, and why."""
        removed: dict[str, str] = {}
        passing: list[tuple[str, Difficulty]] = []
        for q in questions:
            d = difficulty_of(q)
            if d is None:
                removed[q.id] = "no difficulty measured (no gold)"
            elif (why := self.cap_reason(d)) is not None:
                removed[q.id] = why
            else:
                passing.append((q.id, d))
        table: list[Bin] = []
        if self.human is not None:
            _, left, table = match_bins(
                passing, self.human, target, self.match_on, self.bins, self.tolerance
            )
            removed.update(left)
        else:
            for qid, _ in passing[target:]:
                removed[qid] = f"over questions.target={target} (the first {target} are kept)"
        report = FilterReport(NAME, [(q.id, removed[q.id]) for q in questions if q.id in removed])
        return Selection(report, table, self.human or [])


# -- building from questions.difficulty -------------------------------------------------------

SETTINGS = (
    "measure", "baselines", "window_words", "overlap_words", "lexical_window_words", "depth",
    "store", "match", "match_required", "match_on", "bins", "tolerance", "oversample",
    "word_forms", *DifficultyTarget.CAPS,
)  # fmt: skip


def target_set(settings: Mapping[str, Any]) -> bool:
    """Whether ``questions.difficulty`` sets a target (a cap or a match): then it over-generates."""
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise SituateError(
            f"questions.difficulty.{unknown[0]}: no such option; the options are "
            f"{', '.join(SETTINGS)} (conf/questions/mixed.yaml)"
        )
    required = settings.get("match_required", False)
    if not isinstance(required, bool):
        raise SituateError(
            f"questions.difficulty.match_required={required!r} must be true or false"
        )
    if required and settings.get("match") is None:
        raise SituateError(
            "questions=matched selects questions like 20-40 of your own: set "
            "questions.difficulty.match=<your qa.json> (questions with their gold as quotes, "
            "pages or chunk ids; docs/questions.md)"
        )
    wanted = settings.get("match") is not None or any(
        settings.get(k) is not None for k in DifficultyTarget.CAPS
    )
    if wanted and not settings.get("measure", True):
        raise SituateError(
            "questions.difficulty: a target (a cap or match) needs the measures; set "
            "questions.difficulty.measure=true"
        )
    return wanted


def oversample(settings: Mapping[str, Any]) -> int:
    """Candidates written per kept question: ``oversample`` with a target, else 1."""
    factor = settings.get("oversample", 3)
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise SituateError(f"questions.difficulty.oversample={factor!r} must be an integer >= 1")
    return factor if target_set(settings) else 1


def build(
    settings: Mapping[str, Any],
    documents: Sequence[Document],
    *,
    embedder=None,
    passage_words: int = 150,
    human_options: Mapping[str, Any] | None = None,
) -> tuple[DifficultyMeter | None, DifficultyTarget | None]:
    """The meter and the target of ``questions.difficulty`` (None, None with ``measure: false``);
    the human sample of ``match`` is read and measured here. ``human_options``: the keyword
    arguments of :func:`human_sample` (the dataset's quote threshold and chunk settings)."""
    from situate.questions.filters import embedding_function

    wanted = target_set(settings)
    forms = settings.get("word_forms")
    if not settings.get("measure", True):
        if forms is not None:
            raise SituateError(
                "questions.difficulty.word_forms needs the measures (a question's gold passage); "
                "set questions.difficulty.measure=true"
            )
        return None, None
    if forms == "match" and settings.get("match") is None:
        raise SituateError(
            "questions.difficulty.word_forms=match takes the share of your own questions: set "
            "questions.difficulty.match=<your qa.json>, or give the share (0 to 1)"
        )
    baselines = list(settings.get("baselines") or ())
    embed = None
    if "dense" in baselines:
        if embedder is None:
            raise SituateError(
                "questions.difficulty.baselines holds dense, which needs the embedder; give one "
                "or set questions.difficulty.baselines=[bm25]"
            )
        embed = embedding_function(embedder, settings.get("store"))
    meter = DifficultyMeter(
        documents,
        passage_words=passage_words,
        baselines=baselines,
        embed=embed,
        window_words=int(settings.get("window_words", 200)),
        overlap_words=int(settings.get("overlap_words", 40)),
        depth=settings.get("depth", 1000),
        lexical_window_words=settings.get("lexical_window_words"),
        title_gain="title_gain" in (settings.get("match_on") or ()),
    )
    if not wanted and forms is None:
        return meter, None
    human = None
    if settings.get("match") is not None:
        sample = human_sample(str(settings["match"]), documents, **dict(human_options or {}))
        human = meter.measure(sample)
    if forms == "match":
        assert human is not None
        forms = shifted_share(human)
    target = DifficultyTarget(
        {k: settings.get(k) for k in DifficultyTarget.CAPS},
        human,
        match_on=list(settings.get("match_on") or ()),
        bins=settings.get("bins", 4),
        tolerance=settings.get("tolerance", 1.0),
        word_forms=checked_share(forms),
    )
    return meter, target


def shifted_share(values: Sequence[Difficulty]) -> float | None:
    """The share of questions holding a word in another form than their passage's (of those
    measured), or None where none was."""
    measured = [v.form_shift for v in values if v.form_shift is not None]
    return sum(x > 0 for x in measured) / len(measured) if measured else None


def checked_share(value: Any) -> float | None:
    """``questions.difficulty.word_forms`` as a share (None: not set)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise SituateError(
            f"questions.difficulty.word_forms={value!r} must be a share from 0 to 1, match "
            "(your sample's share) or null"
        )
    return float(value)


# -- reporting ---------------------------------------------------------------------------------


def describe(values: Sequence[Difficulty]) -> dict[str, Any]:
    """Quartiles of each measure, and the share of questions whose gold is the lexical top 1."""
    out: dict[str, Any] = {"questions": len(values)}
    for m in MEASURES:
        xs = [v.value(m) for v in values]
        xs = [x for x in xs if not math.isnan(x)]
        out[m] = [float(np.quantile(xs, q)) for q in QUARTILES] if xs else None
    lexical = [v for v in values if not math.isnan(v.value("lexical_rank"))]
    out["lexical_top1"] = (
        sum(v.lexical_rank == 1 for v in lexical) / len(lexical) if lexical else None
    )
    dense = [v for v in values if v.dense_rank is not None]
    out["dense_top1"] = sum(v.dense_rank == 1 for v in dense) / len(dense) if dense else None
    out["form_shifted"] = shifted_share(values)
    return out


def comparison_rows(columns: Mapping[str, Sequence[Difficulty]]) -> list[list[str]]:
    """The difficulty table: a row per figure (medians with quartiles, top-1 shares), a column per
    question set (e.g. kept, human sample)."""
    described = {name: describe(values) for name, values in columns.items()}

    def quartiles(d: dict, m: str) -> str:
        q = d[m]
        if q is None:
            return "-"
        f = (lambda x: f"{x:g}") if m.endswith("rank") else (lambda x: f"{x:.2f}")
        return f"{f(q[1])} ({f(q[0])}-{f(q[2])})"

    def share(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    rows = [["questions", *(str(d["questions"]) for d in described.values())]]
    for m in MEASURES:
        if m == "title_gain" and all(d[m] is None for d in described.values()):
            continue  # measured only where match_on names it
        rows.append([f"{m}: median (q1-q3)", *(quartiles(d, m) for d in described.values())])
    rows.append(
        ["gold is the lexical top 1", *(share(d["lexical_top1"]) for d in described.values())]
    )
    rows.append(["gold is the dense top 1", *(share(d["dense_top1"]) for d in described.values())])
    rows.append(
        [
            "a word in another form than the passage's",
            *(share(d["form_shifted"]) for d in described.values()),
        ]
    )
    return rows


def markdown_report(
    columns: Mapping[str, Sequence[Difficulty]], bins: Sequence[Bin] = (), windows: str = ""
) -> str:
    """The difficulty table (and the match's cells) as Markdown: what the command writes beside
    ``questions.jsonl``; ``windows``: what the ranks were measured over
    (:attr:`DifficultyMeter.windows`)."""
    rows = comparison_rows(columns)
    lines = [
        "# Difficulty of the generated questions",
        "",
        "overlap: share of the question's content words in its gold passage (overlap_idf: IDF "
        "weighted); ranks: where the gold's first window comes under BM25 / the embedder "
        "(1 = top; beyond the depth is depth + 1)" + (f", over {windows}." if windows else "."),
        "",
        "| | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    if bins:
        lines += [
            "",
            "## Quantile bins of the human sample",
            "",
            "| bin | human questions | quota | kept |",
            "|---|---|---|---|",
            *(f"| {b.label} | {b.human} | {b.quota} | {b.kept} |" for b in bins),
        ]
        distance = bin_distance(bins)
        if distance is not None:
            lines += [
                "",
                f"The kept set's bins differ from the human sample's by {distance:.0%} of its "
                "questions (total variation distance).",
            ]
    return "\n".join(lines) + "\n"
