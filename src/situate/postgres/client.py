"""The Postgres client: which server, connections, errors as one line, content-keyed tables.

Tables are content addressed (:func:`table_name`): built in one transaction (``CREATE TABLE``,
``COPY``, ``CREATE INDEX``, a row in ``<schema>.situate_tables``, ``COMMIT``) under an advisory
lock per key, so a kill leaves a table complete or absent, and two builders of the same key build
it once. situate drops nothing: a table of that name that ``situate_tables`` does not list is
refused, never replaced. Without ``$SITUATE_PG_DSN`` the server is the embedded one
(:mod:`situate.postgres.embedded`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.postgres import DSN_ENV, psycopg_module
from situate.postgres.embedded import embedded_server
from situate.stores.faults import StorageError

log = logging.getLogger(__name__)

LISTEN = ("socket", "tcp")
REGISTRY = "situate_tables"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def table_name(kind: str, identity: dict, data_hash: str) -> tuple[str, str]:
    """``(name, key)``: the key is sha256 of what the table holds (engine identity, data), as
    index folders are keyed; the name is ``<kind>_`` and the key's first 40 hex digits."""
    from situate.stores.keys import content_hash

    key = content_hash(kind, identity, data_hash)
    return f"{kind}_{key[:40]}", key


class Postgres:
    """Where the engines' tables live: a user's server by DSN, else an embedded one.

    Parameters
    ----------
    dsn_env : str
        The environment variable holding a user's DSN (``postgresql://user:pw@host/db``); when
        it is set, that server is used and nothing is started.
    data_dir : str
        The embedded server's folder (its data, log, socket, password).
    listen : str
        Embedded server only: ``socket`` (a Unix socket, trust for the server's own user) or
        ``tcp`` (a free port on 127.0.0.1 with a generated password).
    schema : str
        The schema situate's tables go in (created when missing).
    """

    def __init__(
        self,
        dsn_env: str = DSN_ENV,
        data_dir: str = "outputs/postgres",
        listen: str = "socket",
        schema: str = "situate",
    ):
        if listen not in LISTEN:
            raise SituateError(f"listen={listen!r} is not one of {', '.join(LISTEN)}")
        if not _IDENTIFIER.match(schema):
            raise SituateError(
                f"schema={schema!r} is not a plain Postgres name (lowercase letters, digits, _)"
            )
        self.dsn_env, self.data_dir, self.listen, self.schema = dsn_env, data_dir, listen, schema
        self._secret: str | None = None  # the embedded server's password, hidden from messages

    def where(self) -> str:
        """Words for messages: the variable of a user's server, or the embedded server's folder."""
        if os.environ.get(self.dsn_env):
            return f"the server in ${self.dsn_env}"
        return f"the embedded server in {self.data_dir}"

    def connect(self):
        """An autocommit connection (psycopg 3) to this server, errors as one line."""
        psycopg = psycopg_module()
        try:
            return self.open()
        except psycopg.Error as e:
            raise self.error("connect", e) from None

    def open(self):
        """An autocommit connection to this server; a failure to connect is psycopg's own error
        (for the caller to judge: :func:`may_come_back`), a malformed DSN or an embedded server
        that cannot start a one-line error."""
        psycopg = psycopg_module()
        dsn = os.environ.get(self.dsn_env)
        if dsn:
            try:
                from psycopg.conninfo import conninfo_to_dict

                conninfo_to_dict(dsn)
            except psycopg.Error:  # its message quotes the DSN, password and all: not shown
                raise SituateError(
                    f"${self.dsn_env} is not a valid Postgres connection string; set it to "
                    "postgresql://user:password@host:port/database (or key=value pairs)"
                ) from None
            params: dict[str, Any] = {"conninfo": dsn}
        else:
            params = embedded_server(Path(self.data_dir), self.listen).conninfo()
            self._secret = params.get("password")
        params.setdefault("connect_timeout", 10)
        return psycopg.connect(**params, autocommit=True)

    # --- tables ---------------------------------------------------------------------------------

    def qualified(self, name: str):
        from psycopg import sql

        return sql.Identifier(self.schema, name)

    def registered(self, conn, name: str) -> bool:
        """True when ``name`` is a table situate finished building (listed and present)."""
        from psycopg import sql

        registry = f"{self.schema}.{REGISTRY}"
        (exists,) = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [registry]).fetchone()
        if not exists:
            return False
        row = conn.execute(
            sql.SQL("SELECT to_regclass(%s) IS NOT NULL FROM {} WHERE name = %s").format(
                self.qualified(REGISTRY)
            ),
            [f"{self.schema}.{name}", name],
        ).fetchone()
        return bool(row and row[0])

    def ensure_table(
        self,
        conn,
        name: str,
        key: str,
        identity: dict,
        create: Callable[[Any], int],
        extension: str | None = None,
    ) -> None:
        """Make table ``name`` unless it is built already (by this process or another).

        ``create(conn)`` runs inside the transaction (``CREATE TABLE``, ``COPY``, ``CREATE
        INDEX``) and returns the number of rows; the registry row commits with them.
        """
        from psycopg import sql

        psycopg = psycopg_module()
        try:
            if self.registered(conn, name):
                log.info("postgres: table %s.%s is built already", self.schema, name)
                return
            self._prepare(conn, extension)
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [int(key[:15], 16)])
                if self.registered(conn, name):  # another process built it while we waited
                    log.info("postgres: table %s.%s was built meanwhile", self.schema, name)
                    return
                conn.execute(
                    sql.SQL("DELETE FROM {} WHERE name = %s").format(self.qualified(REGISTRY)),
                    [name],
                )  # a listed table someone dropped by hand: build it again
                (present,) = conn.execute(
                    "SELECT to_regclass(%s) IS NOT NULL", [f"{self.schema}.{name}"]
                ).fetchone()
                if present:
                    raise SituateError(
                        f"{self.where()}: table {self.schema}.{name} exists but situate did not "
                        f"create it (not in {self.schema}.{REGISTRY}); situate never drops it: "
                        "drop or rename it yourself, or set another schema"
                    )
                rows = create(conn)
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} (name, key, identity, n_rows) VALUES (%s, %s, %s, %s)"
                    ).format(self.qualified(REGISTRY)),
                    [name, key, json.dumps(identity, sort_keys=True), rows],
                )
        except psycopg.Error as e:
            raise self.error(f"build table {self.schema}.{name}", e) from None
        log.info("postgres: built table %s.%s (%d rows)", self.schema, name, rows)

    def _prepare(self, conn, extension: str | None) -> None:
        """The schema, the registry and ``extension``, once, under a lock of their own."""
        from psycopg import sql

        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id(f"situate:{self.schema}")])
            if extension:
                try:
                    with conn.transaction():
                        conn.execute(
                            sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(
                                sql.Identifier(extension)
                            )
                        )
                except psycopg_module().Error as e:
                    raise self.error(f"create extension {extension}", e) from None
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY, key text NOT NULL, "
                    "identity jsonb NOT NULL, n_rows bigint NOT NULL, "
                    "created_at timestamptz NOT NULL DEFAULT now())"
                ).format(self.qualified(REGISTRY))
            )

    # --- errors ---------------------------------------------------------------------------------

    def error(self, action: str, e: Exception, secret: str | None = None) -> SituateError:
        """One line for a psycopg error: what failed, where, and the fix (never the DSN); a
        :class:`~situate.stores.faults.StorageError` (``kind="server"``), which stops a sweep."""
        psycopg = psycopg_module()
        errors = psycopg.errors
        if isinstance(e, SituateError):
            return e
        detail = self.detail(e, secret)
        where = self.where()
        variable = f"${self.dsn_env}" if os.environ.get(self.dsn_env) else "the data_dir"
        if isinstance(e, errors.ReadOnlySqlTransaction):
            fix = f"it is read-only (a replica?): point ${self.dsn_env} at the primary"
        elif action.startswith("create extension") and isinstance(
            e, errors.FeatureNotSupported | errors.UndefinedFile | errors.UndefinedObject
        ):
            fix = "the extension is not installed on that server: install it there (pgvector)"
        elif action.startswith("create extension") and isinstance(e, errors.InsufficientPrivilege):
            fix = f"ask an admin of that server to run CREATE EXTENSION {action.split()[-1]} there"
        elif isinstance(e, errors.InsufficientPrivilege):
            fix = "the role lacks the privilege: grant it, or use a role that has it"
        elif "password authentication failed" in detail or "no password supplied" in detail:
            fix = f"fix the user or password in {variable}"
        elif action == "connect" and isinstance(e, psycopg.OperationalError):
            fix = (
                f"check the server is running and reachable, and the host, port and database in "
                f"{variable}"
            )
        elif isinstance(e, psycopg.OperationalError | errors.AdminShutdown | errors.CrashShutdown):
            fix = "the server went away mid-way; nothing half-built is kept: run again"
        else:
            fix = "see the server's log"
        preposition = "to" if action == "connect" else "on"
        return StorageError(
            where, "server", f"Postgres: cannot {action} {preposition} {where} ({detail}); {fix}"
        )

    def detail(self, e: BaseException, secret: str | None = None) -> str:
        """The first line of ``e``, with the DSN and any password in it hidden."""
        detail = _first_line(e)
        dsn = os.environ.get(self.dsn_env, "")
        for hidden in filter(None, (dsn, secret, self._secret, password_of(dsn))):
            detail = detail.replace(hidden, "***")
        return detail


