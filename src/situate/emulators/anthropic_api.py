"""An Anthropic API emulator: the Messages API with prompt caching, token counting and Message
Batches, as the ``anthropic`` SDK (2.x) sends and parses them.

Point the SDK at it with ``anthropic.Anthropic(api_key=KEY, base_url=emulator.url)``.

:class:`AnthropicEmulator` composes its parts, each described where it lives: the request, its
authentication and errors and the prompt as the cache sees it (:mod:`.anthropic_request`), the
prompt cache (:mod:`.anthropic_cache`), the answer and its server-sent events
(:mod:`.anthropic_answer`), Message Batches (:mod:`.anthropic_batches`) and the rate limits
(:mod:`.rate_buckets`).

Timing and streaming
--------------------
``ttft`` is the time to first token; with ``output_tokens_per_second`` the answer's tokens then
take ``output_tokens / output_tokens_per_second`` more seconds (None: at once). With
``stream: true`` the cache entries a request writes are published right before its
``message_start`` is sent, so a client that waits for that event knows the entry exists. Tests
can keep streamed answers open between their ``message_start`` and the rest
(:meth:`AnthropicEmulator.hold_streams`): responses that have started and not ended, on events
rather than on a throughput the machine's load could outrun.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from situate.emulators.anthropic_answer import answer_message, message_events
from situate.emulators.anthropic_batches import MessageBatches
from situate.emulators.anthropic_cache import PromptCache, min_cacheable_tokens
from situate.emulators.anthropic_request import (
    APIFailure,
    authenticate,
    error_object,
    new_id,
    ok,
    organisation_salt,
    parse_prompt,
    request_body,
)
from situate.emulators.fault_injection import Faults
from situate.emulators.holds import HANG_SECONDS, StreamHold
from situate.emulators.rate_buckets import RateBuckets
from situate.emulators.server import EmulatorServer
from situate.emulators.wire import Handler, Request, Response, json_response


class AnthropicEmulator(EmulatorServer):
    """Serves the Messages API (with prompt caching), token counting and Message Batches.

    Parameters
    ----------
    api_key : str or list of str
        Keys that authenticate.
    faults : Faults or None
        Random fault injection (see :mod:`situate.emulators.fault_injection`).
    ttft : float
        Seconds before a response starts (its cache entries become visible then).
    output_tokens_per_second : float or None
        Generation speed after the first token (None: the whole answer at once).
    rpm, tpm : int or None
        Rate limits per 60 seconds of ``clock`` (requests; input tokens plus ``max_tokens``).
    clock : callable
        Seconds, for cache expiry (``time.monotonic``; tests pass a fake to advance time).
    min_cacheable_tokens : dict or None
        Overrides of the price book's minimums (model name or pattern -> tokens).
    batch_delay : float
        Seconds a batch stays ``in_progress`` before its requests run.
    """

    name = "anthropic-emulator"

    def __init__(
        self,
        api_key: str | list[str] = "sk-ant-emulator",
        faults: Faults | None = None,
        ttft: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        min_cacheable_tokens: dict[str, int] | None = None,
        batch_delay: float = 0.0,
        output_tokens_per_second: float | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        super().__init__(faults, host, port)
        if output_tokens_per_second is not None and output_tokens_per_second <= 0:
            raise ValueError("output_tokens_per_second must be > 0 or None")
        self.api_keys = {api_key} if isinstance(api_key, str) else set(api_key)
        self.ttft = ttft
        self.output_tokens_per_second = output_tokens_per_second
        self.clock = clock
        self.rate_buckets = RateBuckets(rpm, tpm, clock)
        self.cache = PromptCache(clock)
        self.min_overrides = dict(min_cacheable_tokens or {})
        self.message_batches = MessageBatches(
            self.api_keys, self._batch_answer, lambda: self.url, batch_delay
        )
        self.stream_hold = StreamHold()  # see hold_streams()
        for method, path, handler in (
            ("POST", "/v1/messages", self._messages),
            ("POST", "/v1/messages/count_tokens", self._count_tokens),
            *self.message_batches.routes(),
        ):
            self.route(method, path, self._answering(handler))

    def min_cacheable_tokens(self, model: str) -> int:
        return min_cacheable_tokens(model, self.min_overrides)

    # errors in Anthropic's shape -----------------------------------------------------------
    def error_body(self, status: int, message: str, kind: str) -> dict:
        return error_object(message, kind)

    def error(
        self, status: int, message: str, kind: str, headers: dict[str, str] | None = None
    ) -> Response:
        body = self.error_body(status, message, kind)
        return json_response(status, body, {"request-id": body["request_id"], **(headers or {})})

    def _answering(self, handler: Handler) -> Handler:
        """``handler`` with a refusal it raises (:class:`APIFailure`) answered as the API
        words it."""

        def answer(req: Request) -> Response:
            try:
                return handler(req)
            except APIFailure as failure:
                return self.error(failure.status, failure.message, failure.kind)

        return answer

    # POST /v1/messages ---------------------------------------------------------------------
    def _messages(self, req: Request) -> Response:
        key, version = authenticate(req, self.api_keys)
        body = request_body(req)
        prompt = parse_prompt(body, version, organisation_salt(key))
        wait = self.rate_buckets.take(prompt.total + prompt.max_tokens)
        if wait is not None:
            return self.error(
                429,
                "This request would exceed the rate limit for your organization",
                "rate_limit",
                {"retry-after": str(wait)},
            )
        usage, written = self.cache.account(prompt, self.min_cacheable_tokens(prompt.model))
        message = answer_message(prompt, usage, "standard")
        if body.get("stream"):

            def first_token() -> None:
                self.first_token(self.ttft)
                self.cache.publish(written)

            return Response(
                200,
                headers={"request-id": new_id("req")},
                content_type="text/event-stream",
                stream=message_events(
                    message, first_token, self.stream_hold.pause_here, self._generate
                ),
                usage=message["usage"],
            )
        self.first_token(self.ttft)  # the entries exist from here on
        self.cache.publish(written)
        self._generate(message["usage"]["output_tokens"])
        return ok(message)

    def _generate(self, output_tokens: int) -> None:
        """The time the answer's tokens take after the first one."""
        if self.output_tokens_per_second and output_tokens > 1:
            time.sleep((output_tokens - 1) / self.output_tokens_per_second)

    # POST /v1/messages/count_tokens --------------------------------------------------------
    def _count_tokens(self, req: Request) -> Response:
        key, version = authenticate(req, self.api_keys)
        prompt = parse_prompt(request_body(req), version, organisation_salt(key), count_only=True)
        return ok({"input_tokens": prompt.total})

    # Message Batches (see situate.emulators.anthropic_batches) -----------------------------
    def _batch_answer(self, params: dict, version: str, key_salt: str) -> dict:
        """One batched request answered through the cache (its entries published at once)."""
        prompt = parse_prompt(params, version, key_salt)
        usage, written = self.cache.account(prompt, self.min_cacheable_tokens(prompt.model))
        self.cache.publish(written)
        return answer_message(prompt, usage, "batch")

    @property
    def batches(self) -> dict:
        """The batches by id, in order of creation."""
        return self.message_batches.batches

    @property
    def batch_delay(self) -> float:
        """Seconds a batch stays ``in_progress`` before its requests run."""
        return self.message_batches.delay

    @batch_delay.setter
    def batch_delay(self, seconds: float) -> None:
        self.message_batches.delay = seconds

    def wait_for_batches(self, timeout: float = HANG_SECONDS) -> bool:
        """Block until every batch has ended; False if ``timeout`` passed first (a hang guard,
        not a speed: tests)."""
        return self.message_batches.wait(timeout)

    # holding streams (tests; see situate.emulators.holds) ----------------------------------
    def hold_streams(self) -> None:
        """Keep every streamed answer open after its ``message_start`` (sent: its cache entries
        exist, the client knows it started) until :meth:`release_streams`."""
        self.stream_hold.hold()

    def release_streams(self) -> None:
        """Let the held streams (and all later ones) go on to their end."""
        self.stream_hold.release()

    def wait_streams_held(self, n: int, timeout: float = HANG_SECONDS) -> bool:
        """Block until ``n`` streams are held after their start; False if ``timeout`` passed
        first (a hang guard)."""
        return self.stream_hold.wait_held(n, timeout)
