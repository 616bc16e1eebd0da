"""A Cohere API emulator: v2 ``POST /v2/embed`` and ``POST /v2/rerank``, as ``cohere.ClientV2``
sends and parses them.

Point the SDK at it with ``cohere.ClientV2(api_key=KEY, base_url=emulator.url)`` (the SDK
appends ``v2/embed`` and ``v2/rerank`` to the base URL itself).

``/v2/embed`` request: ``{model, input_type, texts, embedding_types?, truncate?, max_tokens?,
output_dimension?}``. ``input_type`` is required for v3 and later models (``search_document``,
``search_query``, ``classification``, ``clustering``); at most 96 texts. ``embedding_types``
defaults to ``["float"]``; ``int8``, ``uint8``, ``binary``, ``ubinary`` and ``base64`` are
served too. Response: ``{id, embeddings: {float: [[...]], ...}, texts, meta: {api_version:
{version: "2"}, billed_units: {input_tokens}}, response_type: "embeddings_by_type"}``.

``/v2/rerank`` request: ``{model, query, documents: [str], top_n?, max_tokens_per_doc?}``.
Response: ``{id, results: [{index, relevance_score}] (best first, top_n of them), meta:
{api_version, billed_units: {search_units}}}``. The relevance score is term overlap in [0, 1]
after truncating each document to ``max_tokens_per_doc`` (default 4096) tokens. One search unit
is billed per 100 documents (Cohere's rule is a query with up to 100 documents; its splitting of
very long documents into several is not emulated). More than ``max_documents`` (1,000, Cohere's
recommended maximum) is refused with 400.

Errors have Cohere's body ``{id, message}``; a missing or wrong bearer token is 401. Tokens are
approximated as ``ceil(utf-8 bytes / 4)``.
"""

from __future__ import annotations

import base64
import math
import uuid

import numpy as np

from situate.emulators.fault_injection import Faults
from situate.emulators.server import EmulatorServer
from situate.emulators.textmodel import (
    approx_tokens,
    hashed_vector,
    overlap_relevance,
    truncate_normalize,
    truncate_tokens,
)
from situate.emulators.wire import Request, Response, json_response

# model -> (dimension, max tokens per text, input_type required, allowed output_dimension)
EMBED_MODELS: dict[str, tuple[int, int, bool, tuple[int, ...]]] = {
    "embed-english-v3.0": (1024, 512, True, ()),
    "embed-english-light-v3.0": (384, 512, True, ()),
    "embed-multilingual-v3.0": (1024, 512, True, ()),
    "embed-multilingual-light-v3.0": (384, 512, True, ()),
    "embed-v4.0": (1536, 128_000, True, (256, 512, 1024, 1536)),
    "embed-english-v2.0": (4096, 512, False, ()),
    "embed-english-light-v2.0": (1024, 512, False, ()),
    "embed-multilingual-v2.0": (768, 256, False, ()),
}
INPUT_TYPES = ("search_document", "search_query", "classification", "clustering")
EMBEDDING_TYPES = ("float", "int8", "uint8", "binary", "ubinary", "base64")
MAX_TEXTS = 96
MAX_DOCUMENTS = 1000
DOCS_PER_SEARCH_UNIT = 100

_FAULT_MESSAGES = {
    "rate_limit": "You are past the rate limit for this API key. Please wait and try again.",
    "overloaded": "The server is overloaded.",
    "server_error": "internal server error, this has been reported to our developers.",
}


