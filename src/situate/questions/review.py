"""A reviewer's decisions on a generated set (``situate questions review|export|import``, whose
command line is :mod:`situate.commands.questions_review`).

- ``review FILE``: one question at a time in the terminal (question, answer, the quote highlighted
  in its document's text, strategy and section); accept / reject / edit / skip / quit. Each
  decision is written to FILE at once (atomically), so a review stopped anywhere resumes at the
  next pending question. When stdin is not a terminal the keys are read from it, one per line
  (``edit`` reads the new question from the next line), so a review can be scripted.
- ``export FILE --to review.csv|review.jsonl``: the kept questions for review elsewhere (a
  spreadsheet): id, q, answer, quote, context, strategy, section, review.
- ``import FILE --from review.csv|review.jsonl``: the ``review`` column back by id (pending,
  accepted, rejected, edited); a changed ``q`` is an edit. A CSV saved by a spreadsheet (byte
  order mark, CRLF line ends, ``;`` between fields) reads as written.

A reviewer's accept or edit of a question a filter removed (shown with ``--show-rejected``)
overrules the filter: the question is kept again.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from situate.datasets.folder import quote_at
from situate.datasets.generated import REVIEWS, GeneratedQuestion, write_questions
from situate.errors import SituateError
from situate.records import Document

KEYS = {"a": "accepted", "r": "rejected", "e": "edited", "s": "skip", "q": "quit"}
COLUMNS = ("id", "q", "answer", "quote", "context", "strategy", "section", "review")
CONTEXT_CHARS = 300  # characters of the document shown on each side of the quote


# -- review in the terminal --------------------------------------------------------------------


def review(
    path: Path,
    questions: list[GeneratedQuestion],
    documents: dict[str, Document],
    only: str = "pending",
    show_rejected: bool = False,
) -> int:
    """Ask for a decision on each question in the queue, writing ``path`` after each one."""
    from rich.console import Console

    console = Console(highlight=False)
    read = console.input
    queue = [
        i
        for i, q in enumerate(questions)
        if (show_rejected or q.status == "kept") and (only == "all" or q.review == "pending")
    ]
    counts: Counter[str] = Counter()
    if not documents:
        console.print("[dim](--documents FOLDER shows each quote inside its document)[/dim]")
    for n, i in enumerate(queue, start=1):
        q = questions[i]
        console.print(card(q, documents, n, len(queue)))
        decision = _decision(read)
        if decision == "quit":
            break
        if decision == "skip":
            counts["skipped"] += 1
            continue
        counts[decision] += 1
        text = _read_edit(read) if decision == "edited" else None
        questions[i] = decided(q, decision, text)
        write_questions(path, questions)
    pending = sum(q.review == "pending" and q.status == "kept" for q in questions)
    console.print(
        f"{path}: {counts_line(counts) or 'no decisions'} this session; {pending} kept question(s) "
        f"still pending" + (f" (resume with `situate questions review {path}`)" if pending else "")
    )
    return 0


def _decision(read: Callable[[str], str]) -> str:
    """The next key (a word's first letter counts); end of input is ``quit``."""
    while True:
        try:
            key = read("a=accept r=reject e=edit s=skip q=quit > ").strip().lower()[:1]
        except EOFError:
            return "quit"
        if key in KEYS:
            return KEYS[key]
        print(f"unknown key {key!r}: one of {', '.join(KEYS)}")


def _read_edit(read: Callable[[str], str]) -> str:
    while True:
        try:
            text = read("new question > ").strip()
        except EOFError:
            raise SituateError("an edit needs the new question on the next line") from None
        if text:
            return text


def decided(q: GeneratedQuestion, decision: str, text: str | None = None) -> GeneratedQuestion:
    """``q`` with a reviewer's decision; accepting one a filter removed keeps it again."""
    if decision in ("accepted", "edited") and q.status == "rejected":
        q = replace(q, status="kept", rejected_by=None, reason=None)
    return q.reviewed(decision, text)


def card(q: GeneratedQuestion, documents: dict[str, Document], n: int, total: int):
    """The rich panel of one question."""
    from rich.panel import Panel
    from rich.text import Text

    body = Text()
    body.append(q.q + "\n", style="bold")
    if q.original_q:
        body.append(f"(generated as: {q.original_q})\n", style="dim")
    body.append("answer: ", style="dim")
    body.append(q.answer + "\n\n")
    before, quote, after = quote_in_context(q, documents)
    body.append(before, style="dim")
    body.append(quote, style="black on yellow")
    body.append(after + "\n\n", style="dim")
    section = q.passage.section or "(top)"
    where = f"{q.strategy} · {q.passage.path} · {section} · review: {q.review}"
    body.append(where, style="cyan")
    if q.status == "rejected":
        body.append(f"\nremoved by {q.rejected_by}: {q.reason}", style="red")
    return Panel(body, title=f"{n}/{total} {q.id}", title_align="left")


def quote_in_context(q: GeneratedQuestion, documents: dict[str, Document]) -> tuple[str, str, str]:
    """The text before the quote's gold span, the span, and the text after (``CONTEXT_CHARS``
    each side, cut at whitespace); the quote alone without a gold span, its document, or when
    the span no longer holds the quote (parsed otherwise than at generation)."""
    span = q.gold[0] if q.gold else None
    document = documents.get(span.doc_id) if span else None
    if span is None or document is None or not quote_at(q, document, span):
        return "", q.quote, ""
    text = document.text
    start = max(0, span.start - CONTEXT_CHARS)
    end = min(len(text), span.end + CONTEXT_CHARS)
    before = text[start : span.start]
    after = text[span.end : end]
    if start > 0:
        before = "..." + before.split(None, 1)[-1] if " " in before else before
    if end < len(text):
        after = after.rsplit(None, 1)[0] + "..." if " " in after else after
    return before.lstrip(), text[span.start : span.end], after.rstrip()


# -- export and import -------------------------------------------------------------------------


def export(
    questions: Iterable[GeneratedQuestion], documents: dict[str, Document], to: Path
) -> None:
    """The kept questions as a CSV or JSON Lines file (by ``to``'s suffix)."""
    rows = []
    for q in questions:
        if q.status != "kept":
            continue
        before, quote, after = quote_in_context(q, documents)
        context = " ".join(f"{before}[{quote}]{after}".split()) if before or after else ""
        rows.append(
            dict(
                zip(
                    COLUMNS,
                    (
                        q.id,
                        q.q,
                        q.answer,
                        q.quote,
                        context,
                        q.strategy,
                        q.passage.section,
                        q.review,
                    ),
                    strict=True,
                )
            )
        )
    to.parent.mkdir(parents=True, exist_ok=True)
    if _format(to) == "csv":
        with to.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    else:
        to.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )


