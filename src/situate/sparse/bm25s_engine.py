"""``sparse: bm25s``: BM25 with the bm25s library (sparse matrices, no JVM).

bm25s builds and saves the index (its term-by-document score matrix, CSC, and the vocabulary);
queries are scored here from those arrays with numpy, as bm25s's own ``get_scores`` sums them
(each query token's column added in query order, in the index's dtype: the same scores, bit for
bit), so a cached index is searched without importing bm25s and scipy (0.15-0.3 s of a warm
run's start). Queries are tokenized as bm25s tokenizes them (lowercase, ``token_pattern``, stop
words, the PyStemmer stemmer); with ``stopwords`` set, by bm25s itself (its lists).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from situate.errors import SituateError
from situate.rankings import Rankings, sort_desc

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


def _bm25s():
    """Import bm25s, which sets its own logger to DEBUG on import; keep it to warnings."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


# the files bm25s's ``BM25.save`` writes and ``BM25.load`` reads
PARAMS_FILE, VOCAB_FILE = "params.index.json", "vocab.index.json"
MATRIX_FILES = {k: f"{k}.csc.index.npy" for k in ("data", "indices", "indptr")}
NONOCCURRENCE_FILE = "nonoccurrence_array.index.npy"  # bm25l and bm25+: a term's absence scores


@dataclass(frozen=True)
class ScoreMatrix:
    """A bm25s index as arrays: term ``t``'s documents are ``indices[indptr[t]:indptr[t + 1]]``
    with their BM25 contributions in ``data``; ``vocab`` maps a token to its term id."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    num_docs: int
    vocab: dict[str, int]
    nonoccurrence: np.ndarray | None = None

    @classmethod
    def read(cls, folder: Path) -> ScoreMatrix:
        """The arrays of an index bm25s saved in ``folder``."""
        params = json.loads((folder / PARAMS_FILE).read_text(encoding="utf-8"))
        vocab = json.loads((folder / VOCAB_FILE).read_text(encoding="utf-8"))
        arrays = {k: np.load(folder / name) for k, name in MATRIX_FILES.items()}
        nnoc = folder / NONOCCURRENCE_FILE
        return cls(
            **arrays, num_docs=int(params["num_docs"]), vocab=vocab,
            nonoccurrence=np.load(nnoc) if nnoc.is_file() else None,
        )  # fmt: skip

    @classmethod
    def of(cls, retriever) -> ScoreMatrix:
        """The arrays of an index bm25s built in memory (``bm25s.BM25``)."""
        scores = retriever.scores
        return cls(
            scores["data"], scores["indices"], scores["indptr"], int(scores["num_docs"]),
            retriever.vocab_dict, retriever.nonoccurrence_array,
        )  # fmt: skip

    def scores(self, tokens: list[str]) -> np.ndarray:
        """Every document's score for a query's tokens (unknown tokens left out), as bm25s's
        ``get_scores`` sums them."""
        ids = np.asarray([self.vocab[t] for t in tokens if t in self.vocab], dtype=np.int64)
        scores = np.zeros(self.num_docs, dtype=self.data.dtype)
        for t in ids:  # a term's documents are distinct: += is bm25s's np.add.at
            start, end = self.indptr[t], self.indptr[t + 1]
            scores[self.indices[start:end]] += self.data[start:end]
        if self.nonoccurrence is not None:
            scores += self.nonoccurrence[ids].sum()
        return scores


class Bm25sEngine:
    """BM25 over lowercase word tokens (``\\w\\w+``), optionally stemmed and stop-worded.

    Parameters
    ----------
    k1 : float
        Term-frequency saturation.
    b : float
        Length normalisation (0 = none, 1 = full).
    method : str
        bm25s scoring variant; ``lucene`` is Lucene's BM25 (idf = ln(1 + (N - df + 0.5) / (df + 0.5))).
    stemmer : str or None
        A PyStemmer language ("english", "spanish", ...) or None for no stemming.
    stopwords : str or None
        A bm25s stop-word list ("en", "es", ...) or None to keep every word.
    token_pattern : str
        Regular expression of a token (after lowercasing). bm25s's default drops one-character
        tokens; ``\\w+`` keeps them, as a plain ``re.findall(r"\\w+", text.lower())`` script does.
    threads : int
        Query threads.
    """

    name = "bm25s"
    separate_context = False

    def __init__(
        self,
        k1: float = 1.2,
        b: float = 0.75,
        method: str = "lucene",
        stemmer: str | None = None,
        stopwords: str | None = None,
        token_pattern: str = r"(?u)\b\w\w+\b",
        threads: int = 1,
    ):
        if method not in METHODS:
            raise SituateError(f"sparse.method={method!r} is not one of {', '.join(METHODS)}")
        self.k1, self.b, self.method = k1, b, method
        self.stemmer_name, self.stopwords = stemmer, stopwords
        self.token_pattern = token_pattern
        self.threads = threads
        self._retriever = None  # bm25s.BM25, while building
        self._matrix: ScoreMatrix | None = None

    def identity(self) -> dict:
        return {
            "engine": "bm25s",
            "k1": self.k1,
            "b": self.b,
            "method": self.method,
            "stemmer": self.stemmer_name,
            "stopwords": self.stopwords,
            "token_pattern": self.token_pattern,
        }

    def _stemmer(self):
        if not self.stemmer_name:
            return None
        import Stemmer

        try:
            return Stemmer.Stemmer(self.stemmer_name)
        except KeyError as e:
            valid = ", ".join(Stemmer.algorithms())
            raise SituateError(
                f"sparse.stemmer={self.stemmer_name!r} is unknown; valid: {valid}"
            ) from e

    def _tokenize(self, texts: list[str], return_ids: bool):
        return _bm25s().tokenize(
            texts,
            lower=True,
            token_pattern=self.token_pattern,
            stopwords=self.stopwords,
            stemmer=self._stemmer(),
            return_ids=return_ids,
            show_progress=False,
        )

    def query_tokens(self, queries: list[str]) -> list[list[str]]:
        """Each query's tokens as bm25s's ``tokenize`` gives them (stop words by bm25s)."""
        if self.stopwords:
            return self._tokenize(queries, return_ids=False)
        split = re.compile(self.token_pattern).findall
        stemmer = self._stemmer()
        tokens = [split(q.lower()) for q in queries]
        return [stemmer.stemWords(t) for t in tokens] if stemmer is not None else tokens

    def build(self, texts: list[str], contexts: list[str] | None = None) -> None:
        self._retriever = _bm25s().BM25(k1=self.k1, b=self.b, method=self.method)
        self._retriever.index(self._tokenize(texts, return_ids=True), show_progress=False)
        self._matrix = ScoreMatrix.of(self._retriever)

    def save(self, folder: Path) -> None:
        self._retriever.save(str(folder))

    def load(self, folder: Path) -> None:
        self._retriever = None
        self._matrix = ScoreMatrix.read(folder)

    def search(self, queries: list[str], depth: int) -> Rankings:
        """Top ``depth`` chunks per query; chunks that share no term with the query are left out."""
        matrix = self._matrix
        rows = []
        for tokens in self.query_tokens(queries):
            if not any(t in matrix.vocab for t in tokens):
                rows.append((np.zeros(0, np.int64), np.zeros(0)))
                continue
            scores = matrix.scores(tokens)
            hits = np.flatnonzero(scores > 0)
            if len(hits) > depth:
                hits = hits[np.argpartition(-scores[hits], depth - 1)[:depth]]
            rows.append(sort_desc(hits.astype(np.int64), scores[hits].astype(np.float64)))
        return Rankings.from_rows(rows, min(depth, matrix.num_docs))
