"""The verbs of ``situate``: the one table of them (``VERBS``), one module each with
``main(args) -> int``, imported only when called (so ``situate --help``, printed from this table,
answers at once). ``situate.cli`` parses the verb and dispatches here; ``questions`` dispatches its
sub-verbs (``main(verb, args) -> int``) from its row's ``subverbs``."""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

HELP_INDENT = 22  # the column where a verb's help starts in ``situate --help``
HELP_WIDTH = 94


@dataclass(frozen=True)
class Verb:
    """A row of the verb table: the module that runs it, its arguments as ``--help`` shows them,
    its help line, examples, and (``questions``) its sub-verbs, each a row of its own."""

    module: str
    usage: str
    help: str
    examples: tuple[str, ...] = ()
    subverbs: Mapping[str, Verb] = field(default_factory=dict)

    def help_block(self, name: str) -> str:
        """The verb's lines in ``situate --help``: the verb (its sub-verbs joined by ``|``) and
        usage, then its help wrapped under it, then its examples."""
        words = "|".join(self.subverbs) if self.subverbs else ""
        head = " ".join(w for w in (name, words, self.usage) if w)
        pad = " " * HELP_INDENT
        lines = [f"  {head}"]
        lines += textwrap.wrap(self.help, HELP_WIDTH, initial_indent=pad, subsequent_indent=pad)
        for n, example in enumerate(self.examples):
            lines.append(f"{pad}{'e.g. ' if n == 0 else '     '}{example}")
        return "\n".join(lines)


QUESTIONS_REVIEW = "situate.commands.questions_review"

