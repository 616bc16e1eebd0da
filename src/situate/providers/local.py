"""Models run in this process (``llm=local_*``, ``embedder=minilm*``, ``reranker=cross_encoder``):
no key, no endpoint, no emulator, nothing billed. Their call failures are
:class:`situate.paid.llm.LLMCallFailed`, counted and resumed like an API's."""

from __future__ import annotations

from situate.providers import Vendor

# the Hugging Face variables that keep a task offline as the driver is
VENDOR = Vendor(
    name="local", key_env=None, pricing=(), env=("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
)
