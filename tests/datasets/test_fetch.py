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

from situate.datasets import fetch as fetch_mod
from situate.datasets.fetch import DATASETS, FOLDERS, Remote, fetch, sha256_of
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

    monkeypatch.setattr(fetch_mod.os, "replace", spy)
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
    assert str(info.value) == "unknown dataset 'nope'; choose one of: cookbook, covid-qa"


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
