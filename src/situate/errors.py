"""User-facing errors: one line that names the file, the record and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SituateError(Exception):
    """A mistake in the user's input or setup. The CLI prints it on one line and exits with 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))  # always one line


class Unavailable(SituateError):
    """An optional part a stage needs is not on this machine (a model folder, an API key).

    A single run stops on it like on any ``SituateError``; a sweep skips the job instead
    (``skipped: needs ...`` in its ``result.json`` and its results table) and runs the others.
    ``needs`` says what is missing and how to provide it, e.g. ``a cross-encoder model folder
    (set SITUATE_RERANKER_PATH=/folder)``.
    """

    def __init__(self, who: str, needs: str) -> None:
        self.needs = " ".join(needs.split())
        super().__init__(f"{who} needs {self.needs}")


class SituateExit(BaseException):
    """Carries a ``SituateError`` out of a Hydra job to the CLI.

    Hydra prints any ``Exception`` raised by a job with a stack trace; a ``BaseException`` passes
    through untouched, so the CLI can print the one-line message and exit with code 2.
    """

    def __init__(self, error: SituateError) -> None:
        super().__init__(str(error))
        self.error = error


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean fusion?"`` for the choice closest to a misspelt ``word`` (else "")."""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1)
    return f"; did you mean {close[0]}?" if close else ""
