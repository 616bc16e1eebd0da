"""Markdown-aware chunks: sections at ATX headings, packed paragraph by paragraph."""

from __future__ import annotations

import re
from dataclasses import dataclass

from situate.chunking.base import chunk_id
from situate.errors import SituateError
from situate.records import Chunk, Corpus, Document

_HEADING = re.compile(r"(#{1,6})(?:[ \t]+(.*))?$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Line:
    """One line of a document: ``[start, end)`` without its line break."""

    start: int
    end: int
    text: str
    in_fence: bool  # inside (or delimiting) a fenced code block


@dataclass(frozen=True)
class Section:
    """Lines from one heading (or the document start) up to the next heading."""

    heading_path: tuple[str, ...]
    lines: tuple[Line, ...]
    has_heading: bool  # the first line is the section's heading (False before the first heading)


@dataclass(frozen=True)
class Piece:
    """A whitespace-trimmed span of text and its word count, the unit that gets packed."""

    start: int
    end: int
    words: int


def heading_title(line: str) -> tuple[int, str] | None:
    """Parse an ATX heading line.

    Parameters
    ----------
    line
        One line, without its line break.

    Returns
    -------
    tuple of (int, str) or None
        ``(level, title)`` for a heading (``#`` .. ``######`` at the line start followed by a space,
        a tab or the line end; closing ``#`` are dropped), otherwise None.
    """
    m = _HEADING.match(line.rstrip())
    if m is None:
        return None
    title = _CLOSING_HASHES.sub("", m.group(2) or "").strip()
    return len(m.group(1)), title


def split_lines(text: str) -> list[Line]:
    """Split ``text`` into lines with offsets, marking those inside fenced code blocks.

    Parameters
    ----------
    text
        Document text (``\\n``, ``\\r\\n`` or ``\\r`` line breaks).

    Returns
    -------
    list of Line
        Every line of ``text`` in order; fence delimiters count as inside the fence.
    """
    lines: list[Line] = []
    fence: str | None = None
    pos = 0
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        m = _FENCE.match(body)
        opens_or_closes = m is not None and (
            fence is None or (m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence))
        )
        if opens_or_closes and fence is not None and body.strip() != m.group(1):
            opens_or_closes = False  # a closing fence carries no info string
        lines.append(Line(pos, pos + len(body), body, fence is not None or opens_or_closes))
        if opens_or_closes:
            fence = m.group(1) if fence is None else None
        pos += len(raw)
    return lines


def split_sections(lines: list[Line]) -> list[Section]:
    """Group lines into sections, each starting at a heading, with its heading path.

    Parameters
    ----------
    lines
        Lines from :func:`split_lines`.

    Returns
    -------
    list of Section
        The text before the first heading (heading path ``()``) and one section per heading.
    """
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    current: list[Line] = []
    path: tuple[str, ...] = ()
    for line in lines:
        parsed = None if line.in_fence else heading_title(line.text)
        if parsed is not None:
            sections.append(Section(path, tuple(current), bool(stack)))
            level, title = parsed
            stack = [(lv, t) for lv, t in stack if lv < level] + [(level, title)]
            path = tuple(t for _, t in stack)
            current = []
        current.append(line)
    sections.append(Section(path, tuple(current), bool(stack)))
    return [s for s in sections if any(ln.text.strip() for ln in s.lines)]


def paragraphs(section: Section) -> list[list[Line]]:
    """Runs of non-blank lines separated by blank lines outside fenced code.

    A section's heading line is joined to its first paragraph, so it lands in the first chunk.
    """
    out: list[list[Line]] = []
    current: list[Line] = []
    for line in section.lines:
        if line.text.strip() or (line.in_fence and current):
            current.append(line)
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    if section.has_heading and len(out) > 1 and len(out[0]) == 1:
        out[:2] = [out[0] + out[1]]
    return out


def trimmed_piece(text: str, start: int, end: int) -> Piece | None:
    """The span ``[start, end)`` of ``text`` without surrounding whitespace, or None if blank."""
    part = text[start:end]
    words = len(part.split())  # str.split and the \S+ of _WORD agree on what whitespace is
    if not words:
        return None
    lead = len(part) - len(part.lstrip())
    trail = len(part) - len(part.rstrip())
    return Piece(start + lead, end - trail, words)


