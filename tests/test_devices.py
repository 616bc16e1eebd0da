"""Where local models run: ``device=auto`` and every core by default."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from situate.devices import cpu_threads, onnx_providers, torch_device
from situate.embedding.sentence_transformer import SentenceTransformerEmbedder
from situate.errors import SituateError

GPU = torch.cuda.is_available()


def test_threads_default_to_every_core_this_process_may_use():
    assert cpu_threads(None) == len(os.sched_getaffinity(0))
    assert cpu_threads(3) == 3
    with pytest.raises(SituateError, match="threads=0: use a positive number"):
        cpu_threads(0)


def test_auto_takes_the_gpu_when_torch_sees_one_else_the_cpu():
    assert torch_device("auto", "embedder.device") == ("cuda" if GPU else "cpu")
    assert torch_device("cpu", "embedder.device") == "cpu"
    assert onnx_providers("cpu", "embedder.device") == ["CPUExecutionProvider"]
    assert onnx_providers("auto", "embedder.device")[-1] == "CPUExecutionProvider"


def test_a_device_that_is_not_there_is_one_line():
    with pytest.raises(SituateError) as e:
        torch_device("tpu", "embedder.device")
    assert str(e.value) == "embedder.device=tpu: use one of auto, cpu, cuda, mps (or cuda:N)"
    if not GPU:
        with pytest.raises(SituateError, match="embedder.device=cuda: torch sees no CUDA device"):
            torch_device("cuda", "embedder.device")


def test_the_device_is_not_part_of_the_cache_key():
    assert (
        SentenceTransformerEmbedder(device="cpu").identity()
        == SentenceTransformerEmbedder(device="auto").identity()
    )


@pytest.mark.skipif(not GPU, reason="no CUDA GPU on this machine")
def test_vectors_on_the_gpu_equal_the_cpus_within_1e_4_cosine():
    texts = ["How does DiffExecutor work?", "quarterly revenue rose 4% to $314M", "x " * 400]
    cpu = SentenceTransformerEmbedder(device="cpu").encode(texts, "document")
    gpu = SentenceTransformerEmbedder(device="cuda").encode(texts, "document")
    assert np.min(np.sum(cpu * gpu, axis=1)) > 1 - 1e-4
