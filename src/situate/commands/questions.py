"""``situate questions generate|review|export|import|validate``: one module per sub-verb, named
by the ``questions`` row of the verb table (``situate.commands.VERBS``), dispatched here.

- ``generate`` (:mod:`situate.commands.questions_generate`): an evaluation set from the corpus,
  composed like a run;
- ``review`` / ``export`` / ``import`` (:mod:`situate.commands.questions_review`): a reviewer's
  decisions on it, in the terminal or through a CSV / JSON Lines file edited elsewhere;
- ``validate`` (:mod:`situate.commands.questions_validate`): the study's arms on a few human
  questions and on the generated set, and whether the set may rank them
  (:mod:`situate.validation`).
"""

from __future__ import annotations

import importlib
import sys

from situate.commands import VERBS

SUBVERBS = VERBS["questions"].subverbs
USAGE = f"usage: situate questions {{{','.join(SUBVERBS)}}} ... (situate questions VERB --help)"


def main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        for name, verb in SUBVERBS.items():
            print(verb.help_block(name))
        return 0
    verb, rest = args[0], args[1:]
    if verb not in SUBVERBS:
        print(f"situate questions: unknown verb {verb!r}; {USAGE}", file=sys.stderr)
        return 2
    return importlib.import_module(SUBVERBS[verb].module).main(verb, rest)
