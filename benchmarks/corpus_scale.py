"""Sweeps at corpus scale: a folder of annual reports as PDF (~10,000 pages) and the grid a user runs.

    .venv/bin/python benchmarks/corpus_scale.py [--pages 10000] [--dense] [--n-jobs N] [--work DIR]
        [--out DIR]

1. The corpus: several companies' annual reports over several years, as filings are (a cover
   page, the same sections every year, tables of numbers that change by company and year),
   generated with reportlab into ``outputs/bench/corpus_scale/pages-<N>/`` (read from there when
   already built), with a ``qa.json`` of ~100 questions whose gold is a page
   (``"<file>.pdf#page=N"``: the page whose table row answers it).
2. The sparse grid, cold (a fresh ``output_dir``, MLflow on): ``situate run -m dataset=folder
   chunker=fixed chunker.size=150,300 context=none,heading_path sparse=bm25s,pyserini
   fusion=sparse_only`` (8 jobs): ``corpus_grid_seconds``; each job's wall seconds (``run_seconds``)
   and ``load_seconds``; ``corpus_grid_unaccounted_share`` (the largest ``unaccounted_seconds /
   run_seconds`` of the jobs).
3. The same grid again over the warm caches (a new ``output_dir``, the same ``cache_dir``):
   ``corpus_grid_warm_seconds`` and each job's ``load_seconds`` (parsed documents, gold and
   chunks from the corpus and chunk caches), the largest as ``corpus_grid_warm_load_seconds_max``.
4. With ``--n-jobs N``: the same grid with the jobs side by side (``hydra/launcher=joblib
   hydra.launcher.n_jobs=N``), cold (its own cache folder, the parse cache copied when the first
   grid's was warm) then warm: ``corpus_grid_joblib_seconds``, ``corpus_grid_joblib_warm_seconds``.
5. With ``--dense``: a hybrid grid (``embedder=minilm fusion=rrf`` on each chunking, context=none):
   ``corpus_dense_texts_per_second`` (chunks indexed / the dense indexes' seconds, from a cold
   embedding cache).

Figures go to ``outputs/bench/corpus_scale.json`` and the ``corpus_*`` keys of
``outputs/bench/summary.json``, with the load average when measured (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from common import OUT, PY, REPO, merge_summary, write_json

COMPANIES = (
    ("Northwind Logistics", "NWL", ("Freight", "Warehousing", "Last Mile")),
    ("Halvorsen Energy", "HVE", ("Upstream", "Refining", "Renewables")),
    ("Castellan Bank", "CSB", ("Retail Banking", "Commercial Lending", "Wealth")),
    ("Meridian Health", "MRH", ("Hospitals", "Clinics", "Pharmacy")),
    ("Brightwater Foods", "BWF", ("Dairy", "Bakery", "Beverages")),
    ("Kestrel Semiconductors", "KSC", ("Logic", "Memory", "Foundry")),
    ("Oakridge Insurance", "OKI", ("Property", "Casualty", "Life")),
    ("Tamsin Retail", "TMR", ("Apparel", "Home", "Online")),
)
SECTIONS = (
    "Item 1. Business",
    "Item 1A. Risk Factors",
    "Item 2. Properties",
    "Item 5. Market for Common Equity",
    "Item 7. Management's Discussion and Analysis",
    "Item 7A. Quantitative and Qualitative Disclosures About Market Risk",
    "Item 8. Financial Statements and Supplementary Data",
    "Item 9A. Controls and Procedures",
)
METRICS = ("revenue", "operating income", "capital expenditure", "headcount")
SWEPT = ("chunker.size", "context", "sparse", "fusion", "embedder")  # what tells the jobs apart
LINES_PER_PAGE = 46
PAGES_PER_REPORT = 125  # ~80 reports make 10,000 pages
SENTENCES = (
    "{c} continued to invest in its {s} segment during fiscal {y}, with a focus on margins.",
    "Demand in the {s} business was affected by interest rates and input costs in {y}.",
    "Management believes that the {s} operations are positioned for growth beyond {y}.",
    "The company's liquidity remained adequate, supported by cash flows from {s}.",
    "Competition in {s} intensified as new entrants priced aggressively during the year.",
    "Regulatory changes may require {c} to modify its {s} practices and reporting.",
    "A decline in consumer confidence could reduce the volume of {s} transactions.",
    "The board approved a share repurchase programme and a quarterly dividend in {y}.",
    "Cyber security incidents could disrupt systems that support the {s} segment.",
    "Foreign exchange movements reduced reported results of {s} by a small amount.",
    "Capital allocation priorities were unchanged: reinvestment, dividends, repurchases.",
    "The audit committee reviewed the effectiveness of internal control over reporting.",
)


def figure(company: int, year: int, segment: int, metric: int, page: int) -> int:
    """The table value of a (company, year, segment, metric, page): distinct across the corpus."""
    rng = random.Random(f"{company}-{year}-{segment}-{metric}-{page}")
    return rng.randrange(1_000, 99_999)


def report_pages(company: int, year: int, pages: int) -> list[list[str]]:
    """The lines of each page of one annual report: a cover, then sections with tables."""
    name, ticker, segments = COMPANIES[company]
    rng = random.Random(f"{ticker}{year}")
    out = [
        [
            name,
            "",
            f"Annual Report {year}",
            f"Form 10-K for the fiscal year ended December 31, {year}",
            f"Ticker: {ticker}",
        ]
    ]
    for page in range(2, pages + 1):
        section = SECTIONS[(page - 2) * len(SECTIONS) // max(1, pages - 1)]
        lines = [f"{name}  Annual Report {year}  page {page}", section, ""]
        if page % 3 == 0:  # a table page: the figures a question asks about
            lines.append(f"Table {page}: segment results, fiscal {year} (in thousands)")
            lines.append("Segment          " + "  ".join(m.title() for m in METRICS))
            for s, segment in enumerate(segments):
                values = "  ".join(
                    f"{figure(company, year, s, m, page):>8,}" for m in range(len(METRICS))
                )
                lines.append(f"{segment:<16} {values}")
            lines.append("")
        while len(lines) < LINES_PER_PAGE:
            s = rng.choice(segments)
            lines.append(rng.choice(SENTENCES).format(c=name, s=s, y=year))
        out.append(lines)
    return out


def write_report(args: tuple[Path, int, int, int]) -> int:
    """Write one report's PDF; returns its page count."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    path, company, year, pages = args
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.setTitle(f"{COMPANIES[company][0]} Annual Report {year}")
    for i, lines in enumerate(report_pages(company, year, pages)):
        if i == 0:
            pdf.setFont("Helvetica-Bold", 28)
            pdf.drawString(72, 600, lines[0])
            pdf.setFont("Helvetica", 14)
            for k, line in enumerate(lines[2:]):
                pdf.drawString(72, 560 - 22 * k, line)
        else:
            pdf.setFont("Helvetica-Bold", 12)
            pdf.drawString(54, 750, lines[1])
            pdf.setFont("Helvetica", 8)
            pdf.drawString(54, 770, lines[0])
            for k, line in enumerate(lines[3:]):
                pdf.drawString(54, 730 - 15 * k, line)
        pdf.showPage()
    pdf.save()
    return pages


