"""An embedder that waits at a gate: the real ONNX MiniLM, which at its first ``encode`` (in the
run, after the job's MLflow run is opened and before its metrics are logged) marks its arrival
and, in the job that ``stop_at`` numbers, waits until the test opens the gate.

``gate`` is a folder: the ``n``-th embedder of the process to encode writes ``arrived-<n>``
there; at ``n == stop_at`` it waits for ``open-<n>``. A run uses it with ``embedder=minilm_onnx
embedder._target_=gated_embedder.GatedEmbedder +embedder.gate=DIR +embedder.stop_at=N``
(``tests/tracking`` on ``PYTHONPATH``), each job with vectors of its own (a swept
``embedder.max_seq_length``: cached vectors are not encoded). A test can then stop a tracking
server mid-sweep at a known point, waiting on files, never on time.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from situate.embedding.onnx_minilm import OnnxMiniLMEmbedder

GATE_LIMIT_SECONDS = 600  # a test that never opens the gate fails instead of hanging


class GatedEmbedder(OnnxMiniLMEmbedder):
    _arrivals = 0  # embedders of this process that encoded (a sweep's jobs run one by one)

    def __init__(self, gate: str = "", stop_at: int = -1, **kwargs):
        super().__init__(**kwargs)
        self.gate, self.stop_at = Path(gate), stop_at
        self.arrived = False

    def encode(self, texts, kind) -> np.ndarray:
        if not self.arrived:
            self.arrived = True
            n = GatedEmbedder._arrivals
            GatedEmbedder._arrivals += 1
            (self.gate / f"arrived-{n}").touch()
            if n == self.stop_at:
                deadline = time.monotonic() + GATE_LIMIT_SECONDS
                while not (self.gate / f"open-{n}").exists():
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"gate {self.gate}: open-{n} never came")
                    time.sleep(0.02)
        return super().encode(texts, kind)
