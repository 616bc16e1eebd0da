"""The pipeline: documents -> chunks -> contexts -> indexes -> ranked lists -> fused -> reranked -> scores.

Stages arrive as plain objects (built from Hydra configs by ``situate.running.app``); the pipeline knows
nothing of Hydra or MLflow. Indexes and embeddings are cached under ``cache_dir`` by content hash.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from situate.chunking.base import Chunker
from situate.contexts.audit import Flag
from situate.contexts.base import Contextualizer
from situate.datasets.base import DatasetLoader
from situate.dense.base import DenseIndex
from situate.embedding.base import Embedder
from situate.embedding.truncation import TokenWindow, Truncation, warnings
from situate.errors import SituateError
from situate.evaluation.evaluate import Evaluation, Evaluator
from situate.fusion.base import RETRIEVERS, Fusion
from situate.money.costs import RunCosts, run_costs, spent_metrics
from situate.money.pricing import PriceBook
from situate.progress import progress_bar
from situate.rankings import Rankings
from situate.records import Chunk, Context, Corpus
from situate.reranking.base import Reranker
from situate.running.execution import Execution, LocalExecution
from situate.running.searcher import STAGE_DEPTH, Searcher, StageLists, timed_alone
from situate.running.sweep_cache import SweepCache
from situate.sparse.base import SparseEngine
from situate.stores.base import Stores
from situate.stores.rates import rate_key
from situate.stores.sqlite import SqliteStores

log = logging.getLogger(__name__)


# The timers of a run's stages (``RunResult.timings``, ``app.run_job``'s), none inside another
# (``index_seconds`` is dense + sparse, ``rerank_seconds`` part of ``query_seconds``): their sum
# and a run's wall time give its ``unaccounted_seconds``.
STAGE_SECONDS = (
    "build_seconds",  # app: the stages instantiated (models opened)
    "load_seconds",  # documents, questions, chunks and gold rows
    "contextualize_seconds",
    "dense_index_seconds",
    "window_seconds",  # what the embedder's window cuts
    "sparse_index_seconds",
    "query_seconds",
    "evaluate_seconds",
    "rerank_window_seconds",
    "index_tokens_seconds",
    "audit_seconds",  # contexts against their documents
    "costs_seconds",
    "log_seconds",  # app: metrics, dataset and artifacts to the tracker
)


def unaccounted(wall: float, timings: dict[str, float]) -> float:
    """Seconds of a run's ``wall`` time outside every stage timer of ``STAGE_SECONDS``."""
    return wall - sum(timings.get(k, 0.0) for k in STAGE_SECONDS)


@dataclass
class RunResult:
    corpus: Corpus
    chunks: list[Chunk]
    contexts: list[Context]
    rankings: Rankings
    evaluation: Evaluation
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)  # contexts naming things their document lacks
    costs: RunCosts | None = None
    # what the embedder's and the reranker's windows cut, by index ("dense", "rerank")
    truncation: dict[str, Truncation] = field(default_factory=dict)
    stages: list[StageLists] = field(default_factory=list)  # per question, in question order

    @property
    def metrics(self) -> dict[str, float]:
        return {
            **self.evaluation.metrics,
            **self.timings,
            **{k: float(v) for k, v in self.counts.items()},
            **{
                k: v
                for index, found in self.truncation.items()
                for k, v in found.metrics("" if index == "dense" else f"{index}_").items()
            },
        }


