"""Side by side with context-grid (PyPI, MIT), the closest peer: the same small grid in both tools.

    .venv/bin/python benchmarks/peer_grid.py

The cookbook set with Claude's recorded contexts prepended to each chunk as text (context, blank
line, chunk), 248 questions whose gold is the golden chunk's text. The arms both tools have
offline, each run as one sweep in a fresh process, cold (empty caches) then warm (the same cache
folder again):

* BM25 alone: situate ``fusion=sparse_only`` (bm25s), context-grid ``index=bm25``;
* hybrid of BM25 with each tool's offline dense option: situate ``fusion=rrf`` with
  ``embedder=minilm`` (all-MiniLM-L6-v2, a neural model on the CPU), context-grid
  ``index=hybrid`` with ``embedder=tfidf`` (its own TF-IDF vectors; RRF, k 60).

Where the arms are not identical (said in the output too): the dense sides differ in kind
(a neural embedder vs TF-IDF), so the hybrid arms compare tools' defaults, not one method; the
BM25 implementations differ (bm25s vs context-grid's own: tokenisation, k1/b); context-grid
sees each chunk as a one-chunk document (``chunker=fixed:8192``), situate its prechunked set
with ``context.placement=before``; Pass@k is situate's (fraction of golden chunks in the top k)
and context-grid's ``recall@k`` (fraction of relevant chunks in the top k), the same quantity
when each question's gold chunks are whole chunks, as here.

Writes outputs/bench/peer_grid.json and merges ``peer_grid_wall_ratio`` (peer / situate, cold)
and ``peer_grid_wall_ratio_warm`` into outputs/bench/summary.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, OUT, PY, REPO, merge_summary, write_json

KS = (5, 10, 20)
SITUATE_ARMS = {"sparse_only": "bm25", "rrf": "hybrid"}


def peer_inputs(folder: Path) -> tuple[Path, Path]:
    """The corpus (chunk id -> context + chunk) and the questions, as JSON for the peer."""
    from situate.app import instantiate_stage
    from situate.config import compose

    cfg = compose(["context=replay", "tracking=none", f"data_dir={DATA.parent}"])
    dataset, chunker, context = (instantiate_stage(cfg, g) for g in ("dataset", "chunker", "context"))  # fmt: skip
    corpus = dataset.load()
    chunks = chunker.chunk(corpus)
    contexts = context.contextualize(corpus, chunks)
    texts = {c.chunk_id: f"{x.text}\n\n{c.text}" for c, x in zip(chunks, contexts, strict=True)}
    at = {(c.doc_id, c.start, c.end): c for c in chunks}
    questions = [
        {
            "id": q.qid,
            "question": q.text,
            "anchors": [
                {"source_id": at[(s.doc_id, s.start, s.end)].chunk_id,
                 "quote": at[(s.doc_id, s.start, s.end)].text}
                for s in q.gold
            ],
        }
        for q in corpus.questions
    ]  # fmt: skip
    corpus_json, questions_json = folder / "corpus.json", folder / "questions.json"
    corpus_json.write_text(json.dumps(texts))
    questions_json.write_text(json.dumps(questions))
    return corpus_json, questions_json


PEER = """
import json, sys
import contextgrid as cg
from contextgrid.cache.store import DiskCache
from contextgrid.core.evalset import EvalItem, EvalSet
texts = json.load(open(sys.argv[1]))
items = tuple(EvalItem.from_dict(q) for q in json.load(open(sys.argv[2])))
lab = cg.Lab(texts, cache=DiskCache(sys.argv[3]))
lab.grid(chunker="fixed:8192", embedder="tfidf", index=["bm25", "hybrid"], k=20)
results = lab.run(EvalSet("cookbook", items))
out = {r.config.index: {f"pass_at_{k}": r.metric(f"recall@{k}") for k in (5, 10, 20)} for r in results}
json.dump(out, open(sys.argv[4], "w"))
"""


def timed(cmd: list[str], label: str) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{label} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    print(f"  {label}: {seconds:.1f} s", flush=True)
    return seconds


def situate_grid(output_dir: Path, label: str) -> tuple[float, dict]:
    seconds = timed(
        [PY, "-m", "situate.cli", "run", "-m", "context=replay", "context.placement=before",
         "embedder=minilm", f"fusion={','.join(SITUATE_ARMS)}", "tracking=none",
         f"data_dir={DATA.parent}", f"output_dir={output_dir}"],
        label,
    )  # fmt: skip
    arms = {}
    for f in output_dir.rglob("result.json"):
        row = json.loads(f.read_text())
        m = row["metrics"]
        arms[SITUATE_ARMS[row["choices"]["fusion"]]] = {
            f"pass_at_{k}": m[f"pass_at_{k}"] for k in KS
        }
    return seconds, arms


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus_json, questions_json = peer_inputs(work)
        peer_py = work / "peer.py"
        peer_py.write_text(PEER)
        result: dict = {"situate": {}, "peer": {}}
        for phase in ("cold", "warm"):  # the second pass finds each tool's cache filled
            s_wall, s_arms = situate_grid(work / "situate", f"situate grid ({phase})")
            out = work / f"peer_{phase}.json"
            p_wall = timed(
                [PY, str(peer_py), str(corpus_json), str(questions_json), str(work / "peer_cache"), str(out)],
                f"context-grid grid ({phase})",
            )  # fmt: skip
            result["situate"][phase] = {"wall_seconds": round(s_wall, 2), "arms": s_arms}
            result["peer"][phase] = {
                "wall_seconds": round(p_wall, 2),
                "arms": json.loads(out.read_text()),
            }
    cold, warm = (result["peer"][p]["wall_seconds"] / result["situate"][p]["wall_seconds"] for p in ("cold", "warm"))  # fmt: skip
    result["peer_grid_wall_ratio"] = round(cold, 3)
    result["peer_grid_wall_ratio_warm"] = round(warm, 3)
    result["not_identical"] = [
        "dense side: situate all-MiniLM-L6-v2 (neural, CPU) vs context-grid TF-IDF",
        "BM25: bm25s vs context-grid's own implementation (tokenisation, parameters)",
        "context-grid gets one document per chunk (chunker fixed:8192); situate its prechunked set",
        "Pass@k: situate's pass_at_k vs context-grid's recall@k (equal for whole-chunk gold)",
        "wall times include each tool's process start and imports",
    ]
    for tool in ("situate", "peer"):  # a cache that changes the answer is worth saying
        cold_arms, warm_arms = (result[tool][p]["arms"] for p in ("cold", "warm"))
        for arm in cold_arms:
            if cold_arms[arm] != warm_arms.get(arm):
                result["not_identical"].append(
                    f"{tool} {arm}: Pass@5 {cold_arms[arm]['pass_at_5'] * 100:.1f} cold but "
                    f"{warm_arms[arm]['pass_at_5'] * 100:.1f} warm, on the same inputs"
                )
    for tool in ("situate", "peer"):
        for arm, m in result[tool]["cold"]["arms"].items():
            print(f"{tool:8s} {arm:7s} Pass@5/10/20 " + " / ".join(f"{m[f'pass_at_{k}'] * 100:.1f}" for k in KS))  # fmt: skip
    print(f"wrote {write_json('peer_grid', result, OUT)}")
    merge_summary({k: result[k] for k in ("peer_grid_wall_ratio", "peer_grid_wall_ratio_warm")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
