"""Faults of the MLflow tracking store as one line: the store (its file, or the server's URL
without credentials), what is wrong and the fix, never a traceback.

MLflow wraps what went wrong: SQLite's errors in SQLAlchemy's ``OperationalError`` /
``DatabaseError`` inside an ``MlflowException``; a server that does not answer in an
``MlflowException`` whose context is ``requests``' ``ConnectionError``. :func:`tracking_error`
walks that chain (``__cause__``, ``__context__`` and SQLAlchemy's ``orig``) to the fault itself
and classifies it as :mod:`situate.stores.faults` does for the data stores (``damaged``,
``locked``, ``no_space``, ``read_only``, ``denied``, ``vanished``, ``io``, ``server``).

A :class:`TrackingStoreError` keeps its parts apart (:attr:`~TrackingStoreError.head`: the store
and what is wrong; :attr:`~TrackingStoreError.fix`), so that a fault met before a run reads
"...; fix, and run again" and one met during a sweep "...; fix, then ``situate track``"
(:mod:`situate.tracking.pending`).
"""

from __future__ import annotations

import errno
import shlex
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from situate.stores.faults import StorageError, free_bytes, human_bytes, storage_error
from situate.tracking.base import without_credentials

# the outputs each job keeps whatever becomes of the tracking store
KEPT_ON_DISK = "result.json, per_question.csv, config.yaml"
# beside a SQLite file: its journal, write-ahead log and shared memory, moved aside with it
SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")
# words of an MlflowException whose cause was lost on the way (a server's answer, a REST error)
SERVER_WORDS = ("failed with exception", "failed with timeout", "max retries exceeded")
# HTTP answers of a server that is there but cannot serve (restarting, its proxy with none behind)
SERVER_DOWN_CODES = (502, 503, 504)


class TrackingStoreError(StorageError):
    """A fault of the MLflow tracking store: ``head`` names the store and what is wrong, ``fix``
    says what to do about the store; the message is both, then ``and run again``."""

    def __init__(
        self,
        where: str,
        kind: str,
        head: str,
        fix: str,
        then: str = "and run again",
        message: str | None = None,
    ) -> None:
        self.head, self.fix = head, fix
        message = message or f"{head}; {fix}" + (f", {then}" if then else "")
        super().__init__(where, kind, message)

    def told(self, message: str) -> TrackingStoreError:
        """The same fault, told as ``message`` (a run's or sweep's end: what waits, and how to
        log it)."""
        return TrackingStoreError(self.where, self.kind, self.head, self.fix, message=message)


# what MLflow's schema migration meets in a store whose first creation was cut short (a full
# disk, an I/O error or a kill while its tables were made): the store is half built, not locked
HALF_MIGRATED = ("already exists", "duplicate column name", "no such table: alembic_version")


def chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and what it wraps: its ``__cause__`` (or ``__context__``) and SQLAlchemy's
    ``orig`` (the DB-API error), outermost first, each once."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [getattr(e, "orig", None), e.__cause__, e.__context__]


def _is_connection_error(e: BaseException) -> bool:
    """A request that reached no server (refused, reset, unknown host, timed out)."""
    if isinstance(e, (ConnectionError, TimeoutError)):  # ConnectionRefusedError and friends
        return True
    module = type(e).__module__ or ""
    name = type(e).__name__
    if module.startswith(("requests", "urllib3")):
        return name in (
            "ConnectionError", "ConnectTimeout", "ReadTimeout", "Timeout", "MaxRetryError",
            "NewConnectionError", "ProtocolError", "ProxyError",
        )  # fmt: skip
    return module.startswith("http.client") and name in ("RemoteDisconnected", "IncompleteRead")


def _is_database_gone(e: BaseException) -> bool:
    """SQLAlchemy's ``OperationalError`` / ``InterfaceError`` of a database server (not of a
    SQLite file, whose errors are told apart by :func:`classify`)."""
    return (
        (type(e).__module__ or "").startswith("sqlalchemy")
        and type(e).__name__ in ("OperationalError", "InterfaceError")
        and not isinstance(getattr(e, "orig", None), sqlite3.Error)
    )


