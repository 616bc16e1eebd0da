"""Whole files and folders that exist only once fully written.

- ``DirectoryCache``: whole artefacts (an index folder) built in a temporary sibling folder
  (``.<key>-<host>-<pid>-...``), flushed to disk and renamed into place only when complete, so
  a folder under its final name is always whole. A temporary folder left by a killed process is
  never read (its name is not a key) and is deleted by the next build of the same key.
- :func:`atomic_file`, :func:`atomic_write_bytes` / :func:`atomic_write_text`: single files
  (``result.json``, an assembled model) written to a temporary sibling, flushed, then renamed
  over the target: readers see the old file or the new one, never a prefix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

from situate.stores.faults import guarded, storage_error

# in each folder of a DirectoryCache: every file's size and sha256, written before the folder is
# renamed into place, read by `situate cache check`
MANIFEST = ".manifest.json"


def fsync_dir(folder: Path) -> None:
    """Make a rename or creation in ``folder`` durable (no-op where directories can't be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """fsync every file under ``folder``, then the folders themselves."""
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                os.fsync(f.fileno())
        fsync_dir(Path(dirpath))


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to fill; only if the block succeeds is it flushed to
    disk and renamed over ``path``, so readers see the old file or the new one, never a part (a
    block that fails, or is interrupted, leaves no temporary file behind)."""
    path = Path(path)
    with guarded(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with guarded(path):
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, path)
            fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old content or the new, never a part;
    a fault of the disk is raised as its one-line :class:`~situate.stores.faults.StorageError`."""
    with atomic_file(path) as tmp, guarded(path):
        tmp.write_bytes(data)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


class DirectoryCache:
    """Folders under ``root/<kind>/<key>`` that exist only once fully written."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def has(self, kind: str, key: str) -> bool:
        return self.path(kind, key).is_dir()

    @staticmethod
    def _prefix(key: str) -> str:
        return f".{key[:12]}-{_HOST}-"

    def stale_temporaries(self, kind: str, key: str) -> list[Path]:
        """Temporary folders of ``key`` left by processes of this host that are gone (killed)."""
        parent = self.path(kind, key).parent
        if not parent.is_dir():
            return []
        stale = []
        for tmp in parent.glob(f"{self._prefix(key)}*"):
            pid = tmp.name[len(self._prefix(key)) :].split("-", 1)[0]
            if pid.isdigit() and not _pid_alive(int(pid)):
                stale.append(tmp)
        return stale

    @contextlib.contextmanager
    def writing(self, kind: str, key: str, replace: bool = False) -> Iterator[Path]:
        """Yield a temporary folder to fill; it becomes ``path(kind, key)`` only if the block succeeds.

        The folder's files are flushed to disk before the rename. With ``replace``, an existing
        folder of the same key is swapped out (renamed aside, then deleted) rather than deleted
        in place, so a kill never leaves a half-deleted folder under the final name. Without it,
        a folder another process finished first is kept.
        """
        final = self.path(kind, key)
        with guarded(final.parent):
            final.parent.mkdir(parents=True, exist_ok=True)
            for stale in self.stale_temporaries(kind, key):  # left by a killed build of this key
                shutil.rmtree(stale, ignore_errors=True)
            prefix = f"{self._prefix(key)}{os.getpid()}-"
            tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
        old = None
        try:
            try:
                yield tmp
            except Exception as e:  # the build's own writes (numpy, faiss, json) met the disk
                error = storage_error(e, final)
                if error is None or error is e:
                    raise
                raise error from e
            with guarded(final):
                write_manifest(tmp)
                fsync_tree(tmp)
                if replace and final.is_dir():
                    old = Path(tempfile.mkdtemp(prefix=f"{prefix}old-", dir=final.parent))
                    os.rename(final, old / key)
                try:
                    os.rename(tmp, final)
                except OSError:
                    if not final.is_dir():  # another process finished the same build first
                        raise
                fsync_dir(final.parent)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)


def write_manifest(folder: Path) -> None:
    """Record the size and sha256 of every file under ``folder`` in its :data:`MANIFEST`."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST):
        files[path.relative_to(folder).as_posix()] = {
            "bytes": path.stat().st_size,
            "sha256": file_sha256(path),
        }
    (folder / MANIFEST).write_text(json.dumps({"files": files}, indent=1, sort_keys=True))


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def folder_problems(folder: Path, hashes: bool = True) -> list[str] | None:
    """What differs between ``folder`` and its :data:`MANIFEST` (a file missing, cut, changed),
    ``[]`` when nothing does, None when it has no manifest (built by an older situate)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())["files"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [f"its manifest cannot be read ({e})"]
    problems = []
    for name, expected in manifest.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif path.stat().st_size != expected["bytes"]:
            problems.append(f"{name} has {path.stat().st_size} bytes, not {expected['bytes']}")
        elif hashes and file_sha256(path) != expected["sha256"]:
            problems.append(f"{name} changed (its sha256 differs)")
    return problems
