"""Which questions a run keeps when ``max_questions`` is set.

- ``stratified`` (the default): a seeded sample stratified by document. Questions are grouped by
  the document of their first gold span; each document gets a share of the N questions
  proportional to how many it has (largest remainder: shares are rounded down, and the questions
  left over go to the documents with the largest remainders, ties to the document seen first);
  each document's share is drawn at random without replacement. The same seed gives the same
  sample; the kept questions stay in file order.
- ``first``: the first N questions in file order. A file sorted by document then covers only its
  first few documents (1,000 of a 10,000-question file can come from two of them).
"""

from __future__ import annotations

import random

from situate.errors import SituateError
from situate.records import Question

SAMPLES = ("stratified", "first")


def check_sample(max_questions: int | None, sample: str, seed: int) -> None:
    """Raise a one-line error for a ``max_questions``, ``sample`` or ``seed`` no sample can use."""
    if sample not in SAMPLES:
        raise SituateError(f"dataset.sample={sample!r}: choose one of {', '.join(SAMPLES)}")
    if max_questions is not None and (
        isinstance(max_questions, bool) or not isinstance(max_questions, int) or max_questions < 1
    ):
        raise SituateError(
            f"dataset.max_questions={max_questions!r}: must be a positive integer, or null to keep "
            "every question"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SituateError(f"dataset.seed={seed!r}: must be an integer")


def allocate(sizes: list[int], n: int) -> list[int]:
    """Proportional shares of ``n`` among strata of ``sizes`` (largest remainder, ties to the first).

    ``allocate([6, 3, 1], 5) == [3, 2, 0]``: quotas 3, 1.5 and 0.5 round down to 3, 1 and 0; the one
    question left goes to the largest remainder (0.5 twice: the second stratum comes first).
    """
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    shares = [n * s // total for s in sizes]
    remainders = [n * s % total for s in sizes]  # numerators over ``total``: exact, no float ties
    by_remainder = sorted(range(len(sizes)), key=lambda i: -remainders[i])
    for i in by_remainder[: n - sum(shares)]:
        shares[i] += 1
    return shares


def sample_questions(
    questions: list[Question], max_questions: int | None, sample: str = "stratified", seed: int = 0
) -> tuple[list[Question], dict[str, int | str]]:
    """The questions a run keeps, and the corpus notes that say how they were chosen.

    Parameters
    ----------
    questions
        Every question of the data set, in file order.
    max_questions
        How many to keep; None keeps all.
    sample
        ``stratified`` or ``first`` (see the module docstring).
    seed
        Seed of the stratified draw.

    Returns
    -------
    tuple of (list of Question, dict)
        The kept questions in file order, and (when ``max_questions`` is set)
        ``{"questions_before_sample": N, "sample": "<how they were chosen>"}``, which the
        pipeline logs (and the tracker records, as a metric and in the config's params).
    """
    check_sample(max_questions, sample, seed)
    if max_questions is None:
        return questions, {}
    notes: dict[str, int | str] = {"questions_before_sample": len(questions)}
    n_docs = len({document_of(q) for q in questions})
    if max_questions >= len(questions):
        notes["sample"] = f"all {len(questions)} questions (max_questions={max_questions})"
        return questions, notes
    if sample == "first":
        kept = questions[:max_questions]
        how = f"the first {max_questions} in file order"
    else:
        strata: dict[str, list[int]] = {}
        for i, q in enumerate(questions):
            strata.setdefault(document_of(q), []).append(i)
        rng = random.Random(seed)
        shares = allocate([len(rows) for rows in strata.values()], max_questions)
        chosen: list[int] = []
        for rows, share in zip(strata.values(), shares, strict=True):
            chosen.extend(rng.sample(rows, share))
        kept = [questions[i] for i in sorted(chosen)]
        how = f"a sample stratified by document (seed {seed})"
    covered = len({document_of(q) for q in kept})
    notes["sample"] = (
        f"{len(kept)} of {len(questions)} questions, {how}: {covered} of the {n_docs} documents "
        "with questions"
    )
    return kept, notes


def document_of(question: Question) -> str:
    """The stratum of a question: the document of its first gold span."""
    return question.gold[0].doc_id if question.gold else ""
