"""Which part of a question split each question belongs to (config ``eval.split``).

A study that picks its best configuration on the same questions it reports on overstates it (the
winner's curse: the best of many noisy estimates is biased upwards). A split keeps the questions
the choice sees (``dev``) apart from those its figure is reported on (``test``).

- ``none``: every question in one part (``""``).
- ``dev_test``: a seeded split by document: whole documents go to ``dev`` or ``test``, so
  near-duplicate questions about one document never straddle the split. Documents are shuffled
  with ``seed`` and each goes, in that order, to the part furthest below its target share
  (``dev_share`` of the questions to dev, the rest to test; a tie goes to dev).
- ``kfold``: the same, into ``folds`` parts ``fold_1`` ... ``fold_K`` of (near) equal size, each
  document going to the fold with the fewest questions so far (ties to the lower fold).

A question's document is the document of its first gold span, the stratum the question sampler
(``dataset.max_questions``) uses. The same questions and seed give the same parts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from situate.datasets.sample import document_of
from situate.errors import SituateError
from situate.records import Question

SPLITS = ("none", "dev_test", "kfold")
DEV, TEST = "dev", "test"


def check_split(split: str, dev_share: float, folds: int, seed: int) -> None:
    """Raise a one-line error for settings no split can use."""
    if split not in SPLITS:
        raise SituateError(f"eval.split={split!r}: choose one of {', '.join(SPLITS)}")
    if (
        isinstance(dev_share, bool)
        or not isinstance(dev_share, int | float)
        or not 0 < dev_share < 1
    ):
        raise SituateError(
            f"eval.dev_share={dev_share!r}: must be a fraction strictly between 0 and 1 "
            "(e.g. 0.5: half the questions choose, half report)"
        )
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise SituateError(f"eval.folds={folds!r}: must be an integer of at least 2 (e.g. 5)")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SituateError(f"eval.seed={seed!r}: must be an integer")


def part_names(split: str, folds: int) -> list[str]:
    """The parts of a split, in order: ``[]`` for none, ``[dev, test]``, ``[fold_1, ...]``."""
    if split == "dev_test":
        return [DEV, TEST]
    if split == "kfold":
        return [f"fold_{i}" for i in range(1, folds + 1)]
    return []


def assign_parts(
    questions: Sequence[Question],
    split: str = "none",
    dev_share: float = 0.5,
    folds: int = 5,
    seed: int = 0,
) -> list[str]:
    """The part of each question (in the order given); see the module docstring."""
    check_split(split, dev_share, folds, seed)
    names = part_names(split, folds)
    if not names:
        return [""] * len(questions)
    by_doc: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        by_doc.setdefault(document_of(q), []).append(i)
    documents = sorted(by_doc)
    random.Random(seed).shuffle(documents)
    n = len(questions)
    targets = [dev_share * n, (1 - dev_share) * n] if split == "dev_test" else [n / folds] * folds
    filled = [0] * len(names)
    parts = [""] * n
    for doc in documents:
        # the part furthest below its target (as a share of it); ties to the first part
        p = min(range(len(names)), key=lambda j: (filled[j] / targets[j], j))
        filled[p] += len(by_doc[doc])
        for i in by_doc[doc]:
            parts[i] = names[p]
    return parts


def describe(parts: Sequence[str]) -> str:
    """``dev 124 questions, test 124 questions`` (the parts in order of first appearance), what
    a run with a split logs."""
    counts: dict[str, int] = {}
    for p in parts:
        counts[p] = counts.get(p, 0) + 1
    return ", ".join(f"{p} {c} question{'' if c == 1 else 's'}" for p, c in counts.items() if p)
