"""The ``situate`` command: parses the verb and dispatches to its module (``situate.commands``);
one-line errors (exit 2), Ctrl-C (exit 130) and ``--debug`` are handled here for every verb."""

from __future__ import annotations

import os
import sys

from situate.commands import VERBS, command
from situate.stages import help_lines

DESCRIPTION = """\
situate: a lab for contextual retrieval.

verbs:
  run [-m] [group=option ...] [key=value ...]
                      run the pipeline (Hydra): one composed config, or a sweep with -m
                      e.g. situate run context=none fusion=dense_only
                           situate run -m context=none,replay fusion=dense_only,rrf
                           situate run experiment=quickstart
  index [group=option ...]
                      build and persist the indexes of a config under outputs/index/<hash>
  search "QUESTION" [group=option ...] [-k N] [--json]
                      top k chunks for a question from the persisted index: scores, ids,
                      source offsets and contexts
  chunks [group=option ...] [--limit N]
                      list chunk ids, offsets and the first 90 characters (to write gold);
                      the first 20 unless --limit says otherwise (0: all)
  report [group=option ...] [--all-runs] [--out DIR] [--permutations N]
                      compare a study's latest sweep (or every finished run) with its
                      baseline: outputs/reports/<study>/index.html (self-contained) and report.md
                      e.g. situate report experiment=cookbook_replication
  judge [group=option ...] [--all-runs] [--qrels FILE] [--stored-only]
                      relevance without labels: pool the top judge.depth chunks of a study's
                      arms, grade each (question, chunk) pair once with llm (0-3), score every
                      arm on the judgments and on gold: outputs/reports/<study>/judged.md
                      e.g. situate judge experiment=cookbook_replication llm=claude_haiku_4_5
  questions generate|review|export|import [group=option ...]
                      an evaluation set from your documents: generate questions with a
                      verbatim quote resolved to span gold (questions=..., llm=...), then
                      review them in the terminal or through a CSV / JSON Lines file
                      e.g. situate questions generate dataset=folder dataset.path=docs/
  estimate [group=option ...] [--judge]
                      before spending: calls, tokens and cost of contextualizing a dataset with
                      an llm (with and without caching, with batches), or a synthetic shape
                      (estimate=seed_shape), with the arithmetic behind every figure;
                      --judge prices `situate judge` of the study instead (llm's model,
                      Haiku 4.5 and Haiku 5.5; --llms a,b for other conf/llm options)
  contexts show|export [group=option ...] [--limit N] [--out FILE]
                      print (or write as JSON Lines) the contexts of a config with their token
                      usage; LLM contexts come from the store only: nothing is spent
  emulate anthropic|openai|cohere [--port N] [--fault-rate R]
                      serve a local emulator of that provider's API (real token accounting,
                      prompt caching, injected faults) to run the pipeline against for free
  data fetch NAME [--dest DIR]
                      download a public data set (cookbook, covid-qa) with pinned sha256, or
                      financebench: filings as PDFs with page gold (pinned git commit)

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
    from situate.errors import SituateError, SituateExit

    try:
        return command(verb)(rest)
    except SituateExit as e:
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
    except KeyboardInterrupt:
        if "situate.tracking.sweep" in sys.modules:  # a sweep's parent run is closed as KILLED
            sys.modules["situate.tracking.sweep"].interrupted()
        if debug:
            raise
        print(INTERRUPTED, file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
