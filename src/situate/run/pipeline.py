"""The pipeline: documents -> chunks -> contexts -> indexes -> ranked lists -> fused -> reranked -> scores.

Stages arrive as plain objects (built from Hydra configs by ``situate.run.app``); the pipeline knows
nothing of Hydra or MLflow. Indexes and embeddings are cached under ``cache_dir`` by content hash.
"""

from __future__ import annotations

import json
import logging
import pickle
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from situate.chunking.base import Chunker
from situate.contexts.audit import Flag, audit
from situate.contexts.base import Contextualizer
from situate.datasets.base import DatasetLoader
from situate.dense.base import DenseIndex
from situate.embedding.base import CachedEmbeddings, Embedder
from situate.embedding.truncation import TokenWindow, Truncation, measure, warnings
from situate.errors import SituateError
from situate.evaluation.evaluate import Evaluation, Evaluator
from situate.fusion.base import Fusion
from situate.money.costs import (
    CONFIG,
    RUN,
    RunCosts,
    billed_embedding,
    billed_rerank,
    context_costs,
    usage_metrics,
)
from situate.money.pricing import PriceBook
from situate.money.tokens import LOCAL_TOKENIZER, token_counter
from situate.progress import progress_bar
from situate.rankings import Rankings
from situate.records import Chunk, Context, Corpus
from situate.reranking.base import CachedReranker, Reranker
from situate.run.execution import Execution, LocalExecution
from situate.run.searcher import STAGE_DEPTH, Searcher, StageLists, timed_alone
from situate.sparse.base import SparseEngine
from situate.stores.base import Stores
from situate.stores.faults import ensure_space
from situate.stores.files import DirectoryCache
from situate.stores.keys import content_hash, texts_hash
from situate.stores.locks import exclusive
from situate.stores.sqlite import SqliteStores

