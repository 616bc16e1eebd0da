"""The generation engine: passages -> requests -> proposals -> quotes found -> filters -> the file.

1. :func:`situate.questions.passages.sample_passages` picks ``target`` passages of the parsed
   documents (stratified over documents and sections, seeded);
2. each passage gets a strategy: the ``mix`` ratios are rounded to counts by the largest
   remainder rule (:func:`mix_counts`), handed out in passage order by the same divisor rule as
   the passages (:func:`assign_strategies`), so a larger target keeps earlier passages' strategies;
3. the generator proposes a question, an answer and a quote for each (:mod:`.base`);
4. each quote is found in the passage, else anywhere in its document, by
   :class:`situate.datasets.quotes.QuoteFinder` (exact, normalized, fuzzy: the rule and its score
   are recorded); a quote found nowhere rejects the candidate (``unresolvable_quote``), an answer
   that held no question rejects it too (``no_question``), each with its one-line reason;
5. the filters (:mod:`situate.questions.filters`) mark what else they remove, and why;
   each candidate with gold is measured first (:mod:`situate.questions.difficulty`: its overlap
   with its passage, its gold's rank under BM25 and the embedder), and a difficulty target (caps,
   or the quantile bins of a human sample) selects among those the filters kept;
6. every candidate is written to ``questions.jsonl``, with the reviewer's decisions of an existing
   file kept for the ids generated again (:func:`keep_reviews`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from situate.datasets.generated import FilterReport, GeneratedQuestion, question_id
from situate.datasets.quotes import DEFAULT_THRESHOLD, QuoteFinder
from situate.errors import SituateError
from situate.questions.base import GenerationRequest, Proposal, QuestionGenerator
from situate.questions.passages import divisor_order, sample_passages
from situate.questions.prompts import STRATEGIES, document_language, language_code
from situate.records import Document, Span

if TYPE_CHECKING:
    from situate.questions.difficulty.measures import DifficultyMeter
    from situate.questions.difficulty.selection import DifficultyTarget, Selection

UNRESOLVABLE = "unresolvable_quote"
NO_QUESTION = "no_question"


def mix_counts(mix: Mapping[str, float], n: int) -> dict[str, int]:
    """``n`` split by the ratios of ``mix`` with the largest remainder rule: each strategy gets
    the floor of its exact share, the questions left go one each to the largest remainders (ties
    to the strategy listed first)."""
    if not mix:
        raise SituateError(
            "questions.mix is empty; give ratios, e.g. {factual: 0.5, paraphrase: 0.5}"
        )
    for name, ratio in mix.items():
        if name not in STRATEGIES:
            raise SituateError(
                f"questions.mix: unknown strategy {name!r}; strategies: {', '.join(STRATEGIES)}"
            )
        if not isinstance(ratio, int | float) or ratio < 0:
            raise SituateError(f"questions.mix.{name}={ratio!r} must be a number >= 0")
    total = float(sum(mix.values()))
    if total <= 0:
        raise SituateError("questions.mix: the ratios sum to 0; give at least one a ratio > 0")
    exact = {name: n * ratio / total for name, ratio in mix.items()}
    counts = {name: int(share) for name, share in exact.items()}
    order = sorted(mix, key=lambda name: -(exact[name] - counts[name]))  # stable: listed first
    for name in order[: n - sum(counts.values())]:
        counts[name] += 1
    return counts


def assign_strategies(mix: Mapping[str, float], n: int) -> list[str]:
    """The strategy of each of ``n`` passages in order: the counts of :func:`mix_counts`, handed
    out by Sainte-Laguë's rule over the ratios (interleaved, not in blocks)."""
    counts = mix_counts(mix, n)
    names = list(mix)
    order = divisor_order([float(mix[s]) for s in names], [counts[s] for s in names])
    return [names[i] for i in order]


def build_requests(
    documents: Sequence[Document],
    target: int,
    mix: Mapping[str, float],
    passage_words: int = 150,
    seed: int = 0,
    language: str = "",
    per_passage: int = 1,
) -> list[GenerationRequest]:
    """One request per sampled passage; where the documents hold fewer passages than
    ``target``, up to ``per_passage`` requests of each (``index`` 1, 2, ...: another question of
    the same passage, after every passage has its first), else fewer than ``target``."""
    if per_passage < 1:
        raise SituateError(f"per_passage={per_passage} must be >= 1")
    passages = sample_passages(documents, target, passage_words, seed)
    by_id = {d.doc_id: d for d in documents}
    strategies = assign_strategies(mix, len(passages))
    out = []
    for index in range(per_passage):
        for p, s in zip(passages, strategies, strict=True):
            if len(out) == target:
                return out
            out.append(GenerationRequest(by_id[p.path], p, s, language or "", index))
    return out


