"""The query path: fusion + metrics for all questions, and per-query latency by retriever.

    .venv/bin/python benchmarks/query_path.py [--cache DIR] [--repeats 7] [--rerank-queries 10]

1. ``query_path_seconds``: RRF fusion + ``Evaluator.evaluate`` (Pass@k, Recall@k, nDCG, MRR) on
   precomputed dense and bm25s ``Rankings`` (top 150) for the 248 cookbook questions, in process:
   the median of ``--repeats`` repeats (what every job of a sweep pays once its lists exist).
2. Per-query latency, one question at a time through ``Pipeline.searcher``'s ``Searcher`` (the
   path ``situate run`` takes), p50 / p95: dense (query embedding + faiss flat), bm25s, pyserini
   (Lucene), hybrid (dense + bm25s, RRF), taking turns on each question (so load drift on a
   shared machine spreads over all four), then hybrid + a cross-encoder over the top 20. Query
   vectors and rerank scores go through situate's caches on fresh, empty stores, so every query
   pays its embedding (and its 20 pairs).

No real cross-encoder ships offline: the reranker is the packaged all-MiniLM-L6-v2 encoder
loaded as ``sentence_transformers.CrossEncoder(folder, num_labels=1)``, an untrained one-logit
head on MiniLM-L6 (the size of ms-marco-MiniLM-L6-v2, max 512 tokens): its scores mean nothing,
its speed is the real one. The reranked row runs on the first ``--rerank-queries`` questions.

``--cache``: a situate cache folder that already holds this config's indexes and query vectors
(run_all.py passes the grid sweep's); without it the indexes are built first (minutes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import OUT, minilm_folder, peak_rss_mb, percentiles, write_json


def searcher_for(pipeline, chunks, contexts, fusion, reranker, store_dir: Path, name: str):
    """``pipeline.searcher`` with ``fusion`` and ``reranker``, on empty query/rerank caches."""
    from situate.embedding.base import CachedEmbeddings
    from situate.reranking.base import CachedReranker
    from situate.running.pipeline import Searcher
    from situate.stores.sqlite import BlobStore

    embeddings = CachedEmbeddings(
        pipeline.embedder, BlobStore(store_dir / f"{name}-queries.sqlite", "embeddings")
    )
    cached = CachedReranker(reranker, BlobStore(store_dir / f"{name}-rerank.sqlite", "scores"))
    texts = pipeline.context.texts(chunks, contexts, "rerank")
    return Searcher(
        embeddings, pipeline.dense, pipeline.sparse, fusion, cached, texts, pipeline.evaluator.depth
    )


def cross_encoder(pool: int):
    """situate's CrossEncoderReranker on the packaged MiniLM with an untrained one-logit head."""
    import torch
    import transformers
    from sentence_transformers import CrossEncoder

    from situate.reranking.cross_encoder import CrossEncoderReranker

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(2)
    folder = str(minilm_folder())
    reranker = CrossEncoderReranker(path=folder, pool=pool, max_length=512, batch_size=32)
    reranker._model = CrossEncoder(folder, num_labels=1, device="cpu", max_length=512)
    reranker._model.predict([("warm up", "the model")] * 8, show_progress_bar=False)
    return reranker


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rerank-queries", type=int, default=10)
    parser.add_argument("--rerank-pool", type=int, default=20)
    ns = parser.parse_args()

    from situate.config.compose import compose
    from situate.fusion.dense_only import DenseOnly
    from situate.fusion.rrf import ReciprocalRankFusion
    from situate.fusion.sparse_only import SparseOnly
    from situate.reranking.none import NoReranker
    from situate.running.app import build_pipeline

    tmp = tempfile.TemporaryDirectory()
    cache = Path(ns.cache) if ns.cache else Path(tmp.name) / "cache"
    stores = Path(tmp.name) / "stores"
    overrides = [f"cache_dir={cache}", "tracking=none", "fusion=rrf", "sparse=bm25s"]
    pipeline = build_pipeline(compose(overrides))
    timings: dict[str, float] = {}
    corpus, chunks, contexts = pipeline.prepare(timings)
    pipeline.build_indexes(chunks, contexts, {"dense", "sparse"}, timings)
    queries = [q.text for q in corpus.questions]
    print(
        f"cookbook: {len(chunks)} chunks, {len(queries)} questions; indexes ready in "
        f"{timings['index_seconds']:.1f} s ({'cached' if ns.cache else 'built'})",
        flush=True,
    )

    # 1. fusion + metrics on precomputed lists -------------------------------------------------
    vectors = pipeline.embeddings(queries, "query")
    lists = {
        "dense": pipeline.dense.search(vectors, 150),
        "sparse": pipeline.sparse.search(queries, 150),
    }
    fusion, evaluator = pipeline.fusion, pipeline.evaluator
    depth = evaluator.depth
    fuse_s, eval_s, both_s = [], [], []
    for _ in range(ns.repeats):
        t0 = time.perf_counter()
        fused = fusion.fuse(lists, depth)
        t1 = time.perf_counter()
        evaluation = evaluator.evaluate(corpus, chunks, fused)
        t2 = time.perf_counter()
        fuse_s.append(t1 - t0)
        eval_s.append(t2 - t1)
        both_s.append(t2 - t0)
    query_path = float(np.median(both_s))
    m = evaluation.metrics
    print(
        f"query path (RRF + evaluate, {len(queries)} questions): median {query_path * 1000:.1f} ms "
        f"(fuse {np.median(fuse_s) * 1000:.1f} ms, evaluate {np.median(eval_s) * 1000:.1f} ms) "
        f"over {ns.repeats} repeats; Pass@5/10/20 {m['pass_at_5'] * 100:.1f} / "
        f"{m['pass_at_10'] * 100:.1f} / {m['pass_at_20'] * 100:.1f}",
        flush=True,
    )

    # 2. per-query latency: the retrievers take turns on each question, so load drift on a
    # shared machine spreads over all of them ----------------------------------------------
    t = time.perf_counter()
    lucene = build_pipeline(compose([*overrides[:-1], "sparse=pyserini"]))
    lucene.build_indexes(chunks, contexts, {"sparse"}, {})
    jvm_and_index = time.perf_counter() - t
    print(f"pyserini: JVM start + Lucene index {jvm_and_index:.1f} s", flush=True)
    none = NoReranker()
    searchers = {
        "dense (flat)": searcher_for(pipeline, chunks, contexts, DenseOnly(), none, stores, "d"),
        "bm25s": searcher_for(pipeline, chunks, contexts, SparseOnly(), none, stores, "b"),
        "pyserini": searcher_for(lucene, chunks, contexts, SparseOnly(), none, stores, "p"),
        "hybrid (dense+bm25s rrf)": searcher_for(
            pipeline, chunks, contexts, ReciprocalRankFusion(), none, stores, "h"
        ),
    }
    for s in searchers.values():  # warm-up on questions not in the set (nothing cached for these)
        for i in range(3):
            s.search(f"warm-up question number {i} about executors")
    seconds: dict[str, list[float]] = {name: [] for name in searchers}
    for q in queries:
        for name, s in searchers.items():
            t = time.perf_counter()
            s.search(q)
            seconds[name].append(time.perf_counter() - t)
    latency: dict[str, dict] = {name: {"total": percentiles(v)} for name, v in seconds.items()}

    t = time.perf_counter()
    ce = cross_encoder(ns.rerank_pool)
    ce_load = time.perf_counter() - t
    rq = queries[: ns.rerank_queries]
    reranked = searcher_for(pipeline, chunks, contexts, ReciprocalRankFusion(), ce, stores, "ce")
    _, lat = reranked.search_all(rq)
    name = f"hybrid + cross-encoder@{ns.rerank_pool}"
    latency[name] = {"total": percentiles(lat.total), "rerank": percentiles(lat.rerank)}
    pairs = reranked.reranker.scored
    pairs_per_second = pairs / float(lat.rerank.sum())
    print("per-query latency (one question at a time; query vectors not cached):")
    for name, row in latency.items():
        tot = row["total"]
        print(
            f"  {name:<28} p50 {tot['p50_ms']:9.2f} ms   p95 {tot['p95_ms']:9.2f} ms   "
            f"({tot['n']} questions)"
        )
    print(
        f"  cross-encoder (MiniLM-L6, untrained 1-logit head, max 512 tokens): {pairs} pairs in "
        f"{lat.rerank.sum():.1f} s = {pairs_per_second:.1f} pairs/s; model load {ce_load:.1f} s",
        flush=True,
    )

    result = {
        "questions": len(queries),
        "chunks": len(chunks),
        "query_path_seconds": round(query_path, 5),
        "query_path_fuse_seconds": round(float(np.median(fuse_s)), 5),
        "query_path_evaluate_seconds": round(float(np.median(eval_s)), 5),
        "query_path_repeats": ns.repeats,
        "query_path_pass_at_20": round(m["pass_at_20"] * 100, 2),
        "latency": latency,
        "pyserini_jvm_and_index_seconds": round(jvm_and_index, 2),
        "cross_encoder": {
            "model": "all-MiniLM-L6-v2 encoder + untrained 1-logit head (CrossEncoder(folder, num_labels=1))",
            "max_length": 512,
            "pool": ns.rerank_pool,
            "queries": len(rq),
            "pairs": pairs,
            "pairs_per_second": round(pairs_per_second, 1),
            "load_seconds": round(ce_load, 2),
        },
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    print(f"wrote {write_json('query_path', result, OUT)}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
