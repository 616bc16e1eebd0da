"""The records of a generated evaluation set, and its file (``questions.jsonl``).

``situate questions generate`` samples passages from the parsed documents (independently of any
chunker), has a generator write a question, a short answer and a verbatim quote of the passage
for each, resolves the quote to a character span of the document (:mod:`situate.datasets.quotes`)
and runs the filters. Every candidate is kept in the file, the rejected ones with the filter that
removed them and why, so nothing is removed silently. ``situate questions review`` records a
reviewer's decision on each. ``dataset=generated`` reads the file: the kept questions (only the
accepted ones under ``review: required``), each with its span gold.

One JSON object per line; offsets are characters of the parsed document text, end-exclusive::

    {"id": "g-3f2a9c1d0b7e", "q": "...", "answer": "...", "quote": "...",
     "gold": [{"path": "report.pdf", "start": 1200, "end": 1318}],
     "match": "exact", "match_score": 100.0,
     "strategy": "context_dependent", "language": "en",
     "passage": {"path": "report.pdf", "start": 1100, "end": 2300, "section": "Risk factors"},
     "provenance": {"generator": "claude-haiku-4-5", "endpoint": "https://api.anthropic.com",
                    "prompt_sha256": "...", "input_tokens": 812, "output_tokens": 64,
                    "cost_usd": 0.00112, "from_cache": false},
     "status": "kept", "rejected_by": null, "reason": null,
     "review": "pending", "original_q": null,
     "difficulty": {"overlap": 0.42, "overlap_idf": 0.37, "lexical_rank": 3, "dense_rank": 1,
                    "rank_depth": 1000}}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from situate.datasets.base import check_unique_ids
from situate.errors import SituateError
from situate.records import Span

Status = Literal["kept", "rejected"]
# pending: not reviewed; accepted / rejected: the reviewer's decision; edited: accepted with the
# question rewritten by the reviewer (``original_q`` keeps the generator's wording)
Review = Literal["pending", "accepted", "rejected", "edited"]
REVIEWS: tuple[Review, ...] = ("pending", "accepted", "rejected", "edited")
STATUSES: tuple[Status, ...] = ("kept", "rejected")
QUESTIONS_FILE = "questions.jsonl"


@dataclass(frozen=True)
class Passage:
    """Characters ``[start, end)`` of document ``path``, the text a question was written from."""

    path: str
    start: int
    end: int
    section: str = ""  # the heading path of the passage's start, " > "-joined ("" at the top)


@dataclass(frozen=True)
class Provenance:
    """Who wrote a question and what it cost: the generator's model (``extractive`` for the
    rule-based baseline), its endpoint, the hash of the rendered prompt, and the billed usage."""

    generator: str
    endpoint: str = ""
    prompt_sha256: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    from_cache: bool = False  # read back from the generation store: paid by an earlier run


@dataclass(frozen=True)
class GeneratedQuestion:
    """One candidate question: what the generator wrote, where its quote was found, and what the
    filters and the reviewer made of it. ``gold`` is empty when the quote was not found."""

    id: str
    q: str
    answer: str
    quote: str
    gold: tuple[Span, ...]
    strategy: str
    passage: Passage
    provenance: Provenance
    language: str = ""
    match: str | None = None  # the quote rule that found the quote: exact, normalized, fuzzy
    match_score: float | None = None
    status: Status = "kept"
    rejected_by: str | None = None  # the filter that removed it
    reason: str | None = None  # one line: why
    review: Review = "pending"
    original_q: str | None = None  # the generator's question when a reviewer edited it
    # the generator's wording before questions.difficulty.word_forms changed a noun's number or
    # a verb's tense
    unvaried_q: str | None = None
    # how hard it is (situate.questions.difficulty: overlap, overlap_idf, lexical_rank,
    # dense_rank, rank_depth); None when not measured (no gold)
    difficulty: dict[str, Any] | None = None

    @property
    def usable(self) -> bool:
        """Kept by the filters and not rejected by a reviewer."""
        return self.status == "kept" and self.review != "rejected"

    @property
    def accepted(self) -> bool:
        return self.status == "kept" and self.review in ("accepted", "edited")

    def rejected(self, by: str, reason: str) -> GeneratedQuestion:
        """This candidate, removed by filter ``by`` for ``reason`` (one line)."""
        return replace(self, status="rejected", rejected_by=by, reason=reason)

    def reviewed(self, decision: Review, q: str | None = None) -> GeneratedQuestion:
        """This candidate with a reviewer's decision (``edited`` with the new question ``q``)."""
        if decision == "edited":
            if not q or not q.strip():
                raise SituateError(f"question {self.id}: an edit needs the new question text")
            return replace(self, review="edited", q=q.strip(), original_q=self.original_q or self.q)
        return replace(self, review=decision)

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["gold"] = [{"path": s.doc_id, "start": s.start, "end": s.end} for s in self.gold]
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any], where: str = "") -> GeneratedQuestion:
        """A record of ``questions.jsonl``; ``where`` (file and line) names it in errors."""
        if isinstance(record, Mapping) and "q" in record and "passage" not in record:
            raise SituateError(
                f'{where}: a qa.json record ({{"q": ..., "gold": [...]}}), but a .jsonl '
                "questions file is read as `situate questions generate` writes it; put the "
                "records in one JSON list in a .json file (docs/own-documents.md)"
            )
        try:
            fields = dict(record)
            fields["gold"] = tuple(
                Span(g["path"], int(g["start"]), int(g["end"])) for g in fields.get("gold") or ()
            )
            fields["passage"] = Passage(**fields["passage"])
            fields["provenance"] = Provenance(**fields["provenance"])
            question = cls(**fields)
        except (KeyError, TypeError, ValueError) as e:
            raise SituateError(
                f"{where}: not a generated question ({type(e).__name__}: {e}); regenerate it with "
                "`situate questions generate` or fix the record"
            ) from None
        if question.status not in STATUSES or question.review not in REVIEWS:
            raise SituateError(
                f"{where}: status {question.status!r} / review {question.review!r}: status is one "
                f"of {', '.join(STATUSES)}, review one of {', '.join(REVIEWS)}"
            )
        return question


def question_id(passage: Passage, strategy: str, generator: str, index: int = 0) -> str:
    """A stable id: the same passage, strategy and generator give the same id in every run."""
    key = json.dumps([passage.path, passage.start, passage.end, strategy, generator, index])
    return "g-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def read_questions(path: str | os.PathLike) -> list[GeneratedQuestion]:
    """Every record of a ``questions.jsonl`` file, in file order."""
    path = Path(path)
    if not path.is_file():
        raise SituateError(
            f"{path}: no generated questions here; write them with `situate questions generate`"
        )
    out, lines = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise SituateError(f"{path}:{n}: not JSON ({e.msg}); fix or remove the line") from None
        out.append(GeneratedQuestion.from_json(record, f"{path}:{n}"))
        lines.append(n)
    # reviews, results and comparisons are keyed by id (two files pasted together repeat them)
    check_unique_ids(path, ((f"line {n}", q.id) for n, q in zip(lines, out, strict=True)))
    return out


def write_questions(path: str | os.PathLike, questions: Iterable[GeneratedQuestion]) -> None:
    """Write ``questions`` to ``path`` atomically (a reader never sees half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q.to_json(), ensure_ascii=False) + "\n")
    os.replace(tmp, path)


@dataclass
class FilterReport:
    """What one filter removed: its name, how many, and each removed id with its reason."""

    name: str
    removed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.removed)
