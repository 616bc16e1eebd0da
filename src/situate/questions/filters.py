"""The filters a generated question passes before it is kept (``conf/questions/filters/``).

``situate questions generate`` builds them once (:func:`build_filters`) and runs them in order
(:func:`apply_filters`): each filter sees only the questions still kept, and removes some with a
one-line reason (``GeneratedQuestion.rejected``). Every question stays in the file; each filter's
:class:`~situate.datasets.generated.FilterReport` says how many it removed and why, zero included.

- ``dangling_reference``: the question points at text it does not name ("what does it cover?",
  "according to this section", "¿qué describe este apartado?"), so it means nothing to a searcher
  who has not read the passage;
- ``near_duplicate``: embedding cosine with an earlier kept question at or over ``threshold``
  (the run's ``embedder``; its query vectors go through the embedding store when ``store`` is
  set); the first is kept, the later one names it;
- ``trivially_lexical``: the question copies the quote's rare words (inverse document frequency
  over the corpus's documents at least ``rare_idf``), so any lexical search finds it;
- ``answerable_without_corpus`` (off by default: one LLM call per question): the ``llm`` answers
  the question without the passage, and its answer holds at least ``min_recall`` of the
  answer's words; answers are stored by (model identity, prompt) so a rerun pays nothing twice;
- ``too_easy`` (off by default: a retrieval pass): every configured baseline (``bm25``: bm25s
  over fixed word windows; ``dense``: the run's ``embedder`` over the same windows) ranks a
  window overlapping the gold first.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from situate.chunking.fixed import FixedChunker
from situate.datasets.generated import FilterReport, GeneratedQuestion
from situate.embedding.base import CachedEmbeddings, Embedder, normalize
from situate.errors import SituateError
from situate.paid.llm import LLMCallFailed, LLMProvider, LLMRequest
from situate.records import Corpus, Document
from situate.sparse.bm25s_engine import Bm25sEngine
from situate.stores.keys import content_hash
from situate.stores.sqlite import BlobStore
from situate.words.stopwords import ENGLISH, SPANISH, folded, without_accents

log = logging.getLogger("situate")
FILTERS = (
    "dangling_reference",
    "underspecified",
    "near_duplicate",
    "trivially_lexical",
    "answerable_without_corpus",
    "too_easy",
)


class QuestionFilter(Protocol):
    """Removes questions for one reason."""

    name: str  # recorded as ``rejected_by``

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        """``{question id: one-line reason}`` for each of ``questions`` (all kept) to remove."""
        ...


def words(text: str) -> list[str]:
    """Lower-cased, accent-free word tokens (letters and digits): how every filter compares text."""
    return re.findall(r"\w+", folded(text))


# -- dangling_reference ------------------------------------------------------------------------

# what a question may point at instead of naming it (English, Spanish): matched on the
# case-folded words, accents kept ("está" is a verb, "esta" a demonstrative)
_SOURCE = (
    r"(section|passage|text|paragraph|excerpt|extract|snippet|chunk|document|above|following|"
    r"authors?|secci[oó]n|apartado|pasaje|texto|p[aá]rrafo|fragmento|extracto|documento|"
    r"autor(es)?|anterior|siguiente)"
)
_DANGLING = (
    # "the passage", "the above", "el texto", "dicha sección"
    re.compile(
        r"\b(the|that|above|following|given|provided|aforementioned|el|la|los|las|dich[oa]s?)\s+"
        + _SOURCE
        + r"\b"
    ),
    # "this function", "these results", "este apartado": a demonstrative naming nothing before it
    re.compile(r"\b(this|these|those|este|esta|estos|estas|ese|esa|esos|esas)\s+\w+"),
    # "mentioned above", "described here", "mencionado arriba"
    re.compile(r"\b(mentioned|described|shown|listed|discussed)\s+(above|here|below)\b"),
    re.compile(r"\b(mencionad|descrit|indicad|citad)[oa]s?\s+(arriba|aqu[ií]|abajo|antes)\b"),
    # "what does it cover?", "why are they used?": a bare pronoun as the subject ("it" but not
    # the "it" of "why is it hard to tell ...", "when was it shown that ...")
    re.compile(
        r"^(what|how|why|when|where|who|which)\s+(does|do|did|is|are|was|were|can|could|"
        r"should|will|would|has|have)\s+(it\b(?!.*\b(that|to)\s+\w)|this|that|they|these|those)\b"
    ),
)
# words that name nothing: question words, function words, pronouns and the verbs a question
# asks with ("what does it cover?" and "¿qué cubre?" name nothing at all)
# the words a question may use and still name nothing it asks about: the stop words of both
# languages (accent-free, as `words` writes them) and the verbs and nouns a question asks with
_ASKS_WITH = """
    according contain contains contiene contienen cover covers cubre cubren describe describen describes dice
    dicen discuss discusses explain explains explica explican habla hablan include includes incluye incluyen
    main mean means menciona mencionan mention mentions muestra muestran purpose refer refers say
    says show shows significa significan talk talks trata tratan usa use used
