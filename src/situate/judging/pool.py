"""The pool: the top-k chunks of every arm of a study, per question, as (question, chunk) pairs.

Each finished run of a study left ``run.trec`` (its ranking), ``qrels.txt`` (its gold, where the
data set has some) and ``chunks.jsonl`` (the text of every chunk those name) in MLflow
(:func:`situate.evaluation.trec.write_trec_files`). A pair is a question and a chunk *text*: arms whose
chunkers give one text the same or different ids share its judgment.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from situate.errors import SituateError
from situate.evaluation.trec import read_qrels, read_run
from situate.study.collect import RunData, Study

_TOP = re.compile(r"top_(\d+)_chunk_ids")
ARTIFACTS = ("run.trec", "chunks.jsonl", "qrels.txt")


@dataclass(frozen=True)
class Pair:
    qid: str
    question: str
    text: str  # the chunk's text
    chunk_id: str  # its id in the first run that names it (for qrels and reports)


@dataclass
class Arm:
    """One run of the study with what judging reads: ranked chunk ids, their texts, its gold."""

    run: RunData
    ranked: dict[str, list[str]]
    texts: dict[str, str]
    gold: dict[str, set[str]]  # qid -> chunk ids overlapping a gold span (empty without gold)

    def ranked_texts(self, qid: str, depth: int) -> list[str]:
        return [self.texts[c] for c in self.ranked.get(qid, [])[:depth]]


@dataclass
class Pool:
    depth: int
    questions: dict[str, str]  # qid -> question text, in the baseline's order
    pairs: list[Pair] = field(default_factory=list)  # pooled, by question, first seen first
    sample: list[tuple[Pair, bool]] = field(default_factory=list)  # agreement sample, is gold

    def all_pairs(self) -> list[Pair]:
        """The pool, then the sample's pairs outside it (each distinct pair once)."""
        seen = {(p.qid, p.text) for p in self.pairs}
        extra = [p for p, _ in self.sample if (p.qid, p.text) not in seen]
        return self.pairs + list({(p.qid, p.text): p for p in extra}.values())


def load_arms(study: Study) -> list[Arm]:
    """The judging artifacts of every finished run of ``study`` (a one-line error for a run that
    lacks them: it was run by a situate that did not write them)."""
    import os

    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow.artifacts import download_artifacts
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=study.tracking_uri)
    arms = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in study.ok_runs:
            names = {a.path for a in client.list_artifacts(run.run_id)}
            missing = [a for a in ARTIFACTS if a not in names]
            if missing:
                raise SituateError(
                    f"study {study.name}: run {run.run_id[:8]} ({run.label}) has no "
                    f"{', '.join(missing)} artifact (run by an older situate); rerun the study "
                    "(stored contexts and embeddings make that cheap) before judging it"
                )
            got = {
                a: Path(
                    download_artifacts(
                        run_id=run.run_id,
                        artifact_path=a,
                        dst_path=str(Path(tmp) / run.run_id),
                        tracking_uri=study.tracking_uri,
                    )
                )  # fmt: skip
                for a in ARTIFACTS
            }
            texts = {}
            for line in got["chunks.jsonl"].read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    texts[row["chunk_id"]] = row["text"]
            gold = {q: set(g) for q, g in read_qrels(got["qrels.txt"]).items()}
            arms.append(Arm(run, read_run(got["run.trec"]), texts, gold))
    return arms


def build_pool(
    study: Study, arms: list[Arm], depth: int, sample_size: int = 0, seed: int = 0
) -> Pool:
    """Pool the top ``depth`` of every arm per question; draw the agreement sample.

    The sample is stratified: half (question, gold chunk) pairs, half pooled pairs that are not
    gold, drawn with ``seed`` (fewer where a stratum is smaller), so agreement is measured on both
    kinds; it is empty when the study has no gold.
    """
    base = study.baseline
    questions = {q["qid"]: q.get("question", "") for q in base.questions or []}
    for arm in arms:
        columns = arm.run.questions[0] if arm.run.questions else {}
        listed = max((int(m.group(1)) for c in columns if (m := _TOP.fullmatch(c))), default=0)
        if listed < depth:
            raise SituateError(
                f"judge.depth={depth}: run {arm.run.label} kept its top {listed} chunks per "
                f"question (max of its eval.ks); lower judge.depth or rerun with eval.ks up to {depth}"
            )
    pool = Pool(depth, questions)
    seen: set[tuple[str, str]] = set()
    for qid, question in questions.items():
        for arm in arms:
            for chunk_id in arm.ranked.get(qid, [])[:depth]:
                text = arm.texts[chunk_id]
                if (qid, text) not in seen:
                    seen.add((qid, text))
                    pool.pairs.append(Pair(qid, question, text, chunk_id))
    if sample_size <= 0:
        return pool
    gold_pairs: dict[tuple[str, str], Pair] = {}
    for qid, question in questions.items():
        for arm in arms:
            for chunk_id in sorted(arm.gold.get(qid, ())):
                if chunk_id in arm.texts:
                    gold_pairs.setdefault(
                        (qid, arm.texts[chunk_id]),
                        Pair(qid, question, arm.texts[chunk_id], chunk_id),
                    )
    if not gold_pairs:
        return pool
    others = [p for p in pool.pairs if (p.qid, p.text) not in gold_pairs]
    rng = np.random.default_rng(seed)
    gold_list = list(gold_pairs.values())
    n_gold = min(len(gold_list), sample_size // 2)
    n_other = min(len(others), sample_size - n_gold)
    picked_gold = sorted(rng.choice(len(gold_list), n_gold, replace=False).tolist())
    picked_other = sorted(rng.choice(len(others), n_other, replace=False).tolist())
    pool.sample = [(gold_list[i], True) for i in picked_gold] + [
        (others[i], False) for i in picked_other
    ]
    return pool
