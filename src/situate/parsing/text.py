"""``parser: text``: a plain text file is its own document, character for character."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from situate.parsing.base import ParsedDocument, decode_text, require_text


class TextParser:
    """Read a text file as it is (only a leading byte-order mark is dropped).

    Parameters
    ----------
    encoding
        The files' encoding (a Python codec name).
    """

    name = "text"

    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def identity(self) -> dict[str, Any]:
        return {"parser": self.name, "encoding": self.encoding}

    def read(self, path: Path) -> str:
        """The file's text, refusing binary, undecodable and empty files."""
        return require_text(path, decode_text(path, path.read_bytes(), self.encoding))

    def parse(self, path: Path) -> ParsedDocument:
        """The file's text; a text file names no title of its own."""
        return ParsedDocument(self.read(path))
