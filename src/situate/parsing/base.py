"""The parser protocol, what a parser returns, and the last title rules (sidecar, file name).

A parser turns one file into a :class:`ParsedDocument`. Its ``text`` *is* the document: every
character offset (gold spans, chunk spans, search results) refers to it. Structure the chunkers
use is written into the text as Markdown (``#`` headings, ``| a | b |`` table rows); page
boundaries of paged formats are kept as :class:`~situate.records.Page` spans.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from situate.chunking.markdown import heading_title, split_lines
from situate.errors import SituateError
from situate.parsing.titles import COVER, FILENAME, SIDECAR
from situate.records import Page

_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_SEPARATORS = re.compile(r"[\s_]+")
SIDECAR_SUFFIX = ".meta.json"  # ``report.pdf.meta.json`` = {"title": "..."} names report.pdf


@dataclass(frozen=True)
class ParsedDocument:
    """What a parser read from one file.

    Attributes
    ----------
    text : str
        The document text (Markdown headings and table rows where the format has them).
    title : str
        The title the file itself gives (the first usable candidate of its format under
        :mod:`situate.parsing.titles`), "" when none.
    pages : tuple of Page
        Page spans of a paged format, in order; ``()`` otherwise.
    title_source : str
        The rule that gave ``title`` (``metadata``, ``heading``, ``cover``), "" without a title.
    """

    text: str
    title: str = ""
    pages: tuple[Page, ...] = ()
    title_source: str = ""

    def to_json(self) -> bytes:
        pages = [[p.number, p.start, p.end] for p in self.pages]
        record = {
            "text": self.text,
            "title": self.title,
            "pages": pages,
            "title_source": self.title_source,
        }
        return json.dumps(record, ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> ParsedDocument:
        # Parses cached before titles named their rule lack "title_source": only the text
        # parser's (no title, so "" is right); the parsers that pick titles carry TITLE_RULES in
        # their identity, so their older entries are under other keys and never read.
        record = json.loads(data)
        pages = tuple(Page(n, s, e) for n, s, e in record["pages"])
        return cls(record["text"], record["title"], pages, record.get("title_source", ""))


class Parser(Protocol):
    """Reads one file of its format.

    ``identity`` names the parser and every option that changes its output (the parse cache
    keys on it); ``parse`` raises a one-line :class:`~situate.errors.SituateError` naming the
    file and the fix for a file it cannot read.
    """

    name: str

    def identity(self) -> dict[str, Any]: ...

    def parse(self, path: Path) -> ParsedDocument: ...


def first_heading(text: str) -> str | None:
    """The title of the first ATX heading outside fenced code, or None."""
    for line in split_lines(text):
        parsed = None if line.in_fence else heading_title(line.text)
        if parsed is not None and parsed[1]:
            return parsed[1]
    return None


def tidy_markdown(text: str) -> str:
    """Strip trailing spaces from lines, collapse runs of blank lines to one, trim the ends."""
    lines = "\n".join(line.rstrip() for line in text.splitlines())
    return _BLANK_RUNS.sub("\n\n", lines).strip()


def readable_name(path: Path) -> str:
    """A file name as a title: the stem with ``_`` and runs of spaces as single spaces.

    ``3M_2018_10K.txt`` -> ``"3M 2018 10K"``; a stem that is nothing but separators stays as is.
    """
    words = _SEPARATORS.sub(" ", path.stem).strip()
    return words or path.name


def sidecar_title(path: Path) -> str:
    """The ``title`` of ``<file>.meta.json`` next to ``path``, or "" when there is none."""
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    if not sidecar.is_file():
        return ""
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SituateError(
            f'{sidecar}: not a JSON object ({e}); write it as {{"title": "..."}} or remove it'
        ) from e
    title = record.get("title") if isinstance(record, dict) else None
    if not isinstance(title, str):
        raise SituateError(f'{sidecar}: no "title" string; write it as {{"title": "..."}}')
    return " ".join(title.split())


def document_title(path: Path, parsed: ParsedDocument) -> tuple[str, str]:
    """The title a document gets and the rule that gave it (:data:`~situate.parsing.titles.SOURCES`):
    the file's own (metadata, first heading), else its sidecar's (taken as written), else a PDF
    cover's most prominent line (a guess, so a sidecar overrides it), else its readable name."""
    if parsed.title and parsed.title_source != COVER:
        return parsed.title, parsed.title_source
    sidecar = sidecar_title(path)
    if sidecar:
        return sidecar, SIDECAR
    if parsed.title:
        return parsed.title, parsed.title_source
    return readable_name(path), FILENAME


def decode_text(path: Path, data: bytes, encoding: str = "utf-8") -> str:
    """Decode a text file, refusing binary and undecodable bytes, without a byte-order mark."""
    if b"\x00" in data and not encoding.lower().startswith("utf-16"):
        raise SituateError(
            f"{path}: contains NUL bytes (binary file?); convert it to UTF-8 text or remove it"
        )
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        label = "UTF-8" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
        raise SituateError(
            f"{path}: not {label} text (byte {e.start}); convert it to UTF-8 or remove it"
        ) from e
    return text.removeprefix("\ufeff")


def require_text(path: Path, text: str, fix: str = "add text to it or remove it") -> str:
    """Return ``text``, or raise when it has no visible characters."""
    if not text.strip():
        raise SituateError(f"{path}: empty file (no text); {fix}")
    return text
