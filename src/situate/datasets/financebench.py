"""FinanceBench's open sample as a folder of filings: ``situate data fetch financebench``.

A public corpus of real PDFs for users outside this sandbox: the 150 open-source questions of
FinanceBench (patronus-ai/financebench; analysts' questions about 10-K, 10-Q and 8-K filings,
each with its evidence page and quote) and the PDFs they cite, from one pinned commit of the
repository, into ``<dest>/financebench/``:

- ``<doc_name>.pdf`` for every filing a question cites (the repository's ``pdfs/``);
- ``financebench_open_source.jsonl``, the questions as published;
- ``qa.json``, the questions for ``dataset=folder``: gold is each evidence page as
  ``"<doc_name>.pdf#page=N"`` (FinanceBench's ``evidence_page_num`` is 0-based: the evidence text
  of ``3M_2018_10K`` page 59 ends with the printed page number 60), so a question counts as found
  when a retrieved chunk overlaps its evidence page;
- ``SHA256SUMS``: the sha256 of every file once checked, so a later fetch checks them offline
  and downloads nothing.

The files are checked against the git blob hashes that the pinned commit's tree lists (read from
GitHub's API once per fetch that needs a download): a commit hash fixes its whole tree, so a file
changed upstream, or a truncated download, cannot pass. Then::

    situate data fetch financebench --dest data/
    situate run dataset=folder dataset.path=data/financebench dataset.name=financebench
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from situate.datasets.download import (
    _NETWORK_ERRORS,
    TIMEOUT_S,
    Remote,
    _reason,
    download_all,
    make_folder,
    sha256_of,
)
from situate.errors import SituateError

REPO = "patronus-ai/financebench"
COMMIT = "3b830572e9af88c1152b548622bd81ca94eb640a"
QUESTIONS = "data/financebench_open_source.jsonl"
API = "https://api.github.com"
RAW = "https://raw.githubusercontent.com"
SUMS = "SHA256SUMS"


def fetch_financebench(
    folder: Path, progress: bool = True, api: str = API, raw: str = RAW
) -> list[Path]:
    """Fetch (or check) the FinanceBench folder; return its PDFs, the questions file and qa.json.

    ``api`` and ``raw`` are GitHub's API and raw-file hosts (a test serves both locally).
    """
    make_folder(folder)
    sums = _read_sums(folder / SUMS)
    tree: dict[str, Mapping[str, Any]] = {}

    def fetch_files(paths: list[str]) -> list[Path]:
        wanted = {Path(p).name: p for p in paths}
        missing = [n for n in wanted if not _checked(folder / n, sums.get(n))]
        if missing:
            if not tree:
                tree.update(_tree(api))
            remotes = [_remote(raw, tree, wanted[n]) for n in missing]
            download_all("financebench", remotes, folder, progress)
            sums.update({r.filename: sha256_of(folder / r.filename) for r in remotes})
            _write_sums(folder / SUMS, sums)
        return [folder / n for n in wanted]

    (questions_file,) = fetch_files([QUESTIONS])
    records = _read_records(questions_file)
    docs = sorted({r["doc_name"] for r in records} | _evidence_docs(records))
    pdfs = fetch_files([f"pdfs/{d}.pdf" for d in docs])
    qa = folder / "qa.json"
    _write_json(qa, qa_records(records))
    return [*pdfs, questions_file, qa]


def qa_records(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``qa.json`` for ``dataset=folder``: each question with its evidence pages as page gold."""
    out = []
    for r in records:
        pages = []
        for e in r.get("evidence") or ():
            ref = f"{e.get('doc_name') or r['doc_name']}.pdf#page={int(e['evidence_page_num']) + 1}"
            if ref not in pages:
                pages.append(ref)
        out.append({"id": r["financebench_id"], "q": r["question"], "gold": pages})
    return out


def _evidence_docs(records: list[Mapping[str, Any]]) -> set[str]:
    return {e["doc_name"] for r in records for e in r.get("evidence") or () if e.get("doc_name")}


def _read_records(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SituateError(
            f"{path}: not FinanceBench's JSON Lines ({e}); delete it and fetch again"
        ) from None


def _tree(api: str) -> dict[str, Mapping[str, Any]]:
    """Path -> tree entry (``sha``, ``size``) of every file at the pinned commit."""
    url = f"{api}/repos/{REPO}/git/trees/{COMMIT}?recursive=1"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.github+json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as resp:
            listing = json.load(resp)
    except _NETWORK_ERRORS as e:
        raise SituateError(
            f"cannot read the file list of {REPO} at {COMMIT[:12]} from {url} ({_reason(e)}); "
            "check the network (GitHub's API allows 60 unauthenticated requests an hour)"
        ) from e
    if listing.get("truncated"):
        raise SituateError(f"{url}: GitHub truncated the file list; retry later")
    return {e["path"]: e for e in listing.get("tree", ()) if e.get("type") == "blob"}


def _remote(raw: str, tree: Mapping[str, Mapping[str, Any]], path: str) -> Remote:
    entry = tree.get(path)
    if entry is None:
        raise SituateError(
            f"{path} is not in {REPO} at commit {COMMIT[:12]}; this situate pins that commit: "
            "report it, or place the file by hand"
        )
    url = f"{raw}/{REPO}/{COMMIT}/{path}"
    return Remote(url, Path(path).name, "", int(entry["size"]), git_blob=entry["sha"])


def _checked(path: Path, sha256: str | None) -> bool:
    return sha256 is not None and path.is_file() and sha256_of(path) == sha256


def _read_sums(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    sums = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        if digest and name:
            sums[name] = digest
    return sums


def _write_sums(path: Path, sums: Mapping[str, str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(f"{d}  {n}\n" for n, d in sorted(sums.items())), encoding="utf-8")
    os.replace(tmp, path)


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
