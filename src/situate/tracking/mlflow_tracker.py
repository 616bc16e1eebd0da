"""``tracking: mlflow``: one MLflow run per composed configuration.

The store defaults to a SQLite file (``outputs/mlflow.db``) with artifacts under
``outputs/mlartifacts``; ``tracking_uri`` points at a shared server instead, or straight at a
team's Postgres database (``postgresql://user:pw@host/db``: MLflow's SQLAlchemy store through
psycopg 3, as ``postgresql+psycopg://``; artifacts then stay under ``artifact_root`` on each
machine, so a team that shares artifacts too runs ``make mlflow-server-pg``).

What a user sees in the MLflow UI: the experiment is tagged a model-development one
(``mlflow.experimentKind``), which MLflow uses to open it on its runs table rather than the
GenAI overview (MLflow 3.17's UI follows its sidebar switch instead: see :func:`runs_url`); the
Dataset column names the corpus (:meth:`MlflowTracker.log_dataset`); a failed run carries its
one-line error as the tag ``situate.error`` and the artifact ``error.txt``; a sweep's parent run
holds the sweep's parameters and is FAILED only when every job failed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from situate.errors import SituateError
from situate.stores.faults import StorageError
from situate.tracking.base import one_line_error, without_credentials
from situate.tracking.faults import (
    TrackingStoreError,
    tracking_error,
)
from situate.tracking.mlflow_checks import POSTGRES_DRIVER, StoreChecks
from situate.tracking.mlflow_evidence import TRACE_CHOICES, TRACE_SAMPLE, RunEvidence
from situate.tracking.pending import PENDING_ARTIFACTS, PendingRun, now_ms
from situate.tracking.question_sets import QuestionSet
from situate.tracking.tables import write_table

log = logging.getLogger(__name__)

# MLflow params hold at most 6,000 characters in current versions; longer values are cut and marked.
MAX_PARAM_CHARS = 6000
# The UI's default view of an experiment: its runs table, not the GenAI (traces) overview. MLflow
# 3.17's UI follows its sidebar switch (GenAI / Model training) instead; a link with
# ``?workflowType=machine_learning`` opens the runs table there (see :func:`runs_url`).
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
ERROR_TAG = "situate.error"
ERROR_FILE = "error.txt"
SERVER_SCHEMES = ("http", "https", "databricks")  # stores that keep their own artifacts


def sqlalchemy_uri(uri: str) -> str:
    """``postgresql://`` and ``postgres://`` as ``postgresql+psycopg://`` (SQLAlchemy reads the
    bare scheme as psycopg2, which situate does not install); other URIs as they are."""
    scheme, sep, rest = uri.partition("://")
    if sep and scheme.lower() in ("postgresql", "postgres"):
        return f"{POSTGRES_DRIVER}://{rest}"
    return uri


# the stores this process met failing, by URI: not called again by it (each call would wait out
# MLflow's retries, minutes for a server) until the end of the run or sweep finds one answering
# (:func:`store_down`, :func:`forget_fault`)
_DOWN: dict[str, TrackingStoreError] = {}


def store_down(uri: str) -> TrackingStoreError | None:
    """The fault a tracking store at ``uri`` was met with in this process, if any."""
    return _DOWN.get(uri)


def forget_fault(uri: str | None = None) -> None:
    """Call the store at ``uri`` (every store: None) again."""
    if uri is None:
        _DOWN.clear()
    else:
        _DOWN.pop(uri, None)


class MlflowTracker(StoreChecks, RunEvidence):
    """Log params (flattened config), tags (chosen options, git commit), metrics and artifacts.

    Over 250 lines: every call to the store is guarded by the same fault and keep logic (the
    store checks and the run's evidence are mixins in their own modules).

    Every call to the store goes through MLflow's client with the run's id (not MLflow's active
    run): a fault of the store is told apart (:mod:`situate.tracking.faults`) and a run whose
    store fails once it is opened keeps what it would have logged in its folder
    (:mod:`situate.tracking.pending`) instead of failing the job.

    Parameters
    ----------
    tracking_uri : str or None
        An MLflow tracking URI (``http://127.0.0.1:5000``); None uses ``sqlite:///<db_path>``.
    db_path : str
        The local SQLite store.
    artifact_root : str
        Where a new experiment stores artifacts (local store only).
    experiment : str
        The MLflow experiment (one per study).
    probe_seconds : float
        How long :meth:`check` waits for a tracking server to answer before the run starts.
    lock_seconds : float
        How long :meth:`check` waits for another process's lock of the SQLite store (MLflow
        itself waits 20 s on each statement once the run is under way).
    traces : str
        Retriever traces (:mod:`situate.tracking.traces`): ``all`` questions, a seeded
        ``sample`` of ``trace_sample`` of them (all when there are fewer), or ``none``.
    trace_sample, trace_seed : int
        The sample's size and seed (the same questions in every run of a sweep).
    """

    def __init__(
        self,
        tracking_uri: str | None,
        db_path: str,
        artifact_root: str,
        experiment: str,
        probe_seconds: float = 5.0,
        lock_seconds: float = 30.0,
        traces: str = "sample",
        trace_sample: int = TRACE_SAMPLE,
        trace_seed: int = 0,
    ):
        if traces not in TRACE_CHOICES:
            raise SituateError(
                f"tracking.traces={traces!r} is invalid; use one of {', '.join(TRACE_CHOICES)}"
            )
        self.traces, self.trace_sample, self.trace_seed = traces, trace_sample, trace_seed
        self.given = tracking_uri
        self.uri = (
            sqlalchemy_uri(tracking_uri) if tracking_uri else f"sqlite:///{Path(db_path).resolve()}"
        )
        self.db_path = None if tracking_uri else Path(db_path).resolve()
        # a database URI keeps artifacts on this machine, as the local store does
        self.local_artifacts = urlsplit(self.uri).scheme not in SERVER_SCHEMES
        self.artifact_root = Path(artifact_root).resolve()
        self.experiment = experiment
        self.probe_seconds = probe_seconds
        self.lock_seconds = lock_seconds
        self._mlflow = None
        self._open: PendingRun | None = None  # the run under way: what it logged so far
        self._folder: Path | None = None  # where the run under way keeps what waits

    # -- faults of the store -------------------------------------------------------------------

    def store(self) -> str:
        """The store as messages name it: the SQLite file, or the URI without credentials."""
        return str(self.db_path) if self.db_path else without_credentials(self.uri)

    def down(self) -> TrackingStoreError | None:
        """The fault this process met this tracker's store with, if any (not called again)."""
        return _DOWN.get(self.uri)

    def fault(self, error: BaseException) -> TrackingStoreError | None:
        """``error`` as the one line of a fault of this tracker's store, or None."""
        return tracking_error(
            error, self.db_path, self._key(), without_credentials(self.uri), self.lock_seconds
        )

    @contextlib.contextmanager
    def _guarded(self) -> Iterator[None]:
        """A fault of the store met in the block raised as its one line (and remembered: the
        store is not called again by this process, see :func:`store_down`); a store already
        met failing is not called at all."""
        if self.uri in _DOWN:
            raise _DOWN[self.uri]
        try:
            yield
        except TrackingStoreError as e:
            _DOWN[self.uri] = e
            raise
        except Exception as e:
            error = self.fault(e)
            if error is None:
                raise
            _DOWN[self.uri] = error
            raise error from e

    def _logged(self, call) -> bool:
        """Make one call of the run under way to the store; False when the store has failed
        (now or before): what the call logs then waits in the run's folder."""
        try:
            with self._guarded():
                call()
            return True
        except TrackingStoreError as e:
            if self._open is not None and self._open.reason is None:
                self._open.reason = str(e)
                log.warning("%s; the run goes on, what it logs waits in its folder", e.head)
            return False

    def _client(self):
        if self._mlflow is None:
            for name in ("mlflow", "alembic", "sqlalchemy"):
                logging.getLogger(name).setLevel(logging.WARNING)
            # a fault of the store is this tracker's to say in one line: MLflow's own report of
            # it (a stack trace on stderr) is left out
            logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)
            import mlflow

            if self.db_path:
                self.db_path.parent.mkdir(parents=True, exist_ok=True)
            self._use_store(mlflow)
            if without_credentials(self.uri) != self.uri:  # MLflow prints run links with the URI
                os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
            if urlsplit(self.uri).scheme == POSTGRES_DRIVER:
                # the first runs on a fresh database would each create MLflow's tables: one does
                with self._postgres_lock():
                    mlflow.MlflowClient(self.uri).search_experiments(max_results=1)
            self._mlflow = mlflow
        return self._mlflow

    def _use_store(self, mlflow) -> None:
        """Point MLflow's global tracking URI at this store (for its calls that take no URI)."""
        # MLflow exports the URI as MLFLOW_TRACKING_URI, which conf/tracking/mlflow.yaml reads:
        # a notebook's next situate.run (or the child of situate.sweep) would log to this run's
        # store instead of its own output_dir's; leave the variable as it was
        before = os.environ.get("MLFLOW_TRACKING_URI")
        mlflow.set_tracking_uri(self.uri)
        if before is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = before

    def client(self):
        """MLflow's client of this tracker's store."""
        return self._client().MlflowClient(self.uri)

    # -- the store's experiment and runs ---------------------------------------------------------

    def prepare(self) -> str:
        """Create the store and the experiment if needed; return the experiment id."""
        with self._guarded():
            return self._prepare()

    def _prepare(self) -> str:
        client = self.client()
        exp = client.get_experiment_by_name(self.experiment)
        if exp is None:
            location = self.artifact_root.as_uri() if self.local_artifacts else None
            try:
                return client.create_experiment(
                    self.experiment, artifact_location=location, tags=EXPERIMENT_KIND
                )
            except Exception:  # another job created it between our look-up and create
                exp = client.get_experiment_by_name(self.experiment)
                if exp is None:
                    raise
        for key, value in EXPERIMENT_KIND.items():  # an experiment made by an older situate
            if exp.tags.get(key) != value:
                client.set_experiment_tag(exp.experiment_id, key, value)
        return exp.experiment_id

    def _tags(self, tags: Mapping[str, str]) -> dict[str, str]:
        """``tags`` with those MLflow gives a run started here (user, source)."""
        self._client()
        from mlflow.tracking.context.registry import resolve_tags

        return {k: str(v) for k, v in resolve_tags(dict(tags)).items()}

    def start_parent(self, name: str, params: Mapping[str, str], tags: Mapping[str, str]) -> str:
        """Open the parent run of a sweep (its jobs are nested under it) with the sweep's
        parameters (each swept key and its values); return its id."""
        with self._guarded():
            return self._create(name, params, self._tags(tags))

    def _create(
        self,
        name: str,
        params: Mapping[str, str],
        tags: Mapping[str, str],
        start_time: int | None = None,
    ) -> str:
        from mlflow.entities import Param

        client = self.client()
        run = client.create_run(self._prepare(), start_time, dict(tags), run_name=name)
        batch = [Param(k, _cut(str(v))) for k, v in params.items()]
        if batch:
            client.log_batch(run.info.run_id, params=batch)
        return run.info.run_id

    def ensure_parent(self, record: Mapping[str, Any]) -> str:
        """The id of a sweep's parent run (a record of :mod:`situate.tracking.pending`) in this
        store: the run it names when the store has it, else a new one with its name, params and
        tags."""
        with self._guarded():
            if record.get("run_id") and self._existing(record["run_id"]) is not None:
                return record["run_id"]
            return self._create(record["name"], record["params"], record["tags"])

    def end_parent(
        self,
        run_id: str,
        jobs: int,
        failed_jobs: int,
        text_artifacts: Mapping[str, str],
        interrupted: bool = False,
        error: str | None = None,
        tables: Mapping[str, Mapping[str, list]] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """Close a sweep's parent: KILLED when the sweep was interrupted (Ctrl-C), FAILED when an
        error stopped it (``error``: its one line, tagged as a failed run's) or when every job
        failed, else FINISHED; ``failed_jobs`` tags it. ``tables`` (file name -> columns: the
        sweep's results) are logged as the run's tables, ``tags`` (its informativeness) set."""
        from mlflow.entities import Metric

        with self._guarded():
            client = self.client()
            have = self._existing(run_id)
            at = now_ms()
            metrics = [
                Metric(k, float(v), at, 0)
                for k, v in (("jobs", jobs), ("jobs_failed", failed_jobs))
                if have is None or have.data.metrics.get(k) != float(v)
            ]
            if metrics:
                client.log_batch(run_id, metrics=metrics)
            client.set_tag(run_id, "failed_jobs", str(failed_jobs))
            for key, value in (tags or {}).items():
                client.set_tag(run_id, key, _cut(value))
            for name, text in text_artifacts.items():
                client.log_text(run_id, text, name)
            if tables:
                with tempfile.TemporaryDirectory() as tmp:
                    for name, columns in tables.items():
                        write_table(Path(tmp) / name, dict(columns))
                    client.log_artifacts(run_id, tmp)
                self._list_tables(run_id, list(tables))
            if error is not None:
                client.set_tag(run_id, ERROR_TAG, _cut(error))
                client.log_text(run_id, error + "\n", ERROR_FILE)
            if interrupted:
                status = "KILLED"
            elif error is not None:
                status = "FAILED"
            else:
                status = "FAILED" if jobs and failed_jobs == jobs else "FINISHED"
            client.set_terminated(run_id, status)

    def _existing(self, run_id: str):
        """The run ``run_id`` of this store, or None when it has none of that id."""
        from mlflow.exceptions import MlflowException

        try:
            return self.client().get_run(run_id)
        except MlflowException as e:
            if self.fault(e) is not None:
                raise
            return None

    @contextlib.contextmanager
    def run(
        self,
        name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, str],
        parent_run_id: str | None = None,
        folder: str | Path | None = None,
    ) -> Iterator[str | None]:
        """Open a run (yielding its id) and always close it: FAILED (KILLED on Ctrl-C) with its
        one-line error as the tag ``situate.error`` and the artifact ``error.txt``.

        When the store fails once the run is opened (or before: yielding None), the run goes on
        and what it would have logged is written to ``folder``'s ``pending_mlflow.json``
        (:mod:`situate.tracking.pending`) for ``situate track`` to log; without a ``folder`` the
        store's fault is raised as its one line when the run ends."""
        from mlflow.entities import Param

        tags = {**tags, "mlflow.parentRunId": parent_run_id} if parent_run_id else dict(tags)
        record = PendingRun(
            name=name,
            params={k: _cut(str(v)) for k, v in params.items()},
            tags={},
            store=without_credentials(self.uri),
            experiment=self.experiment,
            artifact_root=str(self.artifact_root) if self.local_artifacts else None,
            parent_run_id=parent_run_id,
        )
        self._open, self._folder = record, Path(folder) if folder is not None else None

        def open_run() -> None:
            record.tags = self._tags(tags)
            client = self.client()
            run = client.create_run(self._prepare(), record.start_time, record.tags, run_name=name)
            record.run_id = run.info.run_id
            batch = [Param(k, v) for k, v in record.params.items()]
            if batch:
                client.log_batch(record.run_id, params=batch)

        if not self._logged(open_run) and not record.tags:
            record.tags = dict(tags)  # MLflow's own (user, source) when it is logged
        failure: BaseException | None = None
        try:
            yield record.run_id
            record.status = "FINISHED"
        except BaseException as e:  # Ctrl-C too: the run says why it stopped
            failure = e
            # stopped by the user (KILLED), not failed
            record.status = "KILLED" if isinstance(e, KeyboardInterrupt) else "FAILED"
            record.error = one_line_error(e)
        finally:
            record.end_time = now_ms()
            self._open = None
            if record.run_id is not None and record.reason is None:
                self._logged(lambda: self._close(record))
        if record.reason is not None:
            self._keep(record, failure)
        if failure is not None:
            raise failure

    def _close(self, record: PendingRun) -> None:
        client = self.client()
        if record.error is not None:
            client.set_tag(record.run_id, ERROR_TAG, _cut(record.error))
            client.log_text(record.run_id, record.error + "\n", ERROR_FILE)
        client.set_terminated(record.run_id, record.status, record.end_time)

    def _keep(self, record: PendingRun, failure: BaseException | None) -> None:
        """The run's store failed: write what it would have logged to its folder (raise the
        store's one line when it has none), and say so in the error of a run that failed."""
        fault = _DOWN.get(self.uri)
        if self._folder is None:
            if failure is None and fault is not None:
                raise fault
            return
        record.write(self._folder)
        if failure is None or fault is None or type(failure) not in (SituateError, StorageError):
            return
        opened = (
            f"run {record.run_id} could not be marked FAILED and shows RUNNING"
            if (record.run_id)
            else "the run could not be logged"
        )
        note = (
            f"; {fault.head}: its MLflow {opened} until `situate track {self._folder}` logs it "
            f"({fault.fix})"
        )
        if isinstance(failure, StorageError):
            raise StorageError(failure.where, failure.kind, f"{failure}{note}") from failure
        raise SituateError(f"{failure}{note}") from failure

    def log_recorded(self, record: PendingRun, artifacts: Path, save) -> str:
        """Log a run kept by :mod:`situate.tracking.pending` (``artifacts``: its copied
        artifacts): into the run it had opened when this store has it (what is there already is
        not logged again), else into a new one (its id handed to ``save(record)`` before anything
        else is logged, so a second call finds it); return the run's id."""
        from mlflow.entities import Metric, Param

        with self._guarded():
            client = self.client()
            run = self._existing(record.run_id) if record.run_id else None
            if run is None:
                experiment = self._prepare()
                run = client.create_run(
                    experiment, record.start_time, record.tags, run_name=record.name
                )
                record.run_id = run.info.run_id
                save(record)
            run_id = record.run_id
            params = [Param(k, v) for k, v in record.params.items() if k not in run.data.params]
            at = record.end_time or now_ms()
            metrics = [
                Metric(k, float(v), at, 0)
                for k, v in record.metrics.items()
                if run.data.metrics.get(k) != float(v)
            ]
            for start in range(0, max(len(params), len(metrics)), 100):
                client.log_batch(
                    run_id, metrics=metrics[start : start + 100], params=params[start : start + 100]
                )
            logged = {(i.dataset.name, i.dataset.digest) for i in run.inputs.dataset_inputs}
            for dataset in record.datasets:
                if (dataset["name"], dataset["digest"]) not in logged:
                    self._log_dataset(client, run_id, **dataset)
            if record.question_set is not None:
                self._register(run_id, QuestionSet(**record.question_set))
            if record.artifacts and artifacts.is_dir():
                client.log_artifacts(run_id, str(artifacts))
                if record.tables:
                    self._list_tables(run_id, record.tables)
            self._close(record)
        return run_id

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        if self._open is None:
            raise RuntimeError("log_metrics outside a run: open one with MlflowTracker.run")
        from mlflow.entities import Metric

        values = {k: float(v) for k, v in metrics.items()}
        record = self._open
        record.metrics.update(values)
        at = now_ms()
        batch = [Metric(k, v, at, 0) for k, v in values.items()]

        def log() -> None:
            if record.run_id is None:
                raise _DOWN.get(self.uri) or SituateError("no run is open")
            for start in range(0, len(batch), 1000):
                self.client().log_batch(record.run_id, metrics=batch[start : start + 1000])

        self._logged(log)

    def log_artifact_files(self, folder: str, tables: Sequence[str] = ()) -> None:
        """Log the files of ``folder``; ``tables`` among them are listed in the run's
        ``mlflow.loggedArtifacts`` tag, as ``mlflow.log_table`` lists its tables (see
        :mod:`situate.tracking.tables`)."""
        if self._open is None:
            raise RuntimeError("log_artifact_files outside a run: open one with MlflowTracker.run")
        record = self._open
        record.tables = [*record.tables, *(t for t in tables if t not in record.tables)]

        def log() -> None:
            if record.run_id is None:
                raise _DOWN.get(self.uri) or SituateError("no run is open")
            self.client().log_artifacts(record.run_id, folder)
            if tables:
                self._list_tables(record.run_id, tables)

        if self._logged(log) or self._folder is None:
            return
        shutil.copytree(folder, self._folder / PENDING_ARTIFACTS, dirs_exist_ok=True)
        record.artifacts = True


def runs_url(ui: str, experiment_id: str) -> str:
    """The MLflow UI page of an experiment's runs table (not the GenAI overview)."""
    return f"{ui.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def _cut(value: str) -> str:
    return (
        value if len(value) <= MAX_PARAM_CHARS else value[: MAX_PARAM_CHARS - 14] + "...[truncated]"
    )


def print_runs_urls(db_path: str, ui: str = "http://127.0.0.1:5000") -> None:
    """Print the runs-table link of each experiment in the SQLite store at ``db_path``."""
    if not Path(db_path).exists():
        print(f"no MLflow store at {db_path} yet: `situate run` creates it")
        return
    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{Path(db_path).resolve()}")
    for exp in client.search_experiments():
        print(f"{exp.name}: {runs_url(ui, exp.experiment_id)}")


if __name__ == "__main__":  # make mlflow-ui
    import sys

    print_runs_urls(*sys.argv[1:])
