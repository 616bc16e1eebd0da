"""``sparse: bm25s``: BM25 with the bm25s library (sparse matrices, no JVM)."""

from __future__ import annotations

import logging
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
        self._retriever = None
        self._n_docs = 0

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

    def build(self, texts: list[str], contexts: list[str] | None = None) -> None:
        self._retriever = _bm25s().BM25(k1=self.k1, b=self.b, method=self.method)
        self._retriever.index(self._tokenize(texts, return_ids=True), show_progress=False)
        self._n_docs = len(texts)

    def save(self, folder: Path) -> None:
        self._retriever.save(str(folder))

    def load(self, folder: Path) -> None:
        self._retriever = _bm25s().BM25.load(str(folder))
        self._n_docs = int(self._retriever.scores["num_docs"])

    def search(self, queries: list[str], depth: int) -> Rankings:
        """Top ``depth`` chunks per query; chunks that share no term with the query are left out."""
        vocab = self._retriever.vocab_dict
        rows = []
        for tokens in self._tokenize(queries, return_ids=False):
            known = [t for t in tokens if t in vocab]
            if not known:
                rows.append((np.zeros(0, np.int64), np.zeros(0)))
                continue
            scores = self._retriever.get_scores(known)
            hits = np.flatnonzero(scores > 0)
            if len(hits) > depth:
                hits = hits[np.argpartition(-scores[hits], depth - 1)[:depth]]
            rows.append(sort_desc(hits.astype(np.int64), scores[hits].astype(np.float64)))
        return Rankings.from_rows(rows, min(depth, self._n_docs))
