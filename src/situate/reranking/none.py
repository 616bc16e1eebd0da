"""``reranker: none``: keep the fused order."""

from __future__ import annotations

import numpy as np

from situate.money.billing import Unbilled


class NoReranker(Unbilled):
    name = "none"
    pool = 0  # rescores nothing

    def warm_up(self) -> None:
        pass  # no model

    def window(self) -> None:
        return None  # reads no text

    def identity(self) -> dict:
        return {"reranker": "none"}

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        return np.zeros(len(texts))
