"""fetch: checked downloads from a local HTTP server, skips, mismatches and no network."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from situate.datasets import download as download_mod
from situate.datasets.download import Remote, sha256_of
from situate.datasets.fetch import DATASETS, FOLDERS, fetch
from situate.errors import SituateError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
HELLO = b"hello\n"
HELLO_SHA256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
WORLD = b"world\n"
WORLD_SHA256 = "e258d248fda94c63753607f7c4494ee0fcbe92f1a76bfdac795c9d84101eb317"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there


class Server:
    """A local HTTP server over a folder that records the paths it was asked for."""

    def __init__(self, root: Path) -> None:
        requests: list[str] = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                super().do_GET()

            def log_message(self, format: str, *args: object) -> None:
                pass

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.requests = requests
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    root = tmp_path / "served"
    root.mkdir()
    (root / "hello.txt").write_bytes(HELLO)
    (root / "world.txt").write_bytes(WORLD)
    srv = Server(root)
    yield srv
    srv.close()


def use_remotes(monkeypatch: pytest.MonkeyPatch, *remotes: Remote) -> None:
    monkeypatch.setitem(DATASETS, "demo", list(remotes))
    monkeypatch.setitem(FOLDERS, "demo", "demo-data")


def fetch_error(dest: Path) -> str:
    with pytest.raises(SituateError) as info:
        fetch("demo", dest, progress=False)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_hand_computed_checksums() -> None:
    assert hashlib.sha256(HELLO).hexdigest() == HELLO_SHA256
    assert hashlib.sha256(WORLD).hexdigest() == WORLD_SHA256


@pytest.mark.parametrize("progress", [False, True])
def test_download_verifies_and_moves_into_place(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, progress: bool
) -> None:
    use_remotes(
        monkeypatch,
        Remote(f"{server.url}/hello.txt", "hello.txt", HELLO_SHA256, 6),
        Remote(f"{server.url}/world.txt", "world.txt", WORLD_SHA256),
    )
    moves: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def spy(src: str | Path, dst: str | Path) -> None:
        moves.append((Path(src), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(download_mod.os, "replace", spy)
    dest = tmp_path / "data"
    paths = fetch("demo", dest, progress=progress)

    folder = dest / "demo-data"
    assert paths == [folder / "hello.txt", folder / "world.txt"]
    assert paths[0].read_bytes() == HELLO and paths[1].read_bytes() == WORLD
    assert sorted(p.name for p in folder.iterdir()) == ["hello.txt", "world.txt"]  # no temp left
    assert server.requests == ["/hello.txt", "/world.txt"]
    # Each file was written beside its target and renamed into place.
    assert [(src.parent, dst) for src, dst in moves] == [(folder, p) for p in paths]


def test_present_file_is_not_downloaded_again(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_remotes(
        monkeypatch,
        Remote(f"{server.url}/hello.txt", "hello.txt", HELLO_SHA256),
        Remote(f"{server.url}/world.txt", "world.txt", WORLD_SHA256),
    )
    folder = tmp_path / "demo-data"
    folder.mkdir()
    (folder / "hello.txt").write_bytes(HELLO)  # right checksum: kept
    (folder / "world.txt").write_bytes(b"stale\n")  # wrong checksum: downloaded again
    fetch("demo", tmp_path, progress=False)
    assert server.requests == ["/world.txt"]
    assert (folder / "world.txt").read_bytes() == WORLD

    fetch("demo", tmp_path, progress=False)
    assert server.requests == ["/world.txt"]  # everything present now: no request at all


def test_checksum_mismatch_deletes_the_download(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"{server.url}/hello.txt"
    use_remotes(monkeypatch, Remote(url, "hello.txt", WORLD_SHA256))
    assert fetch_error(tmp_path) == (
        f"{url}: sha256 mismatch (expected {WORLD_SHA256}, got {HELLO_SHA256}); the download was "
        f"deleted; retry, or check whether the file changed upstream"
    )
    assert list((tmp_path / "demo-data").iterdir()) == []


def test_unreachable_url_is_one_line_with_urls_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_remotes(
        monkeypatch,
        Remote(f"{CLOSED}/hello.txt", "hello.txt", HELLO_SHA256),
        Remote(f"{CLOSED}/world.txt", "world.txt", WORLD_SHA256),
    )
    message = fetch_error(tmp_path)
    folder = tmp_path / "demo-data"
    assert message.startswith(f"cannot download {CLOSED}/hello.txt (")
    assert message.endswith(
        f"; without network, download {CLOSED}/hello.txt {CLOSED}/world.txt by hand into "
        f"{folder}/ and run `situate data fetch demo` again to check them"
    )
    assert list(folder.iterdir()) == []


def test_http_error_is_one_line(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_remotes(monkeypatch, Remote(f"{server.url}/missing.txt", "missing.txt", HELLO_SHA256))
    assert fetch_error(tmp_path).startswith(
        f"cannot download {server.url}/missing.txt (HTTP 404 File not found);"
    )


def test_unknown_name_lists_valid_names(tmp_path: Path) -> None:
    with pytest.raises(SituateError) as info:
        fetch("nope", tmp_path)
    assert str(info.value) == (
        "unknown dataset 'nope'; choose one of: cookbook, covid-qa, financebench"
    )


def test_catalogue_layout() -> None:
    assert FOLDERS == {"cookbook": "cookbook-codebase", "covid-qa": "covid-qa"}
    assert [r.filename for r in DATASETS["cookbook"]] == [
        "codebase_chunks.json",
        "evaluation_set.jsonl",
    ]
    assert DATASETS["covid-qa"] == [
        Remote(
            "https://raw.githubusercontent.com/deepset-ai/COVID-QA/master/data/question-answering/"
            "200423_covidQA.json",
            "200423_covidQA.json",
            "ab310b4e39f726e087c8fa3d1787c73771dacddc584977204ebe3cc889ee1264",
            2697757,
        )
    ]
    for remote in DATASETS["cookbook"]:
        assert remote.url == (
            "https://raw.githubusercontent.com/anthropics/claude-cookbooks/main/"
            f"skills/contextual-embeddings/data/{remote.filename}"
        )


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_pinned_checksums_match_the_shared_copies(name: str) -> None:
    folder = SHARED / FOLDERS[name]
    if not folder.is_dir():
        pytest.skip(f"shared copy absent at {folder}")
    for remote in DATASETS[name]:
        path = folder / remote.filename
        assert sha256_of(path) == remote.sha256
        assert path.stat().st_size == remote.size
    # And the shared folder already counts as fetched: nothing to download.
    assert fetch(name, SHARED, progress=False) == [folder / r.filename for r in DATASETS[name]]


# ---------------------------------------------------------------- financebench (pinned git commit)


def git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.fixture
def github(tmp_path: Path) -> Iterator[Server]:
    """GitHub's API and raw host for the pinned commit: the tree listing and two filings."""
    import json

    from document_fixtures import build_report_pdf
    from situate.datasets import financebench as fb

    root = tmp_path / "github"
    raw = root / fb.REPO / fb.COMMIT
    (raw / "pdfs").mkdir(parents=True)
    build_report_pdf(raw / "pdfs" / "ACME_2023_10K.pdf")
    (raw / "pdfs" / "ACME_2023_10Q.pdf").write_bytes(
        (raw / "pdfs" / "ACME_2023_10K.pdf").read_bytes()
    )
    records = [
        {"financebench_id": "fb1", "doc_name": "ACME_2023_10K", "question": "Revenue growth?",
         "evidence": [{"doc_name": "ACME_2023_10K", "evidence_page_num": 1, "evidence_text": "x"}]},
        {"financebench_id": "fb2", "doc_name": "ACME_2023_10Q", "question": "Outlook for 2024?",
         "evidence": [{"doc_name": "ACME_2023_10Q", "evidence_page_num": 2},
                      {"doc_name": "ACME_2023_10Q", "evidence_page_num": 2},
                      {"doc_name": "ACME_2023_10Q", "evidence_page_num": 0}]},
    ]  # fmt: skip
    (raw / "data").mkdir()
    (raw / fb.QUESTIONS).write_text("".join(json.dumps(r) + "\n" for r in records))
    files = sorted(p for p in raw.rglob("*") if p.is_file())
    tree = [
        {"path": p.relative_to(raw).as_posix(), "type": "blob", "size": p.stat().st_size,
         "sha": git_blob(p.read_bytes())}
        for p in files
    ]  # fmt: skip
    listing = root / "repos" / fb.REPO / "git" / "trees" / fb.COMMIT
    listing.parent.mkdir(parents=True)
    listing.write_text(json.dumps({"tree": tree, "truncated": False}))
    srv = Server(root)
    yield srv
    srv.close()


