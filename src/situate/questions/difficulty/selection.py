"""The target of ``questions.difficulty`` and its building: :class:`DifficultyTarget` (caps, or
a match to a human sample) leaves candidates out as ``rejected_by: difficulty`` (:data:`NAME`);
:func:`build` makes the meter and the target from the settings, the human sample read and
measured; :func:`target_set` and :func:`oversample` say whether a target over-generates and by
how much."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from situate.datasets.generated import FilterReport, GeneratedQuestion
from situate.errors import SituateError
from situate.questions.difficulty.human_sample import human_sample
from situate.questions.difficulty.matching import Bin, checked_tolerance, match_bins
from situate.questions.difficulty.measures import (
    MEASURES,
    Difficulty,
    DifficultyMeter,
    difficulty_of,
    shifted_share,
)
from situate.records import Document
from situate.stores.rates import rate_key

NAME = "difficulty"  # the rejected_by of a candidate the target leaves out


@dataclass(frozen=True)
class Selection:
    """What the target did: its report (the candidates it left out), the cells of a match."""

    report: FilterReport
    bins: list[Bin]
    human: list[Difficulty]


class DifficultyTarget:
    """``questions.difficulty``'s target over measured candidates: caps (``max_overlap``,
    ``max_overlap_idf``, ``min_lexical_rank``, ``min_dense_rank``: a candidate outside one is
    removed, then the first ``questions.target`` kept) or a match to ``human``, a small human
    sample (:mod:`situate.questions.difficulty.human_sample`) measured the same way, by quantile
    bins (:func:`situate.questions.difficulty.matching.match_bins`).

    ``human``: the measured human sample when matching, else None."""

    CAPS = {
        "max_overlap": ("overlap", "<="),
        "max_overlap_idf": ("overlap_idf", "<="),
        "min_lexical_rank": ("lexical_rank", ">="),
        "min_dense_rank": ("dense_rank", ">="),
    }

    def __init__(
        self,
        caps: Mapping[str, float | None],
        human: Sequence[Difficulty] | None = None,
        match_on: Sequence[str] = ("overlap", "lexical_rank"),
        bins: int = 4,
        tolerance: float = 1.0,
        word_forms: float | None = None,
    ) -> None:
        unknown = set(caps) - set(self.CAPS)
        if unknown:
            raise SituateError(
                f"questions.difficulty.{sorted(unknown)[0]}: no such cap; the caps are "
                f"{', '.join(self.CAPS)}"
            )
        for key, value in caps.items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):
                raise SituateError(f"questions.difficulty.{key}={value!r} must be a number or null")
        self.caps = {k: float(v) for k, v in caps.items() if v is not None}
        self.human = list(human) if human is not None else None
        self.match_on = list(match_on)
        self.bins = bins
        self.tolerance = checked_tolerance(tolerance)
        self.word_forms = word_forms  # the share of questions varied (word_forms.vary), or None
        for m in self.match_on:
            if m not in MEASURES:
                raise SituateError(
                    f"questions.difficulty.match_on: unknown measure {m!r}; use "
                    f"{', '.join(MEASURES)}"
                )

    @property
    def active(self) -> bool:
        return bool(self.caps) or self.human is not None

    def cap_reason(self, d: Difficulty) -> str | None:
        for key, limit in self.caps.items():
            measure, op = self.CAPS[key]
            v = d.value(measure)
            if math.isnan(v):
                return f"no {measure} measured for questions.difficulty.{key}"
            if (op == "<=" and v > limit) or (op == ">=" and v < limit):
                return f"{measure} {v:g} outside questions.difficulty.{key}={limit:g}"
        return None

    def select(self, questions: Sequence[GeneratedQuestion], target: int) -> Selection:
        """Which of the kept ``questions`` (measured) the target leaves out, and why."""
        removed: dict[str, str] = {}
        passing: list[tuple[str, Difficulty]] = []
        for q in questions:
            d = difficulty_of(q)
            if d is None:
                removed[q.id] = "no difficulty measured (no gold)"
            elif (why := self.cap_reason(d)) is not None:
                removed[q.id] = why
            else:
                passing.append((q.id, d))
        table: list[Bin] = []
        if self.human is not None:
            _, left, table = match_bins(
                passing, self.human, target, self.match_on, self.bins, self.tolerance
            )
            removed.update(left)
        else:
            for qid, _ in passing[target:]:
                removed[qid] = f"over questions.target={target} (the first {target} are kept)"
        report = FilterReport(NAME, [(q.id, removed[q.id]) for q in questions if q.id in removed])
        return Selection(report, table, self.human or [])


SETTINGS = (
    "measure", "baselines", "window_words", "overlap_words", "lexical_window_words", "depth",
    "store", "match", "match_required", "match_on", "bins", "tolerance", "oversample",
    "word_forms", *DifficultyTarget.CAPS,
)  # fmt: skip


def target_set(settings: Mapping[str, Any]) -> bool:
    """Whether ``questions.difficulty`` sets a target (a cap or a match): then it over-generates."""
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise SituateError(
            f"questions.difficulty.{unknown[0]}: no such option; the options are "
            f"{', '.join(SETTINGS)} (conf/questions/mixed.yaml)"
        )
    required = settings.get("match_required", False)
    if not isinstance(required, bool):
        raise SituateError(
            f"questions.difficulty.match_required={required!r} must be true or false"
        )
    if required and settings.get("match") is None:
        raise SituateError(
            "questions=matched selects questions like 20-40 of your own: set "
            "questions.difficulty.match=<your qa.json> (questions with their gold as quotes, "
            "pages or chunk ids; docs/questions.md)"
        )
    wanted = settings.get("match") is not None or any(
        settings.get(k) is not None for k in DifficultyTarget.CAPS
    )
    if wanted and not settings.get("measure", True):
        raise SituateError(
            "questions.difficulty: a target (a cap or match) needs the measures; set "
            "questions.difficulty.measure=true"
        )
    return wanted


def oversample(settings: Mapping[str, Any]) -> int:
    """Candidates written per kept question: ``oversample`` with a target, else 1."""
    factor = settings.get("oversample", 3)
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise SituateError(f"questions.difficulty.oversample={factor!r} must be an integer >= 1")
    return factor if target_set(settings) else 1


def build(
    settings: Mapping[str, Any],
    documents: Sequence[Document],
    *,
    embedder=None,
    passage_words: int = 150,
    human_options: Mapping[str, Any] | None = None,
) -> tuple[DifficultyMeter | None, DifficultyTarget | None]:
    """The meter and the target of ``questions.difficulty`` (None, None with ``measure: false``);
    the human sample of ``match`` is read and measured here. ``human_options``: the keyword
    arguments of :func:`human_sample` (the dataset's quote threshold and chunk settings)."""
    from situate.questions.filters import embedding_function

    wanted = target_set(settings)
    forms = settings.get("word_forms")
    if not settings.get("measure", True):
        if forms is not None:
            raise SituateError(
                "questions.difficulty.word_forms needs the measures (a question's gold passage); "
                "set questions.difficulty.measure=true"
            )
        return None, None
    if forms == "match" and settings.get("match") is None:
        raise SituateError(
            "questions.difficulty.word_forms=match takes the share of your own questions: set "
            "questions.difficulty.match=<your qa.json>, or give the share (0 to 1)"
        )
    baselines = list(settings.get("baselines") or ())
    embed = None
    if "dense" in baselines:
        if embedder is None:
            raise SituateError(
                "questions.difficulty.baselines holds dense, which needs the embedder; give one "
                "or set questions.difficulty.baselines=[bm25]"
            )
        embed = embedding_function(embedder, settings.get("store"))
    meter = DifficultyMeter(
        documents,
        passage_words=passage_words,
        baselines=baselines,
        embed=embed,
        embedding_rate_key=None
        if embed is None
        else rate_key("texts embedded", embedder.identity()),
        window_words=int(settings.get("window_words", 200)),
        overlap_words=int(settings.get("overlap_words", 40)),
        depth=settings.get("depth", 1000),
        lexical_window_words=settings.get("lexical_window_words"),
        title_gain="title_gain" in (settings.get("match_on") or ()),
    )
    if not wanted and forms is None:
        return meter, None
    human = None
    if settings.get("match") is not None:
        sample = human_sample(str(settings["match"]), documents, **dict(human_options or {}))
        human = meter.measure(sample)
    if forms == "match":
        assert human is not None
        forms = shifted_share(human)
    target = DifficultyTarget(
        {k: settings.get(k) for k in DifficultyTarget.CAPS},
        human,
        match_on=list(settings.get("match_on") or ()),
        bins=settings.get("bins", 4),
        tolerance=settings.get("tolerance", 1.0),
        word_forms=checked_share(forms),
    )
    return meter, target


def checked_share(value: Any) -> float | None:
    """``questions.difficulty.word_forms`` as a share (None: not set)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise SituateError(
            f"questions.difficulty.word_forms={value!r} must be a share from 0 to 1, match "
            "(your sample's share) or null"
        )
    return float(value)
