"""Read the files of a folder into documents: a parser per suffix, a parse cache, bad files.

Parsed text is cached by content: the key is ``content_hash(parser identity, sha256 of the file's
bytes)`` in a :class:`~situate.stores.sqlite.BlobStore`, so a changed file (or a changed parser option)
is parsed again and every other file is read from the cache. A file that cannot be read raises
its one-line :class:`~situate.errors.SituateError`, or with ``on_bad_file="skip"`` is logged,
left out and counted.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from situate.errors import SituateError
from situate.parsing.base import SIDECAR_SUFFIX, ParsedDocument, Parser, document_title
from situate.parsing.titles import SOURCES
from situate.progress import progress_bar
from situate.records import Document
from situate.stores.keys import content_hash
from situate.stores.sqlite import BlobStore

log = logging.getLogger("situate")

ON_BAD_FILE = ("error", "skip")
CACHE_TABLE = "parsed"


@dataclass
class ReadResult:
    """The documents read, in file order, and what happened on the way."""

    documents: list[Document]
    parsed: int = 0  # files parsed now
    cached: int = 0  # files whose parse came from the cache
    skipped: list[str] = field(default_factory=list)  # one-line reason per skipped file

    def notes(self) -> dict[str, int | str]:
        """What a Corpus records: files skipped, empty pages and the documents each title rule
        named (``titles_from_cover``, ...: every rule of ``SOURCES``, 0 included), as counts."""
        empty = sum(1 for d in self.documents for p in d.pages if p.start == p.end)
        titles = {f"titles_from_{s}": n for s, n in self.title_sources().items()}
        return {"files_skipped": len(self.skipped), "empty_pages": empty, **titles}

    def title_sources(self) -> dict[str, int]:
        """How many documents each title rule named, every rule of ``SOURCES`` listed."""
        counts = Counter(d.title_source for d in self.documents)
        return {s: counts[s] for s in SOURCES}


class DocumentReader:
    """Parses files with the parser their suffix names.

    Parameters
    ----------
    parsers
        Parser per format name (``{"pdf": PdfParser(), ...}``).
    suffixes
        Format name per file suffix, without the dot (``{"pdf": "pdf", "htm": "html"}``).
    on_bad_file
        ``"error"``: the first unreadable file stops the load with its message; ``"skip"``: it is
        logged, left out and counted.
    max_file_mb
        Files larger than this (MB) are bad files (never read into memory).
    cache
        The parse cache (a SQLite file), or None to parse every time.
    """

    def __init__(
        self,
        parsers: Mapping[str, Parser],
        suffixes: Mapping[str, str],
        on_bad_file: str = "error",
        max_file_mb: float = 100,
        cache: str | Path | None = None,
    ) -> None:
        if on_bad_file not in ON_BAD_FILE:
            raise SituateError(
                f"dataset.on_bad_file={on_bad_file!r} is invalid; use dataset.on_bad_file=error or skip"
            )
        if (
            isinstance(max_file_mb, bool)
            or not isinstance(max_file_mb, (int, float))
            or max_file_mb <= 0
        ):
            raise SituateError(
                f"dataset.max_file_mb={max_file_mb!r} is invalid; use a size in MB > 0, e.g. 100"
            )
        for suffix, fmt in suffixes.items():
            if fmt not in parsers:
                raise SituateError(
                    f"dataset.suffixes.{suffix}={fmt!r} names no parser; use one of "
                    f"{', '.join(sorted(parsers))} (dataset.parsers)"
                )
        self.parsers = dict(parsers)
        self.suffixes = {str(k).lower().lstrip("."): str(v) for k, v in suffixes.items()}
        self.on_bad_file = on_bad_file
        self.max_file_mb = max_file_mb
        self.cache = cache
        self._store: BlobStore | None = None

    def parser_for(self, path: Path) -> Parser | None:
        fmt = self.suffixes.get(path.suffix.lower().lstrip("."))
        return None if fmt is None else self.parsers[fmt]

    def find(self, root: Path) -> tuple[list[Path], list[Path]]:
        """Files under ``root`` with a parser, and those without, each sorted by relative path.

        Hidden files and folders (a name starting with a dot) and ``*.meta.json`` sidecars are
        left out of both.
        """
        readable, other = [], []
        for p in root.rglob("*"):
            rel = p.relative_to(root)
            if not p.is_file() or any(part.startswith(".") for part in rel.parts):
                continue
            if p.name.endswith(SIDECAR_SUFFIX):
                continue
            (readable if self.parser_for(p) is not None else other).append(p)
        key = lambda p: p.relative_to(root).as_posix()  # noqa: E731
        return sorted(readable, key=key), sorted(other, key=key)

    def read_folder(self, root: Path, not_documents: Collection[str] = ()) -> ReadResult:
        """Every file under ``root`` that has a parser, as documents.

        Files of other suffixes are left out with one log line; ``not_documents`` (paths relative
        to ``root``, such as the questions files) are left out silently. A folder with no
        document, or whose every document is a bad file, is an error.
        """
        files, other = self.find(root)
        rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
        files = [p for p in files if rel(p) not in not_documents]
        other = [p for p in other if rel(p) not in not_documents]
        suffixes = ", ".join(sorted({p.suffix.lower() or p.name for p in other}))
        if not files:
            known = ", ".join(f".{s}" for s in self.suffixes)
            raise SituateError(
                f"{root}: no documents ({known}) found"
                + (f", only files with other suffixes ({suffixes})" if other else "")
                + "; add some, map a suffix with +dataset.suffixes.<suffix>=<parser>, or set "
                "dataset.path"
            )
        if other:
            log.info(
                "%s: %d file(s) with no parser left out (%s, e.g. %s); map a suffix with "
                "+dataset.suffixes.<suffix>=<parser> to read them",
                root, len(other), suffixes, other[0].relative_to(root).as_posix(),
            )  # fmt: skip
        result = self.read(root, files)
        if not result.documents:
            raise SituateError(
                f"{root}: every document is a bad file ({len(result.skipped)} skipped); fix them "
                "(the log names each) or set dataset.path"
            )
        return result

    def read(self, root: Path, files: list[Path]) -> ReadResult:
        """Parse ``files`` (under ``root``; ids are their relative paths) into documents."""
        result = ReadResult([])
        label = f"parsing {len(files):,} files in {root}"
        with progress_bar(label, final_bar=False, rate_key="files parsed") as advance:
            advance(0, len(files))
            for path in files:
                self._read_one(root, path, result)
                advance(1)
        if result.skipped:
            log.warning(
                "%s: %d bad file(s) skipped (dataset.on_bad_file=skip)", root, len(result.skipped)
            )
        return result

    def _read_one(self, root: Path, path: Path, result: ReadResult) -> None:
        """``path`` parsed (or read from the cache) into ``result``, or skipped as a bad file."""
        try:
            parsed, fresh = self._parse(path)
            title, source = document_title(path, parsed)
        except SituateError as e:
            if self.on_bad_file == "error":
                raise
            log.warning("skipped: %s", e)
            result.skipped.append(str(e))
            return
        result.parsed += fresh
        result.cached += not fresh
        doc_id = path.relative_to(root).as_posix()
        document = Document(doc_id, parsed.text, title, str(path), parsed.pages, source)
        result.documents.append(document)

    def _parse(self, path: Path) -> tuple[ParsedDocument, bool]:
        """The file's parse and whether it was parsed now (False: from the cache)."""
        parser = self.parser_for(path)
        assert parser is not None
        size_mb = path.stat().st_size / 1e6
        if size_mb > self.max_file_mb:
            raise SituateError(
                f"{path}: {size_mb:.1f} MB is over dataset.max_file_mb={self.max_file_mb:g}; "
                "split the file or raise dataset.max_file_mb"
            )
        if self.cache is None:
            return parser.parse(path), True
        if self._store is None:  # opened on first use: building a loader writes nothing
            self._store = BlobStore(self.cache, CACHE_TABLE)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        key = content_hash(parser.identity(), digest)
        found = self._store.get_many([key])
        if key in found:
            return ParsedDocument.from_json(found[key]), False
        parsed = parser.parse(path)
        self._store.put_many([(key, parsed.to_json())])
        return parsed, True


# Format per suffix when a loader is built without configuration (conf/dataset/folder.yaml says
# the same for runs).
DEFAULT_SUFFIXES = {
    "pdf": "pdf",
    "html": "html",
    "htm": "html",
    "docx": "docx",
    "md": "markdown",
    "markdown": "markdown",
    "txt": "text",
}


def default_parsers() -> dict[str, Parser]:
    """Every format's parser with its default options."""
    from situate.parsing.docx import DocxParser
    from situate.parsing.html import HtmlParser
    from situate.parsing.markdown import MarkdownParser
    from situate.parsing.pdf import PdfParser
    from situate.parsing.text import TextParser

    return {
        "pdf": PdfParser(),
        "html": HtmlParser(),
        "docx": DocxParser(),
        "markdown": MarkdownParser(),
        "text": TextParser(),
    }
