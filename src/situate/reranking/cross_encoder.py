"""``reranker: cross_encoder``: a sentence-transformers ``CrossEncoder`` on the CPU, offline.

A model ``path`` (a local folder) is loaded as it is. A model name (``cross-encoder/ms-marco-
MiniLM-L6-v2``) resolves only through the local Hugging Face cache, with ``HF_HUB_OFFLINE=1``:
nothing is downloaded at run time. The model loads on the first ``score`` call. Scores are the
model's own output (for one-label models such as the ms-marco ones, a sigmoid in [0, 1]).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from situate.embedding.truncation import TokenWindow, model_folder_window
from situate.errors import SituateError, Unavailable
from situate.money.billing import Unbilled
from situate.providers.local import model_folder, offline_torch

CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L6-v2"  # conf/reranker/cross_encoder.yaml's model


class CrossEncoderReranker(Unbilled):
    """Score (query, text) pairs jointly with a cross-encoder.

    Parameters
    ----------
    model : str or None
        Hugging Face model name, found in the local cache only.
    path : str or None
        A local model folder; overrides ``model``.
    pool : int
        Fused candidates per query to rescore.
    max_length : int
        Tokens of each (query, text) pair the model reads.
    batch_size : int
        Pairs per forward pass.
    device : str
        ``auto`` (a GPU when torch sees one, else the CPU), ``cpu``, ``cuda``, ``cuda:N``.
    threads : int or None
        torch intra-op threads on the CPU; None is every core this process may use.
    """

    def __init__(
        self,
        model: str | None = None,
        path: str | None = None,
        pool: int = 150,
        max_length: int = 512,
        batch_size: int = 32,
        device: str = "auto",
        threads: int | None = None,
    ):
        if not model and not path:
            raise SituateError(
                "reranker=cross_encoder: set reranker.model (a Hugging Face name in the local "
                "cache) or reranker.path (a model folder)"
            )
        self.model = model
        self.path = path
        self.name = model or Path(path).name  # type: ignore[arg-type]
        self.pool = pool
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self._model = None

    @classmethod
    def preflight(cls, params: Mapping[str, Any], run: object) -> None:
        """The model is on this machine (a folder, or the name in the local Hugging Face cache):
        an optional part, so a sweep skips an arm without it (``Unavailable``)."""
        path, model = params.get("path"), params.get("model")
        if not path and not model:
            return  # __init__ says what to set
        try:
            cls(model=model, path=path).model_dir()
        except SituateError:
            where = f"reranker.path={path} is no folder" if path else f"{model} is not in the "
            where += "" if path else "local Hugging Face cache"
            raise Unavailable(
                "reranker=cross_encoder",
                f"a cross-encoder model folder ({where}; set SITUATE_RERANKER_PATH=/folder or "
                f"reranker.path=/folder, e.g. from `hf download {model or CROSS_ENCODER} "
                "--local-dir /folder`, or use reranker=none)",
            ) from None

    def identity(self) -> dict:
        return {
            "provider": "sentence-transformers-cross-encoder",
            "model": self.path if self.path else self.model,
            "max_length": self.max_length,
        }

    def model_dir(self) -> str:
        """The local folder of the model (a name is looked up in the Hugging Face cache only)."""
        if self.path:
            return str(
                model_folder(
                    self.path, "reranker.path", "point it at a cross-encoder folder (config.json, "
                    "model weights, tokenizer), or use reranker=none",
                )
            )  # fmt: skip
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            return snapshot_download(self.model, local_files_only=True)
        except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
            raise SituateError(
                f"reranker=cross_encoder: model '{self.model}' is not available offline; "
                "download it on a machine with internet (e.g. "
                f"`hf download {self.model} --local-dir /folder`) and set "
                "reranker.path=/folder, or use reranker=none"
            ) from None

    def window(self) -> TokenWindow:
        """``max_length`` tokens of each (query, text) pair, counted by the model's tokenizer."""
        window = model_folder_window(
            self.model_dir(), self.max_length, self.name, "reranker.max_length"
        )
        return replace(window, with_query=True)

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def _load(self):
        if self._model is None:
            device = offline_torch(self.device, self.threads, "reranker.device")
            folder = self.model_dir()
            from sentence_transformers import CrossEncoder

            try:
                self._model = CrossEncoder(folder, device=device, max_length=self.max_length)
            except (OSError, ValueError) as exc:
                raise SituateError(
                    f"reranker=cross_encoder: cannot load a cross-encoder from {folder} "
                    f"({type(exc).__name__}: {exc}); point reranker.path at a model folder"
                ) from None
        return self._model

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float64)
        scores = self._load().predict(
            [(query, t) for t in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(scores, dtype=np.float64).reshape(len(texts), -1)[:, 0]
