"""``parser: html``: an HTML page as Markdown, without its navigation boilerplate.

beautifulsoup4 with lxml parses real-world (broken) HTML; markdownify turns the main content into
Markdown: ``<h1>``..``<h6>`` become ``#`` headings (which the markdown chunker and
``heading_path`` follow) and tables become ``| cell | cell |`` rows. Pure Python over lxml, no
model, nothing downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from situate.errors import SituateError
from situate.parsing.base import ParsedDocument, decode_text, first_heading, tidy_markdown
from situate.parsing.titles import HEADING, METADATA, TITLE_RULES, first_usable

BOILERPLATE = ("nav", "header", "footer", "aside", "script", "style", "noscript", "form", "iframe")


class HtmlParser:
    """Read an HTML file's main content as Markdown.

    The content is the first ``<main>``, else the first ``<article>``, else ``<body>``; the
    ``drop`` elements (navigation, headers, footers, scripts, forms) are removed from it first.

    Parameters
    ----------
    drop
        Tag names removed with their content before conversion.
    encoding
        The files' encoding (a Python codec name); a file that does not decode is a bad file.
    """

    name = "html"

    def __init__(self, drop: Sequence[str] = BOILERPLATE, encoding: str = "utf-8") -> None:
        self.drop = tuple(str(tag).lower() for tag in drop)
        self.encoding = encoding

    def identity(self) -> dict[str, Any]:
        return {
            "parser": self.name,
            "drop": list(self.drop),
            "encoding": self.encoding,
            "titles": TITLE_RULES,
        }

    def parse(self, path: Path) -> ParsedDocument:
        """Markdown of the main content; title = its first heading, else ``<title>`` (the first
        that :mod:`situate.parsing.titles` accepts)."""
        from bs4 import BeautifulSoup
        from markdownify import ATX, MarkdownConverter

        soup = BeautifulSoup(decode_text(path, path.read_bytes(), self.encoding), "lxml")
        page_title = " ".join(soup.title.get_text().split()) if soup.title else ""
        root = soup.find("main") or soup.find("article") or soup.body or soup
        for tag in root.find_all(self.drop):
            tag.decompose()
        # links and images keep their text only: URLs are noise to BM25 and embeddings
        converter = MarkdownConverter(heading_style=ATX, bullets="-", strip=["a", "img"])
        text = tidy_markdown(converter.convert_soup(root))
        if not text:
            raise SituateError(
                f"{path}: no text in the page's main content once {', '.join(self.drop)} are "
                "removed; check the file or set dataset.parsers.html.drop=[script,style]"
            )
        title, source = first_usable([(first_heading(text), HEADING), (page_title, METADATA)])
        return ParsedDocument(text, title, title_source=source)
