"""What the jobs of a sweep compute once and share, kept under one ``cache_dir`` by content.

- ``<cache_dir>/index/<kind>/<key>`` (a :class:`~situate.stores.files.DirectoryCache`): a
  corpus's chunks, the faithfulness audit's flags, local token counts, what a model's window
  cuts, the dense and sparse indexes; each computed once across a sweep's parallel jobs, under
  its lock in ``<cache_dir>/locks`` (:func:`~situate.stores.cached_step.cached_step`), and keyed
  by everything it depends on, so a job whose inputs did not change reads it back;
- ``embeddings.sqlite`` and ``rerank.sqlite``: the embedder's vectors and the reranker's scores,
  a row per text (:class:`~situate.embedding.base.CachedEmbeddings`,
  :class:`~situate.reranking.base.CachedReranker`).

:class:`~situate.running.pipeline.Pipeline` steers a run through them.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np

from situate.chunking.base import Chunker
from situate.contexts.audit import Flag, audit
from situate.dense.base import DenseIndex
from situate.embedding.base import CachedEmbeddings, Embedder
from situate.embedding.truncation import TokenWindow, Truncation, measure
from situate.money.tokens import LOCAL_TOKENIZER, local_tokens
from situate.progress import progress_bar
from situate.records import Chunk, Context, Corpus
from situate.reranking.base import CachedReranker, Reranker
from situate.sparse.base import SparseEngine
from situate.stores.base import Stores
from situate.stores.cached_step import cached_step, read_pickle, write_pickle
from situate.stores.faults import ensure_space
from situate.stores.files import DirectoryCache
from situate.stores.keys import content_hash, texts_hash

log = logging.getLogger(__name__)
T = TypeVar("T")
# The chunk cache: ``cache/index/chunks/<key>/chunks.pkl``; part of the key, raised when a
# chunker's output or the stored form changes.
CHUNKS_FORMAT = 1
AUDIT_FORMAT = 1  # of the cached audit flags (contexts.audit.Flag): raised when they change
# an embedder whose identity does not say its vectors' size: assume a large one (OpenAI's)
DIMENSIONS_IF_UNSAID = 1536


class SweepCache:
    """The results under ``cache_dir`` that a sweep's jobs share (see the module's docstring)."""

    def __init__(self, cache_dir: str | Path):
        self.root = Path(cache_dir)
        self.cache = DirectoryCache(self.root / "index")
        self.locks = self.root / "locks"

    def embeddings(self, embedder: Embedder, stores: Stores, unverified: str) -> CachedEmbeddings:
        """The embedder's vectors, stored one commit per request batch (a kill mid-embedding
        pays again for one batch at most)."""
        return CachedEmbeddings(
            embedder,
            stores.blobs(
                self.root / "embeddings.sqlite",
                "embeddings",
                paid=bool(embedder.identity().get("endpoint")),  # an API's vectors cost money
            ),
            batch_size=embedder.batch_size,
            unverified=unverified,
        )

    def reranker(self, reranker: Reranker, stores: Stores, unverified: str) -> CachedReranker:
        paid = bool(reranker.identity().get("endpoint"))
        blobs = stores.blobs(self.root / "rerank.sqlite", "scores", paid=paid)
        return CachedReranker(reranker, blobs, unverified)

    def kept(
        self,
        kind: str,
        key: str,
        file: str,
        compute: Callable[[], T],
        load: Callable[[Path], T] = read_pickle,
        write: Callable[[Path, T], object] = write_pickle,
        lock: str | None = None,
    ) -> T:
        """The result ``file`` in the folder ``key`` of ``kind`` (pickled unless ``load`` and
        ``write`` say otherwise), computed once across a sweep's parallel jobs: the lock
        ``lock`` (``<kind>-<key>``) is held while it is computed (:func:`cached_step`)."""
        return cached_step(
            self.cache.path(kind, key) / file,
            lock=self.locks / (lock or f"{kind}-{key}"),
            compute=compute,
            write=lambda tmp, value: write(tmp / file, value),
            load=load,
            writing=self.cache.writing(kind, key),
        )

    def index(
        self, kind: str, engine: DenseIndex | SparseEngine, key: str, build: Callable[[Path], None]
    ) -> Path:
        """The folder of ``kind``'s index ``key``, loaded into ``engine``, or built into it by
        ``build(folder)`` and saved (once across a sweep's parallel jobs: :func:`cached_step`)."""
        folder = self.cache.path(kind, key)

        def cached(folder: Path) -> Path:
            engine.load(folder)
            log.info("%s index: cached (%s)", kind, key[:12])
            return folder

        def built() -> Path:
            build(folder)
            return folder

        return cached_step(
            folder, lock=self.locks / key, compute=built,
            write=lambda tmp, _: engine.save(tmp), load=cached,
            writing=self.cache.writing(kind, key),
        )  # fmt: skip

    def dense_index(
        self,
        engine: DenseIndex,
        embedder: Embedder,
        texts: list[str],
        embed: Callable[[list[str]], np.ndarray],
    ) -> Path:
        """The folder of ``engine``'s index of ``embedder``'s vectors of ``texts`` (``embed``
        gives them: from the embedding store, or paid for), built or loaded into it."""
        ident = (embedder.identity(), engine.identity(), texts_hash(texts))

        def build(folder: Path) -> None:
            dims = int(embedder.identity().get("dimensions") or DIMENSIONS_IF_UNSAID)
            ensure_space(  # the vectors twice (the embedding store, the index) and their keys
                folder.parent,
                len(texts) * (dims * 4 * 2 + 256),
                f"the dense index of {len(texts)} texts",
            )
            vectors = np.asarray(embed(texts), dtype=np.float32)
            with building(f"dense={engine.name}", len(texts)):
                engine.build(vectors)

        return self.index("dense", engine, content_hash("dense", *ident), build)

    def sparse_index(
        self, engine: SparseEngine, texts: list[str], contexts: list[str] | None
    ) -> Path:
        """The folder of ``engine``'s index of ``texts`` (with their ``contexts`` kept apart,
        where the engine searches them as a field of their own), built or loaded into it."""
        ident = (engine.identity(), texts_hash(texts), contexts and texts_hash(contexts))

        def build(folder: Path) -> None:
            size = sum(len(t) for t in texts) + sum(len(c) for c in contexts or ())
            ensure_space(folder.parent, 3 * size, f"the sparse index of {len(texts)} texts")
            with building(f"sparse={engine.name}", len(texts)):
                engine.build(texts, contexts)

        return self.index("sparse", engine, content_hash("sparse", *ident), build)

    def chunks(self, chunker: Chunker, corpus: Corpus) -> list[Chunk]:
        """``chunker``'s chunks of ``corpus``, keyed by the chunker's identity and the corpus's
        documents (and shipped chunks)."""
        key = content_hash("chunks", CHUNKS_FORMAT, chunker.identity(), corpus_digest(corpus))

        def cached(path: Path) -> list[Chunk]:
            log.info("chunks: cached (%s)", key[:12])
            return read_pickle(path)

        return self.kept("chunks", key, "chunks.pkl", lambda: chunker.chunk(corpus), cached)

    def audit(self, corpus: Corpus, chunks: list[Chunk], contexts: list[Context]) -> list[Flag]:
        """The faithfulness audit's flags (:func:`situate.contexts.audit.audit`), keyed by what
        it reads: each chunk's id and document, its context, and the documents' texts."""
        pairs = (
            p for c, x in zip(chunks, contexts, strict=True) for p in (c.chunk_id, c.doc_id, x.text)
        )
        documents = (p for d in corpus.documents for p in (d.doc_id, d.text))
        key = content_hash("audit", AUDIT_FORMAT, texts_hash(pairs), texts_hash(documents))
        return self.kept("audit", key, "flags.pkl", lambda: audit(corpus, chunks, contexts))

    def local_tokens(self, texts: list[str]) -> int:
        """Local WordPiece tokens of ``texts`` (each distinct text counted once), keyed by the
        texts and the counter."""
        key = content_hash("index_tokens", LOCAL_TOKENIZER, texts_hash(texts))
        return self.kept(
            "index_tokens", key, "count", lambda: local_tokens(texts),
            lambda path: int(path.read_text()), lambda path, n: path.write_text(str(n)), lock=key,
        )  # fmt: skip

    def truncation(
        self,
        window: TokenWindow,
        texts: list[str],
        joined: list[str] | None,
        at: str,
        reserved: int,
    ) -> Truncation:
        """What ``window`` cuts of ``texts`` (and of the contexts ``joined`` into them at ``at``,
        the head or the tail, with ``reserved`` tokens kept for the query): keyed by all of it."""
        key = content_hash(
            "truncation", window.identity(), reserved, texts_hash(texts),
            joined and texts_hash(joined), at,
        )  # fmt: skip
        return self.kept(
            "truncation", key, "counts.json",
            lambda: measure(window, texts, joined, at if joined else None, reserved),
            lambda path: Truncation.from_json(path.read_text()),
            lambda path, found: path.write_text(found.to_json()),
        )  # fmt: skip


@contextlib.contextmanager
def building(option: str, texts: int) -> Iterator[None]:
    """An index build as a stage a log can follow: its lines say how long it has run, and it
    counts its texts once built (an engine builds in one call, with no count of its own)."""
    label = f"building the {option} index of {texts:,} texts"
    with progress_bar(label, final_bar=False, rate_key=f"texts indexed by {option}") as advance:
        advance(0, texts)
        yield
        advance(texts)


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