# Words of a connection attempt the server refused because it is starting, stopping or
# recovering (SQLSTATE 57P03 and kin): it is coming back, whoever started it.
_COMING_BACK = (
    "starting up",
    "shutting down",
    "in recovery mode",
    "not yet accepting connections",
    "not accepting connections",
)
# Words of a refusal that waiting does not mend: the role, its password, the database.
_FOR_GOOD = (
    "password authentication failed",
    "no password supplied",
    "does not exist",
    "no pg_hba.conf entry",
    "permission denied",
)


def connection_lost(e: BaseException, conn=None) -> bool:
    """``e`` says the connection is gone (the server restarted or crashed, the backend was
    terminated, the network dropped), not that the statement was wrong: running it again on a
    new connection may succeed."""
    psycopg = psycopg_module()
    errors = psycopg.errors
    if not isinstance(e, psycopg.OperationalError):
        return False
    if isinstance(e, errors.AdminShutdown | errors.CrashShutdown | errors.CannotConnectNow):
        return True
    return conn is not None and (conn.closed or conn.broken)


def may_come_back(e: BaseException, reached: bool) -> bool:
    """A failed connection attempt worth repeating: the server is starting or stopping, or
    (``reached``: this process has talked to it before, so its address is right) it does not
    answer at all, as while it restarts. A refused role, password or database is final."""
    psycopg = psycopg_module()
    if not isinstance(e, psycopg.OperationalError):
        return False
    text = str(e).lower()
    if any(words in text for words in _FOR_GOOD):
        return False
    return reached or any(words in text for words in _COMING_BACK)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def password_of(dsn: str) -> str | None:
    """The password a DSN (URL or key=value pairs) carries, to hide it from messages."""
    if not dsn:
        return None
    try:
        from psycopg.conninfo import conninfo_to_dict

        return conninfo_to_dict(dsn).get("password") or None
    except Exception:  # a malformed DSN: connect will say so
        return None


def lock_id(text: str) -> int:
    """A Postgres advisory lock id (60 bits of sha256) naming ``text``."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


MANIFEST = "table.json"


def write_manifest(folder: Path, name: str, key: str, n_rows: int, **extra: Any) -> None:
    """Name the table an index folder stands for (its data files sit beside, for a rebuild)."""
    manifest = {"table": name, "key": key, "n_rows": n_rows, **extra}
    (Path(folder) / MANIFEST).write_text(json.dumps(manifest, sort_keys=True))


def read_manifest(folder: Path, engine: str) -> dict[str, Any]:
    path = Path(folder) / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        raise SituateError(
            f"{engine}: no readable {MANIFEST} in {folder}; delete the folder (or run "
            "`make clean-cache`) so it is built again"
        ) from None
