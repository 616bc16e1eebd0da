"""The Message Batches API of the Anthropic emulator: :class:`MessageBatches` keeps the batches
(:class:`Batch`), runs each in a background thread through the emulator's answer and serves
their routes.

Message Batches
---------------
``POST /v1/messages/batches`` -> a ``message_batch`` object ``in_progress``; a background thread
waits ``batch_delay`` seconds, then runs the requests one after another through the same cache
(entries published at once; ``usage.service_tier`` is ``"batch"``) and ends the batch with a
``results_url`` (``GET .../results``: JSON Lines, one ``{custom_id, result}`` per request, in an
order other than the requests'). A request whose params are invalid is ``errored``.
``GET``/``DELETE /v1/messages/batches/{id}``, ``POST .../cancel`` and ``GET /v1/messages/batches``
(list) are served too.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from situate.emulators.anthropic_request import (
    APIFailure,
    authenticate,
    invalid,
    new_id,
    ok,
    organisation_salt,
    request_body,
)
from situate.emulators.holds import HANG_SECONDS
from situate.emulators.wire import Handler, Request, Response

BATCH_LIFETIME = timedelta(hours=24)
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# a batched request's answer: (params, anthropic-version, key salt) -> its message object
BatchAnswer = Callable[[dict, str, str], dict]


def _now_iso(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Batch:
    id: str
    requests: list[dict]
    version: str
    key_salt: str
    created_at: datetime
    status: str = "in_progress"
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    counts: dict[str, int] = field(default_factory=dict)
    results: list[dict] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class MessageBatches:
    """The batches of one emulator, by id in order of creation.

    Parameters
    ----------
    api_keys : set of str
        The keys that authenticate (the emulator's).
    answer : callable
        ``(params, version, key_salt) -> message``: one request answered through the emulator's
        cache; raises :class:`~situate.emulators.anthropic_request.APIFailure` when invalid.
    url : callable
        The emulator's base URL (for ``results_url``).
    delay : float
        Seconds a batch stays ``in_progress`` before its requests run.
    """

    def __init__(
        self,
        api_keys: set[str],
        answer: BatchAnswer,
        url: Callable[[], str | None],
        delay: float = 0.0,
    ):
        self.api_keys, self.answer, self.url, self.delay = api_keys, answer, url, delay
        self.batches: dict[str, Batch] = {}
        self._lock = threading.Lock()

    def routes(self) -> list[tuple[str, str, Handler]]:
        """(method, path, handler) of the Message Batches API; handlers raise ``APIFailure``."""
        return [
            ("POST", "/v1/messages/batches", self._create),
            ("GET", "/v1/messages/batches", self._list),
            ("GET", "/v1/messages/batches/{batch_id}", self._retrieve),
            ("DELETE", "/v1/messages/batches/{batch_id}", self._delete),
            ("POST", "/v1/messages/batches/{batch_id}/cancel", self._cancel),
            ("GET", "/v1/messages/batches/{batch_id}/results", self._results),
        ]

    def _object(self, batch: Batch) -> dict:
        n = len(batch.requests)
        counts = batch.counts or {
            "processing": n,
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        }
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "ended_at": _now_iso(batch.ended_at) if batch.ended_at else None,
            "created_at": _now_iso(batch.created_at),
            "expires_at": _now_iso(batch.created_at + BATCH_LIFETIME),
            "archived_at": None,
            "cancel_initiated_at": (
                _now_iso(batch.cancel_initiated_at) if batch.cancel_initiated_at else None
            ),
            "results_url": f"{self.url()}/v1/messages/batches/{batch.id}/results"
            if ended
            else None,
        }

    def _create(self, req: Request) -> Response:
        key, version = authenticate(req, self.api_keys)
        body = request_body(req)
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise invalid("requests: List should have at least 1 item")
        if len(requests) > 100_000:
            raise invalid("requests: List should have at most 100000 items")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            cid = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(cid, str) or not _CUSTOM_ID.match(cid):
                raise invalid(
                    f"requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )
            if cid in seen:
                raise invalid(f"Duplicate custom_id {cid!r}: custom_id must be unique")
            seen.add(cid)
            if not isinstance(item.get("params"), dict):
                raise invalid(f"requests.{i}.params: Field required")
        salt = organisation_salt(key)
        batch = Batch(new_id("msgbatch"), requests, version, salt, datetime.now(UTC))
        with self._lock:
            self.batches[batch.id] = batch
        threading.Thread(target=self._run, args=(batch,), daemon=True).start()
        return ok(self._object(batch))

    def _run(self, batch: Batch) -> None:
        if self.delay > 0:
            time.sleep(self.delay)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        results = []
        for item in batch.requests:
            if batch.status == "canceling":
                result: dict = {"type": "canceled"}
            else:
                try:
                    message = self.answer(item["params"], batch.version, batch.key_salt)
                    result = {"type": "succeeded", "message": message}
                except APIFailure as failure:
                    result = {
                        "type": "errored",
                        "error": {
                            "type": "error",
                            "error": {"type": failure.kind, "message": failure.message},
                            "request_id": None,
                        },
                    }
            counts[result["type"]] += 1
            results.append({"custom_id": item["custom_id"], "result": result})
        # results come in an order of their own, as the real API warns
        results.sort(key=lambda r: hashlib.sha256(r["custom_id"].encode()).hexdigest())
        with self._lock:
            batch.results, batch.counts = results, counts
            batch.status, batch.ended_at = "ended", datetime.now(UTC)
        batch.done.set()

    def _batch(self, req: Request) -> Batch:
        authenticate(req, self.api_keys)
        batch = self.batches.get(req.params["batch_id"])
        if batch is None:
            raise APIFailure(
                404, "not_found_error", f"message_batch: {req.params['batch_id']} not found"
            )
        return batch

    def _retrieve(self, req: Request) -> Response:
        batch = self._batch(req)
        with self._lock:
            return ok(self._object(batch))

    def _cancel(self, req: Request) -> Response:
        batch = self._batch(req)
        with self._lock:
            if batch.status == "in_progress":
                batch.status = "canceling"
                batch.cancel_initiated_at = datetime.now(UTC)
            return ok(self._object(batch))

    def _delete(self, req: Request) -> Response:
        batch = self._batch(req)
        if batch.status != "ended":
            raise invalid(f"Batch {batch.id} cannot be deleted while processing; cancel it first")
        with self._lock:
            self.batches.pop(batch.id, None)
        return ok({"id": batch.id, "type": "message_batch_deleted"})

    def _list(self, req: Request) -> Response:
        authenticate(req, self.api_keys)
        try:
            limit = max(1, min(1000, int((req.query.get("limit") or ["20"])[0])))
        except ValueError:
            raise invalid("limit: Input should be a valid integer") from None
        with self._lock:
            data = [self._object(b) for b in reversed(list(self.batches.values()))][:limit]
        return ok(
            {
                "data": data,
                "has_more": len(self.batches) > limit,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    def _results(self, req: Request) -> Response:
        batch = self._batch(req)
        if batch.status != "ended":
            raise invalid(f"Batch {batch.id} has not finished processing; no results yet")
        lines = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in batch.results)
        return Response(
            200, lines.encode("utf-8"), {"request-id": new_id("req")}, "application/x-jsonl"
        )

    def wait(self, timeout: float = HANG_SECONDS) -> bool:
        """Block until every batch has ended; False if ``timeout`` passed first (a hang guard,
        not a speed: tests)."""
        deadline = time.monotonic() + timeout
        for batch in list(self.batches.values()):
            if not batch.done.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True
