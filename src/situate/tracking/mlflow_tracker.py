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
import http.client
import json
import logging
import os
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from situate.errors import SituateError
from situate.tracking.base import one_line_error, without_credentials

# MLflow params hold at most 6,000 characters in current versions; longer values are cut and marked.
MAX_PARAM_CHARS = 6000
# The UI's default view of an experiment: its runs table, not the GenAI (traces) overview. MLflow
# 3.17's UI follows its sidebar switch (GenAI / Model training) instead; a link with
# ``?workflowType=machine_learning`` opens the runs table there (see :func:`runs_url`).
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
ERROR_TAG = "situate.error"
ERROR_FILE = "error.txt"
DATASET_INSERT_TRIES = 3  # runs of one sweep that log the same corpus at the same moment
SERVER_SCHEMES = ("http", "https", "databricks")  # stores that keep their own artifacts
POSTGRES_DRIVER = "postgresql+psycopg"  # SQLAlchemy's name for psycopg 3, the driver situate ships


def sqlalchemy_uri(uri: str) -> str:
    """``postgresql://`` and ``postgres://`` as ``postgresql+psycopg://`` (SQLAlchemy reads the
    bare scheme as psycopg2, which situate does not install); other URIs as they are."""
    scheme, sep, rest = uri.partition("://")
    if sep and scheme.lower() in ("postgresql", "postgres"):
        return f"{POSTGRES_DRIVER}://{rest}"
    return uri


