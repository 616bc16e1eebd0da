"""``parser: pdf``: the text layer of a PDF, page by page, with page spans (pypdfium2).

pypdfium2 wraps PDFium, the PDF engine of Chromium: Apache-2.0/BSD, prebuilt wheels for every
platform, no model and nothing downloaded at run time. Scanned pages have no text layer; a PDF
with no text on any page is refused with the fix (OCR it first), an empty page in a PDF with
text is kept as an empty page span and counted.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.parsing.base import ParsedDocument
from situate.records import Page

log = logging.getLogger("situate")

_ERR_FORMAT = 3  # PDFium's FPDF_ERR_FORMAT: not a PDF, or a damaged one
_ERR_PASSWORD = 4  # FPDF_ERR_PASSWORD: encrypted, a password is needed
_KEEP = {"\n", "\t"}
# Metadata titles that name no document: tool defaults and file names of the source.
_PLACEHOLDER_TITLE = re.compile(
    r"untitled(?:[-\s]?\d+)?|document\d*|microsoft \w+ - .*|.*\.(?:docx?|pdf|indd|tex|rtf)",
    re.IGNORECASE,
)


def metadata_title(metadata: dict[str, Any]) -> str:
    """The PDF's ``Title`` with spacing tidied, or "" when missing or a placeholder."""
    title = " ".join(str(metadata.get("Title") or "").split())
    return "" if _PLACEHOLDER_TITLE.fullmatch(title) else title


def clean_page_text(text: str) -> str:
    """PDFium page text with ``\\n`` line breaks, no control characters and no trailing blanks."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "".join(ch for ch in text if ch in _KEEP or not unicodedata.category(ch).startswith("C"))
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
        return {"parser": self.name, "page_separator": self.page_separator}

    def parse(self, path: Path) -> ParsedDocument:
        """The text of every page, the page spans and the metadata title.

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
            title = metadata_title(pdf.get_metadata_dict())
            texts = [self._page_text(pdf, i) for i in range(len(pdf))]
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
        return ParsedDocument(self.page_separator.join(texts), title, tuple(pages))

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
