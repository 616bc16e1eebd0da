"""Faults of the MLflow tracking store (issue 45): each is one line that names the store and the
fix; a run whose store fails once it is under way keeps what it would have logged in its folder,
and :func:`situate.tracking.pending.log_pending` (``situate track``) logs it once.

Every store is a real one: a SQLite file MLflow made (copied from one made once per session),
damaged, locked or filled for real; a server that does not answer is a port nobody listens on.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import free_port
from situate.errors import SituateError
from situate.stores.faults import StorageError
from situate.stores.faults import sqlite_header_fault as header_fault
from situate.tracking.faults import TrackingStoreError, classify, tracking_error
from situate.tracking.mlflow_tracker import MlflowTracker, forget_fault, store_down
from situate.tracking.pending import (
    LOGGED_FILE,
    PARENT_FILE,
    PENDING_ARTIFACTS,
    PENDING_FILE,
    log_pending,
    waiting_line,
    write_parent,
)
from situate.tracking.tables import PER_QUESTION_TABLE, write_table

KEPT = (
    "the runs' results are still on disk (each job's folder has result.json, per_question.csv, "
    "config.yaml)"
)


@pytest.fixture(autouse=True)
def no_store_down():
    """A store met failing is not called again by the process: each test starts afresh."""
    forget_fault()
    yield
    forget_fault()


@pytest.fixture(scope="session")
def made_store(tmp_path_factory) -> Path:
    """An MLflow SQLite store with its tables (made once: MLflow's migrations take seconds)."""
    folder = tmp_path_factory.mktemp("made-store")
    MlflowTracker(None, str(folder / "mlflow.db"), str(folder / "art"), "made").prepare()
    forget_fault()
    return folder / "mlflow.db"


def tracker(tmp_path: Path, made: Path | None = None, name: str = "mlflow.db", **kw):
    if made is not None:
        shutil.copy(made, tmp_path / name)
    return MlflowTracker(None, str(tmp_path / name), str(tmp_path / "art"), "t", **kw)


def many_pages(db: Path) -> Path:
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE t (x TEXT)")
        con.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    return db


# -- the file, before MLflow opens it -----------------------------------------------------------


def test_header_tells_a_file_that_is_no_database_or_cut_short(tmp_path):
    db = many_pages(tmp_path / "whole.db")
    assert header_fault(db) is None
    (tmp_path / "empty.db").write_bytes(b"")
    assert header_fault(tmp_path / "empty.db") is None  # SQLite's empty database
    assert header_fault(tmp_path / "missing.db") is None
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"these are not the pages you are looking for" * 100)
    assert header_fault(garbage) == "file is not a database: no SQLite header"
    cut = tmp_path / "cut.db"
    cut.write_bytes(db.read_bytes()[:8192])
    assert re.fullmatch(r"truncated: 8192 bytes of the \d+ its header counts", header_fault(cut))


def test_a_damaged_store_is_one_line_with_the_command_that_moves_it_aside(tmp_path):
    t = tracker(tmp_path)
    db = tmp_path / "mlflow.db"
    db.write_bytes(b"not a database" * 100)
    Path(f"{db}-journal").write_bytes(b"hot journal")  # moved aside with it
    with pytest.raises(TrackingStoreError) as e:
        t.check()
    line = str(e.value)
    assert e.value.kind == "damaged" and e.value.where == str(db) and "\n" not in line
    command = re.search(r"move it aside, never delete it: `([^`]+)`", line).group(1)
    assert line.startswith(
        f"{db}: the MLflow tracking store is damaged (file is not a database: no SQLite "
        f"header); {KEPT}; move it aside, never delete it: `mv {db} {db}.damaged-"
    )
    assert line.endswith("(the next run makes a new store), and run again")
    subprocess.run(command, shell=True, check=True)  # the fix, as the user would type it
    assert not db.exists() and not Path(f"{db}-journal").exists()
    kept = sorted(p.name.split(".damaged-")[0] for p in tmp_path.iterdir())
    assert kept == ["mlflow.db", "mlflow.db-journal"]  # both kept, under names of their own
    t.check()  # the store is gone: the next run makes a new one


