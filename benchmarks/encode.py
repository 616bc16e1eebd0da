"""Indexing throughput: embedding through situate's cache against the raw model encode.

    .venv/bin/python benchmarks/encode.py [--texts 384] [--block 32]

Same texts (plain cookbook chunks, spread over the whole set), same model folder, same settings
(max 256 tokens, batch 32, 2 torch threads):

* raw: ``SentenceTransformer.encode(texts, batch_size=32, normalize_embeddings=True)``;
* pipeline: ``CachedEmbeddings(SentenceTransformerEmbedder(...), BlobStore(<fresh file>))``,
  the object ``SweepCache.dense_index`` embeds through: content hashes, a store lookup, encoding,
  SQLite writes, and the vectors stacked back in order.

The texts go in blocks of ``--block``; each block is encoded both ways back to back (order
alternating, ABBA), so a load change on a shared machine hits both sides of a pair.
``encode_overhead`` = pipeline seconds / raw seconds - 1 over all blocks; each pipeline call pays
its own lookup and transaction, so this is an upper bound for the pipeline's one call per 256.
``encode_overhead_isolated``: the pipeline's own work alone (hashing, lookup, SQLite writes,
stacking) on every distinct cookbook chunk (723 of the 737: licence headers repeat) with the
model call replaced by stored vectors, over the raw encode time of as many chunks (at the
measured raw rate). Memory: this process's
RSS after loading the model and its peak (VmHWM) at the end.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import OUT, load_cookbook, minilm_folder, peak_rss_mb, rss_mb, write_json


class Precomputed:
    """An embedder that returns stored vectors: what is left of the pipeline is its own work."""

    def __init__(self, inner, vectors: dict[str, np.ndarray]):
        self.inner, self.vectors, self.name = inner, vectors, inner.name

    def identity(self) -> dict:
        return self.inner.identity()

    def encode(self, texts: list[str], kind: str) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=384, help="chunks encoded each way (max 737)")
    parser.add_argument("--block", type=int, default=32)
    ns = parser.parse_args()
    rss_start = rss_mb()

    import torch
    from sentence_transformers import SentenceTransformer

    from situate.embedding.base import CachedEmbeddings
    from situate.embedding.sentence_transformer import SentenceTransformerEmbedder
    from situate.stores.sqlite import BlobStore

    corpus = load_cookbook()
    every = list(dict.fromkeys(c.text for c in corpus.prechunks))  # distinct: every one a miss
    step = max(1, len(every) // ns.texts)
    texts = every[::step][: ns.texts]

    torch.set_num_threads(2)
    raw = SentenceTransformer(str(minilm_folder()), device="cpu")
    raw.max_seq_length = 256
    embedder = SentenceTransformerEmbedder(threads=2, batch_size=32, max_seq_length=256)
    embedder._load()
    rss_loaded = rss_mb()
    raw.encode(texts[:32], batch_size=32)  # warm both up
    embedder.encode(texts[:32], "document")

    raw_s, pipe_s, vecs = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbeddings(embedder, BlobStore(Path(tmp) / "e2e.sqlite", "embeddings"))
        for i in range(0, len(texts), ns.block):
            block = texts[i : i + ns.block]

            def run_raw(block=block):
                t = time.perf_counter()
                raw.encode(block, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
                raw_s.append(time.perf_counter() - t)

            def run_pipe(block=block):
                t = time.perf_counter()
                out = cached(block, "document")
                pipe_s.append(time.perf_counter() - t)
                vecs.update(zip(block, out, strict=True))

            for f in (run_raw, run_pipe) if (i // ns.block) % 2 == 0 else (run_pipe, run_raw):
                f()
        assert cached.encoded == len(texts), "a text came from the store"
        print(
            f"{len(texts)} chunks in blocks of {ns.block}: raw {len(texts) / sum(raw_s):.1f} "
            f"chunks/s, pipeline {len(texts) / sum(pipe_s):.1f} chunks/s",
            flush=True,
        )
        # the pipeline's own work alone, on every chunk of the set (model call replaced)
        rest = [t for t in every if t not in vecs]  # their values do not matter here
        fill = np.random.default_rng(0).standard_normal((len(rest), 384), dtype=np.float32)
        vecs.update(zip(rest, fill / np.linalg.norm(fill, axis=1, keepdims=True), strict=True))
        stub = CachedEmbeddings(
            Precomputed(embedder, vecs), BlobStore(Path(tmp) / "isolated.sqlite", "embeddings")
        )
        t = time.perf_counter()
        stub(every, "document")
        own = time.perf_counter() - t
    raw_rate, pipe_rate = len(texts) / sum(raw_s), len(texts) / sum(pipe_s)
    overhead = sum(pipe_s) / sum(raw_s) - 1
    isolated = own / (len(every) / raw_rate)
    result = {
        "texts": len(texts),
        "block": ns.block,
        "raw_chunks_per_second": round(raw_rate, 2),
        "pipeline_chunks_per_second": round(pipe_rate, 2),
        "encode_overhead": round(overhead, 4),
        "pipeline_own_seconds_737_chunks": round(own, 4),
        "encode_overhead_isolated": round(isolated, 5),
        "rss_start_mb": round(rss_start, 1),
        "rss_after_model_load_mb": round(rss_loaded, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "settings": "all-MiniLM-L6-v2 fp32, max 256 tokens, batch 32, 2 torch threads, plain chunks",
    }
    print(
        f"encode_overhead {overhead * 100:+.1f}% end to end (goal < 10%); the pipeline's own work "
        f"(hash, lookup, SQLite, stack) on {len(every)} chunks: {own * 1000:.0f} ms = "
        f"{isolated * 100:.2f}% of their encode; peak RSS {result['peak_rss_mb']:.0f} MB "
        f"(after model load {rss_loaded:.0f} MB)"
    )
    print(f"wrote {write_json('encode', result, OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
