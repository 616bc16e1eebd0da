"""``parser: markdown``: a Markdown file is its own document; its title is its first heading."""

from __future__ import annotations

import re
from pathlib import Path

from situate.parsing.base import ParsedDocument, first_heading
from situate.parsing.text import TextParser

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
    """Read a Markdown file as it is; title = first ATX heading, else front-matter ``title:``.

    The text is kept byte for byte (front matter included), so offsets into the file are offsets
    into the document.
    """

    name = "markdown"

    def parse(self, path: Path) -> ParsedDocument:
        text = self.read(path)
        return ParsedDocument(text, first_heading(text) or front_matter_title(text) or "")
