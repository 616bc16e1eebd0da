"""Document parsing and a filings-sized folder: figures, not a timed test.

    .venv/bin/python benchmarks/parse.py [--pdfs 20 --pages 25] [--filings 74 --mb 34]

* PDF throughput: a generated set of ``--pdfs`` PDFs of ``--pages`` pages each (500 pages by
  default; reportlab, 40 lines of text a page) read by ``parser=pdf``: pages/s and MB/s with a
  cold parse cache, then with the cache warm (every file hashed, no PDF opened).
* A folder like 74 10-K filings (``--mb`` MB of plain text in ``--filings`` files, generated:
  headed items, prose lines, number tables): ``dataset=folder`` load cold and warm, 129 answer
  quotes resolved (exact and normalised), ``chunker=markdown``, and ``chunker=fixed`` token offsets
  (in whitespace-cut segments, as situate does, against one encode per whole document).

The load average (os.getloadavg) is printed with the figures: on a shared machine other jobs slow
every number. Results go to outputs/bench/parse.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from common import write_json

WORDS = [
    "revenue",
    "income",
    "net",
    "total",
    "assets",
    "liabilities",
    "fiscal",
    "year",
    "quarter",
    "segment",
    "operating",
    "cash",
    "flow",
    "share",
    "equity",
    "tax",
    "million",
    "billion",
    "percent",
    "increase",
    "decrease",
    "compared",
    "company",
    "products",
    "services",
    "customers",
    "markets",
    "risk",
    "factors",
]


def make_pdfs(folder: Path, pdfs: int, pages: int, rng: random.Random) -> int:
    from reportlab.pdfgen import canvas

    for i in range(pdfs):
        c = canvas.Canvas(str(folder / f"report_{i:03d}.pdf"))
        c.setTitle(f"Report {i}")
        for _ in range(pages):
            for k in range(40):
                c.drawString(56, 770 - 18 * k, " ".join(rng.choices(WORDS, k=12)))
            c.showPage()
        c.save()
    return pdfs * pages


def make_filings(folder: Path, files: int, mb: float, rng: random.Random) -> list[str]:
    """Text files of ``mb`` MB in all; returns 129 sentences quoted from them (the questions)."""
    per_file = int(mb * 1e6 / files)
    quotes: list[str] = []
    for i in range(files):
        lines, size = [], 0
        while size < per_file:
            r = rng.random()
            if r < 0.02:
                line = f"ITEM {rng.randint(1, 15)}. " + " ".join(rng.choices(WORDS, k=4)).upper()
            elif r < 0.3:
                line = "  ".join(f"{rng.randint(1, 99999):,}" for _ in range(6))
            else:
                line = " ".join(rng.choices(WORDS, k=rng.randint(5, 30)))
            lines.append(line)
            size += len(line) + 1
            if rng.random() < 0.1:
                lines.append("")
        text = "\n".join(lines)
        (folder / f"CO{i:02d}_2018_10K.txt").write_text(text, encoding="utf-8")
        for _ in range(2 if i < 129 - files else 1):
            start = rng.randrange(0, len(text) - 400)
            start = text.index(" ", start) + 1
            quote = " ".join(text[start : start + 120].split()[:-1])
            quotes.append(quote.upper() if len(quotes) % 3 == 0 else quote)  # a third normalised
    return quotes[:129]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def bench_pdfs(args: argparse.Namespace, tmp: Path, rng: random.Random) -> dict:
    from situate.parsing.reader import DEFAULT_SUFFIXES, DocumentReader, default_parsers

    folder = tmp / "pdfs"
    folder.mkdir()
    pages = make_pdfs(folder, args.pdfs, args.pages, rng)
    mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    cache = tmp / "cache" / "parsed.sqlite"
    reader = DocumentReader(default_parsers(), DEFAULT_SUFFIXES, cache=cache)
    files, _ = reader.find(folder)
    cold, cold_s = timed(lambda: reader.read(folder, files))
    warm, warm_s = timed(lambda: reader.read(folder, files))
    assert cold.parsed == len(files) and warm.cached == len(files)
    chars = sum(len(d.text) for d in cold.documents)
    return {
        "pdfs": len(files),
        "pages": pages,
        "mb": round(mb, 2),
        "characters": chars,
        "cold_seconds": round(cold_s, 3),
        "cold_pages_per_s": round(pages / cold_s, 1),
        "cold_mb_per_s": round(mb / cold_s, 2),
        "warm_seconds": round(warm_s, 3),
        "warm_pages_per_s": round(pages / warm_s, 1),
    }


def bench_filings(args: argparse.Namespace, tmp: Path, rng: random.Random) -> dict:
    from situate.chunking.fixed import FixedChunker
    from situate.chunking.markdown import MarkdownChunker
    from situate.datasets.folder import FolderLoader
    from situate.packaged import default_tokenizer_path, load_tokenizer

    folder = tmp / "filings"
    folder.mkdir()
    quotes = make_filings(folder, args.filings, args.mb, rng)
    (folder / "qa.json").write_text(json.dumps([{"q": "?", "gold": [q]} for q in quotes]))
    mb = sum(p.stat().st_size for p in folder.glob("*.txt")) / 1e6
    cache = str(tmp / "cache" / "parsed.sqlite")
    loader = FolderLoader(str(folder), cache=cache)
    corpus, cold_s = timed(loader.load)
    _, warm_s = timed(FolderLoader(str(folder), cache=cache).load)
    markdown, markdown_s = timed(lambda: MarkdownChunker().chunk(corpus))
    fixed, fixed_s = timed(lambda: FixedChunker().chunk(corpus))
    tok = load_tokenizer(str(default_tokenizer_path()))
    texts = [d.text for d in corpus.documents]
    _, whole_s = timed(lambda: tok.encode_batch(texts, add_special_tokens=False))
    return {
        "files": len(corpus.documents),
        "mb": round(mb, 2),
        "questions": len(corpus.questions),
        "quote_rules": {k: v for k, v in corpus.notes.items() if k.startswith("quotes_")},
        "load_cold_seconds": round(cold_s, 2),
        "load_warm_seconds": round(warm_s, 2),
        "markdown_chunks": len(markdown),
        "markdown_seconds": round(markdown_s, 2),
        "fixed_chunks": len(fixed),
        "fixed_tokens_seconds": round(fixed_s, 2),
        "tokenize_whole_documents_seconds": round(whole_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdfs", type=int, default=20)
    parser.add_argument("--pages", type=int, default=25)
    parser.add_argument("--filings", type=int, default=74)
    parser.add_argument("--mb", type=float, default=34.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    result: dict = {"load_start": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory() as tmp:
        result["pdf"] = bench_pdfs(args, Path(tmp), rng)
        print("pdf:", json.dumps(result["pdf"]))
        result["filings"] = bench_filings(args, Path(tmp), rng)
        print("filings:", json.dumps(result["filings"]))
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print("load average at start / end:", result["load_start"], result["load_end"])
    print("written:", write_json("parse", result))


if __name__ == "__main__":
    main()
