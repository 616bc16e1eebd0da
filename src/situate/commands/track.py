"""``situate track FOLDER [--tracking-uri URI]``: log the MLflow runs that wait in a run's or a
sweep's folder because their tracking store failed while they ran
(:mod:`situate.tracking.pending`): into the store each was meant for (``--tracking-uri``: into
that one instead). Each run is logged once: a second call logs nothing again."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from situate.errors import SituateError


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="situate track", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("folder", help="a run's or a sweep's folder (or any folder above them)")
    parser.add_argument(
        "--tracking-uri",
        help="the MLflow store to log to (default: the one each run was meant for)",
    )
    ns = parser.parse_args(args)
    folder = Path(ns.folder)
    if not folder.is_dir():
        raise SituateError(
            f"{folder}: no such folder; give the folder of a run or a sweep (under outputs/)"
        )
    from situate.tracking.pending import log_pending, stores

    waiting = stores(folder)
    if not waiting:
        print(f"{folder}: no MLflow run waits to be logged")
        return 0
    for (store, experiment, artifact_root), files in waiting.items():
        tracker = _tracker(ns.tracking_uri, store, experiment, artifact_root, folder)
        from situate.tracking.faults import TrackingStoreError

        try:
            tracker.check()
            logged = log_pending(folder, tracker, files)
        except TrackingStoreError as e:
            fix = (
                "start it again (mlflow server) or give --tracking-uri"
                if e.kind == "server"
                else e.fix
            )
            raise e.told(
                f"{e.head}; the runs not logged yet still wait in {folder}; {fix}, then run "
                f"`situate track {folder}` again"
            ) from e
        for where, run_id in logged.parents + logged.runs:
            print(f"{where}: logged as MLflow run {run_id} in {tracker.store()}")
    return 0


def _tracker(given: str | None, store: str, experiment: str, artifact_root: str | None, folder):
    """The tracker of the store the runs were meant for (``given``: another): a SQLite file as
    the local store; a URI whose password was left out (``***``) takes it from
    ``$MLFLOW_TRACKING_URI`` when that names the same store."""
    from situate.tracking.base import without_credentials
    from situate.tracking.mlflow_tracker import MlflowTracker

    uri = given or store
    environ = os.environ.get("MLFLOW_TRACKING_URI")
    if not given and environ and without_credentials(environ) == store:
        uri = environ
    if ":***@" in uri:
        raise SituateError(
            f"{store}: the runs in {folder} are meant for this store, whose password is not kept "
            "on disk; set MLFLOW_TRACKING_URI (or --tracking-uri) to its URI with the password"
        )
    root = artifact_root or str(folder / "mlartifacts")
    if uri.startswith("sqlite:///"):
        return MlflowTracker(None, uri[len("sqlite:///") :], root, experiment)
    return MlflowTracker(uri, "", root, experiment)
