"""pgvector at scale: build time, table and index size, query latency and HNSW recall at 10k-1M.

    .venv/bin/python benchmarks/pgvector_scale.py [--sizes 10000,100000,1000000] [--deadline EPOCH]

One embedded Postgres (``situate.postgres.embedded``, data under
``outputs/bench/pgvector_server``, deleted at the end) holds every table. Vectors: random normal
384-d float32, L2-normalised (the shape of all-MiniLM-L6-v2's), as in scale.py; 30 random
normalised queries.

* ``exact``: ``dense.index=exact`` (no index, every row compared), depth 150 (the fusion pool).
* ``hnsw`` and ``hnsw_halfvec``: pgvector's defaults (m 16, ef_construction 64), float32 and
  float16 columns; queries at ef_search 40, 100 and 200 (a query-time setting: one table), depth
  10 for recall@10 against exact numpy inner products, and depth 150 for latency.

``build_seconds`` is ``PgvectorIndex.build``: hashing the vectors for the table's key, the binary
``COPY``, ``CREATE INDEX`` and ``ANALYZE`` in one transaction. Sizes are ``pg_total_relation_size``
and ``pg_indexes_size``. A size whose build, extrapolated from the size below (x size ratio x
1.2), passes ``--max-seconds`` or the deadline is skipped with the projection.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time

import numpy as np
from common import OUT, percentiles, write_json

DIM = 384
EF_SEARCH = (40, 100, 200)
VARIANTS = {
    "exact": {"index": "exact"},
    "hnsw": {"index": "hnsw", "m": 16, "ef_construction": 64},
    "hnsw_halfvec": {"index": "hnsw", "m": 16, "ef_construction": 64, "vector_type": "halfvec"},
}


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM), dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def latency(index, queries: np.ndarray, depth: int) -> dict:
    seconds = []
    for q in queries:
        t = time.perf_counter()
        index.search(q[None, :], depth)
        seconds.append(time.perf_counter() - t)
    return percentiles(seconds)


def measure(variant: str, n: int, data: np.ndarray, queries: np.ndarray, server: dict) -> dict:
    from situate.dense.pgvector import PgvectorIndex

    params = VARIANTS[variant]
    index = PgvectorIndex(**params, **server)
    t = time.perf_counter()
    index.build(data)
    row = {"variant": variant, "n": n, "build_seconds": round(time.perf_counter() - t, 2)}
    sizes = index.sizes()
    row["table_mb"] = round(sizes["table_bytes"] / 2**20, 1)
    row["index_mb"] = round(sizes["index_bytes"] / 2**20, 1)
    if variant == "exact":
        row["query"] = latency(index, queries, 150)
        return row
    exact = np.argpartition(-(queries @ data.T), 10, axis=1)[:, :10]  # the top 10, any order
    row["ef_search"] = {}
    for ef in EF_SEARCH:
        tuned = PgvectorIndex(**params, ef_search=ef, **server)
        tuned.build(data)  # the same content: finds the table, builds nothing
        got = tuned.search(queries, 10).ids
        recall = np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got, exact, strict=True)])
        row["ef_search"][ef] = {
            "recall_at_10_vs_exact": round(float(recall), 4),
            "query_depth_10": latency(tuned, queries, 10),
            "query_depth_150": latency(tuned, queries, 150),
        }
        tuned.close()
    index.close()
    return row


def show(r: dict) -> None:
    head = (
        f"  {r['variant']:<12} {r['n']:>9,}: build {r['build_seconds']:8.2f} s, "
        f"table {r['table_mb']:8.1f} MB (index {r['index_mb']:.1f} MB)"
    )
    if "query" in r:
        q = r["query"]
        print(f"{head}, depth 150 p50 {q['p50_ms']:.1f} ms p95 {q['p95_ms']:.1f} ms", flush=True)
        return
    print(head, flush=True)
    for ef, e in r["ef_search"].items():
        q = e["query_depth_10"]
        print(
            f"      ef_search {ef:>3}: recall@10 {e['recall_at_10_vs_exact']:.3f}, depth 10 "
            f"p50 {q['p50_ms']:.1f} ms p95 {q['p95_ms']:.1f} ms",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--max-seconds", type=float, default=300.0, help="longest build allowed")
    parser.add_argument("--deadline", type=float, default=None)
    ns = parser.parse_args()
    from situate.postgres.embedded import embedded_server

    folder = OUT / "pgvector_server"
    shutil.rmtree(folder, ignore_errors=True)
    server = {"data_dir": str(folder), "listen": "socket", "schema": "bench"}
    sizes = [int(s) for s in ns.sizes.split(",")]
    rows, skipped = [], []
    rng = np.random.default_rng(0)
    queries = unit(rng, 30)
    try:
        embedded_server(folder).conninfo()  # started (initdb on first use) before any timing
        for i, n in enumerate(sizes):
            data = unit(np.random.default_rng(n), n)
            for variant in ns.variants.split(","):
                below = next(
                    (r for r in rows if r["variant"] == variant and i and r["n"] == sizes[i - 1]),
                    None,
                )
                left = (ns.deadline - time.time()) if ns.deadline else float("inf")
                projected = below["build_seconds"] * n / sizes[i - 1] * 1.2 if below else 0.0
                if projected > min(ns.max_seconds, left):
                    why = (
                        f"projected build {projected:.0f} s (from {sizes[i - 1]:,}: "
                        f"{below['build_seconds']:.1f} s x {n // sizes[i - 1]} x 1.2) exceeds "
                        f"{min(ns.max_seconds, left):.0f} s"
                    )
                    skipped.append({"variant": variant, "n": n, "reason": why})
                    print(f"  {variant:<12} {n:>9,}: skipped: {why}", flush=True)
                    continue
                row = measure(variant, n, data, queries, server)
                rows.append(row)
                show(row)
    finally:
        embedded_server(folder).release()
        shutil.rmtree(folder, ignore_errors=True)
    result = {"rows": rows, "skipped": skipped, "variants": VARIANTS, "dim": DIM}
    print(f"wrote {write_json('pgvector_scale', result, OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