"""
_NAMES_NOTHING = ENGLISH | without_accents(SPANISH) | frozenset(_ASKS_WITH.split())


class DanglingReference:
    """Removes a question that points at text it does not name (English and Spanish)."""

    name = "dangling_reference"

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        return {q.id: reason for q in questions if (reason := self.reason(q.q)) is not None}

    @staticmethod
    def reason(question: str) -> str | None:
        """Why ``question`` dangles, or None when it names what it asks about."""
        folded = " ".join(re.findall(r"\w+", question.casefold()))
        for pattern in _DANGLING:
            found = pattern.search(folded)
            if found:
                return f'points at "{found.group(0)}" without naming it'
        if not set(words(question)) - _NAMES_NOTHING:
            return "names nothing it asks about"
        return None


def document_frequencies(documents: Sequence[Document]) -> Counter:
    """How many of ``documents`` hold each word (:func:`words`)."""
    return Counter(w for d in documents for w in set(words(d.text)))


def idf(df: Counter, n: int, word: str) -> float:
    """``ln(n / df)`` of ``word`` over ``n`` documents (a word in none counts as in one)."""
    return math.log(n / max(df[word], 1))


# -- underspecified ----------------------------------------------------------------------------


class Underspecified:
    """Removes a question that names too little to be found: the words it names (not question or
    function words) carry less than ``min_idf`` of inverse document frequency in all, ``ln(N / df)``
    summed over them ("What is the number?", "What have been identified?"). Such a question is
    hard for every retriever because nothing in it points at one passage, so a difficulty control
    that keeps hard questions would otherwise keep it first."""

    name = "underspecified"

    def __init__(self, min_idf: float = 2.0):
        _check(self.name, "min_idf", min_idf, 0, math.inf)
        self.min_idf = min_idf

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        df, n = document_frequencies(documents), len(documents)
        out: dict[str, str] = {}
        for q in questions:
            named = sorted(set(words(q.q)) - _NAMES_NOTHING)
            total = sum(idf(df, n, w) for w in named)
            if total < self.min_idf:
                out[q.id] = (
                    f"names too little to be found: {', '.join(named) or 'nothing'} "
                    f"(idf {total:.2f} in all < {self.min_idf})"
                )
        return out


# -- near_duplicate ----------------------------------------------------------------------------


class NearDuplicate:
    """Removes a question whose embedding cosine with an earlier kept one is >= ``threshold``.

    ``embed`` maps texts to L2-normalised query vectors (the run's embedder, cached or not)."""

    name = "near_duplicate"

    def __init__(self, embed, threshold: float = 0.95):
        _check(self.name, "threshold", threshold, 0, 1)
        self.embed = embed
        self.threshold = threshold

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        if len(questions) < 2:
            return {}
        vectors = normalize(self.embed([q.q for q in questions]))
        cosines = vectors @ vectors.T
        kept: list[int] = []
        out: dict[str, str] = {}
        for i, q in enumerate(questions):
            if kept:
                best = max(kept, key=lambda j: cosines[i, j])
                if cosines[i, best] >= self.threshold:
                    first = questions[best]
                    out[q.id] = (
                        f"cosine {cosines[i, best]:.3f} >= {self.threshold} with {first.id} "
                        f"({_short(first.q)})"
                    )
                    continue
            kept.append(i)
        return out


# -- trivially_lexical -------------------------------------------------------------------------


class TriviallyLexical:
    """Removes a question that copies the quote's rare words.

    A word is rare when its inverse document frequency ``ln(N / df)`` over the ``N`` documents is
    at least ``rare_idf`` (``df``: documents holding it). A question is removed when it holds at
    least ``min_copied`` of the quote's rare words and at least ``max_share`` of them.
    """

    name = "trivially_lexical"

    def __init__(self, rare_idf: float = 2.0, max_share: float = 0.6, min_copied: int = 2):
        _check(self.name, "rare_idf", rare_idf, 0, math.inf)
        _check(self.name, "max_share", max_share, 0, 1)
        _check(self.name, "min_copied", min_copied, 0, math.inf, integer=True)
        self.rare_idf = rare_idf
        self.max_share = max_share
        self.min_copied = min_copied

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        df, n = document_frequencies(documents), len(documents)
        out: dict[str, str] = {}
        for q in questions:
            rare = sorted({w for w in words(q.quote) if idf(df, n, w) >= self.rare_idf})
            asked = set(words(q.q))
            copied = [w for w in rare if w in asked]
            if (
                rare
                and len(copied) >= self.min_copied
                and len(copied) / len(rare) >= self.max_share
            ):
                out[q.id] = (
                    f"copies {len(copied)} of the quote's {len(rare)} rare words "
                    f"(idf >= {self.rare_idf}): {', '.join(copied)}"
                )
        return out


# -- answerable_without_corpus -----------------------------------------------------------------

CLOSED_BOOK_PROMPT = (
    "Answer the question in one short sentence from what you know. If you do not know, answer "
    '"I don\'t know".\n\nQuestion: {question}\nAnswer:'
)


class AnswerableWithoutCorpus:
    """Removes a question the ``llm`` answers right without the passage.

    The judge rule: at least ``min_recall`` of the answer's words (function words aside) are in
    the model's reply. Replies are kept in ``store`` (SQLite, keyed by the model's identity with
    its endpoint, the prompt and ``max_tokens``), so a rerun pays for none twice."""

    name = "answerable_without_corpus"

    def __init__(
        self,
        llm: LLMProvider,
        min_recall: float = 0.8,
        max_tokens: int = 64,
        store: str | None = None,
    ):
        _check(self.name, "min_recall", min_recall, 0, 1)
        _check(self.name, "max_tokens", max_tokens, 0, math.inf, integer=True)
        self.llm = llm
        self.min_recall = min_recall
        self.max_tokens = max_tokens
        self.store = BlobStore(store, "closed_book_answers", paid=True) if store else None

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        out: dict[str, str] = {}
        failed = 0
        for q in questions:
            expected = [w for w in words(q.answer) if w not in _NAMES_NOTHING]
            if not expected:
                continue
            try:
                reply = self.reply(q.q)
            except LLMCallFailed as e:
                failed += 1
                log.warning("%s: %s: the call failed (%s); kept unjudged", self.name, q.id, e)
                continue
            found = set(words(reply))
            share = sum(w in found for w in expected) / len(expected)
            if share >= self.min_recall:
                out[q.id] = (
                    f"the llm answered without the passage ({share:.0%} of the answer's words): "
                    f"{_short(reply)}"
                )
        if failed:
            log.warning(
                "%s: %d call(s) failed, kept unjudged; a rerun retries them", self.name, failed
            )
        return out

    def reply(self, question: str) -> str:
        request = LLMRequest(
            document="",
            prompt=CLOSED_BOOK_PROMPT.format(question=question),
            max_tokens=self.max_tokens,
        )
        key = content_hash(self.llm.identity(), request.prompt, request.max_tokens)
        if self.store is not None and (hit := self.store.get_many([key])):
            return hit[key].decode("utf-8")
        text = self.llm.complete(request).text
        if self.store is not None:
            self.store.put_many([(key, text.encode("utf-8"))])
        return text


# -- too_easy ----------------------------------------------------------------------------------

BASELINES = ("bm25", "dense")


class TooEasy:
    """Removes a question every baseline answers at rank 1: its first window (fixed windows of
    ``window_words`` words, ``overlap_words`` shared) overlaps the question's gold."""

    name = "too_easy"

    def __init__(
        self,
        baselines: Sequence[str],
        embed=None,
        window_words: int = 200,
        overlap_words: int = 40,
    ):
        _check(self.name, "window_words", window_words, 0, math.inf, integer=True)
        _check(self.name, "overlap_words", overlap_words, -1, window_words - 1, integer=True)
        self.baselines = list(baselines)
        self.embed = embed
        self.chunker = FixedChunker(size=window_words, overlap=overlap_words, unit="words")

    def removals(
        self, questions: Sequence[GeneratedQuestion], documents: Sequence[Document]
    ) -> dict[str, str]:
        if not questions:
            return {}
        chunks = self.chunker.chunk(Corpus("too_easy", list(documents), []))
        texts = [c.text for c in chunks]
        queries = [q.q for q in questions]
        firsts: dict[str, np.ndarray] = {}
        for baseline in self.baselines:
            if baseline == "bm25":
                engine = Bm25sEngine()
                engine.build(texts)
                firsts[baseline] = engine.search(queries, 1).ids[:, 0]
            else:
                scores = normalize(self.embed(queries)) @ normalize(self.embed(texts, "document")).T
                firsts[baseline] = np.argmax(scores, axis=1)
        out: dict[str, str] = {}
        for i, q in enumerate(questions):
            found = [
                b
                for b, ids in firsts.items()
                if ids[i] >= 0
                and any(
                    s.overlaps(chunks[ids[i]].doc_id, chunks[ids[i]].start, chunks[ids[i]].end)
                    for s in q.gold
                )
            ]
            if q.gold and len(found) == len(self.baselines):
                out[q.id] = f"every baseline ({', '.join(self.baselines)}) finds the gold at rank 1"
        return out


# -- building and applying ---------------------------------------------------------------------


def build_filters(
    settings: Mapping[str, Mapping],
    *,
    embedder: Embedder | None = None,
    llm: LLMProvider | None = None,
) -> list[QuestionFilter]:
    """The enabled filters of ``settings`` (``conf/questions/filters/default.yaml``: one
    ``{enabled, <thresholds>}`` mapping per filter name), in the order of :data:`FILTERS`.

    ``embedder`` (the run's embedder stage) serves ``near_duplicate`` and ``too_easy``'s dense
    baseline; ``llm`` serves ``answerable_without_corpus``."""
    unknown = sorted(set(settings) - set(FILTERS))
    if unknown:
        raise SituateError(
            f"questions.filters.{unknown[0]}: no such filter; the filters are {', '.join(FILTERS)}"
        )
    filters: list[QuestionFilter] = []
    for name in FILTERS:
        options = dict(settings.get(name) or {})
        if not options.pop("enabled", False):
            continue
        try:
            filters.append(_build(name, options, embedder, llm))
        except TypeError as e:
            raise SituateError(
                f"questions.filters.{name}: {e}; the options are those of "
                "conf/questions/filters/default.yaml"
            ) from None
    return filters


def _build(name: str, options: dict[str, Any], embedder, llm) -> QuestionFilter:
    store = options.pop("store", None)
    if name == "dangling_reference":
        return DanglingReference(**options)
    if name == "trivially_lexical":
        return TriviallyLexical(**options)
    if name == "underspecified":
        return Underspecified(**options)
    if name == "answerable_without_corpus":
        return AnswerableWithoutCorpus(
            _needed(name, "an llm (llm=...)", llm), store=store, **options
        )
    if name == "near_duplicate":
        return NearDuplicate(
            embedding_function(_needed(name, "the embedder", embedder), store), **options
        )
    baselines = list(options.pop("baselines", BASELINES))
    if not baselines or set(baselines) - set(BASELINES):
        raise SituateError(
            f"questions.filters.too_easy.baselines={baselines!r}: use a non-empty list of "
            f"{', '.join(BASELINES)}"
        )
    embed = (
        embedding_function(_needed(name, "the embedder", embedder), store)
        if "dense" in baselines
        else None
    )
    return TooEasy(baselines, embed, **options)


def _needed(name: str, what: str, stage):
    if stage is None:
        raise SituateError(
            f"questions.filters.{name} needs {what}; give the command one or set "
            f"questions.filters.{name}.enabled=false"
        )
    return stage


def embedding_function(embedder: Embedder, store: str | None):
    """``embed(texts, kind="query", progress=None)``: the embedder's vectors, through the
    embedding store (shared with runs: the same key, so a run over the set reuses its query
    vectors) if given; ``progress(n, total)`` is told of each batch the store's embedder does."""
    if store is None:  # no store, no batches to count: the bar waits for the whole
        return lambda texts, kind="query", progress=None: embedder.encode(list(texts), kind)
    paid = bool(embedder.identity().get("endpoint"))  # an API's vectors cost money
    cached = CachedEmbeddings(embedder, BlobStore(store, "embeddings", paid=paid))
    return lambda texts, kind="query", progress=None: cached(list(texts), kind, progress)


def apply_filters(
    questions: Sequence[GeneratedQuestion],
    documents: Sequence[Document],
    filters: Sequence[QuestionFilter],
) -> tuple[list[GeneratedQuestion], list[FilterReport]]:
    """Run ``filters`` in order over the still-kept ``questions``.

    Returns every question in input order (those removed marked by ``rejected``, with the filter
    and its reason) and one report per filter, in order."""
    out = list(questions)
    reports: list[FilterReport] = []
    for f in filters:
        kept = [q for q in out if q.status == "kept"]
        removed = f.removals(kept, documents)
        stray = removed.keys() - {q.id for q in kept}
        if stray:
            raise ValueError(f"filter {f.name} removed questions it was not given: {sorted(stray)}")
        reports.append(
            FilterReport(f.name, [(q.id, removed[q.id]) for q in kept if q.id in removed])
        )
        out = [q.rejected(f.name, removed[q.id]) if q.id in removed else q for q in out]
    return out, reports


def _check(name: str, key: str, value: Any, low: float, high: float, integer: bool = False) -> None:
    """``low < value <= high`` (an integer if ``integer``), else a one-line error naming the key."""
    number = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not number or not low < value <= high:
        kind = "an integer" if integer else "a number"
        bounds = f"> {low}" if high == math.inf else f"in ({low}, {high}]"
        raise SituateError(
            f"questions.filters.{name}.{key}={value!r} is invalid; use {kind} {bounds}"
        )


def _short(text: str, limit: int = 60) -> str:
    one_line = " ".join(text.split())
    return repr(one_line if len(one_line) <= limit else one_line[: limit - 3] + "...")
