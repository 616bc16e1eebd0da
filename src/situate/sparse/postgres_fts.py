"""``sparse: postgres_fts``: Postgres full-text search (``tsvector``, GIN, ``ts_rank``/``ts_rank_cd``).

Each chunk becomes a row whose ``tsvector`` is computed by Postgres from the chunk text (weight
A) and, with ``context_field``, its context (weight B, scored at ``context_weight``). A question
becomes the OR of its lexemes (``plainto_tsquery`` with ``&`` turned into ``|``, so any shared
word matches, as in BM25); the GIN index finds the rows that match and the rank function orders
them. ``ts_rank`` weighs how often the lexemes occur, ``ts_rank_cd`` how close together they are
(cover density: Clarke, Cormack and Tudhope, "Relevance ranking for one to three term queries",
IPM 2000). Neither has BM25's idf: a common word counts as much as a rare one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from situate.errors import SituateError
from situate.postgres import DSN_ENV
from situate.postgres.client import Postgres, read_manifest, table_name, write_manifest
from situate.rankings import Rankings
from situate.sparse.base import paired_contexts
from situate.stores.keys import texts_hash

RANKS = ("ts_rank", "ts_rank_cd")
TEXTS_FILE = "texts.json"


class PostgresFtsEngine:
    """Lexical search with Postgres's own text search.

    Parameters
    ----------
    language : str
        A text search configuration of the server (``english``, ``spanish``, ``simple``: no
        stemming or stop words, ...): how texts and questions become lexemes.
    rank : str
        ``ts_rank`` (frequency) or ``ts_rank_cd`` (cover density). Query time: not part of the
        identity, so a sweep over it reuses the table.
    normalization : int
        The rank functions' bit mask for document length (Postgres docs, "Ranking Search
        Results"): 0 none, 1 divide by 1 + log(length), 2 by length, 4 by mean harmonic distance
        between extents (ts_rank_cd only), 8 by unique words, 16 by 1 + log(unique words), 32
        rank / (rank + 1). Query time.
    context_field : bool
        True: each chunk's context is indexed in a field of its own (weight B) beside the chunk
        text (weight A); False: the context config joined them into one text.
    context_weight : float
        With ``context_field``: the weight of a context match (a chunk-text match counts 1.0).
        Query time.
    dsn_env, data_dir, listen, schema
        Which server, see :class:`situate.postgres.client.Postgres`.
    """

    name = "postgres_fts"

    def __init__(
        self,
        language: str = "english",
        rank: str = "ts_rank",
        normalization: int = 0,
        context_field: bool = False,
        context_weight: float = 1.0,
        dsn_env: str = DSN_ENV,
        data_dir: str = "outputs/postgres",
        listen: str = "socket",
        schema: str = "situate",
    ):
        if rank not in RANKS:
            raise SituateError(f"sparse.rank={rank!r} is not one of {', '.join(RANKS)}")
        if not 0 <= int(normalization) <= 63:
            raise SituateError(
                f"sparse.normalization={normalization} must be a bit mask from 0 to 63 "
                "(e.g. 1: divide by 1 + log(length), 32: rank / (rank + 1))"
            )
        if not 0 <= float(context_weight) <= 1:
            raise SituateError(
                f"sparse.context_weight={context_weight} must be between 0 and 1 "
                "(Postgres weights lie in [0, 1]; the chunk text has 1.0)"
            )
        self.language, self.rank = str(language), rank
        self.normalization, self.context_weight = int(normalization), float(context_weight)
        self.context_field = bool(context_field)
        self.separate_context = self.context_field
        self.server = Postgres(dsn_env, data_dir, listen, schema)
        self._conn = None
        self.table: str | None = None  # the table's name in the schema, once built or loaded
        self._texts: tuple[list[str], list[str] | None] | None = None
        self._n = 0

    def identity(self) -> dict:
        """What the table holds (not the rank function, normalization or weight: query time)."""
        return {
            "engine": "postgres_fts",
            "language": self.language,
            "context_field": self.context_field,
        }

    # --- build / save / load --------------------------------------------------------------------

    def build(self, texts: list[str], contexts: list[str] | None = None) -> None:
        contexts = paired_contexts("postgres_fts", texts, contexts, self.context_field)
        digest = texts_hash([texts_hash(texts), texts_hash(contexts or [])])
        name, key = table_name("sparse", self.identity(), digest)
        self._open(name, key, len(texts), lambda: (texts, contexts))
        self._texts = (list(texts), None if contexts is None else list(contexts))

    def save(self, folder: Path) -> None:
        if self.table is None or self._texts is None:
            raise SituateError("sparse=postgres_fts: nothing to save; build an index first")
        texts, contexts = self._texts
        (Path(folder) / TEXTS_FILE).write_text(
            json.dumps({"texts": texts, "contexts": contexts}, ensure_ascii=False)
        )
        write_manifest(folder, self.table, self._key, self._n)

    def load(self, folder: Path) -> None:
        manifest = read_manifest(folder, "sparse=postgres_fts")
        texts_file = Path(folder) / TEXTS_FILE

        def stored() -> tuple[list[str], list[str] | None]:
            data = json.loads(texts_file.read_text())
            return data["texts"], data["contexts"]

        self._open(manifest["table"], manifest["key"], int(manifest["n_rows"]), stored)

    def _open(self, name: str, key: str, n: int, texts) -> None:
        conn = self._connection()
        self._check_language(conn)
        self.server.ensure_table(
            conn, name, key, self.identity(), lambda c: self._create(c, name, *texts())
        )
        self.table, self._key, self._n = name, key, n

    def _connection(self):
        if self._conn is None or self._conn.closed:
            self._conn = self.server.connect()
        return self._conn

    def _check_language(self, conn) -> None:
        try:
            found = [r[0] for r in conn.execute("SELECT cfgname FROM pg_ts_config ORDER BY 1")]
        except Exception as e:
            raise self.server.error("list the text search configurations", e) from None
        if self.language not in found:
            raise SituateError(
                f"sparse.language={self.language!r}: {self.server.where()} has no such text "
                f"search configuration; valid: {', '.join(found)}"
            )

    def _create(self, conn, name: str, texts: list[str], contexts: list[str] | None) -> int:
        """``CREATE TABLE`` with a generated ``tsvector``, ``COPY``, a GIN index."""
        from psycopg import sql

        table = self.server.qualified(name)
        language = sql.Literal(self.language)
        conn.execute(
            sql.SQL(
                "CREATE TABLE {table} (id integer NOT NULL, body text NOT NULL, context text, "
                "tsv tsvector GENERATED ALWAYS AS ("
                "setweight(to_tsvector({lang}::regconfig, body), 'A') || "
                "setweight(to_tsvector({lang}::regconfig, coalesce(context, '')), 'B')) STORED)"
            ).format(table=table, lang=language)
        )
        with conn.cursor().copy(
            sql.SQL("COPY {} (id, body, context) FROM STDIN").format(table)
        ) as copy:
            for row, text in enumerate(texts):
                context = None if contexts is None else _no_nul(contexts[row])
                copy.write_row((row, _no_nul(text), context))
        conn.execute(sql.SQL("CREATE INDEX ON {} USING gin (tsv)").format(table))
        conn.execute(sql.SQL("ANALYZE {}").format(table))
        return len(texts)

    # --- search ---------------------------------------------------------------------------------

    def search(self, queries: list[str], depth: int) -> Rankings:
        """Top ``depth`` chunks per query; chunks that share no lexeme with it are left out."""
        if self.table is None:
            raise SituateError(
                "sparse=postgres_fts: search before build or load; build an index first"
            )
        from psycopg import sql

        k = max(0, min(int(depth), self._n))
        # weights in Postgres's order {D, C, B, A}: the body is A (1.0), the context B
        weights = f"{{0.1, 0.2, {self.context_weight!r}, 1.0}}"
        statement = sql.SQL(
            "WITH q AS (SELECT replace(plainto_tsquery({lang}::regconfig, %(text)s)::text, "
            "' & ', ' | ')::tsquery AS query) "
            "SELECT id, {rank}(%(weights)s::float4[], tsv, q.query, %(norm)s) AS score "
            "FROM {table}, q WHERE tsv @@ q.query ORDER BY score DESC, id LIMIT %(k)s"
        ).format(
            lang=sql.Literal(self.language), rank=sql.Identifier(self.rank),
            table=self.server.qualified(self.table),
        )  # fmt: skip
        conn, rows = self._connection(), []
        try:
            for text in queries:
                found = conn.execute(
                    statement,
                    {"text": _no_nul(text), "weights": weights, "norm": self.normalization, "k": k},
                ).fetchall()
                rows.append(
                    (
                        np.array([r[0] for r in found], dtype=np.int64),
                        np.array([r[1] for r in found], dtype=np.float64),
                    )
                )
        except Exception as e:
            raise self.server.error(f"search table {self.table}", e) from None
        return Rankings.from_rows(rows, k)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _no_nul(text: str) -> str:
    """Postgres text cannot hold NUL characters; they become spaces."""
    return text.replace("\x00", " ")