class CohereEmulator(EmulatorServer):
    """Serves ``POST /v2/embed`` and ``POST /v2/rerank``; accepts the keys in ``api_key``."""

    name = "cohere-emulator"

    def __init__(
        self,
        api_key: str | list[str] = "co-emulator",
        faults: Faults | None = None,
        max_texts: int = MAX_TEXTS,
        max_documents: int = MAX_DOCUMENTS,
    ):
        super().__init__(faults)
        self.api_keys = {api_key} if isinstance(api_key, str) else set(api_key)
        self.max_texts = max_texts
        self.max_documents = max_documents
        self.route("POST", "/v2/embed", self._embed)
        self.route("POST", "/v2/rerank", self._rerank)

    # errors in Cohere's shape --------------------------------------------------------------
    def error_body(self, status: int, message: str, kind: str) -> dict:
        return {"id": str(uuid.uuid4()), "message": _FAULT_MESSAGES.get(kind, message)}

    def _fail(self, status: int, message: str) -> Response:
        return json_response(status, {"id": str(uuid.uuid4()), "message": message})

    def _begin(self, req: Request) -> tuple[dict | None, Response | None]:
        token = req.bearer_token()
        if token is None:
            return None, self._fail(401, "no api key supplied")
        if token not in self.api_keys:
            return None, self._fail(401, "invalid api token")
        try:
            body = req.json()
        except (ValueError, UnicodeDecodeError):
            return None, self._fail(400, "invalid request: could not parse the JSON body")
        if not isinstance(body, dict):
            return None, self._fail(400, "invalid request: the body must be a JSON object")
        return body, None

    @staticmethod
    def _meta(**billed) -> dict:
        return {"api_version": {"version": "2"}, "billed_units": billed}

    # POST /v2/embed ------------------------------------------------------------------------
    def _embed(self, req: Request) -> Response:
        body, denied = self._begin(req)
        if denied:
            return denied
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return self._fail(400, "invalid request: model must be provided")
        if model not in EMBED_MODELS:
            return self._fail(
                404, f"model '{model}' not found, make sure the correct model ID was used"
            )
        dim, max_tokens, needs_type, out_dims = EMBED_MODELS[model]
        texts = body.get("texts")
        if body.get("images") or body.get("inputs"):
            return self._fail(400, "invalid request: this emulator embeds texts only")
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return self._fail(400, "invalid request: texts must be a non-empty list of strings")
        if len(texts) > self.max_texts:
            return self._fail(
                400,
                f"invalid request: total number of texts must be at most {self.max_texts} "
                f"- received {len(texts)}",
            )
        input_type = body.get("input_type")
        if input_type is None and needs_type:
            return self._fail(
                400, "invalid request: valid input_type must be provided with the provided model"
            )
        if input_type is not None and input_type not in INPUT_TYPES:
            return self._fail(
                400,
                f"invalid request: input_type must be one of {', '.join(INPUT_TYPES)} "
                f"- received '{input_type}'",
            )
        types = body.get("embedding_types") or ["float"]
        if not isinstance(types, list) or any(t not in EMBEDDING_TYPES for t in types):
            return self._fail(
                400, f"invalid request: embedding_types must be a subset of {list(EMBEDDING_TYPES)}"
            )
        out_dim = body.get("output_dimension")
        if out_dim is not None:
            if not out_dims:
                return self._fail(
                    400, f"invalid request: output_dimension is not supported for model {model}"
                )
            if out_dim not in out_dims:
                return self._fail(
                    400,
                    f"invalid request: output_dimension must be one of {list(out_dims)}",
                )
        truncate = body.get("truncate", "END") or "END"
        if truncate not in ("NONE", "START", "END"):
            return self._fail(400, "invalid request: truncate must be one of NONE, START, END")
        limit = min(max_tokens, body.get("max_tokens") or max_tokens)

        vectors, billed = [], 0
        for text in texts:
            n = approx_tokens(text)
            if n > limit:
                if truncate == "NONE":
                    return self._fail(
                        400,
                        f"invalid request: input of {n} tokens is longer than the maximum of "
                        f"{limit} tokens; set truncate to START or END",
                    )
                if truncate == "END":
                    text = truncate_tokens(text, limit)
                else:
                    raw = text.encode("utf-8")
                    text = raw[len(raw) - 4 * limit :].decode("utf-8", errors="ignore")
                n = limit
            billed += n
            v = hashed_vector(text, dim, salt=model)
            if out_dim is not None:
                v = truncate_normalize(v, out_dim)
            vectors.append(v)
        matrix = np.stack(vectors).astype(np.float32)
        return json_response(
            200,
            {
                "id": str(uuid.uuid4()),
                "embeddings": {t: _encode(matrix, t) for t in types},
                "texts": texts,
                "meta": self._meta(input_tokens=billed),
                "response_type": "embeddings_by_type",
            },
        )

    # POST /v2/rerank -----------------------------------------------------------------------
    def _rerank(self, req: Request) -> Response:
        body, denied = self._begin(req)
        if denied:
            return denied
        model = body.get("model")
        if not isinstance(model, str) or not model.startswith("rerank-"):
            return self._fail(
                404, f"model '{model}' not found, make sure the correct model ID was used"
            )
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            return self._fail(400, "invalid request: query must not be empty")
        docs = body.get("documents")
        if not isinstance(docs, list) or not docs:
            return self._fail(400, "invalid request: list of documents must not be empty")
        if not all(isinstance(d, str) for d in docs):
            return self._fail(400, "invalid request: documents must be strings in API v2")
        if len(docs) > self.max_documents:
            return self._fail(
                400,
                f"invalid request: too many documents, got {len(docs)} documents, "
                f"the maximum is {self.max_documents}",
            )
        top_n = body.get("top_n")
        if top_n is not None and (not isinstance(top_n, int) or top_n < 1):
            return self._fail(400, "invalid request: top_n must be a positive integer")
        max_tokens = body.get("max_tokens_per_doc") or 4096
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return self._fail(400, "invalid request: max_tokens_per_doc must be positive")

        scores = [overlap_relevance(query, truncate_tokens(d, max_tokens)) for d in docs]
        order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))
        if top_n is not None:
            order = order[:top_n]
        return json_response(
            200,
            {
                "id": str(uuid.uuid4()),
                "results": [{"index": i, "relevance_score": scores[i]} for i in order],
                "meta": self._meta(search_units=math.ceil(len(docs) / DOCS_PER_SEARCH_UNIT)),
            },
        )


def _encode(matrix: np.ndarray, kind: str) -> list:
    """Embeddings of one ``embedding_types`` entry, as the v2 API returns them."""
    if kind == "float":
        return [[float(x) for x in row] for row in matrix]
    if kind == "base64":
        return [base64.b64encode(row.astype("<f4").tobytes()).decode("ascii") for row in matrix]
    if kind in ("int8", "uint8"):
        scale = np.maximum(np.abs(matrix).max(axis=1, keepdims=True), 1e-12)
        q = np.clip(np.round(matrix / scale * 127), -128, 127).astype(np.int64)
        return (q if kind == "int8" else q + 128).tolist()
    bits = np.packbits(matrix > 0, axis=1).astype(np.int64)  # binary / ubinary
    return (bits if kind == "ubinary" else bits - 128).tolist()
