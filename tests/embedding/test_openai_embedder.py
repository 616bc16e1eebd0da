"""OpenAIEmbedder through the real ``openai`` SDK against the local OpenAI emulator."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import numpy as np
import openai
import pytest

from situate.embedding.openai_embedder import OpenAIEmbedder
from situate.emulators.fault_injection import Faults
from situate.emulators.openai_api import OpenAIEmulator, decode_base64_embedding
from situate.errors import SituateError

KEY = "sk-test-4f9a1c2b7e3d5f60"


@pytest.fixture
def emu():
    with OpenAIEmulator(api_key=KEY, faults=Faults(retry_after="0.05")) as server:
        yield server


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def embedder(emu, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url=f"{emu.url}/v1", **kw)


def test_vectors_have_shape_and_unit_norm(emu, key_env):
    e = embedder(emu)
    v = e.encode(["the cat sat on the mat", "a dog in the fog", "quarterly revenue"], "document")
    assert v.shape == (3, 1536) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert e.billed().tokens == e.tokens_used > 0 and e.requests == 1


def test_vectors_are_deterministic_and_similar_texts_are_close(emu, key_env):
    e = embedder(emu)
    a, b, c = e.encode(
        ["how do I reset my password", "reset password instructions", "the weather in Lisbon"],
        "query",
    )
    assert float(a @ b) > float(a @ c)
    again = embedder(emu).encode(["how do I reset my password"], "query")[0]
    np.testing.assert_array_equal(a, again)


def test_batching_splits_1200_texts_into_3_requests(emu, key_env):
    e = embedder(emu, batch_size=512)
    texts = [f"passage {i} about topic {i % 7}" for i in range(1200)]
    v = e.encode(texts, "document")
    assert v.shape == (1200, 1536)
    bodies = emu.bodies("/v1/embeddings")
    assert [len(b["input"]) for b in bodies] == [512, 512, 176]
    assert [t for b in bodies for t in b["input"]] == texts  # order kept
    assert e.requests == 3


def test_token_budget_splits_batches(emu, key_env):
    # 10 texts of 3,000 bytes ~ 1,000 estimated tokens each; a 2,500-token budget -> 2 per batch
    e = embedder(emu, max_batch_tokens=2500)
    e.encode(["x" * 3000] * 10, "document")
    assert [len(b["input"]) for b in emu.bodies("/v1/embeddings")] == [2, 2, 2, 2, 2]


def test_request_refused_for_its_token_count_is_split_and_resent(key_env):
    with OpenAIEmulator(api_key=KEY, max_tokens_per_request=1000) as emu:
        e = embedder(emu)
        v = e.encode(["word " * 100] * 16, "document")  # 125 tokens each, 2,000 in all
        assert v.shape == (16, 1536)
        refused = [r for r in emu.requests if r.status == 400]
        assert len(refused) == 1 and len(refused[0].body["input"]) == 16
        assert [len(b["input"]) for b in emu.bodies("/v1/embeddings")] == [8, 8]


def test_dimensions_are_honoured_matryoshka_style(emu, key_env):
    full = embedder(emu).encode(["matryoshka dolls nest inside each other"], "document")[0]
    short = embedder(emu, dimensions=256).encode(
        ["matryoshka dolls nest inside each other"], "document"
    )
    assert short.shape == (1, 256)
    np.testing.assert_allclose(short[0], full[:256] / np.linalg.norm(full[:256]), atol=1e-6)
    assert emu.bodies()[-1]["dimensions"] == 256
    assert embedder(emu, dimensions=256).identity()["dimensions"] == 256


def test_request_body_has_the_sdk_shape(emu, key_env):
    embedder(emu).encode(["alpha", "beta"], "document")
    (rec,) = emu.requests
    assert rec.method == "POST" and rec.path == "/v1/embeddings"
    # the SDK asks for base64 by default and decodes it itself
    assert rec.body == {
        "model": "text-embedding-3-small",
        "input": ["alpha", "beta"],
        "encoding_format": "base64",
    }
    assert rec.headers["content-type"] == "application/json"
    assert rec.headers["user-agent"].startswith("OpenAI/Python")
    assert rec.headers["x-stainless-retry-count"] == "0"


def test_emulator_serves_float_and_base64_alike(emu):
    client = openai.OpenAI(api_key=KEY, base_url=f"{emu.url}/v1", max_retries=0)
    as_float = client.embeddings.create(
        model="text-embedding-3-large", input=["same text"], encoding_format="float"
    )
    as_b64 = client.embeddings.create(
        model="text-embedding-3-large", input=["same text"], encoding_format="base64"
    )
    assert as_float.object == "list" and as_float.data[0].object == "embedding"
    assert len(as_float.data[0].embedding) == 3072
    assert isinstance(as_b64.data[0].embedding, str)  # explicit base64 is left encoded
    np.testing.assert_allclose(
        decode_base64_embedding(as_b64.data[0].embedding), as_float.data[0].embedding, atol=1e-6
    )
    assert as_float.usage.prompt_tokens == as_float.usage.total_tokens > 0
    ids = client.embeddings.create(model="text-embedding-3-small", input=[[1, 2, 3], [4, 5]])
    assert [d.index for d in ids.data] == [0, 1] and ids.usage.total_tokens == 5


def test_emulator_enforces_the_api_limits(emu):
    client = openai.OpenAI(api_key=KEY, base_url=f"{emu.url}/v1", max_retries=0)
    with pytest.raises(openai.BadRequestError) as too_many:
        client.embeddings.create(model="text-embedding-3-small", input=["a"] * 2049)
    assert "2048" in too_many.value.message
    with pytest.raises(openai.BadRequestError) as too_long:
        client.embeddings.create(model="text-embedding-3-small", input=["y" * 40_000])
    assert "8192" in too_long.value.message
    with pytest.raises(openai.BadRequestError) as budget:
        # 7,000 cl100k_base tokens each (under 8,192), 350,000 in all (over 300,000)
        client.embeddings.create(model="text-embedding-3-small", input=["hello" * 7000] * 50)
    assert budget.value.code == "max_tokens_per_request"
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="text-embedding-3-small", input=[""])
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="text-embedding-ada-002", input=["x"], dimensions=8)
    with pytest.raises(openai.NotFoundError) as missing:
        client.embeddings.create(model="text-embedding-9", input=["x"])
    assert missing.value.code == "model_not_found"


def test_auth_errors_have_the_real_shape(emu):
    req = urllib.request.Request(
        f"{emu.url}/v1/embeddings",
        data=json.dumps({"model": "text-embedding-3-small", "input": ["x"]}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(req, timeout=10)
    assert missing.value.code == 401
    body = json.loads(missing.value.read())
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == "invalid_request_error"
    assert "didn't provide an API key" in body["error"]["message"]

    client = openai.OpenAI(api_key="sk-wrong-000000000000", base_url=f"{emu.url}/v1")
    with pytest.raises(openai.AuthenticationError) as wrong:
        client.embeddings.create(model="text-embedding-3-small", input=["x"])
    assert wrong.value.code == "invalid_api_key"
    assert "sk-wrong-000000000000" not in wrong.value.message  # masked, like the real API


def test_429_with_retry_after_is_retried(emu, key_env):
    emu.inject("429_retry_after")
    t0 = time.perf_counter()
    v = embedder(emu).encode(["retry me"], "document")
    assert v.shape == (1, 1536)
    assert time.perf_counter() - t0 >= 0.05  # situate.paid.retry.send waited for retry-after
    assert [(r.status, r.fault) for r in emu.requests] == [(429, "429_retry_after"), (200, None)]
    # retried by situate (one path for every paid call), not by the SDK: each attempt is a first
    assert [r.headers["x-stainless-retry-count"] for r in emu.requests] == ["0", "0"]


def test_reset_and_500_are_retried(emu, key_env):
    emu.inject("reset", "500")
    v = embedder(emu).encode(["flaky network"], "document")
    assert v.shape == (1, 1536)
    assert [r.fault for r in emu.requests] == ["reset", "500", None]


def test_retries_exhausted_is_a_one_line_error(emu, key_env):
    emu.inject("429_retry_after", "429_retry_after")
    with pytest.raises(SituateError) as err:
        embedder(emu, max_retries=1).encode(["never"], "document")
    assert "HTTP 429" in str(err.value) and "\n" not in str(err.value)


def test_missing_key_is_a_one_line_error(emu, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SituateError) as err:
        embedder(emu).encode(["x"], "document")
    assert str(err.value) == (
        "embedder=openai: set OPENAI_API_KEY (the key is read from the environment only)"
    )
    assert emu.calls() == 0


def test_wrong_key_names_the_variable_not_the_key(emu, monkeypatch):
    monkeypatch.setenv("MY_OPENAI_KEY", "sk-not-the-right-one-123456")
    with pytest.raises(SituateError) as err:
        embedder(emu, api_key_env="MY_OPENAI_KEY").encode(["x"], "document")
    msg = str(err.value)
    assert "MY_OPENAI_KEY" in msg and "sk-not-the-right-one-123456" not in msg
    assert "\n" not in msg


def test_key_never_appears_in_logs_or_identity(emu, key_env):
    e = embedder(emu, dimensions=512)
    e.encode(["secret-free"], "document")
    e.encode(["q"], "query")
    assert KEY not in repr(emu.requests)
    assert all(r.headers["authorization"] == "[redacted]" for r in emu.requests)
    ident = e.identity()
    assert ident == {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "dimensions": 512,
        "endpoint": f"{emu.url}/v1",  # where the vectors came from: part of their cache key
    }
    assert KEY not in json.dumps(ident)


def test_empty_input_and_blank_texts(emu, key_env):
    e = embedder(emu)
    assert e.encode([], "document").shape[0] == 0
    assert emu.calls() == 0
    v = e.encode(["", "  "], "document")  # the API refuses "", so blanks are sent as " "
    assert v.shape == (2, 1536)


def test_bad_settings_are_refused():
    with pytest.raises(SituateError):
        OpenAIEmbedder(batch_size=4096)
    with pytest.raises(SituateError):
        OpenAIEmbedder(max_batch_tokens=400_000)


def test_a_text_past_the_8192_token_window_is_cut_to_it_not_refused(emu, key_env):
    # "hello" then 9,000 " hello": 9,001 cl100k_base tokens; the API refuses inputs over 8,192
    long = "hello" + " hello" * 9000
    refused = urllib.request.Request(
        f"{emu.url}/v1/embeddings",
        data=json.dumps({"model": "text-embedding-3-small", "input": [long]}).encode(),
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(refused, timeout=10)
    assert err.value.code == 400
    e = embedder(emu)
    v = e.encode([long, "hello"], "document")
    assert v.shape == (2, 1536)
    assert e.tokens_used == 8192 + 1  # what was sent: the window's first 8,192 tokens, and "hello"
    cut = "hello" + " hello" * 8191  # the same first 8,192 tokens embed to the same vector
    np.testing.assert_allclose(v[0], e.encode([cut], "document")[0], atol=1e-6)
