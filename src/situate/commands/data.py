"""``situate data fetch NAME [--dest DIR]``: download a public data set, checked by its pinned hash."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="situate data", description="Fetch a public data set.")
    sub = parser.add_subparsers(dest="action", required=True)
    fetch_p = sub.add_parser("fetch", help="download a data set and check its sha256")
    fetch_p.add_argument(
        "name", help="cookbook, covid-qa or financebench (real 10-K/10-Q PDFs, page gold)"
    )
    fetch_p.add_argument("--dest", default=os.environ.get("SITUATE_DATA_DIR", "../shared/data"))
    ns = parser.parse_args(args)
    from situate.datasets.fetch import fetch

    for path in fetch(ns.name, Path(ns.dest)):
        print(path)
    return 0