def test_financebench_fetch_checks_git_blobs_and_writes_page_gold(github, tmp_path: Path):
    import json

    from situate.datasets.financebench import fetch_financebench
    from situate.datasets.folder import FolderLoader

    assert git_blob(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object`
    folder = tmp_path / "data" / "financebench"
    paths = fetch_financebench(folder, progress=False, api=github.url, raw=github.url)
    assert [p.name for p in paths] == [
        "ACME_2023_10K.pdf", "ACME_2023_10Q.pdf", "financebench_open_source.jsonl", "qa.json",
    ]  # fmt: skip
    # evidence_page_num is 0-based; the repeated page is one gold entry
    assert json.loads((folder / "qa.json").read_text()) == [
        {"id": "fb1", "q": "Revenue growth?", "gold": ["ACME_2023_10K.pdf#page=2"]},
        {"id": "fb2", "q": "Outlook for 2024?",
         "gold": ["ACME_2023_10Q.pdf#page=3", "ACME_2023_10Q.pdf#page=1"]},
    ]  # fmt: skip
    sums = (folder / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == 3 and all(len(line.split("  ")[0]) == 64 for line in sums)
    # the folder loads as dataset=folder: page 2 of the 10-K is its Results page
    corpus = FolderLoader(str(folder)).load()
    (q1, _) = corpus.questions
    (span,) = q1.gold
    assert corpus.document(span.doc_id).text[span.start : span.end].startswith("Results\n")
    # fetched again: checked offline against SHA256SUMS, nothing asked of the network
    asked = len(github.requests)
    fetch_financebench(folder, progress=False, api=CLOSED, raw=CLOSED)
    assert len(github.requests) == asked


def test_financebench_fetch_refuses_a_file_that_is_not_the_commits(github, tmp_path: Path):
    from situate.datasets import financebench as fb

    served = Path(github.httpd.RequestHandlerClass.keywords["directory"])
    pdf = served / fb.REPO / fb.COMMIT / "pdfs" / "ACME_2023_10Q.pdf"
    pdf.write_bytes(pdf.read_bytes()[:-10] + b"tampered!\n")  # same size, other bytes
    folder = tmp_path / "fb"
    with pytest.raises(SituateError, match=r"ACME_2023_10Q.pdf: git blob hash mismatch \(expected"):
        fb.fetch_financebench(folder, progress=False, api=github.url, raw=github.url)
    assert not (folder / "ACME_2023_10Q.pdf").exists()
    assert (folder / "ACME_2023_10K.pdf").is_file()  # what checked out is kept
    pdf.unlink()
    with pytest.raises(SituateError, match=r"ACME_2023_10Q.pdf \(HTTP 404 File not found\)"):
        fb.fetch_financebench(folder, progress=False, api=github.url, raw=github.url)


def test_financebench_file_absent_from_the_pinned_tree_is_one_line():
    from situate.datasets import financebench as fb

    with pytest.raises(SituateError) as info:
        fb._remote("http://raw", {}, "pdfs/NOPE.pdf")
    assert str(info.value) == (
        f"pdfs/NOPE.pdf is not in patronus-ai/financebench at commit {fb.COMMIT[:12]}; this "
        "situate pins that commit: report it, or place the file by hand"
    )
