"""``make mlflow-server-pg``: a shared MLflow tracking server whose runs live in Postgres.

The database: the one ``$SITUATE_PG_DSN`` names (a team's server; never printed with its
password, and handed to MLflow through ``MLFLOW_BACKEND_STORE_URI``, not the command line), else
database ``mlflow`` of the embedded server under ``--data-dir`` (created on first use), reached
on its Unix socket and held for as long as the tracking server runs. Artifacts are proxied by the
server into ``--artifacts-destination``. Clients then set
``MLFLOW_TRACKING_URI=http://<host>:<port>``.

    python -m situate.tracking.mlflow_server --data-dir outputs/postgres --port 5000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from situate.errors import SituateError
from situate.postgres import DSN_ENV
from situate.postgres.client import Postgres
from situate.tracking.base import without_credentials
from situate.tracking.mlflow_tracker import POSTGRES_DRIVER, sqlalchemy_uri

DATABASE = "mlflow"


def backend_store_uri(pg: Postgres, database: str = DATABASE) -> str:
    """The SQLAlchemy URI of the MLflow database (``postgresql+psycopg://``), creating the
    database on the embedded server when it is missing (a user's database is used as it is)."""
    from psycopg import sql

    dsn = os.environ.get(pg.dsn_env)
    if dsn:
        if not dsn.startswith(("postgresql://", "postgres://")):
            raise SituateError(
                f"${pg.dsn_env} is not a postgresql:// URL; MLflow needs that form "
                "(postgresql://user:password@host:port/database)"
            )
        return sqlalchemy_uri(dsn)
    with pg.connect() as conn:  # starts the embedded server, held until this process exits
        info = conn.info
        (exists,) = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", [database]
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        host, port, user, password = info.host, info.port, info.user, info.password
    if host.startswith("/"):  # the Unix socket: trusted, no password
        return f"{POSTGRES_DRIVER}://{quote(user)}@/{database}?host={quote(host)}&port={port}"
    return f"{POSTGRES_DRIVER}://{quote(user)}:{quote(password or '', safe='')}@{host}:{port}/{database}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", default="outputs/postgres", help="the embedded server's folder"
    )
    parser.add_argument(
        "--database", default=DATABASE, help="the embedded server's MLflow database"
    )
    parser.add_argument("--artifacts-destination", default="outputs/mlartifacts")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="5000")
    args = parser.parse_args(argv)
    try:
        uri = backend_store_uri(Postgres(DSN_ENV, args.data_dir), args.database)
    except SituateError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(
        f"MLflow on {without_credentials(uri)}: MLFLOW_TRACKING_URI=http://{args.host}:{args.port}",
        flush=True,
    )
    destination = Path(args.artifacts_destination).resolve()
    command = [
        sys.executable, "-m", "mlflow", "server", "--host", args.host, "--port", args.port,
        "--artifacts-destination", str(destination),
    ]  # fmt: skip
    try:
        return subprocess.call(command, env={**os.environ, "MLFLOW_BACKEND_STORE_URI": uri})
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
