"""The tracker protocol and the flattening of configs into params."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from situate.tracking.question_sets import QuestionSet
    from situate.tracking.traces import QuestionTrace

# what each job of a run or sweep writes into its output folder: its choices, metrics or error,
# read back by the results table (study/results_table.py) and the report
RESULT_FILE = "result.json"
PER_QUESTION = "per_question.csv"  # one row per question: its ranked ids and scores


class Tracker(Protocol):
    """Where runs are recorded (``conf/tracking/``); every field here is read by ``app.run_job``,
    the sweep callback (``study/results_table.py``, ``tracking/sweep.py``) or the report."""

    # the MLflow tracking URI runs are stored at (None when nothing is tracked)
    uri: str | None

    def check(self) -> None:
        """Fail in one line, within seconds, when the store cannot be reached (before any work)."""
        ...

    def prepare(self) -> str | None:
        """Create the store (before parallel jobs start); return its experiment's id."""
        ...

    def run(
        self,
        name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, str],
        parent_run_id: str | None = None,
        folder: str | PurePath | None = None,
    ) -> contextlib.AbstractContextManager[str | None]:
        """A context that opens a run (yielding its id), a child of ``parent_run_id`` in a sweep,
        and always closes it, FAILED on error. ``folder``: the job's output folder, where what
        the run would have logged waits when its store fails (``situate track`` logs it)."""
        ...

    def log_metrics(self, metrics: Mapping[str, float]) -> None: ...

    def log_artifact_files(self, folder: str, tables: Sequence[str] = ()) -> None:
        """Log every file of ``folder``; ``tables`` (files among them, written by
        :func:`situate.tracking.tables.write_table`) are listed as the run's tables."""
        ...

    def log_dataset(
        self, name: str, digest: str, source: str, counts: Mapping[str, int], context: str
    ) -> None:
        """The corpus a run used: its name, content digest, path and counts."""
        ...

    def log_question_set(self, question_set: QuestionSet) -> None:
        """The question set the run's numbers came from: registered once as an evaluation
        dataset of the store (where it can hold them), the run tagged with it."""
        ...

    def traced(self, n_questions: int) -> list[int]:
        """The positions of the questions that get a retriever trace (none, a sample, all)."""
        ...

    def log_traces(
        self,
        traces: Sequence[QuestionTrace],
        chunk_text: Callable[[str], str],
        chunk_uri: Callable[[str], str],
    ) -> None:
        """One trace per question (:mod:`situate.tracking.traces`), linked to the run."""
        ...

    def start_parent(
        self, name: str, params: Mapping[str, str], tags: Mapping[str, str]
    ) -> str | None:
        """Open a sweep's parent run with the sweep's parameters; return its id."""
        ...

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
        """Close a sweep's parent: KILLED when the sweep was interrupted, FAILED when an error
        stopped it (``error``, its one line) or when every job failed; ``tables`` (file name ->
        columns) are logged as its tables, ``tags`` set on it."""
        ...


_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*):[^\s/@]*@")


def without_credentials(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` replaced by ``***``
    (a tracking URI or a database DSN in a config, an override or an error message)."""
    return _CREDENTIALS.sub(r"\g<head>:***@", text)


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": 1, "c": [1, 2], "d": None}}`` -> ``{"a.b": "1", "a.c": "[1, 2]", "a.d": ""}``
    (an unset value is empty, never the string ``None``; passwords in URLs are ``***``)."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = "" if value is None else without_credentials(str(value))
    return flat


def one_line_error(error: BaseException) -> str:
    """What stopped a run, in one line: a ``SituateError``'s own message, else the exception's
    type and the first line of its message."""
    from situate.errors import SituateError, SituateExit

    if isinstance(error, SituateExit):
        error = error.error
    if isinstance(error, SituateError):
        return str(error)
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt); what was stored is kept: rerun to resume"
    first = next((line for line in str(error).splitlines() if line.strip()), "").strip()
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


# overrides that say where a run writes, not what it is: left out of run names
NOT_IN_NAMES = ("output_dir", "cache_dir", "study", "data_dir", "hydra.")


def run_name(overrides: list[str]) -> str:
    """A short run name from ``key=value`` overrides: a path is named by its last component
    (``dataset.path=/data/handbook`` -> ``dataset.path=handbook``) and overrides naming where
    the run writes are left out."""
    parts = []
    for override in overrides:
        key, sep, value = override.partition("=")
        if key.lstrip("+~").startswith(NOT_IN_NAMES):
            continue
        if "/" in value:
            value = PurePath(value.rstrip("/")).name or value
        parts.append(f"{key}{sep}{value}")
    return " ".join(parts)