log = logging.getLogger(__name__)
# an embedder whose identity does not say its vectors' size: assume a large one (OpenAI's)
DIMENSIONS_IF_UNSAID = 1536
# The chunk cache: ``cache/index/chunks/<key>/chunks.pkl``; part of the key, raised when a
# chunker's output or the stored form changes.
CHUNKS_FORMAT = 1
AUDIT_FORMAT = 1  # of the cached audit flags (contexts.audit.Flag): raised when they change


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
        # where contexts and document embeddings are computed (situate.run.execution)
        self.execution = execution or LocalExecution()
        self.embedder, self.dense, self.sparse = embedder, dense, sparse
        self.fusion, self.reranker, self.evaluator = fusion, reranker, evaluator
        self.price_book = price_book
        self._index_tokens: int | None = None  # embedder tokens billed once the indexes were built
        self.loaded: tuple[Corpus, list[Chunk]] | None = None  # once loaded and chunked
        self.truncation: dict[str, Truncation] = {}  # what each index's window cut
        self.cache = DirectoryCache(Path(cache_dir) / "index")
        self.locks = Path(cache_dir) / "locks"
        stores = stores or SqliteStores()
        # one commit per request batch: a kill mid-embedding pays again for one batch at most
        self.embeddings = CachedEmbeddings(
            embedder,
            stores.blobs(
                Path(cache_dir) / "embeddings.sqlite",
                "embeddings",
                paid=bool(embedder.identity().get("endpoint")),  # an API's vectors cost money
            ),
            batch_size=embedder.batch_size,
            unverified=unverified_cache,
        )
        self.reranker_cached = CachedReranker(
            reranker,
            stores.blobs(
                Path(cache_dir) / "rerank.sqlite",
                "scores",
                paid=bool(reranker.identity().get("endpoint")),
            ),
            unverified_cache,
        )

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
        key = content_hash("chunks", CHUNKS_FORMAT, self.chunker.identity(), corpus_digest(corpus))
        path = self.cache.path("chunks", key) / "chunks.pkl"
        with exclusive(self.locks, f"chunks-{key}"):  # a parallel job cutting the same: wait
            if path.is_file():
                log.info("chunks: cached (%s)", key[:12])
                return pickle.loads(path.read_bytes())
            chunks = self.chunker.chunk(corpus)
            with self.cache.writing("chunks", key) as tmp:
                blob = pickle.dumps(chunks, protocol=pickle.HIGHEST_PROTOCOL)
                (tmp / "chunks.pkl").write_bytes(blob)
        return chunks

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
            folders["dense"] = self._dense_index(self.context.texts(chunks, contexts, "dense"))
            timings["dense_index_seconds"] = time.perf_counter() - t
            t = time.perf_counter()
            self.truncation["dense"] = self.window_cut(
                "dense", self.embedder.window(), chunks, contexts
            )
            timings["window_seconds"] = time.perf_counter() - t
        if "sparse" in needs:
            t = time.perf_counter()
            if self.sparse.separate_context and "sparse" in self.context.apply_to:
                folders["sparse"] = self._sparse_index(
                    [c.text for c in chunks], [x.text for x in contexts]
                )
            else:
                folders["sparse"] = self._sparse_index(
                    self.context.texts(chunks, contexts, "sparse"), None
                )
            timings["sparse_index_seconds"] = time.perf_counter() - t
        timings["index_seconds"] = timings.get("dense_index_seconds", 0.0) + timings.get(
            "sparse_index_seconds", 0.0
        )
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
        reserved = window.query_share(list(questions))
        key = content_hash(
            "truncation", window.identity(), reserved, texts_hash(texts),
            joined and texts_hash(joined), at,
        )  # fmt: skip
        folder = self.cache.path("truncation", key)
        with exclusive(self.locks, f"truncation-{key}"):  # a parallel job counting the same: wait
            if folder.is_dir():
                found = Truncation.from_json((folder / "counts.json").read_text())
            else:
                found = measure(window, texts, joined, at if joined else None, reserved)
                with self.cache.writing("truncation", key) as tmp:
                    (tmp / "counts.json").write_text(found.to_json())
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
        stage = "dense" if "dense" in self.fusion.needs else "sparse"
        joined = stage in self.context.apply_to and any(x.text for x in contexts)
        if not joined:
            return self._token_count([c.text for c in chunks])
        separator = self.context.separator
        if separator and not separator.strip():  # whitespace: chunk + context tokens
            return self._token_count([c.text for c in chunks]) + self._token_count(
                [x.text for x in contexts]
            )
        return self._token_count(self.context.texts(chunks, contexts, stage))

    def _token_count(self, texts: list[str]) -> int:
        """Local WordPiece tokens of ``texts`` (each distinct text counted once), cached."""
        folder = self.cache.path(
            "index_tokens", content_hash("index_tokens", LOCAL_TOKENIZER, texts_hash(texts))
        )
        with exclusive(self.locks, folder.name):  # a parallel job counting the same: wait
            if folder.is_dir():
                return int((folder / "count").read_text())
            count, _ = token_counter(None, "local")
            times = Counter(texts)
            distinct = list(times)
            tokens = sum(n * times[t] for t, n in zip(distinct, count(distinct), strict=True))
            with self.cache.writing("index_tokens", folder.name) as tmp:
                (tmp / "count").write_text(str(tokens))
        return tokens

    def audited(self, corpus: Corpus, chunks: list[Chunk], contexts: list[Context]) -> list[Flag]:
        """The faithfulness audit's flags (:func:`situate.contexts.audit.audit`), cached by what
        it reads: each chunk's id and document, its context, and the documents' texts (a sweep's
        jobs over one corpus and context audit once)."""
        pairs = (
            p for c, x in zip(chunks, contexts, strict=True) for p in (c.chunk_id, c.doc_id, x.text)
        )
        documents = (p for d in corpus.documents for p in (d.doc_id, d.text))
        key = content_hash("audit", AUDIT_FORMAT, texts_hash(pairs), texts_hash(documents))
        path = self.cache.path("audit", key) / "flags.pkl"
        with exclusive(self.locks, f"audit-{key}"):  # a parallel job auditing the same: wait
            if path.is_file():
                return pickle.loads(path.read_bytes())
            flags = audit(corpus, chunks, contexts)
            with self.cache.writing("audit", key) as tmp:
                blob = pickle.dumps(flags, protocol=pickle.HIGHEST_PROTOCOL)
                (tmp / "flags.pkl").write_bytes(blob)
        return flags

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
        flags = self.audited(corpus, chunks, contexts)
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
        context, embedder = self.context.billed(), self.embedder.billed()
        tokens = embedder.tokens
        index_tokens = tokens if self._index_tokens is None else self._index_tokens
        # an LLM context stopped before writing every context: what they cost is not known yet
        unknown = context.calls is not None and not context.written
        return RunCosts(
            context=context_costs(self.price_book, context, context.calls or ()),
            config_context=None
            if unknown
            else context_costs(self.price_book, context, context.written),
            embedding_index=billed_embedding(self.price_book, embedder, index_tokens),
            embedding_query=billed_embedding(self.price_book, embedder, tokens - index_tokens),
            rerank=billed_rerank(self.price_book, self.reranker.billed()),
        )

    def spent(
        self, corpus: Corpus | None = None, costs: RunCosts | None = None
    ) -> dict[str, float]:
        """``run_*`` (what this process has paid so far: read after a failure too) and
        ``config_*`` (what the configuration's contexts cost when written, once they all are).

        The stages record their spend as it happens (each LLM call, each billed embedding
        batch), so a run interrupted mid-way still reports the calls it paid for."""
        out: dict[str, float] = {}
        billed = self.context.billed()
        if billed.calls is not None:  # an LLM context: zero calls is news (all from the store)
            out.update(usage_metrics(RUN, billed.calls))
            if billed.unanswered:  # stopped with calls in flight: maybe billed, usage unknown
                out[f"{RUN}llm_calls_unanswered"] = float(billed.unanswered)
            if billed.written:
                out.update(usage_metrics(CONFIG, billed.written))
        costs = costs or self.costs()
        if costs is not None and corpus is not None:
            out.update(costs.metrics(self._document_tokens(corpus, costs), len(corpus.questions)))
        elif costs is not None:
            out.update(costs.metrics())
        return out

    @staticmethod
    def _document_tokens(corpus: Corpus, costs: RunCosts) -> int:
        """Tokens of the documents of the configuration's LLM contexts (local WordPiece count)."""
        if costs.config_context is None or not costs.config_context.per_document:
            return 0
        count, _ = token_counter(None, "local")
        return sum(count([corpus.document(d).text for d in costs.config_context.per_document]))

    def _dense_index(self, texts: list[str]) -> Path:
        ident = (self.embedder.identity(), self.dense.identity(), texts_hash(texts))
        folder = self.cache.path("dense", content_hash("dense", *ident))
        with exclusive(self.locks, folder.name):  # a parallel job building the same index: wait
            if folder.is_dir():
                self.dense.load(folder)
                log.info("dense index: cached (%s)", folder.name[:12])
                return folder
            dims = int(self.embedder.identity().get("dimensions") or DIMENSIONS_IF_UNSAID)
            ensure_space(  # the vectors twice (the embedding store, the index) and their keys
                folder.parent,
                len(texts) * (dims * 4 * 2 + 256),
                f"the dense index of {len(texts)} texts",
            )
            with progress_bar(embedding_label(texts)) as advance:
                vectors = self.execution.embed(self.embeddings, texts, "document", advance)
            self.dense.build(np.asarray(vectors, dtype=np.float32))
            with self.cache.writing("dense", folder.name) as tmp:
                self.dense.save(tmp)
        return folder

    def _sparse_index(self, texts: list[str], contexts: list[str] | None) -> Path:
        ident = (self.sparse.identity(), texts_hash(texts), contexts and texts_hash(contexts))
        folder = self.cache.path("sparse", content_hash("sparse", *ident))
        with exclusive(self.locks, folder.name):
            if folder.is_dir():
                self.sparse.load(folder)
                log.info("sparse index: cached (%s)", folder.name[:12])
                return folder
            size = sum(len(t) for t in texts) + sum(len(c) for c in contexts or ())
            ensure_space(folder.parent, 3 * size, f"the sparse index of {len(texts)} texts")
            self.sparse.build(texts, contexts)
            with self.cache.writing("sparse", folder.name) as tmp:
                self.sparse.save(tmp)
        return folder


def corpus_digest(corpus: Corpus) -> str:
    """sha256 of what a chunker reads of ``corpus``: each document's id and text, and the
    chunks it ships (ids, offsets, texts, heading paths)."""
    parts = (p for d in corpus.documents for p in (d.doc_id, d.text))
    shipped = (
        json.dumps(
            [c.chunk_id, c.doc_id, c.index, c.start, c.end, c.text, c.heading_path, c.chunker]
        )
        for c in corpus.prechunks or ()
    )
    return content_hash(texts_hash(parts), corpus.prechunks is not None and texts_hash(shipped))


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