def reports(pages: int) -> list[tuple[str, int, int, int]]:
    """(file name, company, year, pages) of the corpus: ~``pages`` pages in all."""
    n = max(2, round(pages / PAGES_PER_REPORT)) if pages >= 2 * 20 else 2
    per = max(3, pages // n)
    years = range(2024 - (n + len(COMPANIES) - 1) // len(COMPANIES) + 1, 2025)
    combos = [(c, y) for y in years for c in range(len(COMPANIES))][:n]
    return [(f"{COMPANIES[c][1].lower()}-{y}-10k.pdf", c, y, per) for c, y in combos]


def questions(pages: int, n: int = 100) -> list[dict]:
    """``n`` questions, each answered by one table row of one page (its page gold)."""
    rng = random.Random(pages)
    files = reports(pages)
    out = []
    for i in range(n):
        file, c, y, per = rng.choice(files)
        page = rng.choice([p for p in range(3, per + 1, 3)])
        s, m = rng.randrange(3), rng.randrange(len(METRICS))
        name, _, segments = COMPANIES[c]
        out.append(
            {
                "id": f"q{i}",
                "q": f"What was {name}'s {segments[s]} {METRICS[m]} in Table {page} of the "
                f"fiscal {y} annual report?",
                "gold": [f"{file}#page={page}"],
            }
        )
    return out


def build_corpus(pages: int, root: Path = OUT / "corpus_scale") -> tuple[Path, float]:
    """The corpus folder of ~``pages`` pages (built unless complete) and seconds spent building."""
    folder = root / f"pages-{pages}"
    done = folder / "qa.json"
    if done.is_file():
        return folder, 0.0
    folder.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    jobs = [(folder / f, c, y, per) for f, c, y, per in reports(pages)]
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        written = sum(pool.map(write_report, jobs))
    done.write_text(json.dumps(questions(pages), indent=1))  # last: marks the folder complete
    print(f"built {len(jobs)} reports, {written} pages in {time.perf_counter() - t:.0f} s")
    return folder, time.perf_counter() - t


def sweep(args: list[str], output_dir: Path, cache_dir: Path) -> tuple[float, list[dict]]:
    """Wall seconds of ``situate run -m ARGS`` (a fresh process, writing to ``output_dir``, its
    caches in ``cache_dir``) and each job's result row."""
    cmd = [
        *(PY, "-m", "situate.cli", "run", "-m", *args),
        *(f"output_dir={output_dir}", f"cache_dir={cache_dir}"),
    ]
    print("$ situate run -m " + " ".join(args), flush=True)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"sweep failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    rows = [json.loads(f.read_text()) for f in sorted(output_dir.rglob("result.json"))]
    failed = [r["error"] for r in rows if "error" in r]
    if failed:
        sys.exit(f"a job failed: {failed[0]}")
    print(f"  {len(rows)} jobs in {seconds:.1f} s", flush=True)
    return seconds, rows


def job_figures(rows: list[dict]) -> list[dict]:
    """Per job: its choices, wall, load and unaccounted seconds."""
    out = []
    for r in rows:
        m = r["metrics"]
        out.append(
            {
                "job": " ".join(o for o in r["overrides"] if o.split("=")[0] in SWEPT),
                "n_chunks": int(m["n_chunks"]),
                "run_seconds": round(m["run_seconds"], 2),
                "load_seconds": round(m["load_seconds"], 2),
                "unaccounted_seconds": round(m["unaccounted_seconds"], 2),
            }
        )
    return sorted(out, key=lambda j: j["job"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=10_000, help="pages of the corpus (~)")
    ap.add_argument("--dense", action="store_true", help="also time a hybrid grid (MiniLM)")
    ap.add_argument("--n-jobs", type=int, help="also time the grid with joblib's N jobs at a time")
    ap.add_argument("--work", type=Path, help="folder of the sweeps' outputs (default: temporary)")
    ap.add_argument("--out", type=Path, default=OUT, help="where the corpus and figures go")
    args = ap.parse_args()
    folder, build_seconds = build_corpus(args.pages, args.out / "corpus_scale")
    work = args.work or Path(tempfile.mkdtemp(prefix="corpus-scale-"))
    common = [
        "dataset=folder",
        f"dataset.path={folder}",
        "chunker=fixed",
        "chunker.size=150,300",
        "tracking=mlflow",
        "study=corpus_scale",
    ]
    grid = [*common, "context=none,heading_path", "sparse=bm25s,pyserini", "fusion=sparse_only"]
    # a parse cache already in --work/cache (parsed.sqlite) makes the "cold" grid the issue's: files
    # read from the parse cache, everything after parsing computed
    parse_cache_warm = (work / "cache" / "parsed.sqlite").is_file()
    load = os.getloadavg()
    cold, cold_rows = sweep(grid, work / "cold", work / "cache")
    warm, warm_rows = sweep(grid, work / "warm", work / "cache")
    cold_jobs, warm_jobs = job_figures(cold_rows), job_figures(warm_rows)
    result = {
        "pages": args.pages,
        "corpus": str(folder),
        "corpus_build_seconds": round(build_seconds, 1),
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "parse_cache_warm": parse_cache_warm,
        "corpus_grid_seconds": round(cold, 1),
        "corpus_grid_warm_seconds": round(warm, 1),
        "corpus_grid_unaccounted_share": round(
            max(j["unaccounted_seconds"] / j["run_seconds"] for j in cold_jobs + warm_jobs), 4
        ),
        "corpus_grid_warm_load_seconds_max": max(j["load_seconds"] for j in warm_jobs),
        "jobs_cold": cold_jobs,
        "jobs_warm": warm_jobs,
    }
    if args.n_jobs:
        side_by_side = [*grid, "hydra/launcher=joblib", f"hydra.launcher.n_jobs={args.n_jobs}"]
        cache = work / f"cache-joblib-{args.n_jobs}"
        if parse_cache_warm and not (cache / "parsed.sqlite").is_file():
            cache.mkdir(parents=True, exist_ok=True)
            shutil.copy2(work / "cache" / "parsed.sqlite", cache / "parsed.sqlite")
        load = os.getloadavg()
        seconds, rows = sweep(side_by_side, work / "joblib-cold", cache)
        warm_seconds, warm_rows = sweep(side_by_side, work / "joblib-warm", cache)
        result.update(
            corpus_grid_joblib_n_jobs=args.n_jobs,
            corpus_grid_joblib_seconds=round(seconds, 1),
            corpus_grid_joblib_warm_seconds=round(warm_seconds, 1),
            joblib_load_average_at_start=[round(x, 2) for x in load],
            joblib_load_average_at_end=[round(x, 2) for x in os.getloadavg()],
            jobs_joblib_cold=job_figures(rows),
            jobs_joblib_warm=job_figures(warm_rows),
        )
    if args.dense:
        dense_grid = [*common, "context=none", "embedder=minilm", "fusion=rrf"]
        seconds, rows = sweep(dense_grid, work / "dense", work / "cache")
        texts = sum(r["metrics"]["n_chunks"] for r in rows)  # the chunks of each index
        encode = sum(r["metrics"]["dense_index_seconds"] for r in rows)
        result["corpus_dense_grid_seconds"] = round(seconds, 1)
        result["corpus_dense_texts_per_second"] = round(texts / encode, 2) if encode else None
        result["jobs_dense"] = job_figures(rows)
    write_json("corpus_scale", result, args.out)
    merge_summary({k: v for k, v in result.items() if k.startswith("corpus_")}, args.out)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
