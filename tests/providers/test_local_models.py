"""Local models' shared loading (``situate.providers.local``): the model folder and its errors."""

from __future__ import annotations

import pytest

from situate.embedding.sentence_transformer import SentenceTransformerEmbedder
from situate.errors import SituateError
from situate.providers.local import model_folder
from situate.reranking.cross_encoder import CrossEncoderReranker


def test_a_model_folder_is_found_with_home_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "model").mkdir()
    assert model_folder("~/model", "embedder.path", "fix it") == tmp_path / "model"


def test_a_missing_folder_is_one_line_naming_the_option_and_the_fix(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(SituateError) as err:
        model_folder(str(missing), "embedder.path", "point it at a folder")
    assert (
        str(err.value) == f"embedder.path={missing}: model folder not found; point it at a folder"
    )
    (tmp_path / "file").write_text("x")
    with pytest.raises(SituateError, match="model folder not found"):
        model_folder(str(tmp_path / "file"), "reranker.path", "fix")  # a file is no folder


def test_the_embedder_and_the_cross_encoder_word_a_missing_folder_as_before(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(SituateError) as err:
        SentenceTransformerEmbedder(path=str(missing)).model_dir()
    assert str(err.value) == (
        f"embedder.path={missing}: model folder not found; point it at a sentence-transformers "
        "folder"
    )
    with pytest.raises(SituateError) as err:
        CrossEncoderReranker(path=str(missing)).model_dir()
    assert str(err.value) == (
        f"reranker.path={missing}: model folder not found; point it at a cross-encoder folder "
        "(config.json, model weights, tokenizer), or use reranker=none"
    )