class MlflowTracker:
    """Log params (flattened config), tags (chosen options, git commit), metrics and artifacts.

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
    """

    def __init__(
        self,
        tracking_uri: str | None,
        db_path: str,
        artifact_root: str,
        experiment: str,
        probe_seconds: float = 5.0,
    ):
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
        self._mlflow = None

    def check(self) -> None:
        """Fail in one line, within ``probe_seconds``, when the tracking server does not answer.

        Without it a dead server costs MLflow's own retries (minutes) and a long stack trace. The
        probe is ``GET <uri>/health``: 2xx, or 401/403 (credentials are MLflow's to send), passes;
        so does a TLS error (certificates are MLflow's to check). A local store needs no probe, and
        ``probe_seconds=0`` skips it.
        """
        parts = urlsplit(self.uri)
        if parts.scheme == POSTGRES_DRIVER and self.probe_seconds:
            return self._check_postgres()
        if parts.scheme not in ("http", "https") or not self.probe_seconds:
            return
        host = parts.netloc.rpartition("@")[2]  # credentials are not needed to see it answer
        url = urlunsplit(parts._replace(netloc=host, path=parts.path.rstrip("/") + "/health"))
        try:
            urllib.request.urlopen(url, timeout=self.probe_seconds).close()
            return
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                return
            reason = (
                f"HTTP {e.code} at /health: another server, or a proxy with no server behind it"
            )
        except (OSError, ValueError, http.client.HTTPException) as e:  # refused, unknown, no HTTP
            if isinstance(e, ssl.SSLError) or isinstance(getattr(e, "reason", None), ssl.SSLError):
                return
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                reason = f"no answer within {self.probe_seconds:g} s"
        key = self._key()
        raise SituateError(
            f"{key}={without_credentials(self.uri)}: no MLflow tracking server answers ({reason}); start it "
            f"(mlflow server), fix {key}, or run with tracking=none (tracking.probe_seconds=0 "
            "skips this check)"
        )

    def _key(self) -> str:
        """The setting the URI came from, for messages."""
        if self.given and self.given == os.environ.get("MLFLOW_TRACKING_URI"):
            return "MLFLOW_TRACKING_URI"
        return "tracking.tracking_uri"

    def _check_postgres(self) -> None:
        """Connect to a Postgres tracking database within ``probe_seconds``, errors as one line."""
        import psycopg

        from situate.postgres.client import password_of

        conninfo = "postgresql://" + self.uri.split("://", 1)[1]
        try:
            psycopg.connect(conninfo, connect_timeout=max(1, round(self.probe_seconds))).close()
        except psycopg.Error as e:
            detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
            password = password_of(conninfo)
            if password:
                detail = detail.replace(password, "***")
            raise SituateError(
                f"{self._key()}={without_credentials(self.uri)}: cannot connect to the MLflow "
                f"database ({detail}); check the host, port, database, user and password there, "
                "or run with tracking=none"
            ) from None

    @contextlib.contextmanager
    def _postgres_lock(self) -> Iterator[None]:
        """Hold an advisory lock of the MLflow database (released with the connection)."""
        import psycopg

        from situate.postgres.client import lock_id

        conninfo = "postgresql://" + self.uri.split("://", 1)[1]
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", [lock_id("situate:mlflow-schema")])
            yield

    def _client(self):
        if self._mlflow is None:
            for name in ("mlflow", "alembic", "sqlalchemy"):
                logging.getLogger(name).setLevel(logging.WARNING)
            import mlflow

            if self.db_path:
                self.db_path.parent.mkdir(parents=True, exist_ok=True)
            # MLflow exports the URI as MLFLOW_TRACKING_URI, which conf/tracking/mlflow.yaml
            # reads: a notebook's next situate.run (or the child of situate.sweep) would log to
            # this run's store instead of its own output_dir's; leave the variable as it was
            before = os.environ.get("MLFLOW_TRACKING_URI")
            mlflow.set_tracking_uri(self.uri)
            if before is None:
                os.environ.pop("MLFLOW_TRACKING_URI", None)
            else:
                os.environ["MLFLOW_TRACKING_URI"] = before
            if without_credentials(self.uri) != self.uri:  # MLflow prints run links with the URI
                os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
            if urlsplit(self.uri).scheme == POSTGRES_DRIVER:
                # the first runs on a fresh database would each create MLflow's tables: one does
                with self._postgres_lock():
                    mlflow.MlflowClient().search_experiments(max_results=1)
            self._mlflow = mlflow
        return self._mlflow

    def prepare(self) -> str:
        """Create the store and the experiment if needed; return the experiment id."""
        mlflow = self._client()
        exp = mlflow.get_experiment_by_name(self.experiment)
        if exp is None:
            location = self.artifact_root.as_uri() if self.local_artifacts else None
            try:
                return mlflow.create_experiment(
                    self.experiment, artifact_location=location, tags=EXPERIMENT_KIND
                )
            except Exception:  # another job created it between our look-up and create
                exp = mlflow.get_experiment_by_name(self.experiment)
                if exp is None:
                    raise
        for key, value in EXPERIMENT_KIND.items():  # an experiment made by an older situate
            if exp.tags.get(key) != value:
                mlflow.MlflowClient().set_experiment_tag(exp.experiment_id, key, value)
        return exp.experiment_id

    def start_parent(self, name: str, params: Mapping[str, str], tags: Mapping[str, str]) -> str:
        """Open the parent run of a sweep (its jobs are nested under it) with the sweep's
        parameters (each swept key and its values); return its id."""
        mlflow = self._client()
        from mlflow.tracking.context.registry import resolve_tags

        client = mlflow.MlflowClient()  # resolve_tags: the user and source a run started here has
        run = client.create_run(self.prepare(), run_name=name, tags=resolve_tags(dict(tags)))
        for key, value in params.items():
            client.log_param(run.info.run_id, key, _cut(str(value)))
        return run.info.run_id

    def end_parent(
        self,
        run_id: str,
        jobs: int,
        failed_jobs: int,
        text_artifacts: Mapping[str, str],
        interrupted: bool = False,
    ) -> None:
        """Close a sweep's parent: KILLED when the sweep was interrupted (Ctrl-C), else FAILED only
        when every job failed; ``failed_jobs`` tags it."""
        client = self._client().MlflowClient()
        client.log_metric(run_id, "jobs", float(jobs))
        client.log_metric(run_id, "jobs_failed", float(failed_jobs))
        client.set_tag(run_id, "failed_jobs", str(failed_jobs))
        for name, text in text_artifacts.items():
            client.log_text(run_id, text, name)
        if interrupted:
            status = "KILLED"
        else:
            status = "FAILED" if jobs and failed_jobs == jobs else "FINISHED"
        client.set_terminated(run_id, status)

    @contextlib.contextmanager
    def run(
        self,
        name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, str],
        parent_run_id: str | None = None,
    ) -> Iterator[str]:
        mlflow = self._client()
        experiment_id = self.prepare()
        tags = {**tags, "mlflow.parentRunId": parent_run_id} if parent_run_id else dict(tags)
        active = mlflow.start_run(experiment_id=experiment_id, run_name=name, tags=tags)
        status = "FAILED"
        try:
            mlflow.log_params({k: _cut(str(v)) for k, v in params.items()})
            yield active.info.run_id
            status = "FINISHED"
        except BaseException as e:  # Ctrl-C too: the run says why it stopped
            if isinstance(e, KeyboardInterrupt):
                status = "KILLED"  # stopped by the user, not failed
            line = one_line_error(e)
            mlflow.set_tag(ERROR_TAG, _cut(line))
            mlflow.log_text(line + "\n", ERROR_FILE)
            raise
        finally:
            mlflow.end_run(status=status)

    def log_dataset(
        self, name: str, digest: str, source: str, counts: Mapping[str, int], context: str
    ) -> None:
        """The run's dataset for MLflow's Dataset column: name, digest (our content hash), source
        (its path) and its counts (documents, questions, chunks) as the dataset's profile."""
        from mlflow.data.meta_dataset import MetaDataset
        from mlflow.exceptions import MlflowException

        class Corpus(MetaDataset):
            @property
            def profile(self) -> dict[str, int]:
                return dict(counts)

            def to_dict(self) -> dict[str, str]:
                return {**super().to_dict(), "profile": json.dumps(dict(counts))}

        dataset = Corpus(_source(source), name=name, digest=digest)
        mlflow = self._client()
        for attempt in range(DATASET_INSERT_TRIES):
            try:
                mlflow.log_input(dataset, context=context)
                return
            except MlflowException as e:
                # MLflow's store looks the dataset up, then inserts it: two runs of a parallel
                # sweep logging the same corpus at once race, and the later insert breaks the
                # (experiment, name, digest) key. The transaction rolled back whole; a second
                # try finds the row the other run wrote.
                if attempt + 1 == DATASET_INSERT_TRIES or not _is_duplicate_key(e):
                    raise

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        self._client().log_metrics({k: float(v) for k, v in metrics.items()})

    def log_artifact_files(self, folder: str) -> None:
        self._client().log_artifacts(folder)


def runs_url(ui: str, experiment_id: str) -> str:
    """The MLflow UI page of an experiment's runs table (not the GenAI overview)."""
    return f"{ui.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def _is_duplicate_key(error: BaseException) -> bool:
    """Whether ``error`` is a unique-key violation (SQLite's or Postgres's/MySQL's wording)."""
    text = str(error).lower()
    return any(w in text for w in ("unique constraint failed", "duplicate key", "duplicate entry"))


def _source(path: str):
    """MLflow's local dataset source for ``path`` (a file or folder)."""
    from mlflow.data.dataset_source_registry import get_registered_sources

    local = next(s for s in get_registered_sources() if s._get_source_type() == "local")
    return local(str(Path(path).resolve()))


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
