"""Faults of the disk and of a store as user-facing errors: one line that names the file or
server, what is wrong and the fix, exit 2, never a traceback.

:func:`storage_error` turns what the operating system or SQLite raised into a
:class:`StorageError`; :func:`guarded` does it around a block of store or file work. Every store
of :mod:`situate.stores` (and the run's own files) goes through them, so a full disk met while
writing an embedding reads as a full disk, not as ``sqlite3.OperationalError: disk I/O error``.

The fixes name ``situate cache check`` / ``situate cache repair``: a damaged SQLite file is moved
aside (never deleted) and rebuilt from what can still be read and from its journal of paid
answers (:mod:`situate.stores.journal`).
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from situate.errors import SituateError

CHECK = "situate cache check"
REPAIR = "situate cache repair"
# below this many free bytes a "disk I/O error" of SQLite is read as a full disk: SQLite reports a
# failed write in WAL mode as SQLITE_IOERR (not SQLITE_FULL) when the disk fills during a commit
NEARLY_FULL_BYTES = 4 << 20

SQLITE_HEADER = b"SQLite format 3\x00"
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
READ_ONLY = (errno.EROFS,)
DENIED = (errno.EACCES, errno.EPERM)
VANISHED = (errno.ENOENT, errno.ENOTDIR, errno.ESTALE, errno.ENODEV, errno.ENXIO)
IO = (errno.EIO,)
KEPT = "what is already stored is kept"


class StorageError(SituateError):
    """A fault of the disk or of a store (full, read-only, vanished, damaged, locked, gone).

    Unlike a job's own bad input, it stops a whole sweep: every later job would meet it too.
    ``where`` is the file, folder or server it was met at; ``kind`` one of ``no_space``,
    ``read_only``, ``denied``, ``vanished``, ``io``, ``damaged``, ``locked``, ``server``.
    """

    def __init__(self, where: str | Path, kind: str, message: str) -> None:
        self.where, self.kind = str(where), kind
        super().__init__(message)


def free_bytes(path: str | Path) -> int | None:
    """Free bytes on the filesystem holding ``path`` (its nearest existing folder), or None."""
    path = Path(path)
    for folder in (path, *path.parents):
        try:
            return shutil.disk_usage(folder).free
        except OSError:
            continue
    return None


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def _free_note(where: str | Path) -> str:
    free = free_bytes(where)
    return "" if free is None else f" ({human_bytes(free)} free)"


def no_space(where: str | Path) -> StorageError:
    return StorageError(
        where,
        "no_space",
        f"{where}: no space left on the device{_free_note(where)}; free space there, or point "
        f"cache_dir= / output_dir= at a larger disk, and run the same command again: {KEPT}",
    )


def ensure_space(folder: str | Path, need: int, what: str) -> None:
    """Stop before a write of about ``need`` bytes under ``folder`` (``what`` names it) that the
    free space of its disk cannot hold, rather than when the disk fills halfway through it."""
    free = free_bytes(folder)
    if free is not None and need > free:
        raise StorageError(
            folder,
            "no_space",
            f"{folder}: {what} needs about {human_bytes(need)} and the disk has "
            f"{human_bytes(free)} free; free space there, or point cache_dir= / output_dir= at "
            f"a larger disk, and run again: {KEPT}",
        )


def _errno_error(code: int, where: str | Path, detail: str) -> StorageError | None:
    if code in NO_SPACE:
        return no_space(where)
    if code in READ_ONLY:
        return StorageError(
            where,
            "read_only",
            f"{where}: the filesystem is read-only; point cache_dir= / output_dir= at a "
            "writable folder (or remount it read-write) and run again",
        )
    if code in DENIED:
        return StorageError(
            where,
            "denied",
            f"{where}: permission denied ({detail}); make it writable by this user (chmod / "
            "chown) or point cache_dir= / output_dir= at a folder of yours, and run again",
        )
    if code in VANISHED:
        return StorageError(
            where,
            "vanished",
            f"{where}: the file or its folder is gone ({detail}: deleted, or its drive unmounted "
            "during the run); mount it again or point cache_dir= / output_dir= at a folder that "
            f"exists, and run again; then `{CHECK}`",
        )
    if code in IO:
        return StorageError(
            where,
            "io",
            f"{where}: input/output error ({detail}: a failing disk, or a network drive that "
            f"dropped); check the drive, then run `{CHECK} cache_dir=<your cache_dir>` (and `{REPAIR}` if "
            "it finds damage) before running again",
        )
    return None


def _sqlite_error(exc: sqlite3.Error, where: str | Path) -> StorageError | None:
    text = str(exc).lower()
    name = getattr(exc, "sqlite_errorname", "") or ""
    if (
        "malformed" in text
        or "not a database" in text
        or name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    ):
        return damaged_file(where, str(exc))
    if "database or disk is full" in text or name == "SQLITE_FULL":
        return no_space(where)
    if "locked" in text or name.startswith("SQLITE_BUSY"):
        return StorageError(
            where,
            "locked",
            f"{where}: locked by another process past the wait for it ({exc}); stop the process "
            f"that holds it (`fuser {where}` names it) or wait for it to finish, and run again",
        )
    if "readonly" in text or name.startswith("SQLITE_READONLY"):
        folder = Path(where).parent
        code = errno.EROFS if _read_only_fs(folder) else errno.EACCES
        return _errno_error(code, where, "the database cannot be written")
    if "unable to open" in text or name.startswith("SQLITE_CANTOPEN"):
        folder = Path(where).parent
        if not folder.exists():
            return _errno_error(errno.ENOENT, where, "its folder does not exist")
        if _read_only_fs(folder):
            return _errno_error(errno.EROFS, where, "SQLite cannot open it")
        return _errno_error(errno.EACCES, where, "SQLite cannot open it")
    if "disk i/o error" in text or name.startswith("SQLITE_IOERR"):
        free = free_bytes(where)
        if free is not None and free < NEARLY_FULL_BYTES:
            return no_space(where)
        if not Path(where).parent.exists():
            return _errno_error(errno.ENOENT, where, "its folder does not exist")
        return _errno_error(errno.EIO, where, f"{exc}, {name}" if name else str(exc))
    return None


def _read_only_fs(folder: Path) -> bool:
    import os

    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def storage_error(
    exc: BaseException, where: str | Path | None = None, fallback: bool = False
) -> StorageError | None:
    """The one-line error for ``exc`` met at ``where`` (the file or folder the user knows, e.g.
    the store rather than its temporary file; with ``fallback``, only when an ``OSError`` names
    no file of its own), or None when ``exc`` is not a storage fault."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, sqlite3.Error):
        return _sqlite_error(exc, where if where is not None else "a SQLite store")
    if isinstance(exc, OSError) and exc.errno is not None:
        named = where if where is not None and not (fallback and exc.filename) else exc.filename
        return _errno_error(exc.errno, named or "a file", exc.strerror or str(exc))
    if isinstance(exc, RuntimeError | OSError) and where is not None:  # C++ libraries (faiss)
        text = str(exc).lower()
        if "no space left" in text:
            return no_space(where)
        if "input/output error" in text:
            return _errno_error(errno.EIO, where, str(exc))
        if "write error" in text or "fwrite" in text:  # faiss says no more than that
            free = free_bytes(where)
            if free is not None and free < NEARLY_FULL_BYTES:
                return no_space(where)
    return None


