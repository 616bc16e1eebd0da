"""A few human relevance labels correct the judge's metrics (``situate judge --human-labels``).

The labels grade (question, chunk) pairs as the judge does (0-3), in ``qrels_judged.txt``'s TREC
form (``qid 0 chunk_id grade``), or a CSV (a header with ``qid``, ``chunk_id``, ``grade``) or
JSONL (one object with those keys a line). A chunk id names a text of the study's runs, as in
``--qrels``; the judge grades every labelled pair too (outside the pool as well), so that on a
labelled question the judge's and the person's metrics stand on the same pairs.

Per arm and judged metric, the unit is the question: ``f`` is the judged per-question metric of
every question; ``y`` the same metric on each labelled question with the human grades where
the person gave one and the judge's for the rest of its pairs (the ideal ranking and recall's
denominator too). :mod:`situate.evaluation.ppi` then corrects the mean of ``f`` by the
rectifier ``mean(f - y)`` over the labelled questions, for every arm and for its difference
with the baseline (paired by question).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from situate.errors import SituateError
from situate.evaluation.judged import judged_scores
from situate.evaluation.ppi import PPIEstimate, labels_needed, ppi_difference, ppi_mean
from situate.evaluation.trec import read_qrels
from situate.judging.pool import Pair

HALF_WIDTH = 0.02  # the target of "how many labels": +-2 points


@dataclass(frozen=True)
class HumanLabels:
    """The person's grades by (qid, chunk text), and where they came from."""

    path: str
    grades: dict[tuple[str, str], int]
    pairs: list[Pair]  # each labelled pair, with its question text (judged as well)

    @property
    def questions(self) -> list[str]:
        return list(dict.fromkeys(qid for qid, _ in self.grades))

    @property
    def per_question(self) -> float:
        return len(self.grades) / len(self.questions) if self.grades else 0.0


