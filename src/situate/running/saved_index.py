"""``situate index`` / ``situate search``: indexes persisted under ``outputs/index/<key>``.

The folder holds the dense and sparse indexes and a manifest of the chunks (ids, offsets, text,
context), so a search loads in seconds and answers with sources and contexts. The key is made of
what decides the indexes' content, as the pipeline's caches key it: the data set and chunker
configs and the identities of the context, embedder, dense and sparse stages. Settings of how
contexts are bought (``context.concurrency``, ``budget_usd``, rate ceilings) are not part of it.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from situate.config.stages import INDEX_CONFIG_GROUPS, INDEX_IDENTITY_GROUPS
from situate.errors import SituateError
from situate.records import Chunk, Context
from situate.running.pipeline import Pipeline
from situate.running.searcher import Searcher
from situate.sparse import jvm
from situate.stores.files import DirectoryCache
from situate.stores.keys import content_hash

RETRIEVERS = ("dense", "sparse")


def index_identity(cfg: DictConfig, pipeline: Pipeline) -> dict:
    """What decides the indexes' content (not fusion, reranker or eval): the data set and chunker
    as configured, the context, embedder, dense and sparse stages by their identities. The
    folder's ``corpus_cache`` (where a cache lives, not what the indexes hold) is left out, so an
    index persisted before that option existed keeps its key."""
    configs = {g: OmegaConf.to_container(cfg[g], resolve=True) for g in INDEX_CONFIG_GROUPS}
    configs["dataset"].pop("corpus_cache", None)
    return {**configs, **{g: getattr(pipeline, g).identity() for g in INDEX_IDENTITY_GROUPS}}


def index_key(cfg: DictConfig, pipeline: Pipeline) -> str:
    """sha256 of :func:`index_identity`: the folder name under ``outputs/index/``."""
    return content_hash(index_identity(cfg, pipeline))


def build(cfg: DictConfig, pipeline: Pipeline) -> tuple[Path, dict[str, float]]:
    """Build both indexes for ``cfg`` and persist them with the chunk manifest."""
    timings: dict[str, float] = {}
    corpus, chunks, contexts = pipeline.prepare(timings)
    folders = pipeline.build_indexes(chunks, contexts, set(RETRIEVERS), timings)
    key = index_key(cfg, pipeline)
    store = DirectoryCache(Path(cfg.output_dir))
    with store.writing("index", key, replace=True) as tmp:  # never a half-deleted old index
        for name, folder in folders.items():
            shutil.copytree(folder, tmp / name)
        manifest = {
            "dataset": corpus.name,
            "identity": index_identity(cfg, pipeline),
            "chunks": [
                {
                    "chunk_id": c.chunk_id,
                    "doc_id": c.doc_id,
                    "index": c.index,
                    "start": c.start,
                    "end": c.end,
                    "text": c.text,
                    "heading_path": list(c.heading_path),
                    "chunker": c.chunker,
                    "context": x.text,
                }  # fmt: skip
                for c, x in zip(chunks, contexts, strict=True)
            ],
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False))
    return store.path("index", key), timings


@dataclass
class Hit:
    rank: int
    score: float
    chunk: Chunk
    context: str


@dataclass
class LoadedIndex:
    folder: Path
    chunks: list[Chunk]
    contexts: list[Context]
    searcher: Searcher
    startup: dict[str, float]  # seconds before the first query: JVM start, index open, model load

    def search(self, query: str, k: int) -> tuple[list[Hit], float]:
        t = time.perf_counter()
        self.searcher.depth = k
        ranked, _ = self.searcher.search(query)
        seconds = time.perf_counter() - t
        ids, scores = ranked.row(0)
        hits = [
            Hit(r + 1, float(s), self.chunks[i], self.contexts[i].text)
            for r, (i, s) in enumerate(zip(ids, scores, strict=True))
        ]
        return hits, seconds


def load(cfg: DictConfig, pipeline: Pipeline, overrides: list[str]) -> LoadedIndex:
    """Open the index ``situate index`` built for the same config."""
    folder = DirectoryCache(Path(cfg.output_dir)).path("index", index_key(cfg, pipeline))
    manifest_file = folder / "manifest.json"
    if not manifest_file.exists():
        again = " ".join(overrides)
        raise SituateError(f"{folder}: no index for this config; run `situate index {again}` first")
    manifest = json.loads(manifest_file.read_text())
    chunks = [
        Chunk(
            m["chunk_id"],
            m["doc_id"],
            m["index"],
            m["start"],
            m["end"],
            m["text"],
            tuple(m["heading_path"]),
            m["chunker"],
        )
        for m in manifest["chunks"]
    ]
    contexts = [Context(m["chunk_id"], m["context"]) for m in manifest["chunks"]]
    startup: dict[str, float] = {}
    if pipeline.sparse.name == "pyserini":  # Lucene runs in a JVM: its start is not the index's
        t = time.perf_counter()
        jvm.start_jvm()
        startup["jvm_start_seconds"] = time.perf_counter() - t
    t = time.perf_counter()
    pipeline.dense.load(folder / "dense")
    pipeline.sparse.load(folder / "sparse")
    startup["index_open_seconds"] = time.perf_counter() - t
    searcher = pipeline.searcher(chunks, contexts)
    t = time.perf_counter()
    searcher.warm_up()
    startup["model_load_seconds"] = time.perf_counter() - t
    return LoadedIndex(folder, chunks, contexts, searcher, startup)
