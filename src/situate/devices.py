"""Where a local model runs: ``device=auto`` takes a GPU when one is there, else the CPU with
every core this process may use.

A device changes how fast vectors come, not what they are (a GPU's vectors equal the CPU's
within float rounding), so no cache key names it.
"""

from __future__ import annotations

import os

from situate.errors import SituateError

DEVICES = ("auto", "cpu", "cuda", "mps")


def cpu_threads(threads: int | None) -> int:
    """``threads``, or every core this process may run on when it is None."""
    if threads is not None:
        if threads < 1:
            raise SituateError(f"threads={threads}: use a positive number, or null for every core")
        return threads
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def torch_device(device: str, option: str) -> str:
    """The torch device for ``device`` (``auto``: CUDA, else Apple's MPS, else the CPU)."""
    kind = device.split(":", 1)[0]
    if kind not in DEVICES:
        raise SituateError(f"{option}={device}: use one of {', '.join(DEVICES)} (or cuda:N)")
    import torch

    cuda = torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if kind == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if (kind == "cuda" and not cuda) or (kind == "mps" and not mps):
        raise SituateError(
            f"{option}={device}: torch sees no {kind.upper()} device here; set {option}=auto "
            "(a GPU when there is one, else every CPU core) or cpu"
        )
    return device


def onnx_providers(device: str, option: str) -> list[str]:
    """onnxruntime's execution providers for ``device`` (CUDA's where that build is installed)."""
    kind = device.split(":", 1)[0]
    if kind not in DEVICES:
        raise SituateError(f"{option}={device}: use one of {', '.join(DEVICES)}")
    import onnxruntime as ort

    cuda = "CUDAExecutionProvider" in ort.get_available_providers()
    if kind == "cuda" and not cuda:
        raise SituateError(
            f"{option}={device}: this onnxruntime has no CUDA provider (install "
            f"onnxruntime-gpu), or set {option}=auto or cpu"
        )
    if kind in ("cuda", "auto") and cuda:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]
