"""Side by side with context-grid (PyPI, MIT), the closest peer: the same arms in both tools.

    .venv/bin/python benchmarks/peer_grid.py [--arms bm25,hybrid,dense] [--no-grid] [--repeat N]
        [--out DIR]

The cookbook set with Claude's recorded contexts prepended to each chunk as text (context, blank
line, chunk), 248 questions whose gold is the golden chunk's text. The arms both tools have
offline:

* ``bm25``: BM25 alone: situate ``fusion=sparse_only`` (bm25s), context-grid ``index=bm25``;
* ``hybrid``: BM25 with each tool's offline dense option: situate ``fusion=rrf`` with
  ``embedder=minilm`` (all-MiniLM-L6-v2, a neural model on the CPU), context-grid
  ``index=hybrid`` with ``embedder=tfidf`` (its own TF-IDF vectors; RRF, k 60);
* ``dense``: the dense side alone: situate ``fusion=dense_only`` (MiniLM), context-grid
  ``index=dense`` (TF-IDF).

Per arm (what a user trades): each tool runs that arm alone in a fresh process on empty caches of
its own (cold), then again on them (warm); ``peer_grid_arms`` has, per arm and phase, each tool's
wall seconds, the ratio (context-grid / situate: above 1 means situate is faster) and each tool's
Pass@5/10/20, with the load average before and after (the machine may be shared). The two-arm
grid of earlier rounds (BM25 and hybrid in one sweep per tool, cold then warm) is timed too
(``--no-grid`` leaves it out): ``peer_grid_wall_ratio`` and ``peer_grid_wall_ratio_warm``.

Where the arms are not identical (said in the output too): the dense sides differ in kind
(a neural embedder vs TF-IDF), so the hybrid and dense arms compare tools' defaults, not one
method; the BM25 implementations differ (bm25s vs context-grid's own: tokenisation, k1/b);
context-grid sees each chunk as a one-chunk document (``chunker=fixed:8192``), situate its
prechunked set with ``context.placement=before``; Pass@k is situate's (fraction of golden chunks
in the top k) and context-grid's ``recall@k`` (fraction of relevant chunks in the top k), the
same quantity when each question's gold chunks are whole chunks, as here.

Writes outputs/bench/peer_grid.json and merges ``peer_grid_arms``, ``peer_grid_wall_ratio`` and
``peer_grid_wall_ratio_warm`` into outputs/bench/summary.json; prints the per-arm table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, OUT, PY, REPO, merge_summary, write_json

KS = (5, 10, 20)
SITUATE_ARMS = {"sparse_only": "bm25", "rrf": "hybrid"}  # fusion -> arm, in the two-arm grid
# arm -> (situate's overrides, context-grid's index): BM25 alone, the hybrid, the dense side alone
ARMS = {
    "bm25": (["fusion=sparse_only"], "bm25"),
    "hybrid": (["embedder=minilm", "fusion=rrf"], "hybrid"),
    "dense": (["embedder=minilm", "fusion=dense_only"], "dense"),
}


def peer_inputs(folder: Path) -> tuple[Path, Path]:
    """The corpus (chunk id -> context + chunk) and the questions, as JSON for the peer."""
    from situate.config.compose import compose
    from situate.running.app import instantiate_stage

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
lab.grid(chunker="fixed:8192", embedder="tfidf", index=sys.argv[5].split(","), k=20)
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


def situate_grid(overrides: list[str], output_dir: Path, cache_dir: Path, label: str):
    """Wall seconds of one ``situate run -m`` in a fresh process and each job's Pass@k by its
    fusion option."""
    seconds = timed(
        [PY, "-m", "situate.cli", "run", "-m", "context=replay", "context.placement=before",
         *overrides, "tracking=none", f"data_dir={DATA.parent}", f"output_dir={output_dir}",
         f"cache_dir={cache_dir}"],
        label,
    )  # fmt: skip
    arms = {}
    for f in output_dir.rglob("result.json"):
        row = json.loads(f.read_text())
        arms[row["choices"]["fusion"]] = {
            f"pass_at_{k}": row["metrics"][f"pass_at_{k}"] for k in KS
        }
    return seconds, arms


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def arm_rows(
    work: Path, corpus_json: Path, questions_json: Path, peer_py: Path, arms: list[str],
    repeat: int = 0,
):  # fmt: skip
    """Per arm, each tool in a fresh process on empty caches of its own (cold), then again on
    them (warm): wall seconds, the ratio peer / situate, Pass@k, the load average; ``repeat``
    numbers the pass (each pass has caches of its own)."""
    rows = []
    work = work / f"pass-{repeat}"
    for arm in arms:
        overrides, index = ARMS[arm]
        fusion = overrides[-1].split("=")[1]
        for phase in ("cold", "warm"):
            load = load_average()
            s_wall, s_arms = situate_grid(
                overrides, work / arm / f"situate-{phase}", work / arm / "situate-cache",
                f"situate {arm} ({phase})",
            )  # fmt: skip
            out = work / arm / f"peer-{phase}.json"
            p_wall = timed(
                [PY, str(peer_py), str(corpus_json), str(questions_json),
                 str(work / arm / "peer-cache"), str(out), index],
                f"context-grid {arm} ({phase})",
            )  # fmt: skip
            s_m, p_m = s_arms[fusion], json.loads(out.read_text())[index]
            row = {
                "arm": arm,
                "phase": phase,
                "repeat": repeat,
                "situate_seconds": round(s_wall, 2),
                "peer_seconds": round(p_wall, 2),
                "ratio": round(p_wall / s_wall, 3),
                **{f"situate_pass_at_{k}": round(s_m[f"pass_at_{k}"], 4) for k in KS},
                **{f"peer_pass_at_{k}": round(p_m[f"pass_at_{k}"], 4) for k in KS},
                "load_average": [load, load_average()],
            }
            rows.append(row)
    return rows


def arm_medians(rows: list[dict]) -> list[dict]:
    """Per arm and phase, each tool's median seconds over the passes and the ratio of the
    medians (one pass's ratio swings by 0.3-0.5 on a 2-core machine)."""
    out = []
    for arm, phase in dict.fromkeys((r["arm"], r["phase"]) for r in rows):
        runs = [r for r in rows if (r["arm"], r["phase"]) == (arm, phase)]
        s = statistics.median(r["situate_seconds"] for r in runs)
        p = statistics.median(r["peer_seconds"] for r in runs)
        out.append({"arm": arm, "phase": phase, "passes": len(runs), "situate_seconds": round(s, 3),
                    "peer_seconds": round(p, 3), "ratio": round(p / s, 3)})  # fmt: skip
    return out


def table(rows: list[dict]) -> str:
    """The per-arm rows as a fixed-width table (seconds, ratio, Pass@5 of each tool, load)."""
    head = f"{'arm':7s} {'phase':5s} {'situate s':>9s} {'peer s':>7s} {'peer/sit':>8s} "
    head += f"{'sit P@5':>7s} {'peer P@5':>8s} {'load':>5s}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['arm']:7s} {r['phase']:5s} {r['situate_seconds']:9.2f} {r['peer_seconds']:7.2f} "
            f"{r['ratio']:8.3f} {r['situate_pass_at_5'] * 100:7.1f} {r['peer_pass_at_5'] * 100:8.1f} "
            f"{r['load_average'][0][0]:5.1f}"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arms", default=",".join(ARMS), help=f"of {', '.join(ARMS)}")
    ap.add_argument("--grid", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the two-arm grid (BM25 and hybrid in one sweep)")  # fmt: skip
    ap.add_argument("--repeat", type=int, default=1,
                    help="passes of the per-arm runs (medians in peer_grid_arm_medians)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    arms = [a for a in args.arms.split(",") if a]
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        ap.error(f"unknown arm {unknown[0]}; arms: {', '.join(ARMS)}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus_json, questions_json = peer_inputs(work)
        peer_py = work / "peer.py"
        peer_py.write_text(PEER)
        result: dict = {"situate": {}, "peer": {}}
        if args.grid:
            for phase in ("cold", "warm"):  # the second pass finds each tool's cache filled
                load = load_average()
                s_wall, s_arms = situate_grid(
                    ["embedder=minilm", f"fusion={','.join(SITUATE_ARMS)}"],
                    work / f"situate-{phase}", work / "situate-cache", f"situate grid ({phase})",
                )  # fmt: skip
                out = work / f"peer_{phase}.json"
                p_wall = timed(
                    [PY, str(peer_py), str(corpus_json), str(questions_json),
                     str(work / "peer_cache"), str(out), "bm25,hybrid"],
                    f"context-grid grid ({phase})",
                )  # fmt: skip
                result["situate"][phase] = {
                    "wall_seconds": round(s_wall, 2),
                    "arms": {SITUATE_ARMS[f]: m for f, m in s_arms.items()},
                    "load_average": [load, load_average()],
                }
                result["peer"][phase] = {
                    "wall_seconds": round(p_wall, 2),
                    "arms": json.loads(out.read_text()),
                }
        rows = [
            row
            for n in range(args.repeat)  # tool after tool, pass after pass: both see the same load
            for row in arm_rows(work / "arms", corpus_json, questions_json, peer_py, arms, n)
        ]
    result["peer_grid_arms"] = rows
    result["peer_grid_arm_medians"] = arm_medians(rows)
    if args.grid:
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
        for arm in arms:
            cold_row, warm_row = (r for r in rows if r["arm"] == arm and r["repeat"] == 0)
            if cold_row[f"{tool}_pass_at_5"] != warm_row[f"{tool}_pass_at_5"]:
                result["not_identical"].append(
                    f"{tool} {arm}: Pass@5 {cold_row[f'{tool}_pass_at_5'] * 100:.1f} cold but "
                    f"{warm_row[f'{tool}_pass_at_5'] * 100:.1f} warm, on the same inputs"
                )
    print(table(rows))
    for m in result["peer_grid_arm_medians"]:
        print(
            f"median of {m['passes']}: {m['arm']} {m['phase']}: situate {m['situate_seconds']:.2f} s, "
            f"context-grid {m['peer_seconds']:.2f} s, ratio {m['ratio']:.3f}"
        )
    print(f"wrote {write_json('peer_grid', result, args.out)}")
    keys = (
        "peer_grid_arms",
        "peer_grid_arm_medians",
        "peer_grid_wall_ratio",
        "peer_grid_wall_ratio_warm",
    )
    merge_summary({k: result[k] for k in keys if k in result}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
