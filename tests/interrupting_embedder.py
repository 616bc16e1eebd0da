"""An embedder that stops its run as Ctrl-C would, after a set number of texts.

The real ONNX MiniLM embeds the first ``interrupt_after`` texts (their vectors are stored, as a
real interrupted run's are), then ``KeyboardInterrupt`` is raised where the next batch would be
embedded. A run uses it with ``embedder=minilm_onnx embedder._target_=interrupting_embedder.
InterruptingEmbedder +embedder.interrupt_after=N`` (``tests/`` on ``PYTHONPATH``).
"""

from __future__ import annotations

import numpy as np

from situate.embedding.onnx_minilm import OnnxMiniLMEmbedder


class InterruptingEmbedder(OnnxMiniLMEmbedder):
    def __init__(self, interrupt_after: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.interrupt_after = interrupt_after
        self.embedded = 0

    def encode(self, texts: list[str], kind) -> np.ndarray:
        if self.embedded + len(texts) > self.interrupt_after:
            raise KeyboardInterrupt
        self.embedded += len(texts)
        return super().encode(texts, kind)
