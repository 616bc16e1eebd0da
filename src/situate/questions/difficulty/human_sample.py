"""The human sample a generated set is matched to (``questions.difficulty.match``): the
questions with gold of a ``qa.json``, gold resolved as ``dataset=folder`` resolves it, or of a
``questions.jsonl``, as ``(text, gold)`` for :meth:`DifficultyMeter.measure`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from situate.errors import SituateError
from situate.records import Document, Span


def human_sample(
    path: str | Path,
    documents: Sequence[Document],
    *,
    max_words: int = 250,
    min_words: int = 20,
    quote_threshold: float = 90,
) -> list[tuple[str, tuple[Span, ...]]]:
    """The questions with gold of a ``qa.json`` (gold resolved as ``dataset=folder`` does:
    quotes, pages, chunk references or spans; ``max_words``/``min_words`` those of its
    ``file.md#N`` references) or of a ``questions.jsonl`` (its usable questions), as
    ``(text, gold)``; questions without gold are left out (they have no difficulty)."""
    from situate.datasets.base import read_json
    from situate.datasets.folder import QA_EXPECTED, GoldResolver
    from situate.datasets.generated import read_questions

    path = Path(path).expanduser()
    if not path.is_file():
        raise SituateError(
            f"questions.difficulty.match={path}: no such file; give a qa.json (or questions.jsonl) "
            "of human questions with gold"
        )
    if path.suffix.lower() == ".jsonl":
        out = [(q.q, q.gold) for q in read_questions(path) if q.usable and q.gold]
    else:
        resolver = GoldResolver(
            path, path.parent, list(documents), max_words, min_words, quote_threshold
        )
        out = [(q.text, q.gold) for q in resolver.questions(read_json(path, QA_EXPECTED)) if q.gold]
    if not out:
        raise SituateError(
            f"questions.difficulty.match={path}: no question with gold to measure; give each "
            'human question its gold ("gold": [quote, page or span])'
        )
    return out
