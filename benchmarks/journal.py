"""``python benchmarks/journal.py``: what the journal of paid answers costs per answer.

A paid store (``BlobStore(..., paid=True)``) appends each write to its journal and fsyncs it
inside the write transaction; a free one does not. Both stores take the same answers (a context
is about 1 KB of JSON: text, usage, model, prompt name, endpoint), one transaction per answer as
the context store writes them, then in batches of 64 as the embedding store writes an API
embedder's vectors (1,536 floats). Prints the milliseconds and bytes each answer costs with and
without the journal, and writes ``outputs/bench/journal.json``.

    python benchmarks/journal.py [--answers 300] [--folder /a/disk/to/measure]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from situate.stores.journal import journal_path
from situate.stores.sqlite import BlobStore

CONTEXT_BYTES = 1_000
VECTOR_BYTES = 1_536 * 4


def per_answer(folder: Path, paid: bool, answers: int, size: int, batch: int) -> dict:
    db = folder / f"{'paid' if paid else 'free'}-{size}-{batch}.sqlite"
    store = BlobStore(db, "answers", paid=paid)
    timings = []
    for start in range(0, answers, batch):
        items = [(f"{i:064x}", os.urandom(size)) for i in range(start, start + batch)]
        t = time.perf_counter()
        store.put_many(items)
        timings.append((time.perf_counter() - t) / batch)
    store.close()
    files = [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm"))]
    journal_bytes = journal_path(db, "answers").stat().st_size if paid else 0
    return {
        "ms_per_answer_median": round(statistics.median(timings) * 1000, 3),
        "ms_per_answer_mean": round(statistics.fmean(timings) * 1000, 3),
        "store_bytes": sum(f.stat().st_size for f in files if f.exists()),
        "journal_bytes": journal_bytes,
        "journal_bytes_per_answer": round(journal_bytes / answers, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=300)
    parser.add_argument("--folder", default=None, help="a folder on the disk to measure")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        for name, size, batch in (("context", CONTEXT_BYTES, 1), ("vectors", VECTOR_BYTES, 64)):
            answers = args.answers if batch == 1 else args.answers * 8
            free = per_answer(Path(tmp), False, answers, size, batch)
            paid = per_answer(Path(tmp), True, answers, size, batch)
            results[name] = {"answers": answers, "batch": batch, "free": free, "paid": paid}
            added = paid["ms_per_answer_median"] - free["ms_per_answer_median"]
            print(
                f"{name:8} ({answers} answers of {size} bytes, {batch} a transaction): "
                f"{free['ms_per_answer_median']:.3f} ms without the journal, "
                f"{paid['ms_per_answer_median']:.3f} ms with it (+{added:.3f} ms); "
                f"{paid['journal_bytes_per_answer']:.0f} journal bytes an answer"
            )
    out = Path("outputs/bench/journal.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    results["machine"] = {"cpus": os.cpu_count(), "load_average": os.getloadavg()}
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
