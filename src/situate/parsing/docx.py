"""``parser: docx``: a Word document as Markdown: headings, list items and tables in body order.

python-docx reads the document's own structure (paragraph styles, tables, core properties), so
``Heading N`` paragraphs become ``#``-level headings exactly, with no guessing from font sizes;
pure Python over lxml, no model, nothing downloaded.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.parsing.base import ParsedDocument, first_heading, tidy_markdown
from situate.parsing.titles import HEADING, METADATA, TITLE_RULES, first_usable

_HEADING_STYLE = re.compile(r"heading\s*([1-6])", re.IGNORECASE)


def table_rows(table: Any) -> list[str]:
    """A python-docx table as Markdown rows (``| a | b |``), the first row as the header.

    A merged cell (python-docx repeats it for every grid column it spans) is written once.
    """
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if cell._tc is not previous:
                cells.append(" ".join(cell.text.split()).replace("|", "\\|"))
            previous = cell._tc
        rows.append(cells)
    if not rows:
        return []
    lines = ["| " + " | ".join(cells) + " |" for cells in rows]
    lines.insert(1, "| " + " | ".join(["---"] * len(rows[0])) + " |")
    return lines


def paragraph_line(paragraph: Any) -> str:
    """One paragraph as a Markdown line: ``#`` for Title / Heading N, ``-`` for list styles."""
    text = " ".join(paragraph.text.split())
    if not text:
        return ""
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style.lower() == "title":
        return f"# {text}"
    level = _HEADING_STYLE.fullmatch(style.strip())
    if level is not None:
        return f"{'#' * int(level.group(1))} {text}"
    if style.lower().startswith("list"):
        return f"- {text}"
    return text


class DocxParser:
    """Read a ``.docx`` file's body (paragraphs and tables, in order) as Markdown.

    Title: ``core_properties.title``, else the first heading (the first that
    :mod:`situate.parsing.titles` accepts).
    """

    name = "docx"

    def identity(self) -> dict[str, Any]:
        return {"parser": self.name, "titles": TITLE_RULES}

    def parse(self, path: Path) -> ParsedDocument:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
        from docx.table import Table

        try:
            document = docx.Document(str(path))
        except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as e:
            raise SituateError(
                f"{path}: not a readable .docx file ({type(e).__name__}); save it again from Word "
                "or LibreOffice as .docx (not .doc) or remove it"
            ) from e
        blocks: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                blocks.append("\n".join(table_rows(item)))
            else:
                blocks.append(paragraph_line(item))
        text = tidy_markdown("\n\n".join(b for b in blocks if b))
        if not text:
            raise SituateError(f"{path}: empty document (no text); add text to it or remove it")
        declared = " ".join((document.core_properties.title or "").split())
        title, source = first_usable([(declared, METADATA), (first_heading(text), HEADING)])
        return ParsedDocument(text, title, title_source=source)
