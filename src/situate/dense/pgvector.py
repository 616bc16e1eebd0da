"""``dense: pgvector``: nearest neighbours in Postgres with pgvector (exact, HNSW or IVFFlat).

The vectors go to a content-keyed table (``situate.postgres.client``) in one transaction: ``CREATE
TABLE``, a binary ``COPY``, ``CREATE INDEX``. The index folder holds the table's name and the
vectors, so a server that lost the table (another server, a deleted data folder) gets it again.

HNSW: Malkov and Yashunin, IEEE TPAMI 2020. IVFFlat: Jégou, Douze and Schmid, "Product
quantization for nearest neighbor search", IEEE TPAMI 2011 (the inverted file, without PQ).
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

import numpy as np

from situate.errors import SituateError
from situate.postgres import DSN_ENV
from situate.postgres.client import Postgres, read_manifest, table_name, write_manifest
from situate.rankings import Rankings, sort_desc

INDEXES = ("exact", "hnsw", "ivfflat")
VECTOR_TYPES = ("vector", "halfvec")
METRICS = {"cosine": ("<=>", "cosine"), "inner_product": ("<#>", "ip")}  # operator, opclass part
VECTORS_FILE = "vectors.npy"
log = logging.getLogger(__name__)
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
_COPY_TRAILER = b"\xff\xff"


class PgvectorIndex:
    """Vectors in a Postgres table, searched by pgvector.

    Over 250 lines: the table's creation, its bulk copy and the search share one connection
    and its reconnect rules.

    Parameters
    ----------
    index : str
        ``exact`` (no index: every row compared, the reference), ``hnsw`` or ``ivfflat``.
    vector_type : str
        ``vector`` (float32) or ``halfvec`` (float16: half the size, scores to about 3 digits).
    metric : str
        ``cosine`` (score 1 - cosine distance) or ``inner_product`` (score = inner product).
        Equal on the L2-normalised vectors every embedder returns.
    m, ef_construction : int
        HNSW graph: neighbours per node, and candidate list size while building.
    ef_search : int
        HNSW candidate list size per query. pgvector returns at most ef_search rows, so keep it
        at or above the fusion pool (150). A query-time setting: not part of the identity.
    lists : int
        IVFFlat: k-means cells (pgvector suggests rows / 1000 up to 1M rows).
    probes : int
        IVFFlat: cells searched per query (query time, not part of the identity).
    maintenance_work_mem : str
        Postgres memory for the index build (an HNSW graph that fits builds much faster).
    extension : str
        The extension to create (``vector``).
    dsn_env, data_dir, listen, schema
        Which server, see :class:`situate.postgres.client.Postgres`.
    """

    name = "pgvector"

    def __init__(
        self,
        index: str = "hnsw",
        vector_type: str = "vector",
        metric: str = "cosine",
        m: int = 16,
        ef_construction: int = 64,
        ef_search: int = 200,
        lists: int = 100,
        probes: int = 10,
        maintenance_work_mem: str = "512MB",
        extension: str = "vector",
        dsn_env: str = DSN_ENV,
        data_dir: str = "outputs/postgres",
        listen: str = "socket",
        schema: str = "situate",
    ):
        for key, value, valid in (
            ("index", index, INDEXES),
            ("vector_type", vector_type, VECTOR_TYPES),
            ("metric", metric, tuple(METRICS)),
        ):
            if value not in valid:
                raise SituateError(f"dense.{key}={value!r} is not one of {', '.join(valid)}")
        for key, value in (
            ("m", m),
            ("ef_construction", ef_construction),
            ("ef_search", ef_search),
            ("lists", lists),
            ("probes", probes),
        ):
            if int(value) < 1:
                raise SituateError(f"dense.{key}={value} must be a positive integer")
        if not re.fullmatch(r"\d+\s*(kB|MB|GB|TB)?", str(maintenance_work_mem)):
            raise SituateError(
                f"dense.maintenance_work_mem={maintenance_work_mem!r} is not a Postgres memory "
                "size; write e.g. 512MB or 2GB"
            )
        self.index, self.vector_type, self.metric = index, vector_type, metric
        self.m, self.ef_construction = int(m), int(ef_construction)
        self.ef_search, self.lists, self.probes = int(ef_search), int(lists), int(probes)
        self.maintenance_work_mem, self.extension = maintenance_work_mem, extension
        self.server = Postgres(dsn_env, data_dir, listen, schema)
        self._conn = None
        self.table: str | None = None  # the table's name in the schema, once built or loaded
        self._vectors: np.ndarray | None = None
        self._n, self._dim = 0, 0
        self._warned = False

    def identity(self) -> dict:
        """What the table holds: index type and build parameters (not ef_search or probes)."""
        ident = {
            "index": f"pgvector.{self.index}",
            "vector_type": self.vector_type,
            "metric": self.metric,
        }
        if self.index == "hnsw":
            ident.update(m=self.m, ef_construction=self.ef_construction)
        elif self.index == "ivfflat":
            ident.update(lists=self.lists)
        return ident

    # --- build / save / load --------------------------------------------------------------------

    def build(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or not len(vectors):
            raise SituateError(
                f"dense=pgvector: nothing to index (vectors of shape {vectors.shape})"
            )
        digest = hashlib.sha256(str(vectors.shape).encode() + vectors.tobytes()).hexdigest()
        name, key = table_name("dense", self.identity(), digest)
        self._open(name, key, len(vectors), vectors.shape[1], lambda: vectors)
        self._vectors = vectors

    def save(self, folder: Path) -> None:
        if self.table is None or self._vectors is None:
            raise SituateError("dense=pgvector: nothing to save; build an index first")
        np.save(Path(folder) / VECTORS_FILE, self._vectors)
        write_manifest(folder, self.table, self._key, self._n, dim=self._dim)

    def load(self, folder: Path) -> None:
        manifest = read_manifest(folder, "dense=pgvector")
        vectors_file = Path(folder) / VECTORS_FILE
        self._open(
            manifest["table"], manifest["key"], int(manifest["n_rows"]), int(manifest["dim"]),
            lambda: np.load(vectors_file),
        )  # fmt: skip

    def _open(self, name: str, key: str, n: int, dim: int, vectors) -> None:
        """Connect, make sure table ``name`` is built (``vectors()`` gives its rows), set search."""
        conn = self._connection()
        self.server.ensure_table(
            conn, name, key, self.identity(), lambda c: self._create(c, name, vectors()),
            extension=self.extension,
        )  # fmt: skip
        self.table, self._key, self._n, self._dim = name, key, n, dim
        try:
            if self.index == "hnsw":
                conn.execute(f"SET hnsw.ef_search = {self.ef_search}")
            elif self.index == "ivfflat":
                conn.execute(f"SET ivfflat.probes = {self.probes}")
            if self.index != "exact":  # the index, even where a scan of a small table is cheaper
                conn.execute("SET enable_seqscan = off")
        except Exception as e:
            raise self.server.error("set the search parameters", e) from None

    def _connection(self):
        if self._conn is None or self._conn.closed:
            self._conn = self.server.connect()
        return self._conn

    def _create(self, conn, name: str, vectors: np.ndarray) -> int:
        """``CREATE TABLE``, binary ``COPY``, ``CREATE INDEX`` (inside the caller's transaction)."""
        from psycopg import sql

        table = self.server.qualified(name)
        n, dim = vectors.shape
        conn.execute(f"SET LOCAL maintenance_work_mem = '{self.maintenance_work_mem}'")
        conn.execute(
            sql.SQL("CREATE TABLE {} (id integer NOT NULL, embedding {}({}) NOT NULL)").format(
                table, sql.SQL(self.vector_type), sql.Literal(dim)
            )
        )
        with conn.cursor().copy(
            sql.SQL("COPY {} (id, embedding) FROM STDIN (FORMAT BINARY)").format(table)
        ) as copy:
            copy.write(_COPY_HEADER)
            for start in range(0, n, 20_000):
                copy.write(self._copy_rows(vectors[start : start + 20_000], start))
            copy.write(_COPY_TRAILER)
        opclass = sql.SQL(f"{self.vector_type}_{METRICS[self.metric][1]}_ops")
        if self.index == "hnsw":
            conn.execute(
                sql.SQL(
                    "CREATE INDEX ON {} USING hnsw (embedding {}) WITH (m = {}, ef_construction = {})"
                ).format(table, opclass, sql.Literal(self.m), sql.Literal(self.ef_construction))
            )
        elif self.index == "ivfflat":
            conn.execute(
                sql.SQL("CREATE INDEX ON {} USING ivfflat (embedding {}) WITH (lists = {})").format(
                    table, opclass, sql.Literal(self.lists)
                )
            )
        conn.execute(sql.SQL("ANALYZE {}").format(table))
        return n

    def _copy_rows(self, vectors: np.ndarray, first_id: int) -> bytes:
        """Rows of the binary COPY format: 2 fields, an int4 id and a (half)vec (pgvector's recv)."""
        n, dim = vectors.shape
        value = ">f2" if self.vector_type == "halfvec" else ">f4"
        width = 4 + dim * np.dtype(value).itemsize  # int16 dim, int16 unused, then the values
        rows = np.zeros(
            n,
            dtype=[("fields", ">i2"), ("id_len", ">i4"), ("id", ">i4"), ("len", ">i4"),
                   ("dim", ">i2"), ("unused", ">i2"), ("values", value, (dim,))],
        )  # fmt: skip
        rows["fields"], rows["id_len"], rows["len"], rows["dim"] = 2, 4, width, dim
        rows["id"] = np.arange(first_id, first_id + n)
        rows["values"] = vectors
        return rows.tobytes()

    # --- search ---------------------------------------------------------------------------------

    def search(self, queries: np.ndarray, depth: int) -> Rankings:
        if self.table is None:
            raise SituateError("dense=pgvector: search before build or load; build an index first")
        from psycopg import sql

        queries = np.asarray(queries, dtype=np.float32)
        k = max(0, min(int(depth), self._n))
        if k == 0:
            return Rankings.from_rows([(np.zeros(0, np.int64), np.zeros(0))] * len(queries), k)
        if self.index == "hnsw" and k > self.ef_search and not self._warned:
            log.warning(
                "dense=pgvector: ef_search=%d is below the depth asked (%d); an HNSW scan returns "
                "at most ef_search rows, so lists come back short: raise dense.ef_search",
                self.ef_search, k,
            )  # fmt: skip
            self._warned = True
        operator = METRICS[self.metric][0]
        tie_break = sql.SQL(", id") if self.index == "exact" else sql.SQL("")
        query = sql.SQL(
            "SELECT id, embedding {op} %s::{type} AS distance FROM {table} "
            "ORDER BY distance{tie} LIMIT %s"
        ).format(
            op=sql.SQL(operator), type=sql.SQL(self.vector_type),
            table=self.server.qualified(self.table), tie=tie_break,
        )  # fmt: skip
        conn, rows = self._connection(), []
        try:
            for q in queries:
                text = "[" + ",".join(map(repr, q.tolist())) + "]"
                found = conn.execute(query, [text, k]).fetchall()
                ids = np.array([r[0] for r in found], dtype=np.int64)
                distances = np.array([r[1] for r in found], dtype=np.float64)
                scores = 1.0 - distances if self.metric == "cosine" else -distances
                rows.append(sort_desc(ids, scores))
        except Exception as e:
            raise self.server.error(f"search table {self.table}", e) from None
        return Rankings.from_rows(rows, k)

    def sizes(self) -> dict[str, int]:
        """Bytes on disk of the table (with its index) and of its index alone."""
        from psycopg import sql

        table = sql.Literal(f"{self.server.schema}.{self.table}")
        total, indexes = (
            self._connection()
            .execute(
                sql.SQL("SELECT pg_total_relation_size({t}), pg_indexes_size({t})").format(t=table)
            )
            .fetchone()
        )
        return {"table_bytes": int(total), "index_bytes": int(indexes)}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
