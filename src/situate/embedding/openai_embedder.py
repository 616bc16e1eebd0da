"""``embedder: openai_small`` / ``openai_large``: OpenAI embeddings through the official SDK.

The key is read from the environment variable ``api_key_env`` (``OPENAI_API_KEY``) only, never
from the config, so it is never written to a config dump, a cache key or MLflow. ``base_url``
points the SDK elsewhere (an emulator on 127.0.0.1, a proxy); ``null`` is the SDK's default.

Limits of the endpoint: 2,048 inputs and 300,000 tokens per request, 8,192 tokens per input.
The API refuses a longer input rather than truncating it, so a text past 8,192 tokens
(cl100k_base, counted exactly by the ``bpe-openai`` wheel) is cut to its first 8,192 tokens
before it is sent, and counted in the run's ``texts_truncated``; shorter texts go as they are.
Batches hold at most ``batch_size`` texts and an estimated ``max_batch_tokens`` tokens (estimated
at one token per 3 utf-8 bytes, more than English text takes, so batches stay under the limit);
a batch the API still refuses for its token count is split in two and sent again. Client,
retries (429, 5xx, timeouts, dropped connections; honouring ``retry-after``) and error text are
:mod:`situate.providers.openai`; fields, client and the ``rpm``/``tpm`` gate of every request
are :class:`situate.paid.adapter.ApiAdapter`'s.
"""

from __future__ import annotations

import math

import numpy as np

from situate.embedding.base import Kind, normalize
from situate.embedding.truncation import TokenWindow
from situate.errors import SituateError
from situate.paid.adapter import ApiAdapter
from situate.providers import openai as vendor
from situate.providers import refused_key

MAX_INPUTS = 2048
MAX_TOKENS_PER_REQUEST = 300_000


def _estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text.encode("utf-8")) / 3))


