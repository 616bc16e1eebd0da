"""``parser: markdown``: a Markdown file is its own document; its title is its first heading."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from situate.parsing.base import ParsedDocument, first_heading
from situate.parsing.text import TextParser
from situate.parsing.titles import HEADING, METADATA, TITLE_RULES, first_usable

_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)", re.DOTALL)
_TITLE_LINE = re.compile(r"""title[ \t]*:[ \t]*(["']?)(.*?)\1[ \t]*$""", re.MULTILINE)


def front_matter_title(text: str) -> str | None:
    """The ``title:`` of a YAML front-matter block at the very start of ``text``, or None."""
    block = _FRONT_MATTER.match(text)
    if block is None:
        return None
    line = _TITLE_LINE.search(block.group(1))
    return line.group(2).strip() or None if line else None


class MarkdownParser(TextParser):
    """Read a Markdown file as it is; title = first ATX heading, else front-matter ``title:`` (the
    first that :mod:`situate.parsing.titles` accepts).

    The text is kept byte for byte (front matter included), so offsets into the file are offsets
    into the document.
    """

    name = "markdown"

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "titles": TITLE_RULES}

    def parse(self, path: Path) -> ParsedDocument:
        text = self.read(path)
        candidates = [(first_heading(text), HEADING), (front_matter_title(text), METADATA)]
        title, source = first_usable(candidates)
        return ParsedDocument(text, title, title_source=source)
