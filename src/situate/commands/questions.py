"""``situate questions generate|review|export|import|validate``: one module per sub-verb, named
by the ``questions`` row of the verb table (``situate.commands.VERBS``), dispatched here.

- ``generate`` (:mod:`situate.commands.questions_generate`): an evaluation set from the corpus,
  composed like a run;
- ``review`` / ``export`` / ``import`` (:mod:`situate.commands.questions_review`): a reviewer's
  decisions on it, in the terminal or through a CSV / JSON Lines file edited elsewhere;
- ``validate`` (:mod:`situate.commands.questions_validate`): the study's arms on a few human
  questions and on the generated set, and whether the set may rank them
  (:mod:`situate.study.validation`).
"""

from __future__ import annotations

import importlib

from situate.commands import VERBS, subverb

SUBVERBS = VERBS["questions"].subverbs
USAGE = f"usage: situate questions {{{','.join(SUBVERBS)}}} ... (situate questions VERB --help)"


def main(args: list[str]) -> int:
    chosen = subverb("questions", args, USAGE)
    if isinstance(chosen, int):
        return chosen
    verb, rest = chosen
    return importlib.import_module(SUBVERBS[verb].module).main(verb, rest)
