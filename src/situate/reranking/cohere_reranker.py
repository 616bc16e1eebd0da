"""``reranker: cohere``: Cohere Rerank through the official SDK (``cohere.ClientV2.rerank``).

One request per query (more when a query has over ``max_documents`` candidates: the API is not
meant for more than 1,000 documents per request). Scores are Cohere's ``relevance_score`` in
[0, 1], aligned with the texts given.

``top_n`` defaults to every document sent, so each one gets its score. With ``top_n`` set, the
documents the API leaves out get ``-1.0``: below every real score yet finite, so they sort last
and cache like any score. Which documents are left out depends on the others in the request, so
leave ``top_n`` null unless the cost matters.

The key is read from the environment variable ``api_key_env`` (``CO_API_KEY``) only. Client,
retries and error text are :mod:`situate.providers.cohere`; fields, client and the
``rpm``/``tpm`` gate of every request are :class:`situate.paid.adapter.ApiAdapter`'s.
"""

from __future__ import annotations

import numpy as np

from situate.embedding.truncation import APPROXIMATE, TokenWindow, approximate_counter
from situate.errors import SituateError
from situate.paid.adapter import ApiAdapter
from situate.paid.budget import estimated_tokens
from situate.providers import cohere as vendor

MAX_DOCUMENTS = 1000
UNRANKED = -1.0


class CohereReranker(ApiAdapter):
    """Score (query, text) pairs with a Cohere rerank model.

    Parameters
    ----------
    model : str
        ``rerank-english-v3.0``, ``rerank-multilingual-v3.0``, ``rerank-v3.5``...
    pool : int
        Fused candidates per query to rescore.
    top_n : int or None
        Results asked for per request; ``None`` asks for all (every text gets a score).
    max_tokens_per_doc : int
        Tokens of each document the model reads (the API's default is 4096).
    max_documents : int
        Documents per request (at most 1,000).
    base_url : str or None
        API base URL (e.g. ``http://127.0.0.1:PORT``); ``None`` is the SDK default.
    api_key_env : str
        Environment variable holding the API key.
    max_retries, timeout
        Retries on 429, 5xx, dropped connections and timeouts; seconds per request.
    rpm, tpm : int or None
        At most this many requests / estimated tokens a minute; None is no ceiling.
    """

    def __init__(
        self,
        model: str = "rerank-english-v3.0",
        pool: int = 150,
        top_n: int | None = None,
        max_tokens_per_doc: int = 4096,
        max_documents: int = MAX_DOCUMENTS,
        base_url: str | None = None,
        api_key_env: str = "CO_API_KEY",
        max_retries: int = 5,
        timeout: float = 60,
        rpm: int | None = None,
        tpm: int | None = None,
    ):
        super().__init__(
            vendor, "reranker", model, base_url, api_key_env, max_retries, timeout, rpm, tpm
        )
        if not 1 <= max_documents <= MAX_DOCUMENTS:
            raise SituateError(
                f"reranker.max_documents={max_documents}: must be within 1..{MAX_DOCUMENTS}"
            )
        if top_n is not None and top_n < 1:
            raise SituateError(f"reranker.top_n={top_n}: must be positive or null")
        self.pool = pool
        self.top_n = top_n
        self.max_tokens_per_doc = max_tokens_per_doc
        self.max_documents = max_documents

    def identity(self) -> dict:
        return {
            "provider": self.provider,
            "model": self.model,
            "max_tokens_per_doc": self.max_tokens_per_doc,
            "top_n": self.top_n,
            "endpoint": self.endpoint,
        }

    def window(self) -> TokenWindow:
        """``max_tokens_per_doc`` of each document (the query apart); Cohere's tokenizer does
        not ship, so tokens are counted locally."""
        counter = APPROXIMATE.format(vendor="Cohere")
        return TokenWindow(
            self.max_tokens_per_doc, "head", self.model, counter, approximate_counter(),
            "reranker.max_tokens_per_doc",
        )  # fmt: skip

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        scores = np.full(len(texts), UNRANKED, dtype=np.float64)
        if not texts:
            return scores
        client = self._load()
        for start in range(0, len(texts), self.max_documents):
            batch = texts[start : start + self.max_documents]
            for index, relevance in self._rerank(client, query, batch):
                scores[start + index] = relevance
        return scores

    def _rerank(self, client, query: str, batch: list[str]) -> list[tuple[int, float]]:
        # the API refuses empty documents; a space scores as "nothing in common"
        documents = [t if t.strip() else " " for t in batch]
        top_n = min(self.top_n, len(batch)) if self.top_n else len(batch)
        params = {"model": self.model, "query": query, "documents": documents, "top_n": top_n}
        tokens = sum(estimated_tokens(t) for t in [query, *documents])
        with vendor.one_line(self, "reranker"):
            response = self._send(
                tokens, lambda: client.rerank(max_tokens_per_doc=self.max_tokens_per_doc, **params)
            )
        self.search_units += vendor.billed(response, "search_units")
        return [(r.index, float(r.relevance_score)) for r in response.results]
