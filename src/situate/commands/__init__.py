"""The verbs of ``situate``, one module each with ``main(args) -> int``, imported only when called
(so ``situate --help`` answers at once). ``situate.cli`` parses the verb and dispatches here."""

from __future__ import annotations

import importlib
from collections.abc import Callable

VERBS = {
    "run": "situate.commands.run",
    "index": "situate.commands.index",
    "search": "situate.commands.search",
    "chunks": "situate.commands.chunks",
    "report": "situate.commands.report",
    "judge": "situate.commands.judge",
    "questions": "situate.commands.questions",
    "estimate": "situate.commands.estimate",
    "contexts": "situate.commands.contexts",
    "emulate": "situate.emulators.cli",  # beside the emulators it serves
    "data": "situate.commands.data",
}


def command(verb: str) -> Callable[[list[str]], int]:
    """The ``main`` of ``verb``'s module."""
    return importlib.import_module(VERBS[verb]).main
