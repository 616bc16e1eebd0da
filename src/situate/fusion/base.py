"""The fusion protocol and the accumulation every score-adding method shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np

from situate.errors import SituateError
from situate.rankings import Rankings, sort_desc

RETRIEVERS = ("dense", "sparse")


class Fusion(Protocol):
    """Combines the ranked lists of named retrievers (``"dense"``, ``"sparse"``) into one.

    ``needs`` names the retrievers it reads, so the runner builds only those; ``pool`` is how many
    candidates of each list it considers (the cookbook uses 150).
    """

    name: str
    needs: tuple[str, ...]
    pool: int

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings: ...


def accumulate(
    lists: list[Rankings],
    contribution: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
    depth: int,
    times_hits: bool = False,
) -> Rankings:
    """Sum per-list contributions of each chunk, per query, and keep the best ``depth``.

    ``contribution(list_number, ranks, scores)`` gets 1-based ranks and raw scores of one query's
    list and returns what each of those chunks adds. A chunk absent from a list gets nothing from
    it; a chunk that appears twice in one list (a bad retriever) is counted at its best rank only.
    Padding (id -1, score -inf) is dropped before ``contribution`` sees a list. With
    ``times_hits`` each chunk's sum is multiplied by the number of lists it appears in (CombMNZ).
    """
    rows = []
    for q in range(lists[0].n_queries):
        ids_parts, add_parts = [], []
        for n, ranking in enumerate(lists):
            ids, scores = ranking.row(q)
            ids, first = np.unique(ids, return_index=True)  # best rank of a duplicated id
            ranks = first + 1
            ids_parts.append(ids)
            add_parts.append(contribution(n, ranks, scores[first]))
        if not ids_parts or sum(len(p) for p in ids_parts) == 0:
            rows.append((np.zeros(0, np.int64), np.zeros(0)))
            continue
        all_ids = np.concatenate(ids_parts)
        uniq, inverse = np.unique(all_ids, return_inverse=True)
        total = np.bincount(inverse, weights=np.concatenate(add_parts), minlength=len(uniq))
        if times_hits:
            total = total * np.bincount(inverse, minlength=len(uniq))
        rows.append(sort_desc(uniq, total))
    return Rankings.from_rows(rows, depth)


def list_weights(weights: Mapping[str, float], needs: tuple[str, ...]) -> tuple[float, ...]:
    """``weights`` (a mapping such as ``{dense: 0.5, sparse: 0.5}``) as a tuple in ``needs`` order.

    Every retriever in ``needs`` needs a weight, no other key is allowed, and each weight is a
    finite number >= 0.
    """
    given = {str(k): v for k, v in weights.items()}
    unknown = sorted(set(given) - set(needs))
    missing = [n for n in needs if n not in given]
    if unknown or missing:
        raise SituateError(
            f"fusion.weights has keys {sorted(given)}; it needs exactly {list(needs)} "
            f"(e.g. fusion.weights={{{', '.join(f'{n}: 0.5' for n in needs)}}})"
        )
    out = []
    for n in needs:
        try:
            w = float(given[n])
        except (TypeError, ValueError):
            w = float("nan")
        if not np.isfinite(w) or w < 0:
            raise SituateError(f"fusion.weights.{n}={given[n]!r} must be a number >= 0")
        out.append(w)
    return tuple(out)


def finite_only(
    normalise: Callable[[np.ndarray], np.ndarray],
) -> Callable[[np.ndarray], np.ndarray]:
    """Wrap a per-list score normaliser so it sees only finite scores.

    Statistics (min, max, mean, std) are taken over the finite scores; a non-finite score gets 0,
    like a chunk absent from the list. (Padding never gets here: ``accumulate`` drops it. This
    guards against a retriever that returns a real id with score -inf or nan.)
    """

    def wrapped(scores: np.ndarray) -> np.ndarray:
        scores = np.asarray(scores, dtype=np.float64)
        out = np.zeros(len(scores))
        ok = np.isfinite(scores)
        if ok.any():
            out[ok] = normalise(scores[ok])
        return out

    return wrapped


@finite_only
def minmax(scores: np.ndarray) -> np.ndarray:
    """``(s - min) / (max - min)`` over one list's scores, in [0, 1].

    A list whose scores are all equal (a single score included) cannot say which chunk is better;
    each of its chunks gets 1.0, the value its best chunk would get, rather than dividing by zero.
    """
    lo, hi = scores.min(), scores.max()
    if hi == lo:
        return np.ones(len(scores))
    return (scores - lo) / (hi - lo)


def pooled(lists: Mapping[str, Rankings], needs: tuple[str, ...], pool: int) -> list[Rankings]:
    """The top ``pool`` of each list a fusion reads, in ``needs`` order."""
    return [lists[name].top(pool) for name in needs]


class NormalizedSum:
    """``score(d) = sum over lists l containing d of w_l * normalize(scores of l)(d)``.

    Subclasses set ``normalize`` (a per-list score normaliser); this base weighs every list 1,
    :class:`WeightedNormalizedSum` takes the weights as a parameter.
    """

    needs = RETRIEVERS
    normalize: Callable[[np.ndarray], np.ndarray]

    def __init__(self, pool: int = 150):
        self.weights = list_weights({n: 1.0 for n in self.needs}, self.needs)
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        normalize = type(self).normalize
        return accumulate(
            pooled(lists, self.needs, self.pool),
            lambda n, _ranks, scores: self.weights[n] * normalize(scores),
            depth,
        )


class WeightedNormalizedSum(NormalizedSum):
    """A :class:`NormalizedSum` with one weight per list, ``{dense: 0.5, sparse: 0.5}`` by
    default."""

    def __init__(self, weights: Mapping[str, float] | None = None, pool: int = 150):
        self.weights = list_weights(
            {n: 0.5 for n in self.needs} if weights is None else weights, self.needs
        )
        self.pool = pool


class SingleList:
    """Pass one retriever's list through, cut to ``depth``."""

    needs: tuple[str, ...] = ()

    def __init__(self, pool: int = 150):
        self.pool = pool

    def fuse(self, lists: Mapping[str, Rankings], depth: int) -> Rankings:
        return lists[self.needs[0]].top(min(depth, self.pool))
