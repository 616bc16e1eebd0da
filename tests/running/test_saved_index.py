"""The index `situate index` saves for `situate search` is keyed by what decides its content."""

from __future__ import annotations

from pathlib import Path

import pytest

from situate.config.compose import compose
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.errors import SituateError
from situate.running import saved_index
from situate.running.app import build_pipeline

KEY = "emulator-key-test-saved-index"


def opened(overrides: list[str]) -> saved_index.LoadedIndex:
    cfg = compose(overrides)
    return saved_index.load(cfg, build_pipeline(cfg), overrides)


def test_how_contexts_are_bought_needs_no_rebuild_another_embedder_does(
    cookbook_dir: Path, tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with AnthropicEmulator(api_key=KEY, ttft=0.0) as emu:
        base = [
            "dataset.max_documents=1", "context=llm", f"llm.base_url={emu.url}",
            "embedder=minilm_onnx", f"output_dir={tmp_path}",
        ]  # fmt: skip
        cfg = compose(base)
        folder, _ = saved_index.build(cfg, build_pipeline(cfg))
        written = emu.calls("/v1/messages", ok_only=True)
        assert written > 0  # each chunk's context, written by the emulated model
        for changed in ("context.concurrency=1", "context.budget_usd=5", "context.rpm=60"):
            index = opened([*base, changed])
            assert index.folder == folder, changed
            hits, _ = index.search("What does the first file define?", 3)
            assert [h.rank for h in hits] == [1, 2, 3]
            assert all(h.context for h in hits)  # the contexts saved with the index
        assert emu.calls("/v1/messages", ok_only=True) == written  # search wrote none again
        with pytest.raises(SituateError, match="no index for this config; run `situate index"):
            opened([*base, "embedder=minilm"])
        with pytest.raises(SituateError, match="no index for this config"):
            opened([*base, "prompt=code"])  # other contexts: another index


def test_where_the_corpus_cache_lives_is_not_part_of_the_index_key(tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nSome text about ovens.\n", encoding="utf-8")
    base = ["dataset=folder", f"dataset.path={folder}", "chunker=markdown", "context=none"]
    keys = set()
    for extra in ([], ["dataset.corpus_cache=null"], [f"dataset.corpus_cache={tmp_path / 'c'}"]):
        cfg = compose([*base, *extra, f"output_dir={tmp_path}"])
        keys.add(saved_index.index_key(cfg, build_pipeline(cfg)))
    assert len(keys) == 1
    cfg = compose([*base, "dataset.max_words=100", f"output_dir={tmp_path}"])
    assert saved_index.index_key(cfg, build_pipeline(cfg)) not in keys  # what it holds is
