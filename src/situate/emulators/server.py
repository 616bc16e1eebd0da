"""A small threaded HTTP server for provider emulators: routing by (method, path), the HTTP
transport, and the composition of a request log (:mod:`situate.emulators.request_log`), fault
injection (:mod:`situate.emulators.fault_injection`) and holds for tests
(:mod:`situate.emulators.holds`).

Provider modules (``openai_api``, ``cohere_api``...) subclass :class:`EmulatorServer`, register
their routes with :meth:`EmulatorServer.route` and say how their API writes an error body
(:meth:`EmulatorServer.error_body`). The server itself knows nothing of any provider.

Everything listens on 127.0.0.1 only, on an ephemeral port::

    with OpenAIEmulator(api_key="test") as emu:
        client = openai.OpenAI(api_key="test", base_url=f"{emu.url}/v1")

A routed request is held if a test asks (:meth:`EmulatorServer.hold`), logged, then answered
with a fault (:class:`~situate.emulators.fault_injection.Faults`, :meth:`EmulatorServer.inject`)
or by its handler; unrouted paths (404/405) never get faults. ``GET /_emulator/stats`` answers the
log's counts (:meth:`EmulatorServer.stats`; see :mod:`situate.emulators.request_log`).

Routes are exact paths, or templates with ``{name}`` segments (``/v1/messages/batches/{id}``)
whose values the handler reads from ``Request.params``.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
import struct
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from situate.emulators.fault_injection import FaultInjector, Faults
from situate.emulators.holds import HANG_SECONDS, RequestHolds
from situate.emulators.request_log import (
    STATS_PATH,
    RecordedRequest,
    RequestLog,
    body_hash,
    usage_of,
)
from situate.emulators.wire import Handler, Request, Response, json_response


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
        self.fault_injector = FaultInjector(faults)
        self.holds = RequestHolds()
        self.request_log = RequestLog()
        self._routes: dict[tuple[str, str], Handler] = {}
        self._templates: list[tuple[str, re.Pattern[str], Handler]] = []
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

    # faults (see situate.emulators.fault_injection) ----------------------------------------
    @property
    def faults(self) -> Faults:
        """The random fault rates; setting them changes the rates of the next draws."""
        return self.fault_injector.faults

    @faults.setter
    def faults(self, faults: Faults) -> None:
        self.fault_injector.faults = faults

    def inject(self, *kinds: str) -> None:
        """Answer the next ``len(kinds)`` routed requests with these faults, in order."""
        self.fault_injector.inject(*kinds)

    # holding, for tests (see situate.emulators.holds) --------------------------------------
    def hold(self, after: int = 0) -> None:
        """Let the next ``after`` API requests through, then keep every later one waiting (bytes in,
        not logged or answered) until :meth:`release`."""
        self.holds.hold(after)

    def release(self) -> None:
        """Let the held requests (and all later ones) go on."""
        self.holds.release()

    def wait_held(self, n: int, timeout: float = HANG_SECONDS) -> bool:
        """Block until ``n`` requests are held; False if ``timeout`` passed first (a hang guard)."""
        return self.holds.wait_held(n, timeout)

    def wait_idle(self, timeout: float = HANG_SECONDS) -> bool:
        """Block until no API request is being handled; False if ``timeout`` passed first."""
        return self.holds.wait_idle(timeout)

    def together(self, n: int) -> None:
        """The next ``n`` LLM answers start (first token) together, once all ``n`` are read."""
        self.holds.together(n)

    def first_token(self, ttft: float) -> None:
        """An LLM answer's time to first token (after its :meth:`together` group, if any)."""
        self.holds.first_token(ttft)

    # log (see situate.emulators.request_log) -----------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """The logged requests, in order of arrival."""
        return self.request_log.requests

    def calls(self, path: str | None = None, *, ok_only: bool = False) -> int:
        """How many requests reached the server (to ``path``; only 2xx answers with ``ok_only``)."""
        return self.request_log.calls(path, ok_only=ok_only)

    def bodies(self, path: str | None = None, *, ok_only: bool = True) -> list:
        """Bodies of the logged requests (to ``path``), answered with 2xx by default."""
        return self.request_log.bodies(path, ok_only=ok_only)

    def clear(self) -> None:
        """Forget the logged requests and the queued faults."""
        self.request_log.clear()
        self.fault_injector.clear()

    def billing_keys(self, path: str, body) -> tuple[str, ...]:
        """What a billed request is billed for: by default one key, the sha256 of its body as
        canonical JSON (identical for a retry or a rerun of the same prompt). Subclasses whose
        requests bill several items (embeddings: one per input) return one key per item."""
        return (body_hash(body),)

    def stats(self, log: bool = False) -> dict:
        """Counts of the request log (what ``GET /_emulator/stats`` answers; see
        :meth:`RequestLog.stats <situate.emulators.request_log.RequestLog.stats>`)."""
        return self.request_log.stats(self.name, log)

    # dispatch ------------------------------------------------------------------------------
    def _dispatch(self, req: Request) -> tuple[Response | None, RecordedRequest]:
        """The response to send, or ``None`` to reset the connection."""
        rec = self.request_log.record(req)
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
        fault = self.fault_injector.draw()
        rec.fault = fault
        if fault == "reset":
            rec.answered_at = time.time()
            return None, rec
        if fault == "slow":
            time.sleep(self.faults.slow_seconds)
        elif fault is not None and fault != "reset_after":
            resp = self.fault_injector.answer(fault, self.error)
            rec.status = resp.status
            rec.answered_at = time.time()
            return resp, rec
        try:
            resp = handler(req)
        except Exception as exc:  # a bug in an emulator: answer like a server would
            resp = self.error(500, f"emulator error: {type(exc).__name__}: {exc}", "server_error")
        if 200 <= resp.status < 300:
            rec.billing_keys = self.billing_keys(req.path, rec.body)
            rec.usage = usage_of(resp)
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


def _peer_closed(conn: socket.socket) -> bool:
    """Whether the client closed (or reset) its end: one waiting for an answer sends nothing, so
    a readable socket with no data is an end of file."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


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
        with emulator.holds.handling():  # the whole request is in: it may be held here
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
