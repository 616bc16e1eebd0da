"""The ``situate`` command: parses the verb and dispatches to its module (``situate.commands``,
whose verb table also gives ``--help`` its verbs); one-line errors (exit 2), Ctrl-C (exit 130)
and ``--debug`` are handled here for every verb."""

from __future__ import annotations

import os
import sys

from situate.commands import VERBS, command, help_text
from situate.config.stages import help_lines

DESCRIPTION = f"""\
situate: a lab for contextual retrieval.

verbs:
{help_text()}

config groups (conf/<group>/<option>.yaml):
"""
DESCRIPTION += help_lines()
DESCRIPTION += """
`situate run --help` shows Hydra's options and `situate run --cfg job` prints the composed config.
"""

# Ctrl-C: one line (exit 130), no stack trace; every store commits as it goes
INTERRUPTED = (
    "interrupted; what is stored is kept (contexts, embeddings and finished indexes under "
    "cache_dir, finished runs): run the same command again to resume"
)


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv``; None: the process's own (the ``situate`` script, ``python
    -m situate.cli``), whose Ctrl-C then ends the process at once (``threads.exit_at_once``)."""
    own_process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(DESCRIPTION)
        return 0
    verb, rest = argv[0], argv[1:]
    if verb not in VERBS:
        print(
            f"situate: unknown verb {verb!r}; valid: {', '.join(VERBS)} (see situate --help)",
            file=sys.stderr,
        )
        return 2
    import logging
    import sqlite3

    from situate.errors import SituateError, SituateExit
    from situate.stores.faults import storage_error

    # a log line that cannot be written (a full disk) is not worth a traceback: the store that
    # meets the same disk stops the run with its one-line error
    logging.raiseExceptions = False
    try:
        return command(verb)(rest)
    except SituateExit as e:
        if "situate.tracking.sweep" in sys.modules:  # a sweep it stopped: its parent run FAILED
            sys.modules["situate.tracking.sweep"].stopped(e.error)
        if debug:
            raise e.error from None
        print(f"error: {e.error}", file=sys.stderr)
        return e.error.exit_code
    except SituateError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except BrokenPipeError:  # `situate ... | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (OSError, sqlite3.Error) as e:  # the disk, met where no store named it (Hydra's files)
        error = storage_error(e)
        if error is None or debug:
            raise
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        if "situate.tracking.sweep" in sys.modules:  # a sweep's parent run is closed as KILLED
            sys.modules["situate.tracking.sweep"].interrupted()
        if debug:
            raise
        print(INTERRUPTED, file=sys.stderr)
        if own_process:  # not the interpreter's shutdown, with hung calls' threads still in them
            from situate.threads import exit_at_once

            exit_at_once(130)
        return 130


if __name__ == "__main__":
    sys.exit(main())
