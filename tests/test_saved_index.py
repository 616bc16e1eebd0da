"""The index `situate index` saves for `situate search` is keyed by what decides its content."""

from __future__ import annotations

from pathlib import Path

import pytest

from situate import saved_index
from situate.app import build_pipeline
from situate.config import compose
from situate.emulators.anthropic_api import AnthropicEmulator
from situate.errors import SituateError

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
