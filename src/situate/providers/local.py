"""Models run in this process (``llm=local_*``, ``embedder=minilm*``, ``reranker=cross_encoder``):
no key, no endpoint, no emulator, nothing billed. Their call failures are
:class:`situate.llm.base.LLMCallFailed`, counted and resumed like an API's."""

from __future__ import annotations

from situate.providers import Vendor

VENDOR = Vendor(name="local", key_env=None, pricing=())
