"""CrossEncoderReranker on a tiny random cross-encoder (conftest.tiny_cross_encoder: no hub, no download)."""

from __future__ import annotations

import numpy as np
import pytest

from situate.errors import SituateError
from situate.reranking.cross_encoder import CrossEncoderReranker

PAIRS_TEXTS = ["paris is the capital of france", "bananas are yellow", "", "a" * 5000]


@pytest.mark.slow
def test_scores_have_one_value_per_text(tiny_cross_encoder):
    r = CrossEncoderReranker(path=str(tiny_cross_encoder), max_length=64, batch_size=2)
    assert r._model is None  # loads lazily
    scores = r.score("what is the capital of france", PAIRS_TEXTS)
    assert scores.shape == (4,) and scores.dtype == np.float64
    assert np.isfinite(scores).all()
    assert r._model is not None


@pytest.mark.slow
def test_scores_are_deterministic(tiny_cross_encoder):
    a = CrossEncoderReranker(path=str(tiny_cross_encoder), max_length=64)
    b = CrossEncoderReranker(path=str(tiny_cross_encoder), max_length=64)
    first = a.score("capital of france", PAIRS_TEXTS)
    np.testing.assert_allclose(first, a.score("capital of france", PAIRS_TEXTS), rtol=0, atol=1e-6)
    np.testing.assert_allclose(first, b.score("capital of france", PAIRS_TEXTS), rtol=0, atol=1e-6)
    # a pair scores the same alone as in a batch
    np.testing.assert_allclose(
        first[1], a.score("capital of france", [PAIRS_TEXTS[1]])[0], atol=1e-5
    )


@pytest.mark.slow
def test_pool_name_and_identity(tiny_cross_encoder):
    r = CrossEncoderReranker(path=str(tiny_cross_encoder), pool=40, max_length=128)
    assert r.pool == 40
    assert r.name == tiny_cross_encoder.name
    assert r.identity() == {
        "provider": "sentence-transformers-cross-encoder",
        "model": str(tiny_cross_encoder),
        "max_length": 128,
    }
    named = CrossEncoderReranker(model="cross-encoder/ms-marco-MiniLM-L6-v2")
    assert named.identity()["model"] == "cross-encoder/ms-marco-MiniLM-L6-v2"
    assert named.pool == 150
    assert named.score("q", []).shape == (0,)  # nothing to score: no model load


def test_missing_model_name_is_the_exact_one_line_error(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    r = CrossEncoderReranker(model="cross-encoder/ms-marco-MiniLM-L6-v2")
    with pytest.raises(SituateError) as err:
        r.score("q", ["d"])
    assert str(err.value) == (
        "reranker=cross_encoder: model 'cross-encoder/ms-marco-MiniLM-L6-v2' is not available "
        "offline; download it on a machine with internet (e.g. `hf download "
        "cross-encoder/ms-marco-MiniLM-L6-v2 --local-dir /folder`) and set reranker.path=/folder, "
        "or use reranker=none"
    )


def test_missing_path_and_no_model_are_errors(tmp_path):
    with pytest.raises(SituateError) as err:
        CrossEncoderReranker(path=str(tmp_path / "nope")).score("q", ["d"])
    assert "reranker.path=" in str(err.value) and "not found" in str(err.value)
    with pytest.raises(SituateError):
        CrossEncoderReranker()
