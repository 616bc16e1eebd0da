"""What an emulator's handlers take and give: a :class:`Request` as it arrived (headers
complete, secrets included), a :class:`Response` to send (a body, or server-sent events as an
iterator), a :data:`Handler` between them, and :func:`json_response`, the answer as compact
JSON. Every emulator, the server and its request log speak these."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass
class Request:
    """One request as a handler sees it (headers complete, secrets included)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    raw_body: bytes
    params: dict[str, str] = field(default_factory=dict)  # {name} segments of a templated route

    def json(self):
        """The body parsed as JSON (``ValueError`` when it is not JSON)."""
        return json.loads(self.raw_body.decode("utf-8")) if self.raw_body else None

    def bearer_token(self) -> str | None:
        auth = self.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        return token.strip() if scheme.lower() == "bearer" and token.strip() else None


@dataclass
class Response:
    """An answer. With ``stream`` (server-sent events), ``body`` is unused: the chunks are sent
    as the iterator yields them (HTTP chunked encoding), and ``usage`` is what the answer bills."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    stream: Iterator[bytes] | None = None
    usage: dict | None = None


def json_response(status: int, obj, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    return Response(status, body, dict(headers or {}))


Handler = Callable[[Request], Response]
