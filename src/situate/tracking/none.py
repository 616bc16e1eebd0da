"""``tracking: none``: record nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any


class NoTracker:
    uri = None

    def check(self) -> None:
        pass

    def prepare(self) -> None:
        pass

    def start_parent(self, name: str, params: Mapping[str, str], tags: Mapping[str, str]) -> None:
        return None

    def end_parent(
        self,
        run_id,
        jobs,
        failed_jobs,
        text_artifacts,
        interrupted=False,
        error=None,
        tables=None,
        tags=None,
    ) -> None:
        pass

    @contextlib.contextmanager
    def run(
        self,
        name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, str],
        parent_run_id: str | None = None,
        folder: object = None,
    ) -> Iterator[str | None]:
        yield None

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        pass

    def log_artifact_files(self, folder: str, tables: Sequence[str] = ()) -> None:
        pass

    def log_dataset(self, name, digest, source, counts, context) -> None:
        pass

    def log_question_set(self, question_set) -> None:
        pass

    def traced(self, n_questions: int) -> list[int]:
        return []

    def log_traces(self, traces, chunk_text, chunk_uri) -> None:
        pass
