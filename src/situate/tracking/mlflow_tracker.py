"""``tracking: mlflow``: one MLflow run per composed configuration.

The store defaults to a SQLite file (``outputs/mlflow.db``) with artifacts under
``outputs/mlartifacts``; ``tracking_uri`` points at a shared server instead.
"""

from __future__ import annotations

import contextlib
import http.client
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

# MLflow params hold at most 6,000 characters in current versions; longer values are cut and marked.
MAX_PARAM_CHARS = 6000


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
        self.uri = tracking_uri or f"sqlite:///{Path(db_path).resolve()}"
        self.db_path = None if tracking_uri else Path(db_path).resolve()
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
        key = (
            "MLFLOW_TRACKING_URI"
            if self.uri == os.environ.get("MLFLOW_TRACKING_URI")
            else "tracking.tracking_uri"
        )
        raise SituateError(
            f"{key}={_redacted(self.uri)}: no MLflow tracking server answers ({reason}); start it "
            f"(mlflow server), fix {key}, or run with tracking=none (tracking.probe_seconds=0 "
            "skips this check)"
        )

    def _client(self):
        if self._mlflow is None:
            for name in ("mlflow", "alembic", "sqlalchemy"):
                logging.getLogger(name).setLevel(logging.WARNING)
            import mlflow

            if self.db_path:
                self.db_path.parent.mkdir(parents=True, exist_ok=True)
            mlflow.set_tracking_uri(self.uri)
            self._mlflow = mlflow
        return self._mlflow

    def prepare(self) -> str:
        """Create the store and the experiment if needed; return the experiment id."""
        mlflow = self._client()
        exp = mlflow.get_experiment_by_name(self.experiment)
        if exp is not None:
            return exp.experiment_id
        location = self.artifact_root.as_uri() if self.db_path else None
        try:
            return mlflow.create_experiment(self.experiment, artifact_location=location)
        except Exception:  # another job created it between our look-up and create
            exp = mlflow.get_experiment_by_name(self.experiment)
            if exp is None:
                raise
            return exp.experiment_id

    def start_parent(self, name: str, tags: Mapping[str, str]) -> str:
        """Open the parent run of a sweep (its jobs are nested under it); return its id."""
        mlflow = self._client()
        run = mlflow.MlflowClient().create_run(self.prepare(), run_name=name, tags=dict(tags))
        return run.info.run_id

    def end_parent(
        self,
        run_id: str,
        metrics: Mapping[str, float],
        text_artifacts: Mapping[str, str],
        failed: bool,
    ) -> None:
        client = self._client().MlflowClient()
        for key, value in metrics.items():
            client.log_metric(run_id, key, float(value))
        for name, text in text_artifacts.items():
            client.log_text(run_id, text, name)
        client.set_terminated(run_id, "FAILED" if failed else "FINISHED")

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
        finally:
            mlflow.end_run(status=status)

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        self._client().log_metrics({k: float(v) for k, v in metrics.items()})

    def log_artifact_files(self, folder: str) -> None:
        self._client().log_artifacts(folder)


def _redacted(uri: str) -> str:
    """``uri`` without the password of ``user:password@host`` (error messages reach logs)."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def _cut(value: str) -> str:
    return (
        value if len(value) <= MAX_PARAM_CHARS else value[: MAX_PARAM_CHARS - 14] + "...[truncated]"
    )
