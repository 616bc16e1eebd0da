"""The generic emulator server: routing, request log, fault injection."""

from __future__ import annotations

import http.client
import json
import time
from collections import Counter

import pytest

from situate.emulators.fault_injection import FAULT_KINDS, Faults
from situate.emulators.request_log import REDACTED
from situate.emulators.server import EmulatorServer
from situate.emulators.wire import Request, json_response


def echo(req: Request):
    return json_response(200, {"path": req.path, "got": req.json(), "q": req.query})


def make_server(faults: Faults | None = None) -> EmulatorServer:
    server = EmulatorServer(faults)
    server.route("POST", "/v1/echo", echo)
    server.route("GET", "/v1/ping", lambda req: json_response(200, {"pong": True}))
    return server


def connect(server: EmulatorServer) -> http.client.HTTPConnection:
    host, port = server.url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=10)


def call(conn, method="POST", path="/v1/echo", body=None, headers=None):
    data = json.dumps(body if body is not None else {"x": 1}).encode() if method != "GET" else None
    conn.request(
        method, path, body=data, headers={"content-type": "application/json", **(headers or {})}
    )
    resp = conn.getresponse()
    raw = resp.read()
    return (
        resp.status,
        dict((k.lower(), v) for k, v in resp.getheaders()),
        (json.loads(raw) if raw else None),
    )


def test_start_returns_loopback_url_and_stop_closes():
    server = make_server()
    url = server.start()
    assert url.startswith("http://127.0.0.1:") and int(url.rsplit(":", 1)[1]) > 0
    conn = connect(server)
    assert call(conn, "GET", "/v1/ping")[2] == {"pong": True}
    server.stop()
    with pytest.raises(OSError):
        c2 = connect(server)
        c2.request("GET", "/v1/ping")
        c2.getresponse()


def test_routing_by_method_and_path_and_unknown_paths():
    with make_server() as server:
        conn = connect(server)
        status, _, body = call(conn, "POST", "/v1/echo?a=1", {"hello": "world"})
        assert status == 200
        assert body == {"path": "/v1/echo", "got": {"hello": "world"}, "q": {"a": ["1"]}}
        assert call(conn, "GET", "/v1/echo")[0] == 405
        status, _, body = call(conn, "POST", "/v1/nowhere")
        assert status == 404 and "message" in body["error"]


def test_request_log_counts_and_redacts_secrets():
    with make_server() as server:
        conn = connect(server)
        for i in range(3):
            call(
                conn,
                body={"i": i},
                headers={"Authorization": "Bearer sk-very-secret", "x-api-key": "k-secret"},
            )
        call(conn, "GET", "/v1/ping")
        assert server.calls() == 4
        assert server.calls("/v1/echo") == 3
        assert server.bodies("/v1/echo") == [{"i": 0}, {"i": 1}, {"i": 2}]
        rec = server.requests[0]
        assert rec.method == "POST" and rec.status == 200 and rec.fault is None
        assert rec.headers["authorization"] == REDACTED
        assert rec.headers["x-api-key"] == REDACTED
        assert "secret" not in repr(server.requests)
        server.clear()
        assert server.calls() == 0


def test_faults_are_off_by_default():
    with make_server() as server:
        conn = connect(server)
        statuses = [call(conn)[0] for _ in range(50)]
        assert set(statuses) == {200}
        assert all(r.fault is None for r in server.requests)


def test_fault_rates_are_roughly_honoured_and_seeded():
    faults = Faults(rate_429=0.2, rate_500=0.1, rate_529=0.1, seed=7)
    runs = []
    for _ in range(2):
        with make_server(Faults(**vars(faults))) as server:
            conn = connect(server)
            statuses = [call(conn)[0] for _ in range(400)]
            runs.append(statuses)
    assert runs[0] == runs[1]  # the same seed, the same faults
    counts = Counter(runs[0])
    assert 50 <= counts[429] <= 110  # 80 expected
    assert 20 <= counts[500] <= 65  # 40 expected
    assert 20 <= counts[529] <= 65
    assert 180 <= counts[200] <= 300  # 240 expected


def test_uniform_faults_split_the_rate():
    f = Faults.uniform(0.6, kinds=("429", "500"))
    assert f.rate_429 == pytest.approx(0.3) and f.rate_500 == pytest.approx(0.3)
    with pytest.raises(ValueError):
        Faults(rate_429=0.7, rate_500=0.7).rates()
    with pytest.raises(ValueError):
        Faults.uniform(0.1, kinds=("418",))


def test_429_with_and_without_retry_after():
    with make_server(Faults(retry_after="3")) as server:
        server.inject("429", "429_retry_after")
        conn = connect(server)
        s1, h1, b1 = call(conn)
        s2, h2, _ = call(conn)
        s3, _, _ = call(conn)
        assert (s1, s2, s3) == (429, 429, 200)
        assert "retry-after" not in h1 and "error" in b1
        assert h2["retry-after"] == "3"
        assert [r.fault for r in server.requests] == ["429", "429_retry_after", None]


def test_500_and_529():
    with make_server() as server:
        server.inject("500", "529")
        conn = connect(server)
        assert [call(conn)[0] for _ in range(3)] == [500, 529, 200]


def test_connection_reset_sends_no_response():
    with make_server() as server:
        server.inject("reset")
        conn = connect(server)
        with pytest.raises(
            (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine)
        ):
            call(conn)
        assert server.requests[0].fault == "reset" and server.requests[0].status is None
        assert call(connect(server))[0] == 200  # the server itself carries on


def test_slow_responses_sleep_then_answer():
    with make_server(Faults(rate_slow=1.0, slow_seconds=0.3)) as server:
        conn = connect(server)
        t0 = time.perf_counter()
        status, _, body = call(conn, body={"k": "v"})
        assert time.perf_counter() - t0 >= 0.3
        assert status == 200 and body["got"] == {"k": "v"}


def test_unrouted_paths_get_no_faults():
    with make_server(Faults(rate_500=1.0)) as server:
        conn = connect(server)
        assert call(conn, "POST", "/nope")[0] == 404
        assert call(conn)[0] == 500


def test_unknown_fault_kind_is_refused():
    server = make_server()
    with pytest.raises(ValueError):
        server.inject("teapot")
    assert set(FAULT_KINDS) == {"429", "429_retry_after", "529", "500", "reset", "slow"}


def test_handler_exception_is_a_500():
    server = EmulatorServer()
    server.route("GET", "/boom", lambda req: 1 / 0)
    with server:
        status, _, body = call(connect(server), "GET", "/boom")
        assert status == 500 and "ZeroDivisionError" in body["error"]["message"]


def test_only_loopback():
    with pytest.raises(ValueError):
        EmulatorServer(host="0.0.0.0")
