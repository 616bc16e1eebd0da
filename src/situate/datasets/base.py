"""The dataset protocol and the careful file readers every loader shares."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from situate.errors import SituateError
from situate.records import Corpus


class DatasetLoader(Protocol):
    """Loads documents and questions; gold evidence is character spans in the documents."""

    def load(self) -> Corpus: ...

    def questions_to_write(self) -> Path | None:
        """The file a user writes this data set's questions in (a folder of their own
        documents), named when a run finds none; None where the data set ships its questions."""
        ...


class ShipsQuestions:
    """A published data set: its questions come with it (none for the user to write)."""

    def questions_to_write(self) -> None:
        return None


def existing_path(path: str | Path, what: str, fix: str) -> Path:
    """Return ``path`` as a Path, or raise a one-line error naming it and how to provide it."""
    p = Path(path).expanduser()
    if not p.exists():
        raise SituateError(f"{p}: {what} not found; {fix}")
    return p


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SituateError(
            f"{path}: not UTF-8 text (byte {e.start}); convert it to UTF-8 or remove it"
        ) from e


def read_json(
    path: Path, expected: str = "one JSON document was expected; make the file one JSON value"
) -> Any:
    """Parse ``path`` as one JSON document; ``expected`` says what the file should be (and the
    fix) when it turns out to be JSON Lines (one value per line) instead."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and _is_json_lines(text):
            raise SituateError(
                f"{path}:{e.lineno}: this is JSON Lines (one JSON value per line), but {expected}"
            ) from e
        raise SituateError(
            f"{path}:{e.lineno}:{e.colno}: invalid JSON ({e.msg}); fix the file at that line"
        ) from e


def _is_json_lines(text: str) -> bool:
    """Whether the first two non-blank lines are each a JSON value of their own."""
    lines = [line for line in text.splitlines() if line.strip()][:2]
    try:
        return len(lines) == 2 and all(json.loads(line) is not None for line in lines)
    except json.JSONDecodeError:
        return False


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, record)`` for each non-blank line of a JSON Lines file."""
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as e:
            raise SituateError(
                f"{path}:{lineno}: invalid JSON Lines record ({e.msg}); each line must be one JSON object"
            ) from e


def require_fields(record: Any, fields: tuple[str, ...], where: str) -> None:
    """Raise a one-line error when a JSON record lacks one of ``fields``."""
    if not isinstance(record, dict):
        raise SituateError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [f for f in fields if f not in record]
    if missing:
        have = ", ".join(sorted(record)) or "none"
        raise SituateError(
            f"{where}: missing field(s) {', '.join(missing)} (fields present: {have}); "
            f"rename or add them"
        )


def question_text(value: Any, where: str) -> str:
    """The text of a question, or a one-line error naming its record when it is empty or not text.

    An empty question retrieves whatever ties first and can be scored as a hit: it is refused.
    """
    if not isinstance(value, str):
        raise SituateError(
            f"{where}: question text {value!r} is not a string; write the question as text"
        )
    if not value.strip():
        raise SituateError(f"{where}: empty question text; write the question or remove the record")
    return value


def check_unique_ids(path: str | Path, records: Iterable[tuple[str, str]]) -> None:
    """A one-line error at the second record of a question id already seen.

    ``records`` are ``(where, id)`` in file order, ``where`` naming the record in the file
    ("question 3", "line 4"). Results, ``per_question.csv`` and paired comparisons join on the id:
    two questions under one id would be paired with each other's results.
    """
    first: dict[str, str] = {}
    for where, qid in records:
        if qid in first:
            raise SituateError(
                f"{path}: {where}: duplicate question id {qid!r} ({first[qid]} has it too); give "
                "every question its own id"
            )
        first[qid] = where