def read_label_file(path: str | Path) -> dict[str, dict[str, int]]:
    """``{qid: {chunk_id: grade}}`` from a TREC qrels, CSV or JSONL file (by its suffix)."""
    path = Path(path)
    if not path.is_file():
        raise SituateError(f"--human-labels {path}: no such file")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        return read_qrels(path)
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as f:
            rows = [(n, row) for n, row in enumerate(csv.DictReader(f), start=2)]
    else:
        rows = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((n, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise SituateError(f"{path}: line {n} is not JSON ({e.msg}); fix it") from e
    out: dict[str, dict[str, int]] = {}
    for n, row in rows:
        try:
            qid, chunk_id, grade = str(row["qid"]), str(row["chunk_id"]), row["grade"]
            grade = int(str(grade).strip())
        except (KeyError, TypeError, ValueError, AttributeError):
            raise SituateError(
                f"{path}: line {n} has no qid, chunk_id and whole-number grade; fix it"
            ) from None
        out.setdefault(qid, {})[chunk_id] = grade
    return out


def texts_by_chunk_id(arms, path: str) -> dict[str, str]:
    """Every chunk id of the study's runs and its text (one-line error where two runs' chunkers
    give one id different texts: a chunk id alone cannot say which is meant)."""
    texts: dict[str, str] = {}
    for arm in arms:
        for chunk_id, text in arm.texts.items():
            if texts.setdefault(chunk_id, text) != text:
                raise SituateError(
                    f"{path}: chunk id {chunk_id} names different texts in the study's runs "
                    "(different chunkers); judge runs of one chunker at a time to edit by hand"
                )
    return texts


def grades_by_text(j, qrels: dict[str, dict[str, int]], path: str) -> dict[tuple[str, str], int]:
    """Grades by (qid, chunk text); an unknown question or chunk or a grade outside 0-3 is a
    one-line error naming the line's fields."""
    texts = texts_by_chunk_id(j.arms, path)
    out = {}
    for qid, grades in qrels.items():
        if qid not in j.pool.questions:
            raise SituateError(
                f"{path}: question {qid} is not in study {j.study.name}; fix the line"
            )
        for chunk_id, grade in grades.items():
            if chunk_id not in texts:
                raise SituateError(
                    f"{path}: question {qid}: chunk {chunk_id} is in no run of study "
                    f"{j.study.name}; fix the id"
                )
            if grade not in (0, 1, 2, 3):
                raise SituateError(
                    f"{path}: question {qid}: chunk {chunk_id} has grade {grade}; grades are 0-3"
                )
            out[(qid, texts[chunk_id])] = grade
    return out


def human_labels(j, path: str) -> HumanLabels:
    """The labels of ``path`` resolved against the study ``j`` (at least 2 questions: PPI's
    least)."""
    qrels = read_label_file(path)
    grades = grades_by_text(j, qrels, path)
    texts = texts_by_chunk_id(j.arms, path)
    pairs = [
        Pair(qid, j.pool.questions[qid], texts[chunk_id], chunk_id)
        for qid, by_id in qrels.items()
        for chunk_id in by_id
    ]
    labels = HumanLabels(str(path), grades, pairs)
    if len(labels.questions) < 2:
        raise SituateError(
            f"{path}: labels {len(labels.questions)} question(s); prediction-powered inference "
            "needs at least 2 labelled questions"
        )
    return labels


def _record(e: PPIEstimate) -> dict:
    need = labels_needed(e, HALF_WIDTH)
    return {**asdict(e), "labels_needed": need.n, "more_labels": need.more}


@dataclass(frozen=True)
class Corrected:
    """PPI per run and metric (``runs``), and of each run's difference with the baseline
    (``versus``), by run id then metric: the records :class:`situate.judging.summary.PPISummary`
    keeps."""

    runs: dict[str, dict[str, PPIEstimate]]
    versus: dict[str, dict[str, PPIEstimate]]


def human_scores(j, grades, labels: HumanLabels, arm) -> dict[str, dict[str, float]]:
    """Each labelled question's judged metrics with the human grades where given and the
    judge's for the rest (``y``), for ``arm``, by qid."""
    ks, depth = j.study.ks, max(j.study.ks)
    merged = {**grades, **labels.grades}
    labelled = set(labels.questions)
    pool: dict[str, list[int]] = {}
    for (qid, _), g in merged.items():
        if qid in labelled and g is not None:
            pool.setdefault(qid, []).append(g)
    out = {}
    for qid in labels.questions:
        ranked = arm.ranked_texts(qid, depth)
        out[qid] = judged_scores(
            [merged.get((qid, t)) for t in ranked], pool.get(qid, []), ks, j.judge.relevant_from
        )
    return out


def correct(j, grades, labels: HumanLabels, sc, metrics: list[str], tuned: bool) -> Corrected:
    """PPI (``tuned``: PPI++) of every judged metric of every scored run, and of its
    difference with the baseline; ``arm.run.questions`` already hold the judged ``f``."""
    judged = [m for m in metrics if m.startswith("judged_")]
    arm_of = {arm.run.run_id: arm for arm in j.arms}
    per_run: dict[str, tuple[list[str], dict, dict]] = {}
    for s in sc.summaries:
        arm = arm_of[s.run.run_id]
        rows = {row["qid"]: row for row in arm.run.questions}
        per_run[s.run.run_id] = (list(rows), rows, human_scores(j, grades, labels, arm))
    runs: dict[str, dict[str, PPIEstimate]] = {}
    for run_id, (qids, rows, human) in per_run.items():
        lab = [q for q in labels.questions if q in rows]
        runs[run_id] = {
            m: ppi_mean(
                [float(rows[q][m]) for q in qids],
                [float(rows[q][m]) for q in lab],
                [human[q][m] for q in lab],
                tuned=tuned,
            )
            for m in judged
        }
    base = next((s.run.run_id for s in sc.summaries if s.is_baseline), None)
    versus: dict[str, dict[str, PPIEstimate]] = {}
    if base is None:  # no baseline scored: nothing to compare with
        return Corrected(runs, versus)
    b_qids, b_rows, b_human = per_run[base]
    for run_id, (_, rows, human) in per_run.items():
        if run_id == base:
            continue
        both = [q for q in b_qids if q in rows]
        lab = [q for q in labels.questions if q in rows and q in b_rows]
        versus[run_id] = {
            m: ppi_difference(
                [float(b_rows[q][m]) for q in both],
                [float(rows[q][m]) for q in both],
                [float(b_rows[q][m]) for q in lab],
                [float(rows[q][m]) for q in lab],
                [b_human[q][m] for q in lab],
                [human[q][m] for q in lab],
                tuned=tuned,
            )
            for m in judged
        }
    return Corrected(runs, versus)


def records(corrected: dict[str, dict[str, PPIEstimate]]) -> dict[str, dict[str, dict]]:
    """What ``judged.json`` keeps of each estimate, with the labels it would need for +-2."""
    return {rid: {m: _record(e) for m, e in by_m.items()} for rid, by_m in corrected.items()}
