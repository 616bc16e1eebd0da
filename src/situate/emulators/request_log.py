"""The request log of an emulator: every API request as :class:`RecordedRequest` (secret headers
redacted, body parsed when it is JSON, its fault, status, usage and times), what it was billed
for (:func:`body_hash`), and the counts :meth:`RequestLog.stats` makes of it.

Request statistics (emulator only)
----------------------------------
``GET /_emulator/stats`` (:data:`STATS_PATH`) answers :meth:`RequestLog.stats` as JSON: per
path the requests received, their answers by status (``reset`` when none was sent), the faults
injected, and per *billing key* how many times a request was billed (processed with a 2xx answer,
whether or not the client still got it). A billing key is the sha256 of the request body (for
embeddings: of each input text), so retries and reruns of the same prompt share a key.
``?log=1`` adds every billed request with its arrival and answer times (``time.time()``), its
fault and ``client_gone``: whether its client had closed the connection (was killed, or gave up)
by the time the answer was ready, so that it was never sent. The
endpoint is not an API route: it is never logged, counted or faulted, and no real provider has
it. A process that drives a pipeline against an emulator in another process reads it to count
what the pipeline sent and what it would have paid.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass

from situate.emulators.wire import Request, Response

STATS_PATH = "/_emulator/stats"

# headers whose values are never stored in the request log (matched in lower case)
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "x-goog-api-key",
    }
)
REDACTED = "[redacted]"


@dataclass
class RecordedRequest:
    """One request as the log keeps it: secret headers redacted, body parsed when it is JSON."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: object
    fault: str | None = None
    status: int | None = None  # None: the connection was reset
    billed: bool = False  # processed with a 2xx answer (delivered or not): the provider bills it
    billing_keys: tuple[str, ...] = ()  # see EmulatorServer.billing_keys
    usage: dict | None = None  # the numeric top-level fields of a billed answer's ``usage``
    received_at: float = 0.0  # time.time() when the request was read
    answered_at: float | None = None  # time.time() when the answer was ready (or the reset)
    client_gone: bool = False  # the client had closed the connection: the answer was not sent


def body_hash(obj) -> str:
    """sha256 (hex) of ``obj`` as canonical JSON: the default billing key of a request body."""
    data = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def usage_of(resp: Response) -> dict | None:
    """The numeric top-level fields of an answer's ``usage`` (streamed, or in its JSON body)."""
    if resp.usage is not None:
        return {
            k: v
            for k, v in resp.usage.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
    if resp.content_type != "application/json" or b'"usage"' not in resp.body:
        return None
    try:
        usage = json.loads(resp.body).get("usage")
    except (ValueError, AttributeError):
        return None
    if not isinstance(usage, dict):
        return None
    return {
        k: v for k, v in usage.items() if isinstance(v, int | float) and not isinstance(v, bool)
    }


class RequestLog:
    """The API requests one server received, in order of arrival."""

    def __init__(self):
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def record(self, req: Request) -> RecordedRequest:
        """Log ``req`` as it arrived (secrets redacted); the caller fills in its answer."""
        headers = {k: (REDACTED if k in SECRET_HEADERS else v) for k, v in req.headers.items()}
        try:
            body = req.json()
        except (ValueError, UnicodeDecodeError):
            body = req.raw_body.decode("utf-8", errors="replace")
        rec = RecordedRequest(req.method, req.path, req.query, headers, body)
        rec.received_at = time.time()
        with self._lock:
            self.requests.append(rec)
        return rec

    def calls(self, path: str | None = None, *, ok_only: bool = False) -> int:
        """How many requests reached the server (to ``path``; only 2xx answers with ``ok_only``)."""
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (path is None or r.path == path)
                and (not ok_only or (r.status is not None and 200 <= r.status < 300))
            )

    def bodies(self, path: str | None = None, *, ok_only: bool = True) -> list:
        """Bodies of the logged requests (to ``path``), answered with 2xx by default."""
        with self._lock:
            return [
                r.body
                for r in self.requests
                if (path is None or r.path == path)
                and (not ok_only or (r.status is not None and 200 <= r.status < 300))
            ]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def stats(self, emulator: str, log: bool = False) -> dict:
        """Counts of the log (what ``GET /_emulator/stats`` answers), for the emulator so named.

        ``{"emulator", "requests", "paths": {path: {"requests", "status": {"200": n, "reset": n},
        "faults": {kind: n}, "billed", "billed_usage": {field: sum}, "billed_keys": {key: n}}}}``;
        with ``log``, also ``"billed_log": [{"path", "keys", "usage", "received_at",
        "answered_at", "fault", "client_gone"}]``.
        """
        with self._lock:
            records = list(self.requests)
        paths: dict[str, dict] = {}
        billed_log = []
        for r in records:
            p = paths.setdefault(
                r.path,
                {
                    "requests": 0,
                    "status": {},
                    "faults": {},
                    "billed": 0,
                    "billed_usage": {},
                    "billed_keys": {},
                },
            )
            p["requests"] += 1
            status = "reset" if r.status is None else str(r.status)
            if r.answered_at is None:
                status = "pending"  # still being answered
            p["status"][status] = p["status"].get(status, 0) + 1
            if r.fault:
                p["faults"][r.fault] = p["faults"].get(r.fault, 0) + 1
            if r.billed:
                p["billed"] += 1
                for k, v in (r.usage or {}).items():
                    p["billed_usage"][k] = p["billed_usage"].get(k, 0) + v
                for k in r.billing_keys:
                    p["billed_keys"][k] = p["billed_keys"].get(k, 0) + 1
                if log:
                    billed_log.append(
                        {
                            "path": r.path,
                            "keys": list(r.billing_keys),
                            "usage": r.usage,
                            "received_at": r.received_at,
                            "answered_at": r.answered_at,
                            "fault": r.fault,
                            "client_gone": r.client_gone,
                        }
                    )
        out = {"emulator": emulator, "requests": len(records), "paths": paths}
        if log:
            out["billed_log"] = billed_log
        return out
