"""Runs and qrels in the TREC formats that trec_eval, pytrec_eval, ir-measures and ranx read.

* run file (``run.trec``): ``qid Q0 chunk_id rank score tag``, best first. The score column is
  ``depth - rank + 1``: tools re-sort a run by score and break ties their own way, so a strictly
  decreasing score is what makes every tool read our order (the retrieval scores, which may tie,
  stay in the run's own records);
* qrels (``qrels.txt`` from gold, ``qrels_judged.txt`` from a judge): ``qid 0 chunk_id grade``.
  Gold qrels grade 1 for every chunk overlapping a gold span; judged qrels carry the judge's grade
  (0 to 3), one line per judged pair, and may be edited by hand and read back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from situate.errors import SituateError

if TYPE_CHECKING:
    from situate.evaluation.evaluate import QuestionResult
    from situate.records import Chunk

Qrels = dict[str, dict[str, int]]


def _field(value: str, what: str, path: Path) -> str:
    if value.split() != [value]:  # empty, or white space in it (str.isspace's, as split's)
        raise SituateError(
            f"{path}: {what} {value!r} is empty or has white space, which the TREC formats cannot "
            "hold; give every question and chunk an id without spaces"
        )
    return value


def write_run(path: str | Path, ranked: Iterable[tuple[str, list[str]]], tag: str) -> None:
    """``ranked``: (qid, chunk ids best first) per question."""
    path = Path(path)
    lines = []
    for qid, ids in ranked:
        _field(qid, "question id", path)
        for rank, chunk_id in enumerate(ids, start=1):
            _field(chunk_id, "chunk id", path)
            lines.append(f"{qid} Q0 {chunk_id} {rank} {len(ids) - rank + 1} {tag}\n")
    path.write_text("".join(lines), encoding="utf-8")


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    path = Path(path)
    lines = []
    for qid, grades in qrels.items():
        _field(qid, "question id", path)
        for chunk_id, grade in grades.items():
            lines.append(f"{qid} 0 {_field(chunk_id, 'chunk id', path)} {int(grade)}\n")
    path.write_text("".join(lines), encoding="utf-8")


def read_qrels(path: str | Path) -> Qrels:
    """``{qid: {chunk_id: grade}}``; a malformed line is a one-line error naming it."""
    path = Path(path)
    out: Qrels = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 4 or not parts[3].lstrip("-").isdigit():
            raise SituateError(
                f"{path}: line {n} {line.strip()!r} is not `qid 0 chunk_id grade` (grade a whole "
                "number); fix the line"
            )
        out.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return out


def read_run(path: str | Path) -> dict[str, list[str]]:
    """``{qid: chunk ids best first}`` (sorted by rank)."""
    path = Path(path)
    rows: dict[str, list[tuple[int, str]]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6 or not parts[3].isdigit():
            raise SituateError(
                f"{path}: line {n} {line.strip()!r} is not `qid Q0 chunk_id rank score tag`"
            )
        rows.setdefault(parts[0], []).append((int(parts[3]), parts[2]))
    return {qid: [c for _, c in sorted(r)] for qid, r in rows.items()}


def write_trec_files(
    folder: Path, per_question: Sequence[QuestionResult], chunks: Sequence[Chunk], tag: str
) -> None:
    """A run's ``run.trec`` and ``qrels.txt``, and ``chunks.jsonl``: the text of every chunk
    they name, which ``situate judge`` pools and judges."""
    write_run(folder / "run.trec", [(r.qid, r.top_ids) for r in per_question], tag)
    write_qrels(
        folder / "qrels.txt", {r.qid: dict.fromkeys(r.relevant_ids, 1) for r in per_question}
    )
    named = {c for r in per_question for c in (*r.top_ids, *r.relevant_ids)}
    with open(folder / "chunks.jsonl", "w", encoding="utf-8") as f:
        for c in chunks:
            if c.chunk_id in named:
                row = {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "start": c.start, "end": c.end}
                f.write(json.dumps({**row, "text": c.text}, ensure_ascii=False) + "\n")
