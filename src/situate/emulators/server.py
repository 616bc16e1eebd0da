"""A small threaded HTTP server for provider emulators, with a request log and fault injection.

Provider modules (``openai_api``, ``cohere_api``...) subclass :class:`EmulatorServer`, register
their routes with :meth:`EmulatorServer.route` and say how their API writes an error body
(:meth:`EmulatorServer.error_body`). The server itself knows nothing of any provider.

Everything listens on 127.0.0.1 only, on an ephemeral port::

    with OpenAIEmulator(api_key="test") as emu:
        client = openai.OpenAI(api_key="test", base_url=f"{emu.url}/v1")

Fault injection
---------------
:class:`Faults` gives, per kind, the probability that a routed request is answered with that
fault instead of the real answer (one seeded draw per request, so a run is reproducible when
requests arrive in the same order). :meth:`EmulatorServer.inject` queues faults for the next
requests, whatever the rates. Kinds:

``429``             too many requests, no ``retry-after`` (the client backs off on its own)
``429_retry_after`` too many requests with ``retry-after: <Faults.retry_after>``
``529``             overloaded (Anthropic's status; other providers never send it)
``500``             internal server error
``reset``           the socket is closed with a TCP reset and no response at all
``slow``            the real answer, after sleeping ``Faults.slow_seconds``

and one more kind, never part of :data:`FAULT_KINDS` (so never drawn unless asked for):

``reset_after``     the request is processed (and billed: caches written, usage counted), then
                    the socket is reset before the answer is sent: what a client sees when a
                    connection drops after the server did the work

Unrouted paths (404/405) never get faults.

Holding requests (tests)
------------------------
:meth:`EmulatorServer.hold` keeps requests waiting once their bytes are in, before they are
logged or answered, until :meth:`EmulatorServer.release`; :meth:`EmulatorServer.wait_held` and
:meth:`EmulatorServer.wait_idle` block until so many requests wait, or until every request has
been answered. A test can thus kill a client with its calls in flight, or have the server log
and answer a request only after its client died, without sleeping and hoping.
:meth:`EmulatorServer.together` makes the next ``n`` LLM answers start (their first token: a
prompt cache entry becomes visible) only once all ``n`` requests are read: requests that are
concurrent whatever the machine's speed.

Request statistics (emulator only)
----------------------------------
``GET /_emulator/stats`` (:data:`STATS_PATH`) answers :meth:`EmulatorServer.stats` as JSON: per
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

Routes are exact paths, or templates with ``{name}`` segments (``/v1/messages/batches/{id}``)
whose values the handler reads from ``Request.params``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import re
import select
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

FAULT_KINDS = ("429", "429_retry_after", "529", "500", "reset", "slow")
EXTRA_FAULT_KINDS = ("reset_after",)  # drawn only when asked for (see the module docstring)
ALL_FAULT_KINDS = FAULT_KINDS + EXTRA_FAULT_KINDS
STATS_PATH = "/_emulator/stats"
HANG_SECONDS = 300.0  # how long the waits of holding tests last before they count as a hang

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
class Faults:
    """Per-kind fault probabilities (each 0..1, summing to at most 1); all off by default."""

    rate_429: float = 0.0
    rate_429_retry_after: float = 0.0
    rate_529: float = 0.0
    rate_500: float = 0.0
    rate_reset: float = 0.0
    rate_slow: float = 0.0
    rate_reset_after: float = 0.0
    seed: int = 0
    retry_after: str = "1"  # value of the retry-after header (seconds, as the APIs send it)
    slow_seconds: float = 1.0

    def rates(self) -> list[tuple[str, float]]:
        pairs = [
            ("429", self.rate_429),
            ("429_retry_after", self.rate_429_retry_after),
            ("529", self.rate_529),
            ("500", self.rate_500),
            ("reset", self.rate_reset),
            ("slow", self.rate_slow),
            ("reset_after", self.rate_reset_after),  # last: the draws of the others stay put
        ]
        for kind, rate in pairs:
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate {kind}={rate} must be within 0..1")
        if sum(r for _, r in pairs) > 1.0 + 1e-9:
            raise ValueError("fault rates must sum to at most 1")
        return pairs

    @classmethod
    def uniform(cls, rate: float, kinds: tuple[str, ...] = FAULT_KINDS, **kw) -> Faults:
        """``rate`` split evenly over ``kinds``."""
        unknown = set(kinds) - set(ALL_FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {ALL_FAULT_KINDS}")
        each = rate / len(kinds)
        return cls(**{f"rate_{k}": each for k in kinds}, **kw)


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


Handler = Callable[[Request], Response]


def check_loopback(host: str) -> None:
    """``ValueError`` unless ``host`` is a loopback address: emulators never listen elsewhere."""
    if not host.startswith("127.") and host not in ("localhost", "::1"):
        raise ValueError(f"emulators listen on loopback only, not {host}")


class EmulatorServer:
    """Generic threaded HTTP server with routing by (method, path), a log and fault injection.

    Parameters
    ----------
    faults : Faults or None
        Random fault rates; ``None`` is no faults.
    host : str
        Always a loopback address; the default is 127.0.0.1.
    port : int
        0 (the default) for an ephemeral port; may also be set as ``server.port`` before
        :meth:`start`.
    """

    name = "emulator"

    def __init__(self, faults: Faults | None = None, host: str = "127.0.0.1", port: int = 0):
        check_loopback(host)
        self.host = host
        self.port = port
        self.faults = faults or Faults()
        self.faults.rates()  # validate now
        self._rng = random.Random(self.faults.seed)
        self._routes: dict[tuple[str, str], Handler] = {}
        self._templates: list[tuple[str, re.Pattern[str], Handler]] = []
        self._queued: list[str] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a request was held or ended
        self._hold_after: int | None = None  # None: not holding; else requests still let through
        self._held = 0  # requests waiting in hold()
        self._open = 0  # API requests being handled (held ones included)
        self._together: threading.Barrier | None = None  # see together()
        self._together_left = 0
        self.requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url: str | None = None

    # routing -------------------------------------------------------------------------------
    def route(self, method: str, path: str, handler: Handler) -> None:
        """Serve ``method path`` with ``handler``; ``{name}`` segments match one path segment."""
        if "{" not in path:
            self._routes[(method.upper(), path)] = handler
            return
        pattern = "".join(
            f"(?P<{part[1:-1]}>[^/]+)"
            if part.startswith("{") and part.endswith("}")
            else re.escape(part)
            for part in re.split(r"(\{\w+\})", path)
        )
        self._templates.append((method.upper(), re.compile(f"^{pattern}$"), handler))

    def _find_route(self, method: str, path: str) -> tuple[Handler | None, dict[str, str], bool]:
        """(handler, template params, whether any method serves ``path``)."""
        handler = self._routes.get((method, path))
        if handler is not None:
            return handler, {}, True
        known = any(p == path for _, p in self._routes)
        for m, regex, h in self._templates:
            match = regex.match(path)
            if match:
                if m == method:
                    return h, match.groupdict(), True
                known = True
        return None, {}, known

    def error_body(self, status: int, message: str, kind: str) -> dict:
        """The JSON body of an error in this provider's shape; ``kind`` names the error.

        Kinds the server itself uses: ``not_found``, ``method_not_allowed``, ``rate_limit``,
        ``overloaded``, ``server_error``, ``invalid_json``. Subclasses override this.
        """
        return {"error": {"type": kind, "message": message}}

    def error(
        self, status: int, message: str, kind: str, headers: dict[str, str] | None = None
    ) -> Response:
        return json_response(status, self.error_body(status, message, kind), headers)

    # faults --------------------------------------------------------------------------------
    def inject(self, *kinds: str) -> None:
        """Answer the next ``len(kinds)`` routed requests with these faults, in order."""
        unknown = set(kinds) - set(ALL_FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {ALL_FAULT_KINDS}")
        with self._lock:
            self._queued.extend(kinds)

    def _draw_fault(self) -> str | None:
        with self._lock:
            if self._queued:
                return self._queued.pop(0)
            u = self._rng.random()
        acc = 0.0
        for kind, rate in self.faults.rates():
            acc += rate
            if u < acc:
                return kind
        return None

    def fault_response(self, kind: str) -> Response:
        if kind == "429":
            return self.error(429, "Rate limit reached; please try again later.", "rate_limit")
        if kind == "429_retry_after":
            return self.error(
                429,
                "Rate limit reached; please try again later.",
                "rate_limit",
                {"retry-after": self.faults.retry_after},
            )
        if kind == "529":
            return self.error(529, "Overloaded", "overloaded")
        if kind == "500":
            return self.error(
                500, "The server had an error while processing your request.", "server_error"
            )
        raise ValueError(kind)

    # holding (tests) -----------------------------------------------------------------------
    def hold(self, after: int = 0) -> None:
        """Let the next ``after`` API requests through, then keep every later one waiting, its bytes
        in but not logged or answered, until :meth:`release`."""
        with self._lock:
            self._hold_after = after
            self._changed.notify_all()

    def release(self) -> None:
        """Let the held requests (and all later ones) go on."""
        with self._lock:
            self._hold_after = None
            self._changed.notify_all()

    def wait_held(self, n: int, timeout: float = HANG_SECONDS) -> bool:
        """Block until ``n`` requests are held; False if ``timeout`` passed first (a hang guard)."""
        with self._lock:
            return self._changed.wait_for(lambda: self._held >= n, timeout)

    def wait_idle(self, timeout: float = HANG_SECONDS) -> bool:
        """Block until no API request is being handled (every one whose bytes are in has been
        answered or reset, none is held); False if ``timeout`` passed first (a hang guard)."""
        with self._lock:
            return self._changed.wait_for(lambda: self._open == 0, timeout)

    def together(self, n: int) -> None:
        """The next ``n`` LLM answers start (first token) together, once all ``n`` requests are read
        and accounted: none of them sees a cache entry another of them writes."""
        with self._lock:
            self._together, self._together_left = threading.Barrier(n), n

    def first_token(self, ttft: float) -> None:
        """An LLM answer's time to first token: ``ttft`` seconds, after the others of a
        :meth:`together` group have arrived when this request is one of them."""
        with self._lock:
            barrier = self._together
            if barrier is not None:
                self._together_left -= 1
                if self._together_left == 0:
                    self._together = None
        if barrier is not None:
            barrier.wait(HANG_SECONDS)
        if ttft > 0:
            time.sleep(ttft)

    @contextlib.contextmanager
    def _handling(self):
        """One API request being handled: counted for :meth:`wait_idle`, held if asked."""
        with self._lock:
            self._open += 1
            if self._hold_after is not None and self._hold_after > 0:
                self._hold_after -= 1
            elif self._hold_after is not None:
                self._held += 1
                self._changed.notify_all()
                self._changed.wait_for(lambda: self._hold_after is None)
                self._held -= 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                self._changed.notify_all()

    # log -----------------------------------------------------------------------------------
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
            self._queued.clear()

    def billing_keys(self, path: str, body) -> tuple[str, ...]:
        """What a billed request is billed for: by default one key, the sha256 of its body as
        canonical JSON (identical for a retry or a rerun of the same prompt). Subclasses whose
        requests bill several items (embeddings: one per input) return one key per item."""
        return (body_hash(body),)

    def stats(self, log: bool = False) -> dict:
        """Counts of the request log (what ``GET /_emulator/stats`` answers).

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
        out = {"emulator": self.name, "requests": len(records), "paths": paths}
        if log:
            out["billed_log"] = billed_log
        return out

    def _record(self, req: Request) -> RecordedRequest:
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

    # dispatch ------------------------------------------------------------------------------
    def _dispatch(self, req: Request) -> tuple[Response | None, RecordedRequest]:
        """The response to send, or ``None`` to reset the connection."""
        rec = self._record(req)
        handler, req.params, known = self._find_route(req.method, req.path)
        if handler is None:
            if known:
                resp = self.error(
                    405, f"Method {req.method} not allowed for {req.path}", "method_not_allowed"
                )
            else:
                resp = self.error(404, f"Unknown request URL: {req.method} {req.path}", "not_found")
            rec.status = resp.status
            rec.answered_at = time.time()
            return resp, rec
        fault = self._draw_fault()
        rec.fault = fault
        if fault == "reset":
            rec.answered_at = time.time()
            return None, rec
        if fault == "slow":
            time.sleep(self.faults.slow_seconds)
        elif fault is not None and fault != "reset_after":
            resp = self.fault_response(fault)
            rec.status = resp.status
            rec.answered_at = time.time()
            return resp, rec
        try:
            resp = handler(req)
        except Exception as exc:  # a bug in an emulator: answer like a server would
            resp = self.error(500, f"emulator error: {type(exc).__name__}: {exc}", "server_error")
        if 200 <= resp.status < 300:
            rec.billing_keys = self.billing_keys(req.path, rec.body)
            rec.usage = _usage_of(resp)
            rec.billed = True
        rec.answered_at = time.time()
        if fault == "reset_after":  # processed and billed, then the connection drops
            return None, rec
        rec.status = resp.status
        return resp, rec

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> str:
        """Start serving in a background thread; returns ``http://127.0.0.1:PORT``."""
        if self._httpd is not None:
            return self.url  # type: ignore[return-value]
        emulator = self

        class _Handler(_RequestHandler):
            server_emulator = emulator

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET

        class _Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address) -> None:
                pass  # a client that went away mid-request is not the emulator's problem

        self._httpd = _Server((self.host, self.port), _Handler)
        port = self._httpd.server_address[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{self.name}-{port}",
            daemon=True,
        )
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self.release()  # held requests end with the server
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _usage_of(resp: Response) -> dict | None:
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


