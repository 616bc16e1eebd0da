"""``situate questions review|export|import FILE``: a reviewer's decisions on a generated set, in
the terminal or through a CSV / JSON Lines file edited elsewhere (the session, the export and the
import are :mod:`situate.questions.review`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from situate.datasets.generated import GeneratedQuestion, read_questions, write_questions
from situate.errors import SituateError
from situate.parsing.reader import DEFAULT_SUFFIXES, DocumentReader, default_parsers
from situate.questions.review import counts_line, export, import_decisions, review
from situate.records import Document


def main(verb: str, args: list[str]) -> int:
    parser = _parser(verb)
    opts = parser.parse_args(args)
    path = Path(opts.file)
    questions = read_questions(path)
    documents = _documents(opts.documents, questions)
    if verb == "review":
        return review(path, questions, documents, opts.only, opts.show_rejected)
    if verb == "export":
        export(questions, documents, Path(opts.to))
        print(f"{opts.to}: {sum(q.status == 'kept' for q in questions)} questions to review")
        return 0
    updated, counts = import_decisions(questions, Path(opts.source))
    write_questions(path, updated)
    print(f"{path}: {counts_line(counts)} read from {opts.source}")
    return 0


def _parser(verb: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"situate questions {verb}")
    parser.add_argument(
        "file", metavar="FILE", help="the questions.jsonl of `situate questions generate`"
    )
    if verb != "import":
        parser.add_argument(
            "--documents",
            metavar="FOLDER",
            help="the documents folder the questions were generated from: shows each quote in its "
            "text (parsed with the default parsers)",
        )
    if verb == "review":
        parser.add_argument("--only", choices=("pending", "all"), default="pending")
        parser.add_argument(
            "--show-rejected", action="store_true", help="also the questions a filter removed"
        )
    elif verb == "export":
        parser.add_argument("--to", required=True, metavar="review.csv|review.jsonl")
    else:
        parser.set_defaults(documents=None)
        parser.add_argument(
            "--from", dest="source", required=True, metavar="review.csv|review.jsonl"
        )
    return parser


def _documents(folder: str | None, questions: list[GeneratedQuestion]) -> dict[str, Document]:
    """The documents the questions quote, parsed from ``folder`` (none without one)."""
    if folder is None:
        return {}
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise SituateError(f"{root}: not a folder; give --documents the folder of the documents")
    paths = sorted({s.doc_id for q in questions for s in q.gold})
    missing = [p for p in paths if not (root / p).is_file()]
    if missing:
        raise SituateError(
            f"{root}: no {missing[0]} here ({len(missing)} of the questions' documents missing); "
            "give --documents the folder the questions were generated from"
        )
    reader = DocumentReader(default_parsers(), DEFAULT_SUFFIXES)
    return {d.doc_id: d for d in reader.read(root, [root / p for p in paths]).documents}
