"""Passages to write questions from, sampled from the parsed documents, not from any chunker.

A question set must be valid for every chunker, so passages are cut from the document text
itself: each section (the text between two Markdown headings; parsers render HTML and DOCX
headings as Markdown) is split into paragraphs, a paragraph longer than ``passage_words`` into
its sentences, and consecutive pieces are packed into windows of at most ``passage_words`` words
(a single longer sentence stays whole). A window never crosses a heading, so its section (the
heading path at its start, the document's title left out) is the section of all its text;
windows under a quarter of ``passage_words`` (a heading's lone line, a caption) are not used.

Coverage, the rule. The ``target`` is split over documents in proportion to their length in
words by Sainte-Laguë's divisor method: the next passage goes to the document with the highest
``words / (2 * given + 1)`` (ties to the earlier document). So every document gets its
length-proportional share of the target, rounded, and no more; a document with fewer passages
than its share gives them all and the rest goes to the others in the same proportion. Inside a
document the same rule spreads its passages over its sections (by their words), and inside a
section passages are taken in an order shuffled with ``seed``. The method is house-monotone: a
larger target only adds passages, so a rerun with a larger target keeps every passage (and every
paid question) of the smaller one. Deterministic: the same documents, options and seed give the
same passages.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from situate.chunking.markdown import Piece, Section, pack, paragraphs, split_lines, split_sections
from situate.chunking.markdown import trimmed_piece as piece_of
from situate.datasets.generated import Passage
from situate.errors import SituateError
from situate.records import Document

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


@dataclass(frozen=True)
class SectionPassages:
    """The passages of one section of a document, and the section's words."""

    section: str
    words: int
    passages: tuple[Passage, ...]


def section_name(section: Section, title: str) -> str:
    """The heading path of ``section``, " > "-joined, without a leading heading equal to the title."""
    path = list(section.heading_path)
    if path and title and path[0].strip().casefold() == title.strip().casefold():
        path = path[1:]
    return " > ".join(path)


def _sentences(text: str, piece: Piece) -> list[Piece]:
    out, start = [], piece.start
    for m in _SENTENCE_END.finditer(text, piece.start, piece.end):
        found = piece_of(text, start, m.start())
        if found is not None:
            out.append(found)
        start = m.end()
    last = piece_of(text, start, piece.end)
    return [*out, last] if last is not None else out


def windows(document: Document, passage_words: int) -> list[SectionPassages]:
    """Every section of ``document`` with its passage windows (see the module docstring)."""
    text = document.text
    out = []
    for section in split_sections(split_lines(text)):
        body = Section(section.heading_path, section.lines[section.has_heading :], False)
        items: list[Piece] = []
        for para in paragraphs(body):
            whole = piece_of(text, para[0].start, para[-1].end)
            if whole is None:
                continue
            items.extend(_sentences(text, whole) if whole.words > passage_words else [whole])
        packed = pack(items, passage_words, 0)
        name = section_name(section, document.title)
        kept = tuple(
            Passage(document.doc_id, p.start, p.end, name)
            for p in packed
            if p.words >= max(1, passage_words // 4)
        )
        if kept:
            out.append(SectionPassages(name, sum(p.words for p in packed), kept))
    return out


def divisor_order(weights: Sequence[int], capacity: Sequence[int]) -> Iterator[int]:
    """Indexes in the order Sainte-Laguë hands out seats: each next one to the highest
    ``weight / (2 * given + 1)`` among those with ``given < capacity`` (ties to the lower index)."""
    given = [0] * len(weights)
    while True:
        best, best_score = -1, -1.0
        for i, (w, cap) in enumerate(zip(weights, capacity, strict=True)):
            if given[i] < cap:
                score = w / (2 * given[i] + 1)
                if score > best_score:
                    best, best_score = i, score
        if best < 0:
            return
        given[best] += 1
        yield best


def _shuffled(passages: Sequence[Passage], seed: int, doc_id: str, section: str) -> list[Passage]:
    salt = hashlib.sha256(f"{seed}\x1f{doc_id}\x1f{section}".encode()).hexdigest()
    order = list(passages)
    random.Random(salt).shuffle(order)
    return order


def _document_order(document: Document, passage_words: int, seed: int) -> list[Passage]:
    sections = windows(document, passage_words)
    queues = [_shuffled(s.passages, seed, document.doc_id, s.section) for s in sections]
    taken = [0] * len(queues)
    out = []
    for i in divisor_order([s.words for s in sections], [len(q) for q in queues]):
        out.append(queues[i][taken[i]])
        taken[i] += 1
    return out


def sample_passages(
    documents: Sequence[Document], target: int, passage_words: int = 150, seed: int = 0
) -> list[Passage]:
    """``target`` passages (fewer when the documents hold fewer) spread by the rule above, in the
    order they were handed out (so the first ``n`` are the sample of target ``n``)."""
    if target < 1:
        raise SituateError(f"questions.target={target} must be >= 1")
    if passage_words < 8:
        raise SituateError(f"questions.passage_words={passage_words} must be >= 8")
    orders = [_document_order(d, passage_words, seed) for d in documents]
    weights = [len(d.text.split()) for d in documents]
    taken = [0] * len(orders)
    out: list[Passage] = []
    for i in divisor_order(weights, [len(o) for o in orders]):
        if len(out) == target:
            break
        out.append(orders[i][taken[i]])
        taken[i] += 1
    return out
