"""``situate questions generate|review|export|import``: one module per verb, dispatched here.

- ``generate`` (:mod:`situate.questions.generate_cli`): an evaluation set from the corpus, composed like a run;
- ``review`` / ``export`` / ``import`` (:mod:`situate.questions.review_cli`): a reviewer's decisions on it, in the
  terminal or through a CSV / JSON Lines file edited elsewhere.
"""

from __future__ import annotations

import importlib
import sys

VERBS = {
    "generate": "situate.questions.generate_cli",
    "review": "situate.questions.review_cli",
    "export": "situate.questions.review_cli",
    "import": "situate.questions.review_cli",
}
USAGE = f"usage: situate questions {{{','.join(VERBS)}}} ... (situate questions VERB --help)"


def main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    verb, rest = args[0], args[1:]
    if verb not in VERBS:
        print(f"situate questions: unknown verb {verb!r}; {USAGE}", file=sys.stderr)
        return 2
    return importlib.import_module(VERBS[verb]).main(verb, rest)
