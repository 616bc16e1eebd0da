"""Downloading pinned files: each to a temporary file beside its target, kept only once its
digest checks out, with a progress bar and one-line errors that say what is still missing."""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from situate.errors import SituateError

TIMEOUT_S = 30
_BLOCK = 1 << 16


@dataclass(frozen=True)
class Remote:
    """One file to download: where from, its name on disk, its sha256 and size in bytes.

    A file of a git repository at a pinned commit may be checked by its git blob hash instead
    (``git_blob``: the SHA-1 of ``b"blob <size>\\0"`` and its bytes, as the commit's tree lists
    it; ``sha256`` is then "" and ``size`` is required)."""

    url: str
    filename: str
    sha256: str
    size: int | None = None
    git_blob: str | None = None

    def check(self, sha256: str, sha1_of_blob: str) -> str | None:
        """What is wrong with a download of these digests (None: it is the pinned file)."""
        if self.git_blob is not None:
            if sha1_of_blob != self.git_blob:
                return f"git blob hash mismatch (expected {self.git_blob}, got {sha1_of_blob})"
        elif sha256 != self.sha256:
            return f"sha256 mismatch (expected {self.sha256}, got {sha256})"
        return None


_NETWORK_ERRORS = (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException)


def sha256_of(path: Path) -> str:
    """Return the hex sha256 of the file at ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SituateError(
            f"{folder}: cannot create the data folder ({e.strerror or e}); "
            f"set SITUATE_DATA_DIR to a writable folder"
        ) from e


def is_present(path: Path, sha256: str) -> bool:
    return path.is_file() and sha256_of(path) == sha256


def download_all(name: str, remotes: list[Remote], folder: Path, progress: bool) -> None:
    """Download each remote in turn, with a progress bar when asked for."""
    if not progress:
        for i in range(len(remotes)):
            _download_or_explain(name, remotes[i:], folder, lambda done, total: None)
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        for i, remote in enumerate(remotes):
            task = bar.add_task(remote.filename, total=remote.size)

            def report(done: int, total: int | None, task: int = task) -> None:
                bar.update(task, completed=done, total=total)

            _download_or_explain(name, remotes[i:], folder, report)


def _download_or_explain(
    name: str, remaining: list[Remote], folder: Path, report: Callable[[int, int | None], None]
) -> None:
    """Download ``remaining[0]``; on a network failure, explain how to place the rest by hand."""
    remote = remaining[0]
    try:
        _download(remote, folder, report)
    except _NETWORK_ERRORS as e:
        urls = " ".join(r.url for r in remaining)
        raise SituateError(
            f"cannot download {remote.url} ({_reason(e)}); without network, download {urls} by hand "
            f"into {folder}/ and run `situate data fetch {name}` again to check them"
        ) from e


def _download(remote: Remote, folder: Path, report: Callable[[int, int | None], None]) -> Path:
    """Stream ``remote`` to a temporary file in ``folder``, check its sha256, move it into place."""
    target = folder / remote.filename
    fd, tmp_name = tempfile.mkstemp(prefix=f".{remote.filename}.", suffix=".part", dir=folder)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        blob = hashlib.sha1(f"blob {remote.size}\0".encode()) if remote.git_blob else None
        with (
            os.fdopen(fd, "wb") as out,
            urllib.request.urlopen(remote.url, timeout=TIMEOUT_S) as resp,
        ):
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else remote.size
            done = 0
            for block in iter(lambda: resp.read(_BLOCK), b""):
                out.write(block)
                digest.update(block)
                if blob is not None:
                    blob.update(block)
                done += len(block)
                report(done, total)
        wrong = remote.check(digest.hexdigest(), blob.hexdigest() if blob else "")
        if wrong:
            raise SituateError(
                f"{remote.url}: {wrong}; the download was deleted; retry, or check whether the "
                "file changed upstream"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _reason(error: BaseException) -> str:
    """A short description of a download failure."""
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)
    return str(error) or type(error).__name__