class Pipeline:
    """One composed configuration, run end to end."""

    def __init__(
        self,
        dataset: DatasetLoader,
        chunker: Chunker,
        context: Contextualizer,
        embedder: Embedder,
        dense: DenseIndex,
        sparse: SparseEngine,
        fusion: Fusion,
        reranker: Reranker,
        evaluator: Evaluator,
        cache_dir: str | Path,
        price_book: PriceBook | None = None,
        unverified_cache: str = "refuse",
        execution: Execution | None = None,
        stores: Stores | None = None,
    ):
        self.dataset, self.chunker, self.context = dataset, chunker, context
        # where contexts and document embeddings are computed (situate.running.execution)
        self.execution = execution or LocalExecution()
        self.embedder, self.dense, self.sparse = embedder, dense, sparse
        self.fusion, self.reranker, self.evaluator = fusion, reranker, evaluator
        self.price_book = price_book
        self._index_tokens: int | None = None  # embedder tokens billed once the indexes were built
        self.loaded: tuple[Corpus, list[Chunk]] | None = None  # once loaded and chunked
        self.truncation: dict[str, Truncation] = {}  # what each index's window cut
        self.shared = SweepCache(cache_dir)  # what the jobs of a sweep compute once
        stores = stores or SqliteStores()
        self.embeddings = self.shared.embeddings(embedder, stores, unverified_cache)
        self.reranker_cached = self.shared.reranker(reranker, stores, unverified_cache)

    def endpoints(self) -> dict[str, str]:
        """``endpoint.<stage>``: the API endpoint each API-backed stage's answers come from."""
        found = {
            "context": self.context.endpoint,
            "embedder": self.embedder.identity().get("endpoint", ""),
            "reranker": self.reranker.identity().get("endpoint", ""),
        }
        return {f"endpoint.{stage}": url for stage, url in found.items() if url}

    def prepare(
        self, timings: dict[str, float], require_questions: bool = False
    ) -> tuple[Corpus, list[Chunk], list[Context]]:
        """Load, chunk and contextualize; fail on unreachable gold (and, with
        ``require_questions``, on a corpus without questions) before paying for anything."""
        t = time.perf_counter()
        expected = self.dataset.questions_to_write()
        # before a document is parsed (a missing folder is the loader's to name)
        if require_questions and expected and expected.parent.is_dir() and not expected.is_file():
            raise no_questions(expected)
        corpus = self.dataset.load()
        if require_questions and not corpus.questions:
            raise no_questions(expected, corpus.name)
        chunks = self.chunks(corpus)
        self.loaded = corpus, chunks
        self.evaluator.relevant_rows(corpus, chunks)
        timings["load_seconds"] = time.perf_counter() - t
        log.info(
            "%s: %d documents, %d questions, %d chunks",
            corpus.name, len(corpus.documents), len(corpus.questions), len(chunks),
        )  # fmt: skip
        for note, value in corpus.notes.items():
            log.info("%s: %s = %s", corpus.name, note, value)
        if warning := self.evaluator.depth_warning(corpus, len(chunks)):
            log.warning("%s", warning)
        t = time.perf_counter()
        contexts = self.execution.contextualize(self.context, corpus, chunks)
        timings["contextualize_seconds"] = time.perf_counter() - t
        timings.update(self.context.stats)  # tokens, calls, cache shares (LLM contexts)
        return corpus, chunks, contexts

    def chunks(self, corpus: Corpus) -> list[Chunk]:
        """The chunker's chunks of ``corpus``, cached by the chunker's identity and the corpus's
        documents (and shipped chunks), so the jobs of a sweep over one corpus and chunker cut
        them once."""
        return self.shared.chunks(self.chunker, corpus)

    def build_indexes(
        self,
        chunks: list[Chunk],
        contexts: list[Context],
        needs: set[str],
        timings: dict[str, float],
    ) -> dict[str, Path]:
        """Build (or load from the cache) the indexes in ``needs``; return their cache folders."""
        folders: dict[str, Path] = {}
        if "dense" in needs:
            t = time.perf_counter()
            texts = self.context.texts(chunks, contexts, "dense")
            folders["dense"] = self.shared.dense_index(
                self.dense, self.embedder, texts, self._embedded
            )
            timings["dense_index_seconds"] = time.perf_counter() - t
            t = time.perf_counter()
            self.truncation["dense"] = self.window_cut(
                "dense", self.embedder.window(), chunks, contexts
            )
            timings["window_seconds"] = time.perf_counter() - t
        if "sparse" in needs:
            t = time.perf_counter()
            if self.sparse.separate_context and "sparse" in self.context.apply_to:
                texts, apart = [c.text for c in chunks], [x.text for x in contexts]
            else:
                texts, apart = self.context.texts(chunks, contexts, "sparse"), None
            folders["sparse"] = self.shared.sparse_index(self.sparse, texts, apart)
            timings["sparse_index_seconds"] = time.perf_counter() - t
        timings["index_seconds"] = sum(timings.get(f"{k}_index_seconds", 0.0) for k in RETRIEVERS)
        return folders

    def window_cut(
        self,
        index: str,
        window: TokenWindow,
        chunks: list[Chunk],
        contexts: list[Context],
        questions: list[str] = (),
    ) -> Truncation:
        """What ``window`` cuts of ``index``'s texts (and of the contexts joined into them),
        each thing the user must know logged as a warning. Cached by the texts and the window,
        so a sweep's jobs over one index count it once."""
        texts = self.context.texts(chunks, contexts, index)
        joined = [x.text for x in contexts] if index in self.context.apply_to else None
        at = "head" if self.context.placement == "before" else "tail"
        found = self.shared.truncation(
            window, texts, joined, at, window.query_share(list(questions))
        )
        for line in warnings(index, window, found):
            log.warning("%s", line)
        return found

    def index_tokens(self, chunks: list[Chunk], contexts: list[Context]) -> int:
        """Tokens of what the run indexed (local WordPiece count, as ``situate estimate``): the
        dense index's texts, contexts included, or the sparse index's where there is no dense
        one. What a tuning study can trade against retrieval (``objective``: index_tokens).

        WordPiece splits at whitespace, so a context joined by a whitespace separator adds its
        own tokens: the chunks and the contexts are counted apart (the chunks' count serves
        every context of a sweep; a rule context's few distinct texts count in no time). Each
        count is cached by its texts and the counter (seconds per 20k chunks)."""
        count = self.shared.local_tokens
        stage = "dense" if "dense" in self.fusion.needs else "sparse"
        joined = stage in self.context.apply_to and any(x.text for x in contexts)
        if not joined:
            return count([c.text for c in chunks])
        separator = self.context.separator
        if separator and not separator.strip():  # whitespace: chunk + context tokens
            return count([c.text for c in chunks]) + count([x.text for x in contexts])
        return count(self.context.texts(chunks, contexts, stage))

    def searcher(
        self, chunks: list[Chunk], contexts: list[Context], stage_depth: int = 0
    ) -> Searcher:
        """Query-time search over the indexes this pipeline built or loaded (keeping each
        stage's top ``stage_depth`` of each query)."""
        return Searcher(
            self.embeddings, self.dense, self.sparse, self.fusion, self.reranker_cached,
            self.context.texts(chunks, contexts, "rerank"), self.evaluator.depth, stage_depth,
        )  # fmt: skip

    def run(self) -> RunResult:
        timings: dict[str, float] = {}
        corpus, chunks, contexts = self.prepare(timings, require_questions=True)
        # the index's token count (a metric) is the tokenizer's work, outside the GIL: counted
        # beside the index build and the queries, waited for where the counts are written
        counting = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-tokens")
        index_tokens = counting.submit(self.index_tokens, chunks, contexts)
        counting.shutdown(wait=False)
        self.build_indexes(chunks, contexts, set(self.fusion.needs), timings)
        self._index_tokens = self.embedder.billed().tokens
        queries = [q.text for q in corpus.questions]
        t = time.perf_counter()
        searcher = self.searcher(chunks, contexts, STAGE_DEPTH)
        with (
            progress_bar(batched_label(queries, self.evaluator.latency_sample)) as embedded,
            progress_bar(queries_label(len(queries), "dense" in self.fusion.needs)) as advance,
        ):
            ranked, latency = searcher.search_all(
                queries, advance, self.evaluator.latency_sample, embedded
            )
        costs = self.costs()
        timings["query_seconds"] = time.perf_counter() - t  # the whole query phase
        timings["rerank_seconds"] = float(latency.rerank.sum())
        timings["query_p50_ms"] = float(np.percentile(latency.total, 50) * 1000)
        timings["query_p95_ms"] = float(np.percentile(latency.total, 95) * 1000)

        t = time.perf_counter()
        evaluation = self.evaluator.evaluate(corpus, chunks, ranked)
        timings["evaluate_seconds"] = time.perf_counter() - t
        window = self.reranker.window() if self.reranker.pool else None
        if window is not None:
            t = time.perf_counter()
            self.truncation["rerank"] = self.window_cut("rerank", window, chunks, contexts, queries)
            timings["rerank_window_seconds"] = time.perf_counter() - t
        t = time.perf_counter()
        counts = {
            "n_chunks": len(chunks),
            "n_documents": len(corpus.documents),
            "texts_embedded": self.embeddings.encoded,
            "index_tokens": index_tokens.result(),
        }
        timings["index_tokens_seconds"] = time.perf_counter() - t  # the wait for the count
        counts.update({k: v for k, v in corpus.notes.items() if isinstance(v, int)})
        t = time.perf_counter()
        flags = self.shared.audit(corpus, chunks, contexts)  # cached: a sweep audits once
        timings["audit_seconds"] = time.perf_counter() - t
        with_context = sum(1 for x in contexts if x.text)
        if with_context:
            timings["contexts_flagged_share"] = len(flags) / with_context
        t = time.perf_counter()
        timings.update(self.spent(corpus, costs))
        timings["costs_seconds"] = time.perf_counter() - t
        return RunResult(
            corpus, chunks, contexts, ranked, evaluation, timings, counts, flags, costs,
            dict(self.truncation), searcher.stages,
        )  # fmt: skip

    def costs(self) -> RunCosts | None:
        """USD this run has paid so far, by stage, and what its configuration's contexts cost
        (None without a price book)."""
        if self.price_book is None:
            return None
        billed = self.context.billed(), self.embedder.billed(), self.reranker.billed()
        return run_costs(self.price_book, *billed, self._index_tokens)

    def spent(
        self, corpus: Corpus | None = None, costs: RunCosts | None = None
    ) -> dict[str, float]:
        """``run_*`` (what this process has paid so far: read after a failure too) and
        ``config_*`` (what the configuration's contexts cost when written, once they all are).

        The stages record their spend as it happens (each LLM call, each billed embedding
        batch), so a run interrupted mid-way still reports the calls it paid for."""
        return spent_metrics(self.context.billed(), costs or self.costs(), corpus)

    def _embedded(self, texts: list[str]) -> np.ndarray:
        """The vectors of the documents' ``texts`` (where ``execution`` embeds them), with a bar."""
        key = rate_key("texts embedded", self.embeddings.embedder.identity())
        with progress_bar(embedding_label(texts), rate_key=key) as advance:
            return self.execution.embed(self.embeddings, texts, "document", advance)


