"""Scale: build time, memory and query latency of faiss flat, faiss HNSW and bm25s at 10k-1M chunks.

    .venv/bin/python benchmarks/scale.py [--sizes 10000,100000,1000000] [--deadline EPOCH_SECONDS]

Each (engine, size) runs in a fresh subprocess, so its memory figures are its own:

* faiss (``situate.dense.flat.FlatIndex``, ``situate.dense.hnsw.HnswIndex``, 2 threads): random
  normal 384-d float32 vectors, L2-normalised (the shape of all-MiniLM-L6-v2's); 30 random
  normalised queries, depth 150 (the fusion pool). HNSW uses M=16, efConstruction=40 here (the
  default config has M=32, efConstruction=200: about 4x the build work), efSearch 256; its
  recall@10 against exact search is reported. Random vectors are HNSW's hard case (no cluster
  structure), so real embeddings build faster and recall better.
* bm25s (``situate.sparse.bm25s_engine.Bm25sEngine``, the default config): the 737 real cookbook
  chunks repeated, each copy varied with two tokens drawn from 50,000 made-up words (so copies
  differ and the vocabulary grows); the first 100 cookbook questions as queries, depth 150.

Memory: ``rss_delta_mb`` = RSS after the build - RSS before it (the input data already loaded), and
``peak_delta_mb`` = peak RSS during the build - RSS before it. HNSW at the largest size runs only
when its build, extrapolated from the size below (x size ratio x 1.2 for the deeper graph), fits
``--hnsw-max-seconds`` and the deadline; otherwise it is skipped with the projection.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np
from common import DATA, OUT, PY, peak_rss_mb, percentiles, rss_mb, write_json

DIM = 384
HNSW = {"M": 16, "ef_construction": 40, "ef_search": 256}


def worker(engine: str, n: int) -> dict:
    rng = np.random.default_rng(0)
    rss0 = rss_mb()
    t = time.perf_counter()
    if engine == "bm25s":
        from situate.sparse.bm25s_engine import Bm25sEngine

        docs = json.loads((DATA / "codebase_chunks.json").read_text())
        base = [c["content"] for d in docs for c in d["chunks"]]
        words = rng.integers(0, 50_000, size=(n, 2))
        data = [f"{base[i % len(base)]} w{a}x w{b}y" for i, (a, b) in enumerate(words)]
        queries = [
            json.loads(line)["query"]
            for line in (DATA / "evaluation_set.jsonl").read_text().splitlines()[:100]
        ]
        index = Bm25sEngine()
    else:
        from situate.dense.flat import FlatIndex
        from situate.dense.hnsw import HnswIndex

        data = rng.standard_normal((n, DIM), dtype=np.float32)
        data /= np.linalg.norm(data, axis=1, keepdims=True)
        queries = rng.standard_normal((30, DIM), dtype=np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        index = FlatIndex(threads=2) if engine == "flat" else HnswIndex(threads=2, **HNSW)
    data_seconds = time.perf_counter() - t
    rss1 = rss_mb()
    t = time.perf_counter()
    index.build(data)
    build = time.perf_counter() - t
    rss2, peak = rss_mb(), peak_rss_mb()
    lat = []
    for q in queries:
        t = time.perf_counter()
        index.search([q] if engine == "bm25s" else q[None, :], 150)
        lat.append(time.perf_counter() - t)
    row = {
        "engine": engine,
        "n": n,
        "input_seconds": round(data_seconds, 2),
        "input_mb": round(rss1 - rss0, 1),
        "build_seconds": round(build, 3),
        "rss_delta_mb": round(rss2 - rss1, 1),
        "peak_delta_mb": round(peak - rss1, 1),
        "query": percentiles(lat),
    }
    if engine == "hnsw":  # recall@10 against exact inner product
        got = index.search(queries, 10).ids
        exact = np.argpartition(-(queries @ data.T), 10, axis=1)[:, :10]  # the top 10, any order
        hits = [len(set(g) & set(e)) / 10 for g, e in zip(got, exact, strict=True)]
        row["recall_at_10_vs_exact"] = round(float(np.mean(hits)), 4)
        row["params"] = HNSW
    return row


def run_worker(engine: str, n: int) -> dict:
    proc = subprocess.run(
        [PY, __file__, "--worker", engine, str(n)], capture_output=True, text=True
    )
    if proc.returncode:
        sys.exit(f"scale worker {engine} {n} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def show(r: dict) -> None:
    extra = f", recall@10 {r['recall_at_10_vs_exact']:.3f}" if "recall_at_10_vs_exact" in r else ""
    print(
        f"  {r['engine']:<6} {r['n']:>9,}: build {r['build_seconds']:8.2f} s, RSS +{r['rss_delta_mb']:7.0f} MB "
        f"(peak +{r['peak_delta_mb']:.0f}), query p50 {r['query']['p50_ms']:8.2f} ms "
        f"p95 {r['query']['p95_ms']:8.2f} ms{extra}",
        flush=True,
    )


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--engines", default="flat,hnsw,bm25s")
    parser.add_argument("--hnsw-max-seconds", type=float, default=120.0)
    parser.add_argument("--deadline", type=float, default=None)
    ns = parser.parse_args()
    sizes = [int(s) for s in ns.sizes.split(",")]
    rows, skipped = [], []
    for engine in ns.engines.split(","):
        for i, n in enumerate(sizes):
            if engine == "hnsw" and i == len(sizes) - 1 and i > 0:
                below = next(r for r in rows if r["engine"] == "hnsw" and r["n"] == sizes[i - 1])
                projected = below["build_seconds"] * (n / sizes[i - 1]) * 1.2
                left = (ns.deadline - time.time()) if ns.deadline else float("inf")
                if projected > ns.hnsw_max_seconds or projected > left:
                    why = (
                        f"projected build {projected:.0f} s (from {sizes[i - 1]:,}: "
                        f"{below['build_seconds']:.1f} s x {n // sizes[i - 1]} x 1.2) exceeds "
                        + (
                            f"the {ns.hnsw_max_seconds:.0f} s allowed"
                            if projected > ns.hnsw_max_seconds
                            else f"the {left:.0f} s left before the deadline"
                        )
                    )
                    skipped.append({"engine": engine, "n": n, "projected_build_seconds": round(projected, 1), "reason": why})  # fmt: skip
                    print(f"  hnsw   {n:>9,}: skipped: {why}", flush=True)
                    continue
            if ns.deadline and time.time() > ns.deadline:
                skipped.append({"engine": engine, "n": n, "reason": "deadline passed"})
                print(f"  {engine:<6} {n:>9,}: skipped: deadline passed", flush=True)
                continue
            r = run_worker(engine, n)
            rows.append(r)
            show(r)
    result = {"rows": rows, "skipped": skipped, "hnsw_params": HNSW}
    print(f"wrote {write_json('scale', result, OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
