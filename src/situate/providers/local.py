"""Models run in this process (``llm=local_*``, ``embedder=minilm*``, ``reranker=cross_encoder``):
no key, no endpoint, no emulator, nothing billed. Their call failures are
:class:`situate.paid.llm.LLMCallFailed`, counted and resumed like an API's."""

from __future__ import annotations

import os
from pathlib import Path

from situate.devices import cpu_threads, torch_device
from situate.errors import SituateError
from situate.providers import Vendor

# the Hugging Face variables that keep a task offline as the driver is
VENDOR = Vendor(
    name="local", key_env=None, pricing=(), env=("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
)


def model_folder(path: str, option: str, fix: str) -> Path:
    """The model folder ``path`` (``~`` expanded), or one line naming ``option`` and ``fix``."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise SituateError(f"{option}={folder}: model folder not found; {fix}")
    return folder


def offline_torch(device: str, threads: int | None, option: str) -> str:
    """Keep Hugging Face offline, quiet transformers' logs and progress bars, give torch
    ``threads`` CPU threads (None: every core); the torch device for ``device``."""
    for variable in VENDOR.env:
        os.environ.setdefault(variable, "1")
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    chosen = torch_device(device, option)
    torch.set_num_threads(cpu_threads(threads))
    return chosen