def import_decisions(
    questions: list[GeneratedQuestion], source: Path
) -> tuple[list[GeneratedQuestion], Counter[str]]:
    """``questions`` with the decisions of ``source`` applied by id; counts per decision."""
    by_id = {q.id: n for n, q in enumerate(questions)}
    out = list(questions)
    seen: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for where, row in _rows(source):
        qid = str(row.get("id") or "").strip()
        if qid not in by_id:
            raise SituateError(
                f"{where}: unknown id {qid!r} (not a question of this file); keep the id column "
                "as exported, or import into the file it was exported from"
            )
        if qid in seen:
            raise SituateError(
                f"{where}: id {qid} again (first at {seen[qid]}); keep one row per id"
            )
        seen[qid] = where
        decision = str(row.get("review") or "pending").strip().lower()
        if decision not in REVIEWS:
            raise SituateError(
                f"{where}: review {decision!r} for {qid}; write one of {', '.join(REVIEWS)}"
            )
        q = out[by_id[qid]]
        text = " ".join(str(row.get("q") or "").split())
        changed = bool(text) and text != q.q
        if changed and decision in ("pending", "accepted"):
            decision = "edited"
        if decision == "edited" and not changed and q.review != "edited":
            raise SituateError(
                f"{where}: review 'edited' for {qid} but q is unchanged; rewrite q or write "
                "accepted"
            )
        out[by_id[qid]] = decided(q, decision, text if decision == "edited" else None)
        counts[decision] += 1
    return out, counts


def _rows(source: Path) -> Iterable[tuple[str, dict]]:
    """``(where, row)`` of a review CSV (``file:row N``, the header being row 1) or JSONL file."""
    if not source.is_file():
        raise SituateError(f"{source}: no such file; give --from the file you exported and edited")
    fmt = _format(source)
    text = source.read_text(encoding="utf-8-sig")
    if fmt == "jsonl":
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise SituateError(f"{source}:{n}: not JSON ({e.msg}); fix the line") from None
                if not isinstance(row, dict):
                    raise SituateError(
                        f"{source}:{n}: not a JSON object; write one object per line"
                    )
                yield f"{source}:{n}", row
        return
    header = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=header.count)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    fields = [f.strip().lower() for f in reader.fieldnames or ()]
    if "id" not in fields or "review" not in fields:
        raise SituateError(
            f"{source}: row 1 (the header) has no id or review column; keep the header as exported "
            f"({','.join(COLUMNS)})"
        )
    reader.fieldnames = fields
    for n, row in enumerate(reader, start=2):
        yield f"{source}: row {n}", row


def _format(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in ("csv", "jsonl"):
        raise SituateError(f"{path}: use a .csv or .jsonl file")
    return suffix


def counts_line(counts: Counter[str]) -> str:
    """``2 accepted, 1 rejected``: the decisions counted, by name."""
    return ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
