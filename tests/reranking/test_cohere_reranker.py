"""CohereReranker through the real ``cohere`` SDK (ClientV2) against the local Cohere emulator."""

from __future__ import annotations

import numpy as np
import pytest

from situate.emulators.cohere_api import CohereEmulator
from situate.errors import SituateError
from situate.rankings import Rankings
from situate.reranking.base import CachedReranker
from situate.reranking.cohere_reranker import CohereReranker
from situate.stores.sqlite import BlobStore

KEY = "co-rerank-test-5566"

TEXTS = [
    "bananas are yellow fruit",
    "the capital of france is paris",
    "paris is the capital and largest city of france",
    "a recipe for banana bread",
    "",
]


@pytest.fixture
def emu(monkeypatch):
    monkeypatch.setenv("CO_API_KEY", KEY)
    with CohereEmulator(api_key=KEY) as server:
        yield server


def test_order_follows_relevance(emu):
    r = CohereReranker(base_url=emu.url)
    scores = r.score("capital of france", TEXTS)
    assert scores.shape == (5,) and scores.dtype == np.float64
    assert ((scores >= 0) & (scores <= 1)).all()
    assert set(np.argsort(-scores)[:2]) == {1, 2}
    assert scores[0] == scores[3] == scores[4] == 0.0
    assert r.requests == 1 and r.billed().search_units == 1.0
    (body,) = emu.bodies("/v2/rerank")
    assert body == {
        "model": "rerank-english-v3.0",
        "query": "capital of france",
        "documents": [*TEXTS[:4], " "],  # the API refuses empty documents
        "top_n": 5,  # every document gets its score
        "max_tokens_per_doc": 4096,
    }


def test_top_n_and_max_tokens_per_doc_are_sent(emu):
    r = CohereReranker(base_url=emu.url, top_n=2, max_tokens_per_doc=64)
    scores = r.score("capital of france", TEXTS)
    (body,) = emu.bodies("/v2/rerank")
    assert body["top_n"] == 2 and body["max_tokens_per_doc"] == 64
    assert (scores[[0, 3, 4]] == -1.0).all()  # not returned: below every real score
    assert (scores[[1, 2]] > 0).all()
    assert r.identity() == {
        "provider": "cohere",
        "model": "rerank-english-v3.0",
        "max_tokens_per_doc": 64,
        "top_n": 2,
        "endpoint": emu.url,
    }


def test_max_tokens_per_doc_truncates_what_the_model_reads(emu):
    long_doc = "filler " * 200 + "paris france capital"
    full = CohereReranker(base_url=emu.url).score("capital of france", [long_doc])
    cut = CohereReranker(base_url=emu.url, max_tokens_per_doc=16).score(
        "capital of france", [long_doc]
    )
    assert full[0] > 0 and cut[0] == 0


def test_many_documents_are_split_across_requests(emu):
    texts = [f"doc {i} about {'france' if i % 3 == 0 else 'spain'}" for i in range(25)]
    one = CohereReranker(base_url=emu.url).score("france", texts)
    emu.clear()
    split = CohereReranker(base_url=emu.url, max_documents=10)
    many = split.score("france", texts)
    assert [len(b["documents"]) for b in emu.bodies("/v2/rerank")] == [10, 10, 5]
    np.testing.assert_array_equal(one, many)
    assert split.requests == 3 and split.search_units == 3.0


def test_with_cached_reranker_pool(emu, tmp_path):
    r = CohereReranker(base_url=emu.url, pool=3)
    cached = CachedReranker(r, BlobStore(tmp_path / "scores.db", "rerank"))
    candidates = Rankings.from_rows([(np.array([0, 3, 2, 1]), np.array([4.0, 3.0, 2.0, 1.0]))], 4)
    ranked = cached("capital of france", TEXTS, candidates, depth=4)
    ids, _ = ranked.row(0)
    assert list(ids) == [2, 0, 3, 1]  # the pool of 3 reranked, candidate 1 kept below it
    assert len(emu.bodies("/v2/rerank")[0]["documents"]) == 3
    cached("capital of france", TEXTS, candidates, depth=4)
    assert emu.calls("/v2/rerank") == 1  # scores came from the cache


def test_emulator_refuses_over_1000_documents(emu):
    r = CohereReranker(base_url=emu.url)
    r.max_documents = 1001  # bypass the client-side check to reach the server's
    with pytest.raises(SituateError) as err:
        r.score("q", ["d"] * 1001)
    assert "1000" in str(err.value)


def test_missing_key_and_no_call_for_no_texts(emu, monkeypatch):
    assert CohereReranker(base_url=emu.url).score("q", []).shape == (0,)
    monkeypatch.delenv("CO_API_KEY")
    with pytest.raises(SituateError) as err:
        CohereReranker(base_url=emu.url).score("q", ["d"])
    assert (
        str(err.value)
        == "reranker=cohere: set CO_API_KEY (the key is read from the environment only)"
    )
    assert emu.calls() == 0


def test_faults_are_retried(emu):
    emu.inject("reset", "500")
    scores = CohereReranker(base_url=emu.url).score("capital of france", TEXTS)
    assert set(np.argsort(-scores)[:2]) == {1, 2}
    assert [r.fault for r in emu.requests] == ["reset", "500", None]
