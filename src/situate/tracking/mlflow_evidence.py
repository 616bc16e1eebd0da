"""The evidence a run leaves in MLflow besides params and metrics (``tracking: mlflow``): its
corpus as a dataset input, its question set as an evaluation dataset, its retriever traces and
its tables; each call goes through the tracker's fault handling (a store that fails keeps what
waits in the run's folder, see :mod:`situate.tracking.pending`)."""

from __future__ import annotations

import contextlib
import json
import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from situate.errors import SituateError
from situate.stores.locks import exclusive
from situate.tracking.mlflow_checks import POSTGRES_DRIVER
from situate.tracking.question_sets import QuestionSet, register, run_tags
from situate.tracking.tables import LOGGED_ARTIFACTS_TAG, logged_artifacts
from situate.tracking.traces import QuestionTrace, TraceCounts, log_traces

log = logging.getLogger("situate.tracking.mlflow_tracker")

TRACE_CHOICES = ("all", "sample", "none")
TRACE_SAMPLE = 100  # questions traced per run by default (traces=sample)
DATASET_INSERT_TRIES = 3  # runs of one sweep that log the same corpus at the same moment
# the stores that refused an evaluation dataset, by URI (said once per process)
_NO_DATASETS: dict[str, str] = {}


class RunEvidence:
    """What :class:`situate.tracking.mlflow_tracker.MlflowTracker` logs of a run besides its
    params and metrics (it sets ``_open``, ``uri``, ``traces``, ``trace_sample``,
    ``trace_seed``, ``db_path`` and the store's calls used here)."""

    def log_dataset(
        self, name: str, digest: str, source: str, counts: Mapping[str, int], context: str
    ) -> None:
        """The run's dataset for MLflow's Dataset column: name, digest (our content hash), source
        (its path) and its counts (documents, questions, chunks) as the dataset's profile."""
        dataset = {
            "name": name, "digest": digest, "source": source, "counts": dict(counts),
            "context": context,
        }  # fmt: skip
        if self._open is None:
            raise RuntimeError("log_dataset outside a run: open one with MlflowTracker.run")
        record = self._open
        record.datasets.append(dataset)
        self._logged(lambda: self._log_dataset(self.client(), record.run_id, **dataset))

    def _log_dataset(
        self,
        client,
        run_id: str | None,
        name: str,
        digest: str,
        source: str,
        counts: Mapping[str, int],
        context: str,
    ) -> None:
        from mlflow.data.meta_dataset import MetaDataset
        from mlflow.entities import DatasetInput, InputTag
        from mlflow.exceptions import MlflowException
        from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

        if run_id is None:  # the run could not be opened: its dataset waits with it
            raise self.down() or SituateError("no run is open")

        class Corpus(MetaDataset):
            @property
            def profile(self) -> dict[str, int]:
                return dict(counts)

            def to_dict(self) -> dict[str, str]:
                return {**super().to_dict(), "profile": json.dumps(dict(counts))}

        dataset = Corpus(_source(source), name=name, digest=digest)
        item = DatasetInput(
            dataset._to_mlflow_entity(), tags=[InputTag(MLFLOW_DATASET_CONTEXT, context)]
        )
        for attempt in range(DATASET_INSERT_TRIES):
            try:
                client.log_inputs(run_id, datasets=[item])
                return
            except MlflowException as e:
                # MLflow's store looks the dataset up, then inserts it: two runs of a parallel
                # sweep logging the same corpus at once race, and the later insert breaks the
                # (experiment, name, digest) key. The transaction rolled back whole; a second
                # try finds the row the other run wrote.
                if attempt + 1 == DATASET_INSERT_TRIES or not _is_duplicate_key(e):
                    raise

    def log_question_set(self, question_set: QuestionSet) -> None:
        """Register the run's question set as an evaluation dataset (once per content: found
        by its name otherwise) and tag the run with it. A store that cannot hold datasets (a
        file store, a server older than MLflow 3.4) is said in one line, once, and the run goes
        on."""
        if self._open is None:
            raise RuntimeError("log_question_set outside a run: open one with MlflowTracker.run")
        record = self._open
        record.question_set = question_set.to_json()
        self._logged(lambda: self._register(record.run_id, question_set))

    def _register(self, run_id: str | None, question_set: QuestionSet) -> None:
        if run_id is None:  # the run could not be opened: its question set waits with it
            raise self.down() or SituateError("no run is open")
        if self.uri in _NO_DATASETS:
            return
        client = self.client()
        experiment = self._prepare()
        try:
            with self._datasets_lock():
                self._use_store(self._client())  # a dataset's records go to the global store
                dataset_id, created = register(client, experiment, question_set)
        except Exception as e:
            if self.fault(e) is not None:
                raise
            first = next((x for x in str(e).splitlines() if x.strip()), type(e).__name__)
            _NO_DATASETS[self.uri] = first
            log.warning(
                "%s: this tracking store cannot hold evaluation datasets (%s): runs go on "
                "without their question set in MLflow (an MLflow 3.4+ SQL store or server has "
                "them)",
                self.store(),
                first.strip()[:300],
            )
            return
        if created:
            log.info("question set %s registered in MLflow (%s)", question_set.name, dataset_id)
        for key, value in run_tags(dataset_id, question_set).items():
            client.set_tag(run_id, key, value)

    @contextlib.contextmanager
    def _datasets_lock(self) -> Iterator[None]:
        """Jobs of a sweep register one question set once: a lock beside a local store, an
        advisory lock of a Postgres one (a server's race leaves two alike; the oldest is used)."""
        if self.db_path is not None:
            with exclusive(self.db_path.parent, f".{self.db_path.name}.datasets"):
                yield
        elif urlsplit(self.uri).scheme == POSTGRES_DRIVER:
            with self._postgres_lock():
                yield
        else:
            yield

    def traced(self, n_questions: int) -> list[int]:
        """Which of ``n_questions`` questions get a trace (their positions, in order): all, none,
        or a sample drawn with ``trace_seed`` (the same in every run of a sweep)."""
        if self.traces == "none" or n_questions == 0:
            return []
        if self.traces == "all" or n_questions <= self.trace_sample:
            return list(range(n_questions))
        return sorted(random.Random(self.trace_seed).sample(range(n_questions), self.trace_sample))

    def log_traces(
        self,
        traces: Sequence[QuestionTrace],
        chunk_text: Callable[[str], str],
        chunk_uri: Callable[[str], str],
    ) -> None:
        """Write ``traces`` (one per question, chosen by :meth:`traced`) linked to the run, and
        log how many the store holds (``traces_logged``) and what they took
        (``traces_seconds``); fewer than asked for is said, never silent. A store that keeps no
        traces (MLflow's file store) is said in one line and the run goes on; traces are not
        kept for ``situate track`` when the store is down."""
        if self._open is None:
            raise RuntimeError("log_traces outside a run: open one with MlflowTracker.run")
        record = self._open
        if not traces or record.run_id is None or self.down() is not None:
            return
        counts: list[TraceCounts] = []

        def write() -> None:
            self._client()
            experiment = self._prepare()
            try:
                counts.append(
                    log_traces(
                        self.uri, experiment, record.run_id, list(traces), chunk_text, chunk_uri
                    )
                )
            except NotImplementedError as e:
                log.warning(
                    "%s: this tracking store keeps no traces (%s): the run goes on without them",
                    self.store(), str(e).splitlines()[0] if str(e) else type(e).__name__,
                )  # fmt: skip

        if not self._logged(write) or not counts:
            return
        (done,) = counts
        if done.logged < done.questions:
            log.warning(
                "traces: %d of %d questions' traces are in the store for run %s (%d lost)",
                done.logged, done.questions, record.run_id, done.questions - done.logged,
            )  # fmt: skip
        self.log_metrics({"traces_logged": done.logged, "traces_seconds": done.seconds})

    def _list_tables(self, run_id: str, tables: Sequence[str]) -> None:
        client = self.client()
        current = client.get_run(run_id).data.tags.get(LOGGED_ARTIFACTS_TAG)
        listed = logged_artifacts(current, tables)
        if listed != current:
            client.set_tag(run_id, LOGGED_ARTIFACTS_TAG, listed)


def _is_duplicate_key(error: BaseException) -> bool:
    """Whether ``error`` is a unique-key violation (SQLite's or Postgres's/MySQL's wording)."""
    text = str(error).lower()
    return any(w in text for w in ("unique constraint failed", "duplicate key", "duplicate entry"))


def _source(path: str):
    """MLflow's local dataset source for ``path`` (a file or folder)."""
    from mlflow.data.dataset_source_registry import get_registered_sources

    local = next(s for s in get_registered_sources() if s._get_source_type() == "local")
    return local(str(Path(path).resolve()))
