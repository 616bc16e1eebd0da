"""``parser: pdf``: the text layer of a PDF, page by page, with page spans (pypdfium2).

pypdfium2 wraps PDFium, the PDF engine of Chromium: Apache-2.0/BSD, prebuilt wheels for every
platform, no model and nothing downloaded at run time. Scanned pages have no text layer; a PDF
with no text on any page is refused with the fix (OCR it first), an empty page in a PDF with
text is kept as an empty page span and counted.

Title: the metadata ``Title`` when :mod:`situate.parsing.titles` accepts it, else the cover's most
prominent line(s): the characters of page 1 grouped into lines, each line's font size the largest
of its characters (PDFium's font size times the scale of the character's matrix, so text drawn at
size 1 and scaled counts at its printed size), measured against the body text (the median
over the characters of the first :data:`BODY_PAGES` pages of their lines' sizes;
:func:`~situate.parsing.titles.cover_title`).
"""

from __future__ import annotations

import logging
import math
import unicodedata
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.parsing.base import ParsedDocument
from situate.parsing.titles import (
    COVER,
    METADATA,
    TITLE_RULES,
    TextLine,
    body_size,
    cover_title,
    first_usable,
    tidy,
    title_problem,
)
from situate.records import Page

log = logging.getLogger("situate")

_ERR_FORMAT = 3  # PDFium's FPDF_ERR_FORMAT: not a PDF, or a damaged one
_ERR_PASSWORD = 4  # FPDF_ERR_PASSWORD: encrypted, a password is needed
_KEEP = {"\n", "\t"}
BODY_PAGES = 3  # pages whose characters give the body text's size
_LINE_BREAKS = {0x0A, 0x0D}


def text_lines(textpage: Any) -> list[TextLine]:
    """The lines of a PDFium text page (split at its line breaks), each with its font size."""
    import pypdfium2.raw as raw

    matrix = raw.FS_MATRIX()
    lines, chars, size = [], [], 0.0
    for index in range(textpage.count_chars()):
        code = raw.FPDFText_GetUnicode(textpage, index)
        if code in _LINE_BREAKS:
            if chars:
                lines.append(TextLine("".join(chars), size))
            chars, size = [], 0.0
            continue
        ch = chr(code) if 0 < code <= 0x10FFFF else ""
        if not ch or unicodedata.category(ch).startswith("C"):
            continue
        chars.append(ch)
        if not ch.isspace():
            size = max(size, char_size(textpage, index, matrix))
    if chars:
        lines.append(TextLine("".join(chars), size))
    return [line for line in lines if line.text.strip()]


def char_size(textpage: Any, index: int, matrix: Any) -> float:
    """The printed font size of one character: PDFium's size times its matrix's scale."""
    import pypdfium2.raw as raw

    size = raw.FPDFText_GetFontSize(textpage, index)
    if raw.FPDFText_GetMatrix(textpage, index, matrix):
        size *= math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
    return round(size, 1)


def clean_page_text(text: str) -> str:
    """PDFium page text with ``\\n`` line breaks, no control characters and no trailing blanks."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # each distinct character's category looked up once (a page has a few hundred of them)
    drop = {ch for ch in set(text) if ch not in _KEEP and unicodedata.category(ch).startswith("C")}
    if drop:
        text = text.translate(dict.fromkeys(map(ord, drop)))
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


class PdfParser:
    """Read a PDF's text layer; pages joined by ``page_separator``, each page a span.

    Parameters
    ----------
    page_separator
        Text put between consecutive pages (not part of any page span). The default blank line
        makes a page break a paragraph break for the chunkers.
    """

    name = "pdf"

    def __init__(self, page_separator: str = "\n\n") -> None:
        if not isinstance(page_separator, str):
            raise SituateError(
                f"pdf parser: page_separator={page_separator!r} is invalid; use a string, e.g. '\\n\\n'"
            )
        self.page_separator = page_separator

    def identity(self) -> dict[str, Any]:
        return {"parser": self.name, "page_separator": self.page_separator, "titles": TITLE_RULES}

    def parse(self, path: Path) -> ParsedDocument:
        """The text of every page, the page spans and the title (metadata, else cover).

        Raises
        ------
        SituateError
            For an encrypted, damaged or non-PDF file, and for a PDF with no text layer.
        """
        import pypdfium2 as pdfium

        try:
            pdf = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as e:
            raise _open_error(path, e) from e
        try:
            texts = [self._page_text(pdf, i) for i in range(len(pdf))]
            title, source = self._title(path, pdf) if any(texts) else ("", "")
        finally:
            pdf.close()
        if not any(texts):
            raise SituateError(
                f"{path}: no text layer on any of its {len(texts)} page(s) (a scanned or image-only "
                "PDF); run OCR on it first (e.g. `ocrmypdf in.pdf out.pdf`) or remove it"
            )
        pages, pos = [], 0
        for number, text in enumerate(texts, start=1):
            if number > 1:
                pos += len(self.page_separator)
            pages.append(Page(number, pos, pos + len(text)))
            pos += len(text)
        empty = [p.number for p in pages if p.start == p.end]
        if empty:
            log.warning(
                "%s: page(s) %s have no text (blank or scanned); kept as empty pages (OCR the PDF "
                "if they hold text)",
                path,
                ", ".join(map(str, empty)),
            )
        return ParsedDocument(self.page_separator.join(texts), title, tuple(pages), source)

    @staticmethod
    def _title(path: Path, pdf: Any) -> tuple[str, str]:
        """The metadata title if usable, else the cover's; the rule that gave it."""
        declared = tidy(str(pdf.get_metadata_dict().get("Title") or ""))
        problem = title_problem(declared)
        if problem is None:
            return declared, METADATA
        if declared:
            log.debug("%s: metadata title %r is no title (%s)", path, declared, problem)
        pages = [PdfParser._lines(pdf, i) for i in range(min(BODY_PAGES, len(pdf)))]
        sizes: dict[float, int] = {}
        for line in (line for page in pages for line in page):
            sizes[line.size] = sizes.get(line.size, 0) + len(line.text.strip())
        return first_usable([(cover_title(pages[0], body_size(sizes.items())), COVER)])

    @staticmethod
    def _lines(pdf: Any, index: int) -> list[TextLine]:
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                return text_lines(textpage)
            finally:
                textpage.close()
        finally:
            page.close()

    @staticmethod
    def _page_text(pdf: Any, index: int) -> str:
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                return clean_page_text(textpage.get_text_range())
            finally:
                textpage.close()
        finally:
            page.close()


def _open_error(path: Path, error: Exception) -> SituateError:
    code = getattr(error, "err_code", None)
    if code == _ERR_PASSWORD:
        return SituateError(
            f"{path}: encrypted PDF (a password is needed to read it); save a decrypted copy "
            "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) or remove it"
        )
    if code == _ERR_FORMAT:
        return SituateError(
            f"{path}: not a readable PDF (damaged or not a PDF); re-export it from its source or "
            "remove it"
        )
    return SituateError(f"{path}: PDFium cannot open it ({error}); re-export it or remove it")
