"""``reranker: cohere``: Cohere Rerank through the official SDK (``cohere.ClientV2.rerank``).

One request per query (more when a query has over ``max_documents`` candidates: the API is not
meant for more than 1,000 documents per request). Scores are Cohere's ``relevance_score`` in
[0, 1], aligned with the texts given.

``top_n`` defaults to every document sent, so each one gets its score. With ``top_n`` set, the
documents the API leaves out get ``-1.0``: below every real score yet finite, so they sort last
and cache like any score. Which documents are left out depends on the others in the request, so
leave ``top_n`` null unless the cost matters.

The key is read from the environment variable ``api_key_env`` (``CO_API_KEY``) only. Client,
retries and error text are :mod:`situate.providers.cohere`; every request passes the
``rpm``/``tpm`` gate of :class:`situate.providers.ApiGate`.
"""

from __future__ import annotations

import numpy as np

from situate.contexts.budget import estimated_tokens
from situate.endpoints import endpoint
from situate.errors import SituateError
from situate.llm.ratelimit import RateCeiling
from situate.money.billing import Billed
from situate.providers import ApiGate
from situate.providers import cohere as vendor
from situate.truncation import APPROXIMATE, TokenWindow, approximate_counter

MAX_DOCUMENTS = 1000
UNRANKED = -1.0


class CohereReranker:
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

    provider = "cohere"

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
        RateCeiling(rpm, tpm, option="reranker")  # validates both
        if not 1 <= max_documents <= MAX_DOCUMENTS:
            raise SituateError(
                f"reranker.max_documents={max_documents}: must be within 1..{MAX_DOCUMENTS}"
            )
        if top_n is not None and top_n < 1:
            raise SituateError(f"reranker.top_n={top_n}: must be positive or null")
        self.name = model
        self.model = model
        self.pool = pool
        self.top_n = top_n
        self.max_tokens_per_doc = max_tokens_per_doc
        self.max_documents = max_documents
        self.base_url = base_url
        self.endpoint = endpoint(self.provider, base_url)
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.timeout = timeout
        self.rpm, self.tpm = rpm, tpm
        self.search_units = 0.0  # meta.billed_units.search_units summed over this instance
        self.requests = 0
        self._client = None
        self._gate: ApiGate | None = None

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

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def billed(self) -> Billed:
        """The searches Cohere billed this instance (``meta.billed_units.search_units``)."""
        return Billed(model=self.model, search_units=self.search_units)

    def _load(self):
        if self._client is None:
            self._client = vendor.client(
                "reranker=cohere", self.api_key_env, self.base_url, self.timeout
            )
            self._gate = ApiGate("reranker", self.rpm, self.tpm)
        return self._client

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
        response = vendor.request(
            self, "reranker", tokens,
            lambda: client.rerank(max_tokens_per_doc=self.max_tokens_per_doc, **params),
        )  # fmt: skip
        self.requests += 1
        self.search_units += vendor.billed(response, "search_units")
        return [(r.index, float(r.relevance_score)) for r in response.results]