def test_a_store_locked_past_its_wait_is_one_line(tmp_path):
    db = many_pages(tmp_path / "mlflow.db")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for as long as the test says
    try:
        with pytest.raises(TrackingStoreError) as e:
            tracker(tmp_path, lock_seconds=0.05).check()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(e.value) == (
        f"{db}: the MLflow tracking store is locked by another process past the wait of 0.05 s "
        f"(database is locked); stop the process that holds it (`fuser {db}` names it: an "
        "mlflow ui, another run) or let it finish, and run again"
    )
    tracker(tmp_path, lock_seconds=0.05).check()  # released: it passes


def test_a_write_lock_held_by_a_reader_of_the_store_is_waited_on_too(tmp_path):
    """A process in the middle of a write (SQLite's RESERVED lock) lets readers through: the
    check takes the write lock once, as MLflow's first insert would."""
    db = many_pages(tmp_path / "mlflow.db")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(TrackingStoreError) as e:
            tracker(tmp_path, lock_seconds=0.05).check()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert e.value.kind == "locked"


# -- MLflow's errors, unwrapped ------------------------------------------------------------------


def wrapped_as_mlflow_does(error: sqlite3.Error):
    """``error`` as MLflow's SQLAlchemy store raises it (its managed session: the DB-API error
    in SQLAlchemy's, in an ``MlflowException``)."""
    import sqlalchemy.exc
    from mlflow.exceptions import MlflowException

    try:
        try:
            raise sqlalchemy.exc.OperationalError("INSERT INTO metrics ...", {}, error) from error
        except sqlalchemy.exc.OperationalError as e:
            raise MlflowException(message=e, error_code="TEMPORARILY_UNAVAILABLE") from e
    except MlflowException as e:
        return e


def real_sqlite_error(folder: Path, setup: str, statement: str) -> sqlite3.Error:
    """The error SQLite raises on ``statement`` after ``setup``, on a database of its own."""
    folder.mkdir()
    db = many_pages(folder / "real.db")
    con = sqlite3.connect(db, isolation_level=None)
    con.execute(setup)
    with pytest.raises(sqlite3.Error) as e:
        con.execute(statement)
    con.close()
    return e.value


@pytest.mark.slow
def test_a_full_store_and_a_read_only_one_are_told_apart_through_mlflows_wrapping(tmp_path):
    db = tmp_path / "mlflow.db"
    full = real_sqlite_error(
        tmp_path / "full",
        "PRAGMA max_page_count = 1",  # no page more: SQLITE_FULL, as on a full disk
        "INSERT INTO t SELECT x FROM t",
    )
    error = tracking_error(wrapped_as_mlflow_does(full), db, "tracking.tracking_uri", "")
    assert error.kind == "no_space"
    assert re.fullmatch(
        rf"{re.escape(str(db))}: the MLflow tracking store: no space left on the device "
        r"\([\d.]+ [KMGT]?B free\); free space there or set tracking.db_path= to a larger disk, "
        r"and run again",
        str(error),
    )
    read_only = real_sqlite_error(tmp_path / "ro", "PRAGMA query_only = 1", "DELETE FROM t")
    error = tracking_error(wrapped_as_mlflow_does(read_only), db, "tracking.tracking_uri", "")
    assert error.kind == "denied"  # a writable filesystem: the file's own permissions
    assert str(error) == (
        f"{db}: the MLflow tracking store cannot be written: permission denied (attempt to "
        "write a readonly database); make it writable (remount it read-write, or chmod / chown "
        "it), set tracking.db_path= to a writable folder, or run with tracking=none, and run again"
    )
    locked = wrapped_as_mlflow_does(sqlite3.OperationalError("database is locked"))
    assert classify(locked)[0] == "locked"
    assert classify(wrapped_as_mlflow_does(sqlite3.DatabaseError("file is not a database")))[0] == (
        "damaged"
    )
    assert tracking_error(ValueError("a bug, not the store"), db, "k", "") is None


