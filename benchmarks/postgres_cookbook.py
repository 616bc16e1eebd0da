"""Postgres engines on the cookbook set (context=replay, all-MiniLM-L6-v2): the figures of docs/scale.md.

    .venv/bin/python benchmarks/postgres_cookbook.py [--work outputs/bench/postgres] [--phase all]

1. ``sparse``: Pass@5/10/20 and MRR of ``sparse=postgres_fts`` (ts_rank, ts_rank_cd; length
   normalisation 0, 1, 2, 32; the context in the chunk text or a field of its own) vs bm25s vs
   pyserini, alone (``fusion=sparse_only``) and fused with ``dense=flat`` (``fusion=rrf``):
   ``situate run -m`` sweeps into ``--work``, read back from their result.json files.
2. ``dense``: ``dense=pgvector`` exact vs HNSW (m 16, ef_construction 64) at several ef_search on
   the cookbook's 737 chunk and 248 question vectors (from the embedding cache of ``--work``):
   recall@10 and @150 (the fusion pool) against the exact scan, Pass@k of each ranking, and the
   search's p50/p95 per query at depth 150, one query at a time.

Writes ``outputs/bench/postgres_cookbook.json`` and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import OUT, PY, REPO, percentiles, write_json

SWEEPS = (
    ["sparse=bm25s,pyserini", "fusion=sparse_only,rrf"],
    ["sparse=postgres_fts", "sparse.rank=ts_rank,ts_rank_cd", "fusion=sparse_only,rrf"],
    # length normalisation (query time: one table for all)
    ["sparse=postgres_fts", "sparse.rank=ts_rank,ts_rank_cd", "sparse.normalization=1,2,32",
     "fusion=sparse_only"],
    # the context in a field of its own, weight B
    ["sparse=postgres_fts", "sparse.context_field=true", "sparse.context_weight=0.4,1.0",
     "fusion=sparse_only,rrf"],
)  # fmt: skip
EF_SEARCH = (10, 20, 40, 100, 200)
KS = (5, 10, 20)


def sparse_phase(work: Path, run: bool = True) -> list[dict]:
    for sweep in SWEEPS if run else ():
        args = ["run", "-m", *sweep, "tracking=none", f"output_dir={work}"]
        print(f"$ situate {' '.join(args)}", flush=True)
        proc = subprocess.run([PY, "-m", "situate.cli", *args], cwd=REPO)
        if proc.returncode:
            sys.exit(f"situate run failed (exit {proc.returncode})")
    rows = {}
    for f in sorted((work / "multirun").rglob("result.json")):
        row = json.loads(f.read_text())
        settings = [o.split(".", 1)[1] for o in row["overrides"] if o.startswith("sparse.")]
        engine = row["choices"]["sparse"] + (f" ({', '.join(settings)})" if settings else "")
        m = row["metrics"]
        rows[(engine, row["choices"]["fusion"])] = {
            "sparse": engine,
            "fusion": row["choices"]["fusion"],
            **{f"pass_at_{k}": m[f"pass_at_{k}"] for k in KS},
            "mrr": m["mrr"],
            "sparse_index_seconds": m.get("sparse_index_seconds"),
            "query_p50_ms": m["query_p50_ms"],
        }
    return list(rows.values())


def dense_phase(work: Path) -> list[dict]:
    from situate.config.compose import compose
    from situate.dense.pgvector import PgvectorIndex
    from situate.rankings import Rankings
    from situate.running.app import build_pipeline

    cfg = compose([f"output_dir={work}", "dense=pgvector", "tracking=none"])
    pipeline = build_pipeline(cfg)
    corpus, chunks, contexts = pipeline.prepare({})
    vectors = pipeline.embeddings(pipeline.context.texts(chunks, contexts, "dense"), "document")
    queries = pipeline.embeddings([q.text for q in corpus.questions], "query")
    server = {"data_dir": str(work / "postgres"), "schema": "bench"}
    variants = [("exact", {"index": "exact"})] + [
        (f"hnsw ef_search={ef}", {"index": "hnsw", "ef_search": ef}) for ef in EF_SEARCH
    ]
    rows, exact = [], None
    for label, params in variants:
        index = PgvectorIndex(**params, **server)
        t = time.perf_counter()
        index.build(np.asarray(vectors, dtype=np.float32))
        build = time.perf_counter() - t
        found, seconds = [], []
        for q in np.asarray(queries, dtype=np.float32):
            t = time.perf_counter()
            found.append(index.search(q[None, :], 150).row(0))
            seconds.append(time.perf_counter() - t)
        ranked = Rankings.from_rows(found, 150)
        exact = exact if exact is not None else ranked
        metrics = pipeline.evaluator.evaluate(corpus, chunks, ranked).metrics
        row = {
            "dense": label,
            "build_seconds": round(build, 2),
            **{f"recall_at_{k}_vs_exact": overlap(ranked, exact, k) for k in (10, 150)},
            **{f"pass_at_{k}": metrics[f"pass_at_{k}"] for k in KS},
            "query": percentiles(seconds),
        }
        rows.append(row)
        index.close()
        print(json.dumps(row), flush=True)
    return rows


def overlap(ranked, exact, k: int) -> float:
    """Mean share of the exact top ``k`` that ``ranked``'s top ``k`` holds."""
    shares = [
        len(set(a[:k][a[:k] >= 0]) & set(e[:k][e[:k] >= 0])) / max(1, int((e[:k] >= 0).sum()))
        for a, e in zip(ranked.ids, exact.ids, strict=True)
    ]
    return round(float(np.mean(shares)), 4)


def markdown(sparse: list[dict], dense: list[dict]) -> str:
    lines = []
    if sparse:
        lines += [
            "| sparse | fusion | Pass@5 | Pass@10 | Pass@20 | MRR |",
            "|---|---|---|---|---|---|",
        ]
        for r in sorted(sparse, key=lambda r: (r["fusion"] != "sparse_only", r["sparse"])):
            passes = " | ".join(f"{100 * r[f'pass_at_{k}']:.1f}" for k in KS)
            lines.append(f"| {r['sparse']} | {r['fusion']} | {passes} | {r['mrr']:.3f} |")
    if dense:
        lines += [
            "",
            "| dense=pgvector | recall@10 vs exact | recall@150 vs exact | Pass@5 | Pass@10 "
            "| Pass@20 | query p50 / p95 (ms) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in dense:
            passes = " | ".join(f"{100 * r[f'pass_at_{k}']:.1f}" for k in KS)
            q = r["query"]
            lines.append(
                f"| {r['dense']} | {r['recall_at_10_vs_exact']:.3f} | "
                f"{r['recall_at_150_vs_exact']:.3f} | {passes} | "
                f"{q['p50_ms']:.1f} / {q['p95_ms']:.1f} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=OUT / "postgres")
    parser.add_argument("--phase", choices=("all", "sparse", "dense"), default="all")
    parser.add_argument(
        "--reuse", action="store_true", help="read the sweeps already in --work, run none"
    )
    ns = parser.parse_args()
    ns.work.mkdir(parents=True, exist_ok=True)
    sparse = sparse_phase(ns.work, not ns.reuse) if ns.phase in ("all", "sparse") else []
    dense = dense_phase(ns.work) if ns.phase in ("all", "dense") else []
    print(f"wrote {write_json('postgres_cookbook', {'sparse': sparse, 'dense': dense})}")
    print(markdown(sparse, dense))
    return 0


if __name__ == "__main__":
    sys.exit(main())