def pieces(text: str, para: list[Line], max_words: int) -> list[Piece]:
    """Cut one paragraph into pieces of at most ``max_words`` words.

    The paragraph is one piece if it fits; otherwise one piece per line, and a line that is
    still too long becomes one piece per word (packing then refills them up to ``max_words``).
    """
    whole = trimmed_piece(text, para[0].start, para[-1].end)
    if whole is None:
        return []
    if whole.words <= max_words:
        return [whole]
    out: list[Piece] = []
    for line in para:
        piece = trimmed_piece(text, line.start, line.end)
        if piece is None:
            continue
        if piece.words <= max_words:
            out.append(piece)
        else:
            words = _WORD.finditer(text, line.start, line.end)
            out.extend(Piece(m.start(), m.end(), 1) for m in words)
    return out


def pack(items: list[Piece], max_words: int, min_words: int) -> list[Piece]:
    """Greedily pack consecutive pieces into spans of at most ``max_words`` words.

    A last span with fewer than ``min_words`` words is merged into the one before it.
    """
    packed: list[Piece] = []
    for item in items:
        last = packed[-1] if packed else None
        if last is not None and last.words + item.words <= max_words:
            packed[-1] = Piece(last.start, item.end, last.words + item.words)
        else:
            packed.append(item)
    if len(packed) > 1 and packed[-1].words < min_words:
        tail = packed.pop()
        prev = packed[-1]
        packed[-1] = Piece(prev.start, tail.end, prev.words + tail.words)
    return packed


class MarkdownChunker:
    """Chunks that follow a Markdown document's headings and paragraphs.

    Each document is split into sections at ATX headings (``#`` .. ``######`` at a line start,
    not inside fenced code); each section's paragraphs are packed into chunks of at most
    ``max_words`` words, and a trailing chunk under ``min_words`` words joins the previous chunk of
    its section. Chunks never cross a heading, keep exact offsets and together cover all
    non-whitespace text. Plain text (no headings) is one section with ``heading_path == ()``.

    Parameters
    ----------
    max_words
        Most words per chunk (a merged trailing piece can exceed it), > 0.
    min_words
        A section's last chunk with fewer words is merged into the previous one, >= 0.
    """

    name = "markdown"

    def __init__(self, max_words: int = 250, min_words: int = 20) -> None:
        _check_params(max_words, min_words)
        self.max_words = max_words
        self.min_words = min_words

    def identity(self) -> dict:
        return {"name": self.name, "max_words": self.max_words, "min_words": self.min_words}

    def chunk(self, corpus: Corpus) -> list[Chunk]:
        """Every document of ``corpus`` split: chunks in document order, indexed from 0 within
        each document."""
        return [c for doc in corpus.documents for c in self.chunk_document(doc)]

    def chunk_document(self, doc: Document) -> list[Chunk]:
        """Split one document into chunks (ids ``f"{doc_id}#{index}"``).

        Parameters
        ----------
        doc
            The document.

        Returns
        -------
        list of Chunk
            The document's chunks in text order.
        """
        spans: list[tuple[Piece, tuple[str, ...]]] = []
        for section in split_sections(split_lines(doc.text)):
            items = [
                p for para in paragraphs(section) for p in pieces(doc.text, para, self.max_words)
            ]
            packed = pack(items, self.max_words, self.min_words)
            spans.extend((p, section.heading_path) for p in packed)
        return [
            Chunk(
                chunk_id=chunk_id(doc.doc_id, index),
                doc_id=doc.doc_id,
                index=index,
                start=p.start,
                end=p.end,
                text=doc.text[p.start : p.end],
                heading_path=path,
                chunker=self.name,
            )
            for index, (p, path) in enumerate(spans)
        ]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_params(max_words: object, min_words: object) -> None:
    if not _is_int(max_words) or max_words <= 0:  # type: ignore[operator]
        raise SituateError(
            f"markdown chunker: max_words={max_words!r} is invalid; use an integer max_words > 0"
        )
    if not _is_int(min_words) or min_words < 0:  # type: ignore[operator]
        raise SituateError(
            f"markdown chunker: min_words={min_words!r} is invalid; use an integer min_words >= 0"
        )