@pytest.mark.slow
def test_a_server_nobody_answers_at_is_named_without_its_password(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # MLflow's retries: minutes
    uri = f"http://situate:hunter2@127.0.0.1:{free_port()}"
    t = MlflowTracker(uri, "unused.db", str(tmp_path), "t", probe_seconds=0)
    with pytest.raises(TrackingStoreError) as e:
        t.prepare()  # MLflow's own request, refused
    shown = uri.replace("hunter2", "***")
    assert str(e.value) == (
        f"tracking.tracking_uri={shown}: the MLflow tracking store stopped answering "
        "(Connection refused); start the server again (mlflow server) or fix "
        "tracking.tracking_uri, and run again"
    )
    assert e.value.kind == "server" and "hunter2" not in str(e.value)
    assert store_down(t.uri) is e.value  # not called again by this process...
    with pytest.raises(TrackingStoreError):
        t.prepare()  # ...(no request: MLflow's retries are not waited out a second time)


# -- the run's lifecycle ---------------------------------------------------------------------------


def runs_of(db: Path, experiment: str = "t") -> list:
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{db}")
    exp = client.get_experiment_by_name(experiment)
    return [] if exp is None else client.search_runs([exp.experiment_id])


@pytest.mark.slow
def test_a_run_failed_by_a_data_store_is_marked_failed_with_the_reason(tmp_path, made_store):
    t = tracker(tmp_path, made_store)
    fault = StorageError(tmp_path / "cache.sqlite", "no_space", "cache.sqlite: no space left")
    with pytest.raises(StorageError) as e, t.run("r", {"a": "1"}, {}, folder=tmp_path):
        raise fault
    assert e.value is fault  # the tracking store is fine: the job's own error, as it was
    (run,) = runs_of(tmp_path / "mlflow.db")
    assert run.info.status == "FAILED"
    assert run.data.tags["situate.error"] == "cache.sqlite: no space left"
    assert not (tmp_path / PENDING_FILE).exists()


def job_with_artifacts(tmp_path: Path) -> tuple[Path, Path]:
    job, artifacts = tmp_path / "job", tmp_path / "tmp-artifacts"
    job.mkdir()
    artifacts.mkdir()
    (artifacts / "per_question.csv").write_text("qid,recall\nq1,1.0\n")
    write_table(artifacts / PER_QUESTION_TABLE, {"question_id": ["q1"], "recall_at_5": [1.0]})
    (job / "result.json").write_text(json.dumps({"run_id": None, "metrics": {"mrr": 0.5}}))
    return job, artifacts


@pytest.mark.slow
def test_a_store_damaged_mid_run_keeps_the_run_in_its_folder_and_track_logs_it_once(
    tmp_path, made_store
):
    t = tracker(tmp_path, made_store)
    db = tmp_path / "mlflow.db"
    job, artifacts = job_with_artifacts(tmp_path)
    with t.run("r", {"a": "1"}, {"arm": "x"}, folder=job) as run_id:
        t.log_metrics({"before": 1.0})
        db.write_bytes(b"overwritten by a disk that failed " * 400)
        t.log_metrics({"mrr": 0.5})  # no exception: the job goes on
        t.log_dataset("notes", "0123456789abcdef", str(tmp_path), {"chunks": 4}, "eval")
        t.log_artifact_files(str(artifacts), tables=[PER_QUESTION_TABLE])
    assert run_id is not None
    fault = store_down(t.uri)
    assert fault.kind == "damaged" and str(db) in str(fault)
    record = json.loads((job / PENDING_FILE).read_text())
    assert record["run_id"] == run_id and record["status"] == "FINISHED"
    assert record["metrics"] == {"before": 1.0, "mrr": 0.5}
    assert record["params"] == {"a": "1"} and record["tags"]["arm"] == "x"
    assert record["datasets"][0]["digest"] == "0123456789abcdef"
    assert record["tables"] == [PER_QUESTION_TABLE]
    assert (job / PENDING_ARTIFACTS / "per_question.csv").read_text().startswith("qid")
    line = waiting_line(job, fault)
    assert line.startswith(f"{db}: the MLflow tracking store is damaged (file is not a database)")
    assert (
        f"1 run not logged: its results are kept in {job} (result.json, per_question.csv, "
        f"config.yaml); MLflow run {run_id} was opened and could not be marked "
        "FINISHED or FAILED: it shows RUNNING until then; move it aside, never delete it: `mv "
    ) in line
    assert line.endswith(f"then `situate track {job}` logs them")

    # the damaged file moved aside, the run is logged into the new store at that path
    db.rename(tmp_path / "mlflow.db.damaged")
    new = tracker(tmp_path, made_store, name="new.db")
    logged = log_pending(job, new)
    ((folder, new_id),) = logged.runs
    assert folder == job and new_id != run_id  # the old store's run is not in the new one
    (run,) = runs_of(tmp_path / "new.db")
    assert run.info.run_id == new_id and run.info.status == "FINISHED"
    assert run.data.metrics == {"before": 1.0, "mrr": 0.5}
    assert run.data.params == {"a": "1"} and run.data.tags["arm"] == "x"
    assert [i.dataset.digest for i in run.inputs.dataset_inputs] == ["0123456789abcdef"]
    import mlflow

    client = mlflow.MlflowClient(new.uri)
    names = [a.path for a in client.list_artifacts(new_id)]
    assert names == ["per_question.csv", PER_QUESTION_TABLE]
    table = client.load_table(run.info.experiment_id, PER_QUESTION_TABLE, [new_id])
    assert list(table["question_id"]) == ["q1"]  # listed as the run's table, as when logged live
    assert json.loads((job / "result.json").read_text())["run_id"] == new_id
    assert not (job / PENDING_FILE).exists()
    assert json.loads((job / LOGGED_FILE).read_text())["run_id"] == new_id
    assert len(log_pending(job, new)) == 0  # once: a second call logs nothing
    assert len(runs_of(tmp_path / "new.db")) == 1


@pytest.mark.slow
def test_a_run_that_fails_while_its_store_is_down_says_it_could_not_be_marked(tmp_path, made_store):
    t = tracker(tmp_path, made_store)
    job, _ = job_with_artifacts(tmp_path)
    error = StorageError(tmp_path / "cache", "no_space", "cache: no space left; free space")
    with pytest.raises(StorageError) as e, t.run("r", {}, {}, folder=job) as run_id:
        (tmp_path / "mlflow.db").write_bytes(b"overwritten " * 1000)
        t.log_metrics({"spent": 1.0})
        raise error
    assert str(e.value).startswith(
        f"cache: no space left; free space; {tmp_path / 'mlflow.db'}: the MLflow tracking store "
        "is damaged (file is not a database)"
    )
    assert (
        f"its MLflow run {run_id} could not be marked FAILED and shows RUNNING until "
        f"`situate track {job}` logs it (move it aside"
    ) in str(e.value)
    assert e.value.kind == "no_space" and e.value.__cause__ is error
    record = json.loads((job / PENDING_FILE).read_text())
    assert record["status"] == "FAILED" and record["error"] == str(error)


@pytest.mark.slow
def test_a_run_without_a_folder_raises_its_stores_fault_in_one_line(tmp_path, made_store):
    t = tracker(tmp_path, made_store)
    with pytest.raises(TrackingStoreError) as e, t.run("r", {}, {}):
        (tmp_path / "mlflow.db").write_bytes(b"overwritten " * 1000)
        t.log_metrics({"m": 1.0})
    assert e.value.kind == "damaged"


@pytest.mark.slow
def test_a_sweeps_parent_is_made_again_in_a_new_store_and_its_jobs_nest_under_it(
    tmp_path, made_store
):
    old = tracker(tmp_path, made_store)
    sweep = tmp_path / "sweep"
    (sweep / "0").mkdir(parents=True)
    parent = old.start_parent("sweep fusion.k=10,60", {"fusion.k": "10,60"}, {"sweep": "true"})
    (sweep / PARENT_FILE).write_text(parent)
    with old.run("job 0", {"fusion.k": "10"}, {}, parent_run_id=parent, folder=sweep / "0"):
        (tmp_path / "mlflow.db").write_bytes(b"overwritten " * 1000)
        old.log_metrics({"mrr": 0.25})
    write_parent(
        sweep,
        {
            "name": "sweep fusion.k=10,60", "params": {"fusion.k": "10,60"},
            "tags": {"sweep": "true"}, "store": old.store(), "experiment": "t", "run_id": parent,
            "artifact_root": None, "reason": "damaged",
            "end": {"jobs": 2, "failed_jobs": 1, "text_artifacts": {"results.txt": "table"},
                    "interrupted": False},
        },
    )  # fmt: skip
    new = tracker(tmp_path, made_store, name="new.db")
    logged = log_pending(sweep, new)
    ((_, new_parent),) = logged.parents
    assert new_parent != parent and (sweep / PARENT_FILE).read_text() == new_parent
    runs = {r.info.run_name: r for r in runs_of(tmp_path / "new.db")}
    assert runs["job 0"].data.tags["mlflow.parentRunId"] == new_parent
    assert runs["job 0"].data.metrics == {"mrr": 0.25}
    top = runs["sweep fusion.k=10,60"]
    assert top.info.status == "FINISHED" and top.data.params == {"fusion.k": "10,60"}
    assert top.data.metrics == {"jobs": 2, "jobs_failed": 1}
    assert len(log_pending(sweep, new)) == 0


def test_a_tracker_call_outside_a_run_is_a_programming_error(tmp_path):
    with pytest.raises(RuntimeError):
        tracker(tmp_path).log_metrics({"m": 1.0})


def test_situate_error_is_what_the_cli_prints(tmp_path):
    error = TrackingStoreError("db", "locked", "db: locked", "stop it")
    assert isinstance(error, SituateError) and str(error) == "db: locked; stop it, and run again"
    assert str(error.told("db: locked; 2 runs wait")) == "db: locked; 2 runs wait"


@pytest.mark.slow
def test_a_sweep_stopped_by_a_fault_closes_its_parent_failed_with_the_line(tmp_path, made_store):
    """A fault of the disk or of a data store stops a sweep (every later job would meet it):
    the CLI closes its parent run FAILED with the one line (``sweep.stopped``), not RUNNING."""
    from omegaconf import OmegaConf

    from situate.tracking import sweep as sweeps

    shutil.copy(made_store, tmp_path / "mlflow.db")
    folder = tmp_path / "sweep"
    config = OmegaConf.create(
        {
            "tracking": {
                "_target_": "situate.tracking.mlflow_tracker.MlflowTracker",
                "tracking_uri": None, "db_path": str(tmp_path / "mlflow.db"),
                "artifact_root": str(tmp_path / "art"), "experiment": "t",
            },
            "hydra": {
                "sweep": {"dir": str(folder)}, "sweeper": {"params": None},
                "overrides": {"task": ["+embedder.gate=/g", "fusion.k=10,60"]},
            },
        }
    )  # fmt: skip
    sweeps.open_parent(config)
    (folder / "0").mkdir()
    line = f"{tmp_path}/cache: no space left on the device; free space there"
    (folder / "0" / "result.json").write_text(json.dumps({"error": line}))
    sweeps.stopped(StorageError(tmp_path / "cache", "no_space", line))
    assert sweeps.SWEEP_UNDER_WAY == []
    (parent,) = runs_of(tmp_path / "mlflow.db")
    assert parent.info.status == "FAILED" and parent.data.tags["situate.error"] == line
    assert parent.data.params == {"embedder.gate": "/g", "fusion.k": "10,60"}  # no `+`
    assert parent.data.metrics == {"jobs": 1, "jobs_failed": 1}


@pytest.mark.slow
def test_runs_that_waited_are_logged_at_the_end_when_the_store_answers_again(tmp_path, made_store):
    """The end of a run or sweep (``sweep.settle``): the store is asked again; when it answers,
    what waited is logged then and there, else the one line says what waits and how to log it."""
    from situate.errors import SituateExit
    from situate.tracking.sweep import settle

    t = tracker(tmp_path, made_store)
    job, _ = job_with_artifacts(tmp_path)
    with t.run("r", {}, {}, folder=job):
        (tmp_path / "mlflow.db").write_bytes(b"overwritten " * 1000)
        t.log_metrics({"mrr": 0.5})
    with pytest.raises(SituateExit) as e:
        settle(t, job)  # still damaged: the one line, and the run still waits
    assert str(e.value.error).startswith(f"{tmp_path / 'mlflow.db'}: the MLflow tracking store")
    assert f"then `situate track {job}` logs them" in str(e.value.error)
    assert (job / PENDING_FILE).exists()
    healthy = tracker(tmp_path, made_store, name="healthy.db")
    settle(healthy, job)  # a store that answers: logged now, nothing to say
    assert not (job / PENDING_FILE).exists()
    (run,) = runs_of(tmp_path / "healthy.db")
    assert run.info.status == "FINISHED" and run.data.metrics == {"mrr": 0.5}