def _peer_closed(conn: socket.socket) -> bool:
    """Whether the client closed (or reset) its end: one waiting for an answer sends nothing, so
    a readable socket with no data is an end of file."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def body_hash(obj) -> str:
    """sha256 (hex) of ``obj`` as canonical JSON: the default billing key of a request body."""
    data = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    server_emulator: EmulatorServer
    timeout = 30  # idle keep-alive connections end after this many seconds
    disable_nagle_algorithm = True  # else headers and body, written apart, wait for delayed ACKs

    def log_message(self, format, *args) -> None:  # quiet
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        emulator = self.server_emulator
        if parts.path == STATS_PATH and self.command == "GET":  # emulator-only: not an API request
            self._read_body()
            log = (parse_qs(parts.query).get("log") or ["0"])[0] not in ("0", "", "false")
            self._send(json_response(200, emulator.stats(log=log)))
            return
        req = Request(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            raw_body=self._read_body(),
        )
        with emulator._handling():  # the whole request is in: it may be held here
            resp, rec = emulator._dispatch(req)
            if resp is None:
                self._reset()
            elif _peer_closed(self.connection):  # killed, or gave up: nobody to answer
                rec.client_gone = True
                self.close_connection = True
            else:
                self._send(resp)

    def _send(self, resp: Response) -> None:
        self.send_response(resp.status)
        headers = {"content-type": resp.content_type, **resp.headers}
        headers.setdefault("x-request-id", f"req_{uuid.uuid4().hex}")
        for k, v in headers.items():
            self.send_header(k, v)
        if resp.stream is not None:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            for chunk in resp.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(resp.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(resp.body)

    def _reset(self) -> None:
        """Close the socket with a TCP RST (SO_LINGER 0) and send nothing."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def finish(self) -> None:
        # the connection was reset on purpose, or the client went away
        with contextlib.suppress(OSError):
            super().finish()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle
