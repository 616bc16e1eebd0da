"""``situate run``: the Hydra entry point. Composes the stages, runs them, tracks the result."""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from situate.config.compose import CONF_DIR, instantiate_stage
from situate.config.preflight import check_stages, stages_of_run
from situate.config.stages import CHOICE_GROUPS, COMMAND_GROUPS, LLM_GROUPS, PIPELINE_STAGES
from situate.errors import SituateError, SituateExit, Unavailable
from situate.evaluation.trec import write_trec_files
from situate.records import Chunk, Corpus
from situate.running.pipeline import Pipeline, RunResult, unaccounted
from situate.stores.faults import StorageError, storage_error
from situate.stores.files import atomic_write_bytes, atomic_write_text
from situate.stores.keys import content_hash
from situate.tracking.base import (
    PER_QUESTION,
    RESULT_FILE,
    Tracker,
    flatten,
    run_name,
    without_credentials,
)
from situate.tracking.question_sets import question_set
from situate.tracking.sweep import parent_run_id
from situate.tracking.tables import PER_QUESTION_TABLE, per_question_table, write_table
from situate.tracking.traces import question_traces

log = logging.getLogger("situate")


def build_pipeline(cfg: DictConfig) -> Pipeline:
    """Instantiate every stage of ``cfg`` (each group's ``_target_``)."""
    built = {g: instantiate_stage(cfg, g) for g in PIPELINE_STAGES}
    execution = instantiate_stage(cfg, "execution") if cfg.get("execution") else None
    if execution is not None and execution.configs is not None:  # stages built again in tasks
        execution.configs = {
            g: OmegaConf.to_container(cfg[g], resolve=True) for g in ("context", "embedder")
        }
    return Pipeline(
        **built,
        execution=execution,
        evaluator=instantiate_stage(cfg, "eval"),
        cache_dir=cfg.cache_dir,
        price_book=instantiate_stage(cfg, "pricing") if cfg.get("pricing") else None,
        unverified_cache=cfg.unverified_cache,
        stores=instantiate_stage(cfg, "store") if cfg.get("store") else None,
    )


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).parent,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_artifacts(folder: Path, cfg: DictConfig, result: RunResult, ks: list[int]) -> None:
    """The resolved config, one CSV row per question, and a sample of contexts."""
    (folder / "config.yaml").write_text(without_credentials(OmegaConf.to_yaml(cfg, resolve=True)))
    with open(folder / PER_QUESTION, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "qid",
                "question",
                "gold",
                f"top_{ks[-1]}_chunk_ids",
                "first_relevant_rank",
                "reciprocal_rank",
            ]
            + [f"recall_at_{k}" for k in ks]
            + [f"pass_at_{k}" for k in ks]
            + [f"precision_at_{k}" for k in ks]
            + ["average_precision"]
            + ["part"]
        )
        for r in result.evaluation.per_question:
            scores = (
                [f"{r.reciprocal_rank:.4f}"]
                + [f"{r.recall[k]:.4f}" for k in ks]
                + [f"{r.passed[k]:.4f}" for k in ks]
                + [f"{r.precision[k]:.4f}" for k in ks]
                + [f"{r.average_precision:.4f}"]
                if r.has_gold
                else [""] * (2 + 3 * len(ks))  # a question without gold: empty cells, not zeros
            )
            w.writerow(
                [r.qid, r.question, " ".join(r.gold), " ".join(r.top_ids)]
                + [r.first_relevant_rank or ""]
                + scores
                + [r.part]
            )
    write_trec_files(folder, result.evaluation.per_question, result.chunks, tag=str(cfg.study))
    table = per_question_table(result.evaluation.per_question, result.chunks, result.contexts, ks)
    write_table(folder / PER_QUESTION_TABLE, table)
    if result.costs is not None and result.costs.context.per_call:  # the calls this run paid
        calls = result.costs.context.per_call
        (folder / "llm_calls.json").write_text(json.dumps(calls, indent=1))
    flagged = [
        {"chunk_id": f.chunk_id, "context": f.context, "not_in_document": list(f.unsupported)}
        for f in result.flags
    ]
    (folder / "contexts_flagged.json").write_text(json.dumps(flagged, indent=1, ensure_ascii=False))
    if any(found.truncated for found in result.truncation.values()):  # what each window cut
        cut = {
            index: {
                "window_tokens": found.window,
                "texts_truncated": [result.chunks[r].chunk_id for r in found.truncated_rows],
                "contexts_truncated": [result.chunks[r].chunk_id for r in found.cut_rows],
            }
            for index, found in result.truncation.items()
        }
        (folder / "truncated.json").write_text(json.dumps(cut, indent=1, ensure_ascii=False))
    sample = [
        {"chunk_id": c.chunk_id, "chunk_start": c.text[:200], "context": x.text}
        for c, x in list(zip(result.chunks, result.contexts, strict=True))[:25]
    ]
    (folder / "contexts_sample.json").write_text(json.dumps(sample, indent=1, ensure_ascii=False))
    if any(
        x.text for x in result.contexts
    ):  # every context, for reports (which ones flipped a question)
        with open(folder / "contexts.jsonl", "w", encoding="utf-8") as f:
            for c, x in zip(result.chunks, result.contexts, strict=True):
                f.write(
                    json.dumps(
                        {
                            "chunk_id": c.chunk_id,
                            "doc_id": c.doc_id,
                            "start": c.start,
                            "end": c.end,
                            "context": x.text,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )


def dataset_input(cfg: DictConfig, corpus: Corpus, chunks: list[Chunk]) -> dict:
    """The run's corpus as the tracker logs it: name, digest of its content, source, counts."""
    digest = content_hash(
        [(d.doc_id, d.text) for d in corpus.documents],
        [(q.qid, q.text, q.gold) for q in corpus.questions],
    )
    return {
        "name": corpus.name,
        "digest": digest[:16],
        "source": str(cfg.dataset.get("path") or ""),
        "counts": {
            "documents": len(corpus.documents),
            "questions": len(corpus.questions),
            "chunks": len(chunks),
        },
        "context": "eval",
    }


def log_traces(tracker: Tracker, result: RunResult, picked: list[int]) -> None:
    """The retriever traces of the questions at ``picked``: each stage's list with the chunks'
    first characters and their documents' files."""
    if len(result.stages) != len(result.evaluation.per_question):  # a pipeline that kept none
        log.warning("traces: the run kept no stage lists for its questions; none are logged")
        return
    by_id = {c.chunk_id: c for c in result.chunks}
    ids = [c.chunk_id for c in result.chunks]
    where = {d.doc_id: d.source or d.doc_id for d in result.corpus.documents}
    traces = question_traces(result.evaluation.per_question, result.stages, ids, picked)
    if len(picked) < len(result.evaluation.per_question):  # the Traces tab shows only these
        log.info(
            "traces: %d of %d questions, a seeded sample (tracking.traces=all traces each one)",
            len(picked), len(result.evaluation.per_question),
        )  # fmt: skip
    tracker.log_traces(
        traces,
        lambda cid: by_id[cid].text,
        lambda cid: where.get(by_id[cid].doc_id, by_id[cid].doc_id),
    )


def record_failed_run(tracker: Tracker, cfg: DictConfig, pipeline: Pipeline) -> None:
    """What a failing run had spent, and its dataset once loaded; a tracker error here is logged
    and the run's own error goes on."""
    try:
        tracker.log_metrics(pipeline.spent())
        if pipeline.loaded is not None:
            tracker.log_dataset(**dataset_input(cfg, *pipeline.loaded))
    except Exception as e:
        log.warning("could not record the failed run's spend: %s", e)


@dataclass(frozen=True)
class Job:
    """What a job reads of Hydra's runtime (``hydra.*`` of its config), handed to :func:`run_job`
    as a value: where it writes, which option of each group it runs, its overrides as typed, the
    sweep it belongs to (``None`` outside a sweep) and the folders of Hydra's saved YAML."""

    output_dir: Path
    choices: Mapping[str, str | None]
    overrides: tuple[str, ...]
    sweep_dir: Path | None = None
    hydra_files: tuple[Path, ...] = ()

    @classmethod
    def of(cls, hc: DictConfig) -> Job:
        """The job of a config's ``hydra`` node (``HydraConfig.get()`` in a Hydra job)."""
        multirun = hc.mode == RunMode.MULTIRUN
        folders = [Path(hc.runtime.output_dir) / hc.output_subdir] if hc.output_subdir else []
        if multirun:
            folders.append(Path(hc.sweep.dir))
        return cls(
            output_dir=Path(hc.runtime.output_dir),
            choices=dict(hc.runtime.choices),
            overrides=tuple(hc.overrides.task),
            sweep_dir=Path(hc.sweep.dir) if multirun else None,
            hydra_files=tuple(folders),
        )


def redact_hydra_files(folders: Sequence[Path]) -> None:
    """Hydra saves the overrides as typed (``.hydra/overrides.yaml``, ``config.yaml``,
    ``hydra.yaml`` and a sweep's ``multirun.yaml``): passwords in URLs there become ``***``."""
    for folder in folders:
        for f in folder.glob("*.yaml"):
            text = f.read_text(encoding="utf-8")
            if without_credentials(text) != text:
                atomic_write_text(f, without_credentials(text))


def run_job(cfg: DictConfig, job: Job) -> dict:
    """Run one composed config (without its ``hydra`` node: that is ``job``), track it, and return
    the row the results table prints.

    Its metrics hold the job's wall time from here to the end of its logging (``run_seconds``),
    the stages' timers (``pipeline.STAGE_SECONDS``, with ``build_seconds``: the config resolved
    and the stages built, and ``log_seconds``: the tracker's run opened and written) and what
    they leave out (``unaccounted_seconds``)."""
    started = time.perf_counter()
    uses_llm = "llm" in cfg.context  # prompt and llm are composed always, but only meant with it
    groups = CHOICE_GROUPS + (LLM_GROUPS if uses_llm else ())
    choices = {g: job.choices.get(g) for g in groups}
    overrides = [without_credentials(o) for o in job.overrides]
    row: dict = {"choices": choices, "overrides": overrides, "ks": sorted(cfg.eval.ks)}
    tracker: Tracker = instantiate_stage(cfg, "tracking")
    resolved = OmegaConf.to_container(cfg, resolve=True)
    if not uses_llm:
        for g in LLM_GROUPS:
            resolved.pop(g, None)
    for verb_only in COMMAND_GROUPS:  # other verbs' settings
        resolved.pop(verb_only, None)
    params = flatten(resolved)
    tags = {
        **{g: str(v) for g, v in choices.items() if v is not None},  # no `arm: None`
        "git_commit": git_commit(),
        "overrides": " ".join(overrides),
    }
    name = run_name(overrides) or " ".join(f"{g}={choices[g]}" for g in ("context", "fusion"))
    try:
        with storage_faults(job.output_dir):
            return _run_job(cfg, job, tracker, name, params, tags, row, started)
    except StorageError as e:  # the disk or a store: every later job would meet it too
        row["error"] = str(e)
        with contextlib.suppress(SituateError):  # on a full disk this may not land either
            atomic_write_text(job.output_dir / RESULT_FILE, json.dumps(row, indent=1))
        raise SituateExit(e) from e


@contextlib.contextmanager
def storage_faults(where: Path) -> Iterator[None]:
    """A fault of the disk that no store named (a library's own write under ``where``) raised as
    its one-line :class:`StorageError`."""
    try:
        yield
    except (OSError, sqlite3.Error) as e:
        error = storage_error(e, where, fallback=True)
        if error is None:
            raise
        raise error from e


def _run_job(
    cfg: DictConfig,
    job: Job,
    tracker: Tracker,
    name: str,
    params: dict,
    tags: dict,
    row: dict,
    started: float,
) -> dict:
    try:
        redact_hydra_files(job.hydra_files)
        check_stages(cfg, stages_of_run(cfg), job.choices)  # before a document is read
        parent = parent_run_id(job.sweep_dir) if job.sweep_dir is not None else None
        pipeline = build_pipeline(cfg)  # a bad parameter stops here, before a run is opened
        tags.update(pipeline.endpoints())  # an emulator's run says so on its page
        built = time.perf_counter()
        with tracker.run(name, params, tags, parent, folder=job.output_dir) as run_id:
            opened = time.perf_counter()
            row["run_id"] = run_id
            try:
                with storage_faults(job.output_dir):  # the run says why it failed, in one line
                    result = pipeline.run()
            except BaseException:  # Ctrl-C too: what it paid before failing is not lost
                record_failed_run(tracker, cfg, pipeline)
                raise
            ran = time.perf_counter()
            tracker.log_metrics(result.metrics)
            tracker.log_dataset(**dataset_input(cfg, result.corpus, result.chunks))
            if result.corpus.questions:
                source = str(cfg.dataset.get("path") or "")
                tracker.log_question_set(
                    question_set(result.corpus, source, result.corpus.questions_source or None)
                )
            if picked := tracker.traced(len(result.evaluation.per_question)):
                log_traces(tracker, result, picked)
            with tempfile.TemporaryDirectory() as tmp:
                write_artifacts(Path(tmp), cfg, result, row["ks"])
                tracker.log_artifact_files(tmp, tables=[PER_QUESTION_TABLE])
                for name_ in (PER_QUESTION, "config.yaml"):
                    atomic_write_bytes(job.output_dir / name_, (Path(tmp) / name_).read_bytes())
            end = time.perf_counter()
            wall = {
                "build_seconds": built - started,
                "log_seconds": (opened - built) + (end - ran),
                "run_seconds": end - started,
            }
            wall["unaccounted_seconds"] = unaccounted(wall["run_seconds"], result.timings | wall)
            tracker.log_metrics(wall)
        row["metrics"] = result.metrics | wall
    except Unavailable as e:  # an optional part not installed: a sweep skips the job
        if job.sweep_dir is None:
            raise SituateExit(e) from e
        row["skipped"] = f"needs {e.needs}"  # not a failure: the sweep runs the others
        log.warning("skipped: %s", e)
        atomic_write_text(job.output_dir / RESULT_FILE, json.dumps(row, indent=1))
        return row
    except StorageError:
        raise  # the sweep stops (run_job)
    except SituateError as e:
        row["error"] = str(e)
        atomic_write_text(job.output_dir / RESULT_FILE, json.dumps(row, indent=1))
        if job.sweep_dir is not None:
            log.error("%s", e)  # one failed job does not sink the sweep; the table shows it
            return row
        raise SituateExit(e) from e
    atomic_write_text(job.output_dir / RESULT_FILE, json.dumps(row, indent=1))
    return row


def task(cfg: DictConfig) -> float | list[float] | None:
    """One job of Hydra's (``main``, or :mod:`situate.running.launch`); returns what a sweeper optimizes
    (config ``objective``, on dev with a split)."""
    from situate.running.tuning import objective_value

    row = run_job(cfg, Job.of(HydraConfig.get()))  # Hydra's runtime, read once, as a value
    try:
        return objective_value(row, cfg.get("objective"), cfg.eval.get("split", "none"))
    except SituateError as e:
        raise SituateExit(e) from e


main = hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")(task)


if __name__ == "__main__":
    sys.exit(main())