@contextlib.contextmanager
def guarded(where: str | Path) -> Iterator[None]:
    """Raise a storage fault met in the block as its :class:`StorageError` (named ``where``)."""
    try:
        yield
    except (OSError, sqlite3.Error) as e:
        error = storage_error(e, where)
        if error is None:
            raise
        raise error from e


def sqlite_header_fault(db: str | Path) -> str | None:
    """What is wrong with the SQLite file ``db`` as its first 100 bytes and its size tell,
    without reading the rest: not a SQLite file, or cut short of the pages its header counts
    (a copy or a disk that stopped half-way). None when they look whole (or it is empty)."""
    db = Path(db)
    try:
        size = db.stat().st_size
        with open(db, "rb") as f:
            header = f.read(100)
    except FileNotFoundError:
        return None
    if size == 0:
        return None  # SQLite's empty database: MLflow creates its tables in it
    if len(header) < 100 or not header.startswith(SQLITE_HEADER):
        return "file is not a database: no SQLite header"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96] and pages > 0  # SQLite's rule for that count
    # a write-ahead log or a hot rollback journal beside it: SQLite completes or undoes the
    # last write when it opens the file, which its header does not yet tell
    beside = [Path(f"{db}{s}") for s in ("-wal", "-journal")]
    pending = any(p.exists() and p.stat().st_size for p in beside)
    if valid and not pending and size < page_size * pages:
        return f"truncated: {size} bytes of the {page_size * pages} its header counts"
    return None


def damaged_file(where: str | Path, detail: str) -> StorageError:
    """The one-line error of a damaged store file (``detail``: what is wrong with it)."""
    return StorageError(
        where,
        "damaged",
        f"{where}: the store is damaged ({detail}); run `{REPAIR} cache_dir={Path(where).parent}`: "
        "it moves the file aside (never deletes it) and rebuilds it from what can be read and "
        "from its journal of paid answers; then run again",
    )


def decoded(where: str | Path, key: str, decode, blob: bytes):
    """``decode(blob)``, the entry ``key`` of the store at ``where``; a value that does not read
    back (cut or overwritten in a damaged file) is the store's damage, not a traceback."""
    try:
        return decode(blob)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise damaged_file(where, f"entry {key[:12]} does not read back: {e}") from e