VERBS: dict[str, Verb] = {
    "run": Verb(
        "situate.commands.run",
        "[-m] [group=option ...] [key=value ...]",
        "run the pipeline (Hydra): one composed config, or a sweep with -m",
        (
            "situate run context=none fusion=dense_only",
            "situate run -m context=none,replay fusion=dense_only,rrf",
            "situate run experiment=quickstart",
        ),
    ),
    "track": Verb(
        "situate.commands.track",
        "FOLDER [--tracking-uri URI]",
        "log the MLflow runs that wait in a run's or sweep's folder because the tracking store "
        "failed while they ran (each once)",
        ("situate track outputs/multirun/2025-03-01/10-15-00",),
    ),
    "index": Verb(
        "situate.commands.index",
        "[group=option ...]",
        "build and persist the indexes of a config under outputs/index/<hash>",
    ),
    "search": Verb(
        "situate.commands.search",
        '"QUESTION" [group=option ...] [-k N] [--json]',
        "top k chunks for a question from the persisted index: scores, ids, source offsets and "
        "contexts",
    ),
    "chunks": Verb(
        "situate.commands.chunks",
        "[group=option ...] [--limit N]",
        "list chunk ids, offsets and the first 90 characters (to write gold); the first 20 unless "
        "--limit says otherwise (0: all)",
    ),
    "report": Verb(
        "situate.commands.report",
        "[group=option ...] [--all-runs] [--out DIR] [--permutations N]",
        "compare a study's latest sweep (or every finished run) with its baseline: "
        "outputs/reports/<study>/index.html (self-contained) and report.md",
        ("situate report experiment=cookbook_replication",),
    ),
    "judge": Verb(
        "situate.commands.judge",
        "[group=option ...] [--all-runs] [--qrels FILE] [--stored-only] "
        "[--human-labels FILE [--power-tuning]]",
        "relevance without labels: pool the top judge.depth chunks of a study's arms, grade each "
        "(question, chunk) pair once with llm (0-3), score every arm on the judgments and on "
        "gold: outputs/reports/<study>/judged.md",
        (
            "situate judge experiment=cookbook_replication llm=claude_haiku_4_5",
            "situate judge experiment=cookbook_replication --human-labels my_grades.txt",
        ),
    ),
    "questions": Verb(
        "situate.commands.questions",
        "[group=option ...]",
        "an evaluation set from your documents: generate questions with a verbatim quote "
        "resolved to span gold (questions=..., llm=...), review them in the terminal or "
        "through a CSV / JSON Lines file, and check them against a few human questions",
        ("situate questions generate dataset=folder dataset.path=docs/",),
        subverbs={
            "generate": Verb(
                "situate.commands.questions_generate",
                "[group=option ...] [--out FILE]",
                "write questions.jsonl: questions with span gold from the corpus, composed like "
                "a run (dataset, llm, questions, question_generator), filtered",
            ),
            "review": Verb(
                QUESTIONS_REVIEW,
                "FILE [--documents FOLDER] [--only pending|all] [--show-rejected]",
                "accept, reject or edit each question in the terminal; every decision is written "
                "at once, so a review resumes where it stopped",
            ),
            "export": Verb(
                QUESTIONS_REVIEW,
                "FILE --to review.csv|review.jsonl [--documents FOLDER]",
                "the kept questions as a CSV or JSON Lines file to review elsewhere",
            ),
            "import": Verb(
                QUESTIONS_REVIEW,
                "FILE --from review.csv|review.jsonl",
                "the review column of an exported file back into FILE, by id",
            ),
            "validate": Verb(
                "situate.commands.questions_validate",
                "[group=option ...] [--human qa.json] [--generated FILE] [--metric M] [--out DIR]",
                "run the arms (lists as for run -m, or an experiment= preset) on your human "
                "questions and on a generated set: Kendall's tau of the two orderings with its "
                "interval, each arm's bias, the decisions that flip, each set's informativeness "
                "and a verdict (rank with this set or not): outputs/reports/<study>/validation.md",
                (
                    "situate questions validate dataset=folder dataset.path=docs/ "
                    "context=none,heading_path fusion=sparse_only,dense_only",
                ),
            ),
        },
    ),
    "estimate": Verb(
        "situate.commands.estimate",
        "[group=option ...] [--judge]",
        "before spending: calls, tokens and cost of contextualizing a dataset with an llm (with "
        "and without caching, with batches), or a synthetic shape (estimate=seed_shape), with the "
        "arithmetic behind every figure; --judge prices `situate judge` of the study instead "
        "(llm's model, Haiku 4.5 and Haiku 5.5; --llms a,b for other conf/llm options)",
    ),
    "contexts": Verb(
        "situate.commands.contexts",
        "show|export [group=option ...] [--limit N] [--out FILE]",
        "print (or write as JSON Lines) the contexts of a config with their token usage; LLM "
        "contexts come from the store only: nothing is spent",
    ),
    "emulate": Verb(
        "situate.commands.emulate",
        "anthropic|openai|cohere [--port N] [--fault-rate R]",
        "serve a local emulator of that provider's API (real token accounting, prompt caching, "
        "injected faults) to run the pipeline against for free",
    ),
    "cache": Verb(
        "situate.commands.cache",
        "[cache_dir=PATH] [--json] [--fast]",
        "what the cache keeps (contexts, embeddings, judgments, questions, indexes): check every "
        "store's integrity and its journal of paid answers, and repair a damaged one (moved into "
        "cache_dir/damaged/, never deleted; rebuilt from what can be read and from its journal)",
        ("situate cache check", "situate cache repair cache_dir=outputs/cache"),
        subverbs={
            "check": Verb(
                "situate.commands.cache",
                "[cache_dir=PATH] [--json] [--fast]",
                "say per store what is wrong (exit 1 when anything is damaged); --fast checks "
                "index files by size, not hash",
            ),
            "repair": Verb(
                "situate.commands.cache",
                "[cache_dir=PATH] [--json]",
                "move each damaged store aside and rebuild it; say how many entries were "
                "recovered and how many must be computed again, with their cost",
            ),
        },
    ),
    "data": Verb(
        "situate.commands.data",
        "fetch NAME [--dest DIR]",
        "download a public data set (cookbook, covid-qa) with pinned sha256, or financebench: "
        "filings as PDFs with page gold (pinned git commit)",
    ),
}

# modules of commands/ that are no verb's (code two verbs share); none yet
HELPERS: tuple[str, ...] = ()


def subverb(name: str, args: list[str], usage: str) -> tuple[str, list[str]] | int:
    """The sub-verb of verb ``name`` that ``args`` names and the arguments after it, or the exit
    code once ``--help`` (0) or an unknown sub-verb (2) has been answered."""
    import sys

    subverbs = VERBS[name].subverbs
    if not args or args[0] in ("-h", "--help"):
        print(usage)
        for sub_name, verb in subverbs.items():
            print(verb.help_block(sub_name))
        return 0
    if args[0] not in subverbs:
        print(f"situate {name}: unknown verb {args[0]!r}; {usage}", file=sys.stderr)
        return 2
    return args[0], args[1:]


def help_text() -> str:
    """The verbs' part of ``situate --help``, from the table."""
    return "\n".join(verb.help_block(name) for name, verb in VERBS.items())


def command(verb: str) -> Callable[[list[str]], int]:
    """The ``main`` of ``verb``'s module."""
    return importlib.import_module(VERBS[verb].module).main
