"""The gate and retries of an API stage's requests (:mod:`situate.paid.adapter`,
:func:`situate.paid.retry.send`)."""

from __future__ import annotations

import pytest

from situate.errors import SituateError
from situate.paid.adapter import ApiGate
from situate.paid.retry import Retries, send
from situate.providers import openai as openai_vendor


class Clock:
    """Virtual time: ``sleep`` moves it on."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_an_api_gate_holds_requests_to_rpm():
    clock = Clock()
    gate = ApiGate("embedder", rpm=2, tpm=None, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        assert send(lambda: "ok", openai_vendor.retryable, Retries(0), gate) == "ok"
    # the third waits for the first to leave the 61-second window (60 s + 1 s guard)
    assert [t for t, _ in gate.ceiling.admitted] == [0.0, 0.0, 61.0]


def test_an_api_gate_holds_requests_to_tpm():
    clock = Clock()
    gate = ApiGate("reranker", rpm=None, tpm=100, clock=clock, sleep=clock.sleep)
    gate.tokens = 60
    send(lambda: 1, openai_vendor.retryable, Retries(0), gate)
    send(lambda: 2, openai_vendor.retryable, Retries(0), gate)  # 120 > 100: waits
    assert [t for t, _ in gate.ceiling.admitted] == [0.0, 61.0]
    gate.tokens = 101
    with pytest.raises(SituateError, match=r"^reranker\.tpm=100: one call is estimated at 101"):
        send(lambda: 3, openai_vendor.retryable, Retries(0), gate)


def test_a_rate_limited_attempt_halves_the_limit_and_is_retried():
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/embeddings")
    answers = [httpx.Response(429, headers={"retry-after": "0"}, request=request)]

    def call():
        if answers:
            raise openai.RateLimitError("slow down", response=answers.pop(), body=None)
        return "vectors"

    gate = ApiGate("embedder", rpm=None, tpm=None, concurrency=4)
    assert send(call, openai_vendor.retryable, Retries(2), gate) == "vectors"
    assert gate.rate_limited == 1 and gate.limit.history == [4, 2]


def test_a_call_failing_after_its_retries_raises_the_vendors_last_error():
    import httpx
    import openai

    def call():
        raise openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1:9/v1"))

    with pytest.raises(openai.APIConnectionError):
        send(call, openai_vendor.retryable, Retries(1, backoff_base=0.0), ApiGate("e", None, None))


def test_embedder_and_reranker_refuse_a_bad_rate_ceiling():
    from situate.embedding.cohere_embedder import CohereEmbedder
    from situate.reranking.cohere_reranker import CohereReranker

    with pytest.raises(SituateError, match=r"^embedder\.rpm=0 must be >= 1 or null"):
        CohereEmbedder(rpm=0)
    with pytest.raises(SituateError, match=r"^reranker\.tpm=-1 must be >= 1 or null"):
        CohereReranker(tpm=-1)