def resolve(proposal: Proposal, threshold: float = DEFAULT_THRESHOLD) -> GeneratedQuestion:
    """The candidate of one proposal, its quote found (or the reason it is rejected)."""
    r = proposal.request
    language = r.language or document_language(r.document.text)
    candidate = GeneratedQuestion(
        id=question_id(r.passage, r.strategy, proposal.provenance.generator, r.index),
        q=proposal.question, answer=proposal.answer, quote=proposal.quote, gold=(),
        strategy=r.strategy, passage=r.passage, provenance=proposal.provenance,
        language=language_code(language),
    )  # fmt: skip
    if proposal.failure is not None:
        return candidate.rejected(NO_QUESTION, proposal.failure)
    if not proposal.question.strip():
        return candidate.rejected(NO_QUESTION, "the generator wrote an empty question")
    found = QuoteFinder(r.passage_text, threshold).first(proposal.quote)
    offset = r.passage.start
    if found is None:
        found, offset = QuoteFinder(r.document.text, threshold).first(proposal.quote), 0
    if found is None or found.end <= found.start:
        short = " ".join(proposal.quote.split())[:60]
        return candidate.rejected(
            UNRESOLVABLE,
            f"quote {short!r} is not in {r.passage.path} (exact, normalized, or fuzzy at "
            f">= {threshold:g})",
        )
    span = Span(r.passage.path, offset + found.start, offset + found.end)
    return replace(candidate, gold=(span,), match=found.rule, match_score=found.score)


def keep_reviews(
    new: Sequence[GeneratedQuestion], existing: Sequence[GeneratedQuestion]
) -> tuple[list[GeneratedQuestion], int]:
    """``new`` with the reviewer's decisions of ``existing`` for the same ids (an edited question
    keeps its edit), then the reviewed questions of ``existing`` not generated this time; and how
    many unreviewed ones of ``existing`` were left out."""
    old = {q.id: q for q in existing}
    out = []
    for q in new:
        before = old.get(q.id)
        if before is not None and before.review != "pending":
            if before.review == "edited":
                q = replace(q, q=before.q, original_q=before.original_q)
            q = replace(q, review=before.review)
        out.append(q)
    ids = {q.id for q in new}
    left = [q for q in existing if q.id not in ids]
    out.extend(q for q in left if q.review != "pending")
    return out, sum(1 for q in left if q.review == "pending")


@dataclass
class Generation:
    """What one generation did: every candidate, the filters' reports, the proposals' count."""

    questions: list[GeneratedQuestion]
    reports: list[FilterReport]
    requested: int
    selection: Selection | None = None  # what a difficulty target left out (None: no target)


def generate(
    documents: Sequence[Document],
    generator: QuestionGenerator,
    filters,
    requests: Sequence[GenerationRequest],
    quote_threshold: float = DEFAULT_THRESHOLD,
    meter: DifficultyMeter | None = None,
    target: DifficultyTarget | None = None,
    keep: int | None = None,
) -> Generation:
    """Steps 3-5 of the module docstring for ``requests`` (:func:`build_requests`); ``filters``
    as built by :func:`situate.questions.filters.build_filters`. ``meter`` measures each
    candidate's difficulty; an active ``target`` then keeps at most ``keep`` of the filtered."""
    from situate.questions.difficulty.measures import with_difficulty
    from situate.questions.difficulty.selection import NAME as DIFFICULTY
    from situate.questions.filters import apply_filters
    from situate.questions.word_forms import vary

    proposals = generator.propose(requests)
    if len(proposals) != len(requests):
        raise SituateError(
            f"question generator {generator.name}: {len(proposals)} proposals for "
            f"{len(requests)} requests (a generator returns one per request)"
        )
    candidates = [resolve(p, quote_threshold) for p in proposals]
    if meter is not None and target is not None and target.word_forms:
        candidates = vary(candidates, target.word_forms, meter.form_shifted, meter.vocabulary)
    if meter is not None:
        candidates = with_difficulty(candidates, meter)
    kept = [q for q in candidates if q.status == "kept"]
    filtered, reports = apply_filters(kept, documents, filters)  # a report each, zero included
    by_id = {q.id: q for q in filtered}
    questions = [by_id.get(q.id, q) for q in candidates]
    unresolved = FilterReport(UNRESOLVABLE, _removed(questions))
    reports = [unresolved, *reports]
    selection = None
    if target is not None and target.active:
        still = [q for q in questions if q.status == "kept"]
        selection = target.select(still, len(still) if keep is None else keep)
        reasons = dict(selection.report.removed)
        questions = [
            q.rejected(DIFFICULTY, reasons[q.id]) if q.id in reasons else q for q in questions
        ]
        reports.append(selection.report)
    return Generation(questions, reports, len(requests), selection)


def _removed(questions: Sequence[GeneratedQuestion]) -> list[tuple[str, str]]:
    return [(q.id, q.reason or "") for q in questions if q.rejected_by == UNRESOLVABLE]


def summary(questions: Sequence[GeneratedQuestion]) -> dict[str, dict]:
    """Per strategy: candidates, kept, rejected by reason, USD paid by this run, from the store."""
    rows: dict[str, dict] = {}
    for q in questions:
        row = rows.setdefault(
            q.strategy,
            {
                "candidates": 0,
                "kept": 0,
                "rejected": defaultdict(int),
                "cost_usd": 0.0,
                "from_store": 0,
            },
        )
        row["candidates"] += 1
        if q.status == "kept":
            row["kept"] += 1
        else:
            row["rejected"][q.rejected_by or "?"] += 1
        if q.provenance.from_cache:
            row["from_store"] += 1
        else:
            row["cost_usd"] += q.provenance.cost_usd
    return rows
