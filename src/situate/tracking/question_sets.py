"""A run's question set as an MLflow evaluation dataset, registered once by content hash.

The set a number came from (the cookbook's questions, a folder's ``qa.json``, a generated
``questions.jsonl`` with each question's review status and provenance) is kept in the tracking
store as an evaluation dataset (``mlflow.genai.datasets``): one record per question, ``inputs``
its id and text, ``expectations`` its gold spans and answer. It is named
``<corpus>-questions-<hash>`` after the content (ids, texts, gold, answers, reviews), found
again by that name, so a sweep registers it once and a changed set is a new dataset; each run is
tagged with the dataset it used (:data:`DATASET_ID_TAG`, :data:`DATASET_NAME_TAG`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from situate.records import Corpus
from situate.stores.keys import content_hash

DATASET_ID_TAG = "situate.eval_dataset_id"
DATASET_NAME_TAG = "situate.eval_dataset"
DIGEST_TAG = "situate.digest"


@dataclass
class QuestionSet:
    """What is registered: the dataset's name, content digest, source (a path), its tags and
    records (``inputs``, ``expectations``, and per record ``tags`` and ``source``)."""

    name: str
    digest: str
    source: str
    records: list[dict[str, Any]] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def question_set(corpus: Corpus, source: str, questions_file: str | Path | None) -> QuestionSet:
    """The question set of ``corpus`` (loaded from ``source``); ``questions_file`` is the file
    its questions came from: a generated ``.jsonl`` gives each record its review status and
    provenance, any other file or none marks them written by people."""
    generated = _generated(questions_file)
    records = []
    for q in corpus.questions:
        record: dict[str, Any] = {
            "inputs": {"question_id": q.qid, "question": q.text},
            "expectations": {
                "gold_spans": [f"{s.doc_id}:{s.start}-{s.end}" for s in q.gold],
                **({"answer": q.answer} if q.answer else {}),
            },
        }
        made = generated.get(q.qid)
        if made is not None:
            record["tags"] = {
                "review": made.review,
                "strategy": made.strategy,
                "generator": made.provenance.generator,
            }
            record["source"] = {
                "source_type": "DOCUMENT",
                "source_data": {"doc_uri": made.passage.path},
            }
        else:
            record["source"] = {"source_type": "HUMAN", "source_data": {}}
        records.append(record)
    digest = content_hash(records)[:12]
    kind = "generated" if generated else "written"
    return QuestionSet(
        name=f"{corpus.name}-questions-{digest}",
        digest=digest,
        source=str(questions_file or source),
        records=records,
        tags={DIGEST_TAG: digest, "situate.source": str(questions_file or source),
              "situate.questions": kind, "situate.corpus": corpus.name},
    )  # fmt: skip


def _generated(questions_file: str | Path | None) -> dict[str, Any]:
    """The questions of a set that ``situate questions generate`` wrote (a ``.jsonl`` whose
    records carry their passage and provenance), by id; {} for any other file."""
    if questions_file is None or Path(questions_file).suffix.lower() != ".jsonl":
        return {}
    with open(questions_file, encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), "")
    try:
        record = json.loads(first)
    except ValueError:
        return {}
    if not isinstance(record, dict) or not {"passage", "provenance"} <= set(record):
        return {}  # another dataset's JSONL (the cookbook's evaluation set)
    from situate.datasets.generated import read_questions

    return {q.id: q for q in read_questions(questions_file)}


def register(client: Any, experiment_id: str, question_set: QuestionSet) -> tuple[str, bool]:
    """The id of ``question_set``'s dataset in ``client``'s store (MLflow's global tracking URI
    set to it too: records are added through it), created with its records when the store has
    none of that name (the oldest of that name otherwise); returns ``(id, created)``."""
    found = client.search_datasets(
        filter_string=f"name = '{question_set.name}'", order_by=["created_time ASC"]
    )
    for dataset in found:
        if dataset.name == question_set.name and _records(dataset) == len(question_set.records):
            return dataset.dataset_id, False
    dataset = client.create_dataset(question_set.name, experiment_id, question_set.tags)
    if question_set.records:
        dataset.merge_records(question_set.records)
    return dataset.dataset_id, True


def _records(dataset: Any) -> int:
    """How many records the store says ``dataset`` holds (its profile), without loading them."""
    try:
        return int(json.loads(dataset.profile or "{}").get("num_records", 0))
    except (TypeError, ValueError, AttributeError):
        return 0


def run_tags(dataset_id: str, question_set: QuestionSet) -> Mapping[str, str]:
    return {DATASET_ID_TAG: dataset_id, DATASET_NAME_TAG: question_set.name}