class OpenAIEmbedder(ApiAdapter):
    """Embed with ``client.embeddings.create`` (vectors L2-normalised, float32).

    Parameters
    ----------
    model : str
        ``text-embedding-3-small`` (1536 dims), ``text-embedding-3-large`` (3072) or
        ``text-embedding-ada-002``.
    dimensions : int or None
        Shorter vectors from a text-embedding-3 model (the API truncates and renormalises);
        ``None`` is the model's full size.
    batch_size : int
        Texts per request (at most 2,048).
    max_batch_tokens : int
        Estimated tokens per request (at most 300,000, the API's limit).
    base_url : str or None
        API base URL, e.g. ``http://127.0.0.1:PORT/v1``; ``None`` is ``OPENAI_BASE_URL`` or else
        ``https://api.openai.com/v1``. Part of every vector's cache key: an emulator's vectors are
        never served to a run against the real API.
    api_key_env : str
        Environment variable holding the API key.
    max_retries : int
        Retries on 429, 5xx, timeouts and dropped connections.
    timeout : float
        Seconds per request.
    rpm, tpm : int or None
        At most this many requests / estimated tokens a minute; None is no ceiling.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        dimensions: int | None = None,
        batch_size: int = 512,
        max_batch_tokens: int = 250_000,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_retries: int = 5,
        timeout: float = 60,
        rpm: int | None = None,
        tpm: int | None = None,
    ):
        super().__init__(
            vendor, "embedder", model, base_url, api_key_env, max_retries, timeout, rpm, tpm
        )
        if not 1 <= batch_size <= MAX_INPUTS:
            raise SituateError(
                f"embedder.batch_size={batch_size}: must be within 1..{MAX_INPUTS} "
                "(the API's limit of inputs per request)"
            )
        if not 1 <= max_batch_tokens <= MAX_TOKENS_PER_REQUEST:
            raise SituateError(
                f"embedder.max_batch_tokens={max_batch_tokens}: must be within "
                f"1..{MAX_TOKENS_PER_REQUEST} (the API's limit of tokens per request)"
            )
        if dimensions is not None and dimensions < 1:
            raise SituateError(f"embedder.dimensions={dimensions}: must be positive or null")
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens

    def identity(self) -> dict:
        return {
            "provider": self.provider,
            "model": self.model,
            "dimensions": self.dimensions,
            "endpoint": self.endpoint,
        }

    def window(self) -> TokenWindow:
        """8,192 tokens of cl100k_base, counted exactly; past them situate cuts the text."""
        encoding = vendor.embedding_tokenizer()

        def count(texts: list[str]) -> list[int]:
            return [len(ids) for ids in encoding.encode_ordinary_batch(texts)]

        return TokenWindow(
            vendor.EMBEDDING_WINDOW, "head", self.model, "cl100k_base (bpe-openai, exact)", count
        )

    def _batches(self, texts: list[str]) -> list[tuple[int, int]]:
        """(start, end) of each batch: at most ``batch_size`` texts and ``max_batch_tokens``."""
        spans, start, tokens = [], 0, 0
        for i, text in enumerate(texts):
            t = _estimate_tokens(text)
            if i > start and (i - start >= self.batch_size or tokens + t > self.max_batch_tokens):
                spans.append((start, i))
                start, tokens = i, 0
            tokens += t
        if start < len(texts):
            spans.append((start, len(texts)))
        return spans

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        client = self._load()
        # the API refuses empty strings; a single space embeds "nothing" the same way every time
        texts = [t if t.strip() else " " for t in texts]
        texts = self._within_window(texts)
        parts = []
        for start, end in self._batches(texts):
            parts.extend(self._embed(client, texts[start:end]))
        return normalize(np.asarray(parts, dtype=np.float32))

    def _within_window(self, texts: list[str]) -> list[str]:
        """Each text cut to its first 8,192 tokens (the API refuses longer inputs). A token is
        at least one byte, so a text of at most 8,192 bytes goes as it is, untokenized."""
        limit = vendor.EMBEDDING_WINDOW
        long = [i for i, t in enumerate(texts) if len(t.encode("utf-8")) > limit]
        if not long:
            return texts
        encoding = vendor.embedding_tokenizer()
        out = list(texts)
        for i in long:
            ids = encoding.encode_ordinary(texts[i])
            if len(ids) > limit:
                out[i] = encoding.decode(ids[:limit])
        return out

    def _embed(self, client, batch: list[str]) -> list:
        import openai

        kwargs = {"dimensions": self.dimensions} if self.dimensions is not None else {}
        try:
            response = self._send(
                sum(_estimate_tokens(t) for t in batch),
                lambda: client.embeddings.create(model=self.model, input=batch, **kwargs),
            )
        except openai.BadRequestError as exc:
            if vendor.error_code(exc) == "max_tokens_per_request" and len(batch) > 1:
                half = len(batch) // 2
                return self._embed(client, batch[:half]) + self._embed(client, batch[half:])
            raise SituateError(
                f"embedder=openai: the API refused a batch: {vendor.message(exc)}"
            ) from None
        except openai.AuthenticationError:
            raise SituateError(refused_key("embedder=openai", self.api_key_env)) from None
        except openai.NotFoundError as exc:
            raise SituateError(
                f"embedder.model={self.model}: {vendor.message(exc)}; pick an embedding model the key can use"
            ) from None
        except openai.APIConnectionError as exc:
            where = self.base_url or "the OpenAI API"
            raise SituateError(
                f"embedder=openai: cannot reach {where} after {self.max_retries} retries "
                f"({type(exc).__name__}); check the network or embedder.base_url"
            ) from None
        except openai.APIStatusError as exc:
            raise SituateError(
                f"embedder=openai: HTTP {exc.status_code} after {self.max_retries} retries "
                f"({vendor.message(exc)}); retry later or lower embedder.batch_size"
            ) from None
        if response.usage is not None:  # usage.total_tokens: what OpenAI billed
            self.tokens_used += int(response.usage.total_tokens)
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise SituateError(
                f"embedder=openai: asked for {len(batch)} vectors, got {len(data)}; "
                "check embedder.base_url points at an OpenAI-compatible API"
            )
        return [d.embedding for d in data]
