"""The checks of an MLflow store before any work (``tracking: mlflow``): a server probed, a
Postgres database connected to, the local SQLite file read and locked once; a fault is its
one line within seconds, not MLflow's minutes of retries and stack traces."""

from __future__ import annotations

import contextlib
import http.client
import os
import sqlite3
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

from situate.stores.faults import sqlite_header_fault
from situate.tracking.base import without_credentials
from situate.tracking.faults import TrackingStoreError, local_store_error

POSTGRES_DRIVER = "postgresql+psycopg"  # SQLAlchemy's name for psycopg 3, the driver situate ships


class StoreChecks:
    """What :class:`situate.tracking.mlflow_tracker.MlflowTracker` checks of its store (it sets
    ``uri``, ``given``, ``db_path``, ``probe_seconds``, ``lock_seconds`` and ``fault``)."""

    def check(self) -> None:
        """Fail in one line, within seconds, when the store cannot be used (before any work).

        A server is probed (``GET <uri>/health``, within ``probe_seconds``: 2xx, or 401/403,
        since credentials are MLflow's to send, passes; so does a TLS error, certificates being
        MLflow's to check; ``probe_seconds=0`` skips it); a Postgres database is connected to;
        the local SQLite file is read and locked for writing once (within ``lock_seconds``),
        so a damaged file or another process's lock says so before the run starts, not in
        MLflow's retries and stack traces. Without the probe a dead server costs MLflow's own
        retries (minutes) and a long stack trace.
        """
        if self.db_path is not None:
            return self._check_sqlite()
        parts = urlsplit(self.uri)
        if parts.scheme == POSTGRES_DRIVER and self.probe_seconds:
            return self._check_postgres()
        if parts.scheme not in ("http", "https") or not self.probe_seconds:
            return
        host = parts.netloc.rpartition("@")[2]  # credentials are not needed to see it answer
        url = urlunsplit(parts._replace(netloc=host, path=parts.path.rstrip("/") + "/health"))
        try:
            urllib.request.urlopen(url, timeout=self.probe_seconds).close()
            return
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                return
            reason = (
                f"HTTP {e.code} at /health: another server, or a proxy with no server behind it"
            )
        except (OSError, ValueError, http.client.HTTPException) as e:  # refused, unknown, no HTTP
            if isinstance(e, ssl.SSLError) or isinstance(getattr(e, "reason", None), ssl.SSLError):
                return
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                reason = f"no answer within {self.probe_seconds:g} s"
        key = self._key()
        raise TrackingStoreError(
            without_credentials(self.uri),
            "server",
            f"{key}={without_credentials(self.uri)}: no MLflow tracking server answers ({reason})",
            f"start it (mlflow server), fix {key}, or run with tracking=none "
            "(tracking.probe_seconds=0 skips this check)",
            then="",
        )

    def _check_sqlite(self) -> None:
        """Read the SQLite store's header and schema and take its write lock once (released at
        once): a damaged file, or a lock held past ``lock_seconds``, is its one line."""
        db = self.db_path
        damage = sqlite_header_fault(db)
        if damage is not None:
            raise local_store_error(db, "damaged", damage)
        if not db.exists():
            return  # MLflow creates it (its folder is checked with the run's folders)
        try:
            con = sqlite3.connect(db, timeout=self.lock_seconds, isolation_level=None)
            try:
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
                con.execute("BEGIN IMMEDIATE")  # another process's write lock: wait, then fail
                con.execute("ROLLBACK")
            finally:
                con.close()
        except sqlite3.Error as e:
            error = self.fault(e)
            if error is None:
                raise
            raise error from e

    def _key(self) -> str:
        """The setting the URI came from, for messages."""
        if self.given and self.given == os.environ.get("MLFLOW_TRACKING_URI"):
            return "MLFLOW_TRACKING_URI"
        return "tracking.tracking_uri"

    def _check_postgres(self) -> None:
        """Connect to a Postgres tracking database within ``probe_seconds``, errors as one line."""
        import psycopg

        from situate.postgres.client import password_of

        conninfo = "postgresql://" + self.uri.split("://", 1)[1]
        try:
            psycopg.connect(conninfo, connect_timeout=max(1, round(self.probe_seconds))).close()
        except psycopg.Error as e:
            detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
            password = password_of(conninfo)
            if password:
                detail = detail.replace(password, "***")
            raise TrackingStoreError(
                without_credentials(self.uri),
                "server",
                f"{self._key()}={without_credentials(self.uri)}: cannot connect to the MLflow "
                f"database ({detail})",
                "check the host, port, database, user and password there, or run with "
                "tracking=none",
                then="",
            ) from None

    @contextlib.contextmanager
    def _postgres_lock(self) -> Iterator[None]:
        """Hold an advisory lock of the MLflow database (released with the connection)."""
        import psycopg

        from situate.postgres.client import lock_id

        conninfo = "postgresql://" + self.uri.split("://", 1)[1]
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", [lock_id("situate:mlflow-schema")])
            yield
