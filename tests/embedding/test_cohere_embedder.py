"""CohereEmbedder through the real ``cohere`` SDK (ClientV2) against the local Cohere emulator."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import cohere
import numpy as np
import pytest
from cohere.core.api_error import ApiError

from situate.embedding.cohere_embedder import CohereEmbedder
from situate.emulators.cohere_api import CohereEmulator
from situate.errors import SituateError

KEY = "co-test-91b2c3d4e5f6"


@pytest.fixture
def emu():
    with CohereEmulator(api_key=KEY) as server:
        yield server


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("CO_API_KEY", KEY)


def embedder(emu, **kw) -> CohereEmbedder:
    return CohereEmbedder(base_url=emu.url, **kw)


def post(emu, path: str, body: dict, key: str | None = KEY) -> tuple[int, dict]:
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    req = urllib.request.Request(
        f"{emu.url}{path}", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_input_type_follows_kind(emu, key_env):
    e = embedder(emu)
    docs = e.encode(["a passage about rivers", "another about lakes"], "document")
    query = e.encode(["rivers"], "query")
    assert docs.shape == (2, 1024) and query.shape == (1, 1024) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    first, second = emu.bodies("/v2/embed")
    assert first["input_type"] == "search_document"
    assert second["input_type"] == "search_query"
    assert first == {
        "texts": ["a passage about rivers", "another about lakes"],
        "model": "embed-english-v3.0",
        "input_type": "search_document",
        "embedding_types": ["float"],
        "truncate": "END",
    }
    assert e.identity()["input_types"] == {"document": "search_document", "query": "search_query"}
    assert e.billed().tokens == e.tokens_used > 0


def test_batches_of_96(emu, key_env):
    e = embedder(emu)
    texts = [f"text {i}" for i in range(200)]
    v = e.encode(texts, "document")
    assert v.shape == (200, 1024)
    bodies = emu.bodies("/v2/embed")
    assert [len(b["texts"]) for b in bodies] == [96, 96, 8]
    assert [t for b in bodies for t in b["texts"]] == texts
    assert e.requests == 3


def test_output_dimension_for_embed_v4(emu, key_env):
    v = embedder(emu, model="embed-v4.0", dimensions=256).encode(["short vectors"], "document")
    assert v.shape == (1, 256)
    assert emu.bodies()[-1]["output_dimension"] == 256


def test_response_has_the_v2_shape(emu):
    status, body = post(
        emu,
        "/v2/embed",
        {
            "model": "embed-english-light-v3.0",
            "texts": ["hello world"],
            "input_type": "search_document",
            "embedding_types": ["float", "int8", "ubinary"],
        },
    )
    assert status == 200
    assert set(body) == {"id", "embeddings", "texts", "meta", "response_type"}
    assert body["response_type"] == "embeddings_by_type"
    assert len(body["embeddings"]["float"][0]) == 384
    assert len(body["embeddings"]["ubinary"][0]) == 384 // 8
    assert body["texts"] == ["hello world"]
    assert body["meta"]["billed_units"]["input_tokens"] > 0
    assert body["meta"]["api_version"]["version"] == "2"


def test_emulator_refuses_what_the_api_refuses(emu):
    status, body = post(
        emu,
        "/v2/embed",
        {"model": "embed-english-v3.0", "texts": ["x"] * 97, "input_type": "search_query"},
    )
    assert status == 400 and "96" in body["message"] and "id" in body
    status, body = post(emu, "/v2/embed", {"model": "embed-english-v3.0", "texts": ["x"]})
    assert status == 400 and "input_type" in body["message"]
    status, _ = post(emu, "/v2/embed", {"model": "embed-english-v2.0", "texts": ["x"]})
    assert status == 200  # v2 models do without input_type
    status, body = post(
        emu,
        "/v2/embed",
        {"model": "embed-english-v3.0", "texts": ["x"], "input_type": "search_query"},
        key=None,
    )
    assert status == 401 and body["message"] == "no api key supplied"
    client = cohere.ClientV2(api_key="co-wrong", base_url=emu.url, max_retries=0)
    with pytest.raises(ApiError) as err:
        client.embed(
            model="embed-english-v3.0",
            texts=["x"],
            input_type="search_query",
            embedding_types=["float"],
        )
    assert err.value.status_code == 401


def test_dropped_connection_is_retried(emu, key_env):
    emu.inject("reset")
    v = embedder(emu).encode(["flaky"], "document")
    assert v.shape == (1, 1024)
    assert [r.fault for r in emu.requests] == ["reset", None]


def test_missing_key_is_a_one_line_error(emu, monkeypatch):
    monkeypatch.delenv("CO_API_KEY", raising=False)
    with pytest.raises(SituateError) as err:
        embedder(emu).encode(["x"], "document")
    assert (
        str(err.value)
        == "embedder=cohere: set CO_API_KEY (the key is read from the environment only)"
    )


def test_wrong_key_is_a_one_line_error_without_the_key(emu, monkeypatch):
    monkeypatch.setenv("CO_API_KEY", "co-not-this-one")
    with pytest.raises(SituateError) as err:
        embedder(emu).encode(["x"], "document")
    msg = str(err.value)
    assert "CO_API_KEY" in msg and "co-not-this-one" not in msg and "\n" not in msg
    assert KEY not in repr(emu.requests)


def test_bad_settings_are_refused():
    with pytest.raises(SituateError):
        CohereEmbedder(batch_size=97)
    with pytest.raises(SituateError):
        CohereEmbedder(truncate="MIDDLE")