def no_questions(path: Path | None, corpus_name: str = "") -> SituateError:
    """A run scores retrieval against questions: without any, say where they were expected (the
    file ``path`` the user writes them in; else the data set ``corpus_name``)."""
    if path is not None:
        what = (
            f"{path}: {'no questions in it' if path.is_file() else 'no questions file'}, and "
            '`situate run` scores retrieval against questions; write it (a JSON list of {"q": '
            '..., "gold": [...], "id": ...}: docs/own-documents.md), write questions.txt '
            "(one question per line, no gold) or set dataset.qa=<file>"
        )
    else:
        what = (
            f"{corpus_name}: no questions, and `situate run` scores retrieval against questions; "
            "check the dataset's questions (and max_questions, max_documents)"
        )
    return SituateError(
        f"{what}, or build the indexes only with `situate index` (same overrides) and query them "
        "with `situate search`"
    )


def embedding_label(texts: list[str], what: str = "chunks") -> str:
    """``embedding 737 chunks (723 distinct texts)``: the bar counts distinct texts (one vector
    each), so the label says how many there are when some repeat."""
    distinct = len(set(texts))
    shown = f" ({distinct} distinct texts)" if distinct != len(texts) else ""
    return f"embedding {len(texts)} {what}{shown}"


def batched_label(queries: list[str], sample: int | None) -> str:
    """``embedding 950 questions in batches (940 distinct texts)``: the queries after the timed
    ones, counted as their bar counts them (distinct texts)."""
    return embedding_label(queries[timed_alone(len(queries), sample) :], "questions in batches")


def queries_label(n: int, embeds: bool = True) -> str:
    """The bar of the query loop: each question is embedded (when a dense index is searched),
    searched, fused and reranked."""
    return f"{'embedding + ' if embeds else ''}searching {n} questions"