def _detail(e: BaseException) -> str:
    """A short account of ``e``: an OS error's own words (``Connection refused``), else the first
    line of its message (SQLAlchemy's ``[SQL: ...]`` and MLflow's wrapping left out)."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if text.startswith("(") and ") " in text:  # "(sqlite3.OperationalError) database is locked"
        text = text.split(") ", 1)[1]
    return text if len(text) <= 160 else text[:157] + "..."


def classify(error: BaseException, where: Path | None = None) -> tuple[str, BaseException] | None:
    """The kind of tracking-store fault ``error`` is (see the module's docstring) and the
    exception in its chain that says so, or None when it is no fault of the store. ``where``:
    the SQLite file, whose disk tells a full disk from a failing one."""
    found = list(chain(error))
    where = where if where is not None else Path("mlflow.db")
    for e in found:
        if isinstance(e, StorageError):
            return e.kind, e
    for e in found:
        if isinstance(e, sqlite3.Error):
            fault = storage_error(e, where)
            if fault is not None:
                return fault.kind, e
    for e in found:
        if isinstance(e, OSError) and not isinstance(e, ConnectionError):
            fault = storage_error(e, where) if e.errno is not None else None
            if fault is not None:
                return fault.kind, e
    connection = next((e for e in reversed(found) if _is_connection_error(e)), None)
    if connection is None:  # a database server's (Postgres): SQLAlchemy's OperationalError
        connection = next((e for e in found if _is_database_gone(e)), None)
    if connection is not None:
        # the innermost OS error says it best ("Connection refused"), else the request's error
        inner = next((e for e in reversed(found) if isinstance(e, OSError) and e.strerror), None)
        return "server", inner or connection
    for e in found:
        text = str(e).lower()
        if type(e).__name__ in ("MlflowException", "RestException") and (
            any(w in text for w in SERVER_WORDS)
            or any(f"error code {c}" in text for c in SERVER_DOWN_CODES)
            or getattr(e, "error_code", None) == "TEMPORARILY_UNAVAILABLE"
        ):
            return "server", e
        if "database is locked" in text:
            return "locked", e
        if "database disk image is malformed" in text or "file is not a database" in text:
            return "damaged", e
        if any(w in text for w in HALF_MIGRATED):  # its tables half made (a fault mid-creation)
            return "damaged", e
    return None


def moved_aside(db: Path, now: float | None = None) -> str:
    """The command that moves a damaged SQLite file (and the journal or WAL beside it) aside,
    to a name of its own: ``mv mlflow.db mlflow.db.damaged-20250301-101500``."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    files = [db, *(Path(f"{db}{s}") for s in SQLITE_SIDE_FILES if Path(f"{db}{s}").exists())]
    return " && ".join(
        f"mv {shlex.quote(str(f))} {shlex.quote(f'{f}.damaged-{stamp}')}" for f in files
    )


def local_store_error(
    db: Path, kind: str, detail: str, lock_seconds: float | None = None
) -> TrackingStoreError:
    """The one line for a fault ``kind`` of the SQLite tracking store ``db``."""
    store = f"{db}: the MLflow tracking store"
    if kind == "damaged":
        return TrackingStoreError(
            str(db),
            kind,
            f"{store} is damaged ({detail}); the runs' results are still on disk (each job's "
            f"folder has {KEPT_ON_DISK})",
            f"move it aside, never delete it: `{moved_aside(db)}` (the next run makes a new store)",
        )
    if kind == "locked":
        waited = f" past the wait of {lock_seconds:g} s" if lock_seconds else ""
        return TrackingStoreError(
            str(db),
            kind,
            f"{store} is locked by another process{waited} ({detail})",
            f"stop the process that holds it (`fuser {shlex.quote(str(db))}` names it: an mlflow "
            "ui, another run) or let it finish",
        )
    if kind == "no_space":
        free = free_bytes(db)
        note = "" if free is None else f" ({human_bytes(free)} free)"
        return TrackingStoreError(
            str(db),
            kind,
            f"{store}: no space left on the device{note}",
            "free space there or set tracking.db_path= to a larger disk",
        )
    if kind in ("read_only", "denied"):
        what = "the filesystem is read-only" if kind == "read_only" else "permission denied"
        return TrackingStoreError(
            str(db),
            kind,
            f"{store} cannot be written: {what} ({detail})",
            "make it writable (remount it read-write, or chmod / chown it), set "
            "tracking.db_path= to a writable folder, or run with tracking=none",
        )
    if kind == "vanished":
        return TrackingStoreError(
            str(db),
            kind,
            f"{store} or its folder is gone ({detail}: deleted, or its drive unmounted)",
            "mount the drive again or set tracking.db_path= to a folder that exists",
        )
    return TrackingStoreError(
        str(db),
        kind,
        f"{store}: input/output error ({detail}: a failing disk, or a network drive that dropped)",
        "check the drive (or set tracking.db_path= to another disk)",
    )


def server_error(key: str, url: str, detail: str) -> TrackingStoreError:
    """The one line for a tracking server (or database) at ``url`` (shown without credentials,
    as set by ``key``) that stopped answering."""
    return TrackingStoreError(
        url,
        "server",
        f"{key}={url}: the MLflow tracking store stopped answering ({detail})",
        f"start the server again (mlflow server) or fix {key}",
    )


def tracking_error(
    error: BaseException,
    db: Path | None,
    key: str,
    url: str,
    lock_seconds: float | None = None,
) -> TrackingStoreError | None:
    """``error`` as the one line of the tracking store's fault, or None when it is not one.

    ``db``: the SQLite store (None for a server or a database URI, named ``key=url``)."""
    found = classify(error, db)
    if found is None:
        return None
    kind, cause = found
    if isinstance(cause, TrackingStoreError):
        return cause
    detail = without_credentials(_detail(cause))
    if db is None:
        if url.startswith(("http://", "https://")):
            return server_error(key, url, detail)
        # a database (Postgres): gone, or its own fault (its disk full...), in its own words
        return TrackingStoreError(
            url,
            "server",
            f"{key}={url}: the MLflow tracking database failed ({detail})",
            f"bring the database back (or fix {key})",
        )
    if kind == "server":  # a local file reached over a network drive that dropped
        kind = "io"
    if kind == "denied" and isinstance(cause, OSError) and cause.errno in (errno.EROFS,):
        kind = "read_only"
    return local_store_error(db, kind, detail, lock_seconds)
