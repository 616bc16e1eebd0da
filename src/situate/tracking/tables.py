"""A run's per-question table, in the format of ``mlflow.log_table``.

One row per question: its id, text and gold, the top-k chunk ids with the first line of each
chunk, the first relevant rank, Pass@k / Recall@k / reciprocal rank and, for contextual runs,
the context of the first relevant chunk. MLflow's experiment page puts the tables of several
runs side by side grouped by a column (``question_id``); ``mlflow.load_table`` reads them back.

The file is written here rather than by ``MlflowClient.log_table``: that call needs pandas at
log time and appends to a table already logged (a run logs its table once), and a run whose
store is down keeps the file with its other artifacts for ``situate track``. The format is
the one ``log_table`` writes (pandas' ``orient="split"`` without an index) and the run is tagged
the same way (:data:`LOGGED_ARTIFACTS_TAG`), so MLflow's UI and ``load_table`` cannot tell them
apart (tested).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from situate.evaluation.evaluate import QuestionResult
from situate.records import Chunk, Context

PER_QUESTION_TABLE = "per_question_table.json"
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"  # MLflow's list of a run's tables
GROUP_BY = "question_id"
FIRST_LINE_CHARS = 100  # of each retrieved chunk, in the table


def first_line(text: str, limit: int = FIRST_LINE_CHARS) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters (marked with …)."""
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def per_question_table(
    questions: Sequence[QuestionResult],
    chunks: Sequence[Chunk],
    contexts: Sequence[Context] | None,
    ks: Sequence[int],
) -> dict[str, list[Any]]:
    """The table's columns (name -> one value per question). Scores of a question without gold
    are None (an empty cell, not a zero); ``context_of_first_relevant`` is there only when the
    run wrote contexts: the context of the first relevant chunk retrieved, else of the first
    chunk that overlaps the gold (what the retriever missed)."""
    ks = sorted(ks)
    top = ks[-1]
    by_id = {c.chunk_id: c for c in chunks}
    context_of = {x.chunk_id: x.text for x in contexts or ()}
    contextual = any(context_of.values())
    columns: dict[str, list[Any]] = {
        name: []
        for name in (
            GROUP_BY, "question", "gold", "part", f"top_{top}_chunk_ids",
            f"top_{top}_first_lines", "first_relevant_rank", "reciprocal_rank",
            *(f"pass_at_{k}" for k in ks), *(f"recall_at_{k}" for k in ks),
            *(["context_of_first_relevant"] if contextual else []),
        )
    }  # fmt: skip
    for q in questions:
        ids = q.top_ids[:top]
        columns[GROUP_BY].append(q.qid)
        columns["question"].append(q.question)
        columns["gold"].append(" ".join(q.gold))
        columns["part"].append(q.part)
        columns[f"top_{top}_chunk_ids"].append(" ".join(ids))
        columns[f"top_{top}_first_lines"].append(
            "\n".join(
                f"{rank}. {cid}: {first_line(by_id[cid].text) if cid in by_id else ''}"
                for rank, cid in enumerate(ids, 1)
            )
        )
        columns["first_relevant_rank"].append(q.first_relevant_rank if q.has_gold else None)
        columns["reciprocal_rank"].append(round(q.reciprocal_rank, 4) if q.has_gold else None)
        for k in ks:
            columns[f"pass_at_{k}"].append(round(q.passed[k], 4) if q.has_gold else None)
            columns[f"recall_at_{k}"].append(round(q.recall[k], 4) if q.has_gold else None)
        if contextual:
            relevant = set(q.relevant_ids)
            found = next((c for c in q.top_ids if c in relevant), None)
            chosen = found or (q.relevant_ids[0] if q.relevant_ids else None)
            columns["context_of_first_relevant"].append(
                context_of.get(chosen, "") if chosen else ""
            )
    return columns


def write_table(path: str | Path, columns: dict[str, list[Any]]) -> int:
    """Write ``columns`` as ``mlflow.log_table`` does (``{"columns": [...], "data": [rows]}``);
    returns the file's size in bytes."""
    names = list(columns)
    rows = [list(row) for row in zip(*(columns[n] for n in names), strict=True)]
    blob = json.dumps({"columns": names, "data": rows}, ensure_ascii=False).encode("utf-8")
    Path(path).write_bytes(blob)
    return len(blob)


def logged_artifacts(current: str | None, tables: Iterable[str]) -> str:
    """The value of the run's :data:`LOGGED_ARTIFACTS_TAG` listing ``tables`` too (as
    ``log_table`` appends to it)."""
    listed = json.loads(current) if current else []
    for name in tables:
        entry = {"path": name, "type": "table"}
        if entry not in listed:
            listed.append(entry)
    return json.dumps(listed)
