"""Matching a human sample's difficulty: the quantile bins of its measures (:func:`bin_edges`,
:func:`bin_of`), each cell's quota by the largest remainder rule, the largest set size the
candidates fill (:func:`matched_size`), the selection over the cells (:func:`match_bins`) and how
far the kept set's histogram is from the sample's (:func:`bin_distance`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from situate.errors import SituateError
from situate.questions.difficulty.measures import Difficulty


@dataclass(frozen=True)
class Bin:
    """One cell of the match: a bin per measure, the human share, the quota and what it got."""

    cell: tuple[int, ...]
    label: str  # e.g. "overlap <= 0.40, lexical_rank 2-5"
    human: int
    quota: int
    kept: int


def bin_edges(values: Sequence[float], bins: int) -> list[float]:
    """The ``1/bins .. (bins-1)/bins`` quantiles of ``values`` (linear interpolation), repeats
    merged."""
    finite = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if not len(finite):
        return []
    qs = np.quantile(finite, [i / bins for i in range(1, bins)])
    return sorted(set(float(q) for q in qs))


def bin_of(value: float, edges: Sequence[float]) -> int:
    """The first bin whose edge is ``>= value``; ``len(edges)`` above every edge."""
    return next((i for i, e in enumerate(edges) if value <= e), len(edges))


def _label(measure: str, edges: Sequence[float], b: int) -> str:
    def f(x: float) -> str:
        return f"{x:g}" if measure.endswith("rank") else f"{x:.2f}"

    if not edges:
        return f"{measure} any"
    if b == 0:
        return f"{measure} <= {f(edges[0])}"
    if b == len(edges):
        return f"{measure} > {f(edges[-1])}"
    return f"{measure} in ({f(edges[b - 1])}, {f(edges[b])}]"


def largest_remainder(shares: Mapping[Any, float], n: int) -> dict[Any, int]:
    """``n`` split by ``shares`` (summing to 1): floors, then one each to the largest remainders
    (ties to the key listed first)."""
    exact = {k: n * s for k, s in shares.items()}
    counts = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: -(exact[k] - counts[k]))[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


def checked_tolerance(tolerance: Any) -> float:
    """``questions.difficulty.tolerance`` as a float, or the one-line error."""
    number = isinstance(tolerance, int | float) and not isinstance(tolerance, bool)
    if not number or not 0 <= tolerance <= 1:
        raise SituateError(
            f"questions.difficulty.tolerance={tolerance!r} must be a number from 0 to 1"
        )
    return float(tolerance)


def matched_size(
    available: Mapping[Any, int], shares: Mapping[Any, float], target: int, tolerance: float
) -> int:
    """The largest ``n <= target`` whose quotas (``shares`` of ``n``, :func:`largest_remainder`)
    the ``available`` candidates of each cell fill, but for at most ``tolerance x n`` questions;
    0 when none."""
    for n in range(target, 0, -1):
        quota = largest_remainder(shares, n)
        short = sum(max(0, q - available.get(c, 0)) for c, q in quota.items())
        if short <= tolerance * n:
            return n
    return 0


def bin_distance(bins: Sequence[Bin]) -> float | None:
    """How far the kept set's histogram over the cells is from the human sample's: the total
    variation distance, half the sum over the cells of |kept share - human share| (0: the same;
    0.25: a quarter of the kept set would have to move cell); None with nothing kept."""
    kept, human = sum(b.kept for b in bins), sum(b.human for b in bins)
    if not kept or not human:
        return None
    return sum(abs(b.kept / kept - b.human / human) for b in bins) / 2


def match_bins(
    candidates: Sequence[tuple[str, Difficulty]],
    human: Sequence[Difficulty],
    target: int,
    match_on: Sequence[str],
    bins: int,
    tolerance: float = 1.0,
) -> tuple[list[str], dict[str, str], list[Bin]]:
    """The ids selected from ``candidates`` (in their order) so the kept set's histogram over the
    human sample's quantile cells matches the human one; the reason of each left out; and the
    cells.

    For each measure of ``match_on``, the edges are the human sample's ``1/bins, 2/bins, ...``
    quantiles (repeated edges merged: ranks tie a lot), a value ``v`` falls in the first bin
    whose edge is ``>= v`` (the last bin: above every edge); a cell is one bin per measure, its
    quota ``size x`` (share of the human sample in that cell), rounded by the largest remainder
    rule; each cell takes its first candidates in passage order up to its quota, so the kept
    set's joint histogram over the cells is the human one's. Where some cells have too few
    candidates, the set can shrink: the quotas are of the largest size up to ``target`` that the
    candidates fill but for at most ``tolerance`` of it (:func:`matched_size`), so a set is not
    made easier than the sample by filling the easy cells that have candidates to spare; 1 fills
    what it can of ``target``. Either way the kept set's distance from the sample's histogram
    (:func:`bin_distance`) is reported, and a short cell. Over-generation
    (``questions.difficulty.oversample`` candidates per kept question) gives the cells something
    to pick."""
    tolerance = checked_tolerance(tolerance)
    if not match_on:
        raise SituateError("questions.difficulty.match_on is empty; name a measure, e.g. overlap")
    if not isinstance(bins, int) or bins < 1:
        raise SituateError(f"questions.difficulty.bins={bins!r} must be an integer >= 1")
    edges = {m: bin_edges([h.value(m) for h in human], bins) for m in match_on}

    def cell(d: Difficulty) -> tuple[int, ...] | None:
        values = [d.value(m) for m in match_on]
        if any(math.isnan(v) for v in values):
            return None
        return tuple(bin_of(v, edges[m]) for m, v in zip(match_on, values, strict=True))

    human_cells = Counter(c for h in human if (c := cell(h)) is not None)
    if not human_cells:
        raise SituateError(
            f"questions.difficulty.match_on={list(match_on)}: no human question has these "
            "measures (a rank needs its baseline in questions.difficulty.baselines)"
        )
    cells = list(product(*(range(len(edges[m]) + 1) for m in match_on)))
    total = sum(human_cells.values())
    shares = {c: human_cells[c] / total for c in cells}
    available = Counter(c for _, d in candidates if (c := cell(d)) is not None)
    size = matched_size(available, shares, target, tolerance)
    quota = largest_remainder(shares, size)
    taken: Counter = Counter()
    kept: list[str] = []
    left: dict[str, str] = {}
    labels = {
        c: ", ".join(_label(m, edges[m], b) for m, b in zip(match_on, c, strict=True))
        for c in cells
    }
    for qid, d in candidates:
        c = cell(d)
        if c is None:
            left[qid] = f"no {'/'.join(match_on)} measured to match the human sample by"
        elif taken[c] < quota[c]:
            taken[c] += 1
            kept.append(qid)
        else:
            left[qid] = (
                f"its bin ({labels[c]}) is full: {quota[c]} of {size} by the human sample's "
                f"share {human_cells[c]}/{total}"
            )
    table = [Bin(c, labels[c], human_cells[c], quota[c], taken[c]) for c in cells]
    return kept, left, table
